"""How many documents hold a term: a per-process cache the engine keeps per index generation.

Search prunes a query to its rarest terms by document frequency (`search.terms`);
counting them in FTS5's `docs_vocab` for every query costs a lookup per stem, so
counts are kept and refreshed once the index has grown by more than 2% (or 50
documents) since they were taken. A new index generation gets a new cache (the
engine drops it). Per-principal caches (the identifier words of `search.expand`)
live here too, a bounded number of them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Hashable
from typing import TypeVar, cast

MAX_SCOPES = 64  # principals whose per-scope caches one store keeps (a server serves many)
T = TypeVar("T")


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
