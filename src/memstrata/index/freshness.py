"""Keeping a long-running process's index fresh: dirty sources from a watcher.

A short-lived process catches the index up when it opens the store. A process
that stays (the MCP server, a long-lived `Store`) also sees what other
processes and people write afterwards: a background thread consumes a
`ChangeWatcher` and records the changed paths; each read first catches up only
those sources (a read when nothing changed costs one set check). The first
drain after the watcher starts asks for a full rescan, which covers whatever
changed between opening the store and the watcher's first batch; so does a
watcher that lost track, or one that failed (then a periodic rescan takes over).

A changed path is caught up once it has settled for `SETTLE_S`: a process that
appends through the API indexes its own record right after writing it, so by
then the source is usually current and the check costs no write transaction
(catching up mid-append made eight busy writers contend for the index). A
watcher whose changes arrive only once complete (PostgreSQL's NOTIFY is sent at
commit) says so with a `settle` attribute of 0, and its paths are caught up at once.

    keeper = Freshness(engine.truth.watch())   # changed store-relative paths
    keeper.start()
    rescan, paths = keeper.drain()   # before each read
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from memstrata.files.watch import ChangeWatcher, PeriodicRescan

READY_TIMEOUT_S = 5.0
SETTLE_S = 0.05


class Freshness:
    """Changed paths reported by a watcher thread, drained by readers."""

    def __init__(self, watcher: ChangeWatcher, ignore: Callable[[str], bool] | None = None) -> None:
        self.watcher = watcher
        self.ignore = ignore or (lambda path: False)
        self.settle = float(getattr(watcher, "settle", SETTLE_S))
        self.failure: str | None = None
        self._dirty: dict[str, float] = {}  # path -> when it was first reported
        self._rescan = True
        self._guard = threading.Lock()
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="memstrata-watch", daemon=True)

    def start(self, timeout: float = READY_TIMEOUT_S) -> bool:
        """Start watching; True once the watcher reports it is watching."""
        self._thread.start()
        return self._ready.wait(timeout)

    def _run(self) -> None:
        try:
            self._consume(self.watcher)
        except Exception as exc:  # the thread must not die silently: degrade and say why
            self.failure = f"file watching stopped ({type(exc).__name__}: {exc}); rescanning"
            self._consume(PeriodicRescan())
        finally:
            self._ready.set()

    def _consume(self, watcher: ChangeWatcher) -> None:
        for batch in watcher.changes(self._stop):
            if batch is None:
                with self._guard:
                    self._rescan = True
            else:
                kept = [p for p in batch if not self.ignore(p)]
                if kept:
                    now = time.monotonic()
                    with self._guard:
                        for p in kept:
                            self._dirty.setdefault(p, now)
            self._ready.set()
            if self._stop.is_set():
                return

    def drain(self, settle: float | None = None) -> tuple[bool, set[str]]:
        """(rescan everything?, paths changed at least `settle` seconds ago); resets both."""
        if not self._rescan and not self._dirty:  # the common case, without the lock
            return False, set()
        cutoff = time.monotonic() - (self.settle if settle is None else settle)
        with self._guard:
            rescan, self._rescan = self._rescan, False
            ready = {p for p, t in self._dirty.items() if t <= cutoff}
            for p in ready:
                del self._dirty[p]
        return rescan, ready

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=2.0)
