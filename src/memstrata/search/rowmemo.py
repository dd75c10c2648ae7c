"""The docs rows stage 2 read, and the candidates made of them, kept while the index is
unchanged.

Stage 2 reads the 16 columns of each stage-1 match and the search makes a `Hit` of each
row that passes its filters: about 100 a query, most of them read by an earlier query
too (at 10k memories 86% of a query's candidates came back for an earlier one of the
`bench ops` queries). A row and the `Hit` made of it (score 0, no snippet, no explain)
depend only on the index and on the filters (the WHERE terms and their parameters), so
they are kept here, per filter, and given again until the index changes.

    stamp = (the connection, PRAGMA data_version, the connection's total_changes)

`data_version` changes when any other connection (another process, another store of
this one) commits; `total_changes` counts this connection's own inserts, updates and
deletes, triggers included (the deferred index work of this process's writes, the
catch-up of files changed by hand or by other processes: every change the index takes
goes through one of the two). A new connection (another generation, a private copy)
is another stamp. The stamp is read inside the search's read transaction, so it
describes the rows read with it; inside a transaction the caller opened (its writes not
yet committed, perhaps rolled back later) nothing is kept or given.

When the stamp changed on the same connection, only the rows of the docs written since
are dropped (`RowMemo.renew`), not all of them: an append or a NOW update changed one or
two rows, and dropping every row made the next searches read and rebuild ~100 rows each
(a quarter of a recall's CPU at p95 after a write). The docs written since are those of
the two change feeds (`doc_changes`: inserts, deletes, changes of text, tags, scope or
superseded; `doc_touches`: changes of the other columns read here, `index.schema`), by
their uid's row id now. A deleted doc's row id is never matched by stage 1 again (FTS5 is
kept in step by triggers) until an insert uses it, which is a change. Past `CHANGES`
changes, or on another connection (a new generation), the filter starts afresh.

A `Hit` given here is shared by every search that reads its row while the index is
unchanged: it is a frozen value, and every stage copies it (`Hit.but`) before changing
its score or explain, so nobody writes into it; the hits a search returns get a `meta`
of their own (`own_meta`), as each got one when they were made per search.
"""

from __future__ import annotations

import sqlite3
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

from memstrata.search.query import Hit

FILTERS = 4  # filters (WHERE terms and parameters) whose rows are kept, the least recent dropped
ROWS = 8_192  # rows kept per filter; past it the filter starts afresh
CHANGES = ROWS  # docs written since the last search past which the filter starts afresh

_FEEDS = (
    "SELECT (SELECT coalesce(max(seq), 0) FROM doc_changes),"
    " (SELECT coalesce(max(seq), 0) FROM doc_touches)"
)
_WRITTEN = (
    "SELECT d.id FROM doc_changes c JOIN docs d ON d.uid = c.uid WHERE c.seq > ?"
    " UNION SELECT d.id FROM doc_touches t JOIN docs d ON d.uid = t.uid WHERE t.seq > ?"
)


class RowMemo:
    """The rows (row id -> docs row, or None: it did not pass the filter) and hits of one
    filter, each kept until its doc is written (`renew`)."""

    def __init__(self) -> None:
        self.stamp: tuple[Any, ...] | None = None
        self.feeds: tuple[int, int] | None = None  # the change feeds' tops when stamped
        self.rows: dict[int, Any] = {}
        self.hits: dict[int, Hit] = {}

    def hits_of(self, rows: list[Any], make: Callable[[Any], Hit]) -> list[Hit]:
        """`make(row)` of each row (keyed by its row id, `row[0]`), made once."""
        made = self.hits
        out = []
        for r in rows:
            hit = made.get(r[0])
            if hit is None:
                hit = made[r[0]] = make(r)
            out.append(hit)
        return out

    def renew(self, conn: sqlite3.Connection, stamp: tuple[Any, ...]) -> None:
        """Keep what is still true of the index `stamp` describes (the module docstring)."""
        if stamp == self.stamp and len(self.rows) <= ROWS:
            return
        top = conn.execute(_FEEDS).fetchone()
        before, last, self.feeds = self.feeds, self.stamp, (int(top[0]), int(top[1]))
        self.stamp = stamp
        if (
            before is None
            or last is None
            or last[0] is not conn  # another connection: another generation
            or len(self.rows) > ROWS
            or not 0 <= _written(before, self.feeds) <= CHANGES
            or self.feeds[0] < before[0]
            or self.feeds[1] < before[1]
        ):
            self.rows, self.hits = {}, {}
            return
        for (rid,) in conn.execute(_WRITTEN, before):
            self.rows.pop(rid, None)
            self.hits.pop(rid, None)


class RowMemos:
    """The `RowMemo` of each recent filter (kept in `Store.df_cache`, per generation)."""

    def __init__(self) -> None:
        self._by_filter: OrderedDict[Hashable, RowMemo] = OrderedDict()

    def get(self, conn: sqlite3.Connection, where: list[str], params: list[Any]) -> RowMemo:
        """The memo of this filter, renewed if the index changed since it was filled.
        Call it first in the search's own read transaction (`engine._snapshot`); inside
        a transaction the caller opened, use a `RowMemo()` kept nowhere instead."""
        key = (tuple(where), tuple(params))
        memo = self._by_filter.get(key)
        if memo is None:
            memo = self._by_filter[key] = RowMemo()
            while len(self._by_filter) > FILTERS:
                self._by_filter.popitem(last=False)
        else:
            self._by_filter.move_to_end(key)
        memo.renew(conn, index_stamp(conn))
        return memo


def _written(before: tuple[int, int], now: tuple[int, int]) -> int:
    """At most how many docs were written between two reads of the feeds' tops."""
    return (now[0] - before[0]) + (now[1] - before[1])


def index_stamp(conn: sqlite3.Connection) -> tuple[Any, ...]:
    """The `stamp` of the index as `conn` sees it now (the module docstring): equal while
    nobody changed it, outside a transaction the caller opened."""
    return (conn, conn.execute("PRAGMA data_version").fetchone()[0], conn.total_changes)


def own_meta(hit: Hit, snippet: str | None = None) -> Hit:
    """`hit` with a `meta` dict of its own (a hit a search returns: its caller may change
    it without changing the kept one), and `snippet` when given (one copy, not two)."""
    new = object.__new__(Hit)
    new.__dict__.update(hit.__dict__)
    new.__dict__["meta"] = dict(hit.meta)
    if snippet is not None:
        new.__dict__["snippet"] = snippet
    return new
