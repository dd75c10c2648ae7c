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

from memstrata.values import value_type

TOKENIZER = "porter unicode61 remove_diacritics 2"
DEFAULT_POSTINGS_BUDGET = 25_000

_local = threading.local()
STEMS_KEPT = 20_000
_STEMS: dict[str, tuple[str, ...]] = {}


def _tokenizer() -> sqlite3.Connection:
    conn = getattr(_local, "conn", None)
    if conn is None:
        conn = sqlite3.connect(":memory:")
        conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{TOKENIZER}')")
        conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
        _local.conn = conn
    return conn


def stems(words: list[str]) -> dict[str, list[str]]:
    """word -> the index terms FTS5 makes of it (usually one).

    A word's terms depend on the word alone (each is tokenized as its own row), so
    they are remembered (`_STEMS`, up to `STEMS_KEPT` words): the same words come back
    query after query, and tokenizing them cost two statements a search.
    """
    known = {w: _STEMS.get(w) for w in words}
    new = [w for w, terms in known.items() if terms is None]
    if new:
        conn = _tokenizer()
        conn.execute("DELETE FROM t")
        conn.executemany("INSERT INTO t(rowid, x) VALUES (?, ?)", list(enumerate(new)))
        found: dict[str, list[str]] = {w: [] for w in new}
        for term, doc in conn.execute("SELECT term, doc FROM v ORDER BY doc, offset"):
            found[new[doc]].append(term)
        if len(_STEMS) + len(new) > STEMS_KEPT:
            _STEMS.clear()
        for w, terms in found.items():
            known[w] = _STEMS[w] = tuple(terms)
    return {w: list(known[w] or ()) for w in words}


@value_type(frozen=True)
class TermStat:
    word: str
    df: int


def essential_terms(
    stats: list[TermStat], budget: int = DEFAULT_POSTINGS_BUDGET, *, keep_rarest: bool = True
) -> tuple[list[TermStat], list[TermStat]]:
    """Split terms into (kept, dropped): rarest first while sum(df) <= budget (the
    rarest term kept whatever its df, unless `keep_rarest` is False). Pure."""
    ranked = sorted((s for s in stats if s.df > 0), key=lambda s: (s.df, s.word))
    kept: list[TermStat] = []
    used = 0
    for s in ranked:
        if (kept or not keep_rarest) and used + s.df > budget:
            continue
        kept.append(s)
        used += s.df
    dropped = [s for s in ranked if s not in kept]
    return kept, dropped
