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
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from memstrata.backends import pgschema

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
                            self.seen = conn.execute(
                                "SELECT coalesce(max(seq), 0) FROM memstrata_changes"
                            ).fetchone()[0]
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
        oldest = conn.execute("SELECT min(seq) FROM memstrata_changes").fetchone()[0]
        if oldest is not None and oldest > self.seen + 1:
            return None  # pruned past our cursor
        rows = conn.execute("SELECT seq, path FROM memstrata_changes WHERE seq > %s ORDER BY seq",
                            (self.seen,)).fetchall()
        if rows:
            self.seen = rows[-1][0]
        return {r[1] for r in rows}
