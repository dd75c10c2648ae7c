"""`NotifyWatcher`: the `files.watch.ChangeWatcher` of a truth kept in PostgreSQL.

Every write commits a row of the change feed (`memstrata_changes`: seq, path) and
a NOTIFY "seq path", delivered in commit order to every host that LISTENs. The
watcher yields the paths of each batch of notifications, so a host's index
catches up within a round trip of the writer's commit, and nothing is read when
nothing changed. It remembers the highest sequence number seen: when its
connection drops (a restart, a failover) it reconnects with backoff and catches
up by sequence number from the feed; if the feed was pruned past that number it
asks for a full rescan (None). The first yield (an empty batch) means it is
listening, so nothing committed after that is missed.

The functions below read the feed by sequence number for the watcher and for a
host that opens its store: `feed_position` and `changes_since` trade in tokens
'<feed id>:<seq>' that a host keeps in its index (`memstrata_feed` holds the
feed's id, new when the feed starts over, and how far it was pruned).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from memstrata.files.postgres import schema as pgschema

IDLE_S = 0.2  # an idle watcher yields an empty batch this often (stop checks)
DEBOUNCE_S = 0.005  # notifications arriving within this window come as one batch
RECONNECT_MAX_S = 2.0


class NotifyWatcher:
    """Changed store-relative paths, from LISTEN/NOTIFY and the change feed."""

    settle = 0.0  # a notification is sent at commit: the change is complete, catch up at once

    def __init__(self, url: str) -> None:
        self.url = url
        self.seen = 0  # the highest sequence number seen

    def changes(self, stop: threading.Event) -> Iterator[set[str] | None]:
        import psycopg

        conn: Any = None
        delay = 0.05
        started = False
        try:
            while not stop.is_set():
                try:
                    if conn is None:
                        conn = psycopg.connect(self.url, autocommit=True, connect_timeout=3)
                        conn.execute(f"LISTEN {pgschema.CHANNEL}")
                        if started:
                            yield self._missed(conn)
                        else:
                            self.seen = int(feed_position(conn).rpartition(":")[2])
                            started = True
                            yield set()
                        delay = 0.05
                    yield self._batch(conn)
                except psycopg.Error:
                    if conn is not None:
                        with contextlib.suppress(Exception):
                            conn.close()
                    conn = None
                    if stop.wait(delay):
                        return
                    delay = min(delay * 2, RECONNECT_MAX_S)
        finally:
            if conn is not None:
                with contextlib.suppress(Exception):
                    conn.close()

    def _batch(self, conn: Any) -> set[str]:
        paths: set[str] = set()
        for n in conn.notifies(timeout=IDLE_S, stop_after=1):
            self._take(n.payload, paths)
        if paths:
            for n in conn.notifies(timeout=DEBOUNCE_S):
                self._take(n.payload, paths)
        return paths

    def _take(self, payload: str, paths: set[str]) -> None:
        seq, _, path = payload.partition(" ")
        paths.add(path)
        with contextlib.suppress(ValueError):
            self.seen = max(self.seen, int(seq))

    def _missed(self, conn: Any) -> set[str] | None:
        """What changed while the connection was down, by sequence number (None: rescan)."""
        found = _changes_after(conn, self.seen)
        if found is None:
            return None  # pruned past our cursor
        self.seen, paths = found
        return paths


# -- reading the feed by sequence number (the watcher, and a host opening) ----------
# Rows are committed in seq order (FEED_LOCK), so a read that sees seq N saw every
# committed row below it: the highest seq read is a cursor nothing can slip under.


def _feed_row(conn: Any) -> tuple[str, int]:
    """(the feed's id, the highest seq pruned); made again if the table was emptied."""
    row = conn.execute("SELECT id, pruned_through FROM memstrata_feed").fetchone()
    if row is None:
        conn.execute(
            "INSERT INTO memstrata_feed (id) VALUES (gen_random_uuid()::text) "
            "ON CONFLICT DO NOTHING"
        )
        row = conn.execute("SELECT id, pruned_through FROM memstrata_feed").fetchone()
    return str(row[0]), int(row[1])


def _changes_after(conn: Any, seq: int, feed: str | None = None) -> tuple[int, set[str]] | None:
    """(the highest seq read, the paths of the rows after `seq`); None if rows after
    `seq` were pruned (or the feed is not `feed`)."""
    rows = conn.execute(
        "SELECT seq, path FROM memstrata_changes WHERE seq > %s ORDER BY seq", (seq,)
    ).fetchall()
    # Checked after the rows were read: a prune committed before that read shows here.
    now, pruned = _feed_row(conn)
    if seq < pruned or (feed is not None and feed != now):
        return None
    return (int(rows[-1][0]) if rows else seq), {r[1] for r in rows}


def feed_position(conn: Any) -> str:
    """'<feed id>:<seq>': every change up to seq is committed and visible."""
    last = conn.execute("SELECT coalesce(max(seq), 0) FROM memstrata_changes").fetchone()[0]
    feed, pruned = _feed_row(conn)
    return f"{feed}:{max(int(last), pruned)}"


def changes_since(conn: Any, position: str) -> tuple[str, set[str]] | None:
    """(position now, paths changed after `position`); None if the feed cannot tell
    (another feed's position, a malformed one, or pruned past it)."""
    feed, _, seq = position.rpartition(":")
    if not seq.isdigit():
        return None
    found = _changes_after(conn, int(seq), feed)
    return None if found is None else (f"{feed}:{found[0]}", found[1])


def prune_feed(conn: Any) -> None:
    """Drop change-feed rows older than `KEEP_CHANGES`, recording the highest seq dropped
    (a host whose cursor is below it rescans instead)."""
    with conn.transaction():
        _feed_row(conn)
        conn.execute(
            "WITH gone AS (DELETE FROM memstrata_changes WHERE at < now() - %s::interval "
            "RETURNING seq) UPDATE memstrata_feed SET pruned_through = greatest("
            "pruned_through, (SELECT coalesce(max(seq), 0) FROM gone))",
            (pgschema.KEEP_CHANGES,),
        )
