"""Stage 1's layer filter: the docs rows of the layers a search reads, known by row id.

FTS5 scores every match of a query (bm25) before SQLite sorts them, and the layers a
search leaves out are only known to stage 2, which reads the docs rows. A default search
leaves session transcripts out, and they are most of a store (and match often: a
message's `context` column holds its neighbours' words), so stage 1 scored three or four
times the matches it could use. With the layer of every row id kept here, stage 1 asks
SQLite to skip a match of another layer before it is scored (a function of the rowid in
the WHERE clause, evaluated before the bm25 result column); scores and their order are
FTS5's as before, and stage 2 still applies every filter.

The codes are kept up to date from the index's change feed (`doc_changes`, whose sequence
number is bumped when a doc is added, deleted, or its layer changes), as
`search.expand.IdentifierWords` is: a search reads the top sequence number and re-reads
the rows changed since. A deleted doc's id keeps its old code until the id is used again
(then the insert is a change); such an id matches nothing, FTS5 being kept in step with
docs by triggers. The caller reads the feed and runs both stages in one read transaction,
so the codes describe every row stage 1 can see.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable


class LayerMask:
    """Row id -> layer code, for one index generation (kept in `Store.df_cache`)."""

    FULL_AFTER = 5000  # more changes than this since the last look: one full scan

    def __init__(self) -> None:
        self._seq = -1
        self._codes = bytearray()  # row id -> layer code; 0: not known (kept)
        self._layer_codes: dict[str, int] = {}

    def keep(
        self, conn: sqlite3.Connection, allowed: Callable[[str], bool]
    ) -> Callable[[int], int] | None:
        """A function of a row id: 1 when its layer may be read (or is not known), else 0.
        None when every layer may be read, or the store has more than 255 layers."""
        self._update(conn)
        if len(self._layer_codes) >= 255:
            return None
        table = bytearray(b"\x01" * 256)
        for layer, code in self._layer_codes.items():
            if not allowed(layer):
                table[code] = 0
        if all(table):
            return None
        return self._codes.translate(table).__getitem__

    def _update(self, conn: sqlite3.Connection) -> None:
        top = int(conn.execute("SELECT coalesce(max(seq), 0) FROM doc_changes").fetchone()[0])
        if top == self._seq:
            return
        rows: Iterable[tuple[int | None, str | None]]
        if self._seq < 0 or top < self._seq or top - self._seq > self.FULL_AFTER:
            self._codes = bytearray()
            rows = conn.execute("SELECT id, layer FROM docs")
        else:
            rows = conn.execute(
                "SELECT d.id, d.layer FROM doc_changes c JOIN docs d ON d.uid = c.uid "
                "WHERE c.seq > ?",
                (self._seq,),
            )
        top_id = int(conn.execute("SELECT coalesce(max(id), 0) FROM docs").fetchone()[0])
        if len(self._codes) <= top_id:
            self._codes.extend(bytes(top_id + 1 - len(self._codes)))
        for rid, layer in rows:
            if rid is None or layer is None:
                continue
            if rid >= len(self._codes):  # added after max(id) was read (outside a snapshot)
                self._codes.extend(bytes(rid + 1 - len(self._codes)))
            self._codes[rid] = self._code(layer)
        self._seq = top

    def _code(self, layer: str) -> int:
        code = self._layer_codes.get(layer)
        if code is None:
            code = self._layer_codes[layer] = min(len(self._layer_codes) + 1, 255)
        return code
