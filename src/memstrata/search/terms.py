"""Query terms as FTS5 sees them, and how many documents hold each.

Ranking every document that contains a very common word is what makes an OR
query slow on a large store (FTS5 scores each match). A term held by a large
share of the documents carries almost no BM25 weight (its IDF is near zero), so
candidate generation keeps the rarest terms up to a postings budget:

    sort terms by document frequency df ascending;
    keep terms while sum(df) <= budget (the rarest term is always kept).

This is the "essential terms" idea of MaxScore/WAND pruning, in its simplest
form. Terms are stemmed by SQLite's own tokenizer (an in-memory FTS5 table with
the index's tokenizer), so Python and the index never disagree about stems.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import TypeVar, cast

TOKENIZER = "porter unicode61 remove_diacritics 2"
DEFAULT_POSTINGS_BUDGET = 25_000
MAX_SCOPES = 64  # principals whose per-scope caches one store keeps (a server serves many)
T = TypeVar("T")

_local = threading.local()


def _tokenizer() -> sqlite3.Connection:
    conn = getattr(_local, "conn", None)
    if conn is None:
        conn = sqlite3.connect(":memory:")
        conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{TOKENIZER}')")
        conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
        _local.conn = conn
    return conn


def stems(words: list[str]) -> dict[str, list[str]]:
    """word -> the index terms FTS5 makes of it (usually one)."""
    conn = _tokenizer()
    conn.execute("DELETE FROM t")
    conn.executemany("INSERT INTO t(rowid, x) VALUES (?, ?)", list(enumerate(words)))
    out: dict[str, list[str]] = {w: [] for w in words}
    for term, doc in conn.execute("SELECT term, doc FROM v ORDER BY doc, offset"):
        out[words[doc]].append(term)
    return out


@dataclass(frozen=True)
class TermStat:
    word: str
    df: int


class DocFrequencies:
    """Per-process cache of document frequencies, refreshed as the index grows."""

    def __init__(self) -> None:
        self._cache: dict[str, tuple[int, int]] = {}  # term -> (df, total docs when counted)
        self._scoped: dict[Hashable, object] = {}

    def per_scope(self, key: Hashable, make: Callable[[], T]) -> T:
        """A cache kept per principal's scope (the identifier words of `search.expand`)."""
        hit = self._scoped.get(key)
        if hit is None:
            if len(self._scoped) >= MAX_SCOPES:
                self._scoped.clear()
            hit = self._scoped[key] = make()
        return cast(T, hit)

    def df(self, conn: sqlite3.Connection, term: str, total: int) -> int:
        hit = self._cache.get(term)
        if hit is not None and abs(hit[1] - total) <= max(50, total // 50):
            return hit[0]
        row = conn.execute("SELECT doc FROM docs_vocab WHERE term = ?", (term,)).fetchone()
        value = int(row[0]) if row else 0
        if len(self._cache) > 50_000:
            self._cache.clear()
        self._cache[term] = (value, total)
        return value


def essential_terms(
    stats: list[TermStat], budget: int = DEFAULT_POSTINGS_BUDGET
) -> tuple[list[TermStat], list[TermStat]]:
    """Split terms into (kept, dropped): rarest first while sum(df) <= budget. Pure."""
    ranked = sorted((s for s in stats if s.df > 0), key=lambda s: (s.df, s.word))
    kept: list[TermStat] = []
    used = 0
    for s in ranked:
        if kept and used + s.df > budget:
            continue
        kept.append(s)
        used += s.df
    dropped = [s for s in ranked if s not in kept]
    return kept, dropped
