"""The index work of acknowledged writes, done after the acknowledgement.

A write is acknowledged once the truth has it (an append synced, a replace renamed
and synced); indexing it is not what makes it last, so `Engine.append` and
`Engine.index_file` queue it here and return. The queue is worked off, in order,
by whichever comes first:

* a worker thread the first queued item wakes: it lets a burst of writes go first,
  waiting until none came for `QUIET_S` (at most `MAX_WAIT_S` after the first), then
  indexes all of them in one transaction (it ends after a second without work). It
  is not a daemon thread: when the main thread ends (a CLI command that never closes
  its store), it does what is queued at once and ends, and the interpreter waits for
  it and for the jobs it started (a LOG compaction), as it did when the work was done
  inside the write;
* any top-level read or write of the index in this process: `Database` runs the
  queue (its `pending` hook) under the connection's lock before it, so a read that
  starts after a write returned finds it indexed, whatever thread reads;
* `Engine.drain` and `Engine.close`.

Other processes do not depend on it: an append is noted in `index/appended` before
it is acknowledged and they catch it up from the file, as they always did. A process
killed with work queued leaves its index behind the files, as a failed index write
does; the next process to open the store catches it up.

Work is per source and caught up from the truth as it is when the work runs (an
append source from where the index stopped, a whole source re-parsed), so a burst
of appends to one LOG.md is indexed in one catch-up and one transaction, and a
source replaced meanwhile (a compaction by another process) is read as it is now.
What a write asked to be told (`then`: the LOG's compaction check, which needs the
entry count) is called once its source is indexed, with that count (None if the
index write failed: the engine is then stale and the next read catches up); of
writes to one source indexed together, the latest one's (the count is the same for
all of them, and one check of it is enough), and not again for a count it was
already told (a catch-up can index an append made after its item was taken: the
next item of that source then finds nothing new).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from memstrata.index.db import INDEX_LAG
from memstrata.index.queries import doc_count
from memstrata.index.reconcile import SourceSpec, SyncReport, catch_up_append, index_whole
from memstrata.values import value_type

if TYPE_CHECKING:
    from memstrata.store.engine import Engine

IDLE_S = 1.0  # the worker thread ends after this long without work
QUIET_S = 0.01  # the worker waits until no write came for this long ...
MAX_WAIT_S = 0.1  # ... but at most this long after the first one it has not indexed
POLL_S = 0.05  # how soon the worker sees the main thread end (the interpreter exiting)
Then = Callable[[int | None], object]


@value_type
class Item:
    """A source to bring the index up to: appended to, or replaced whole."""

    spec: SourceSpec
    whole: bool
    then: Then | None = None


class Deferred:
    """The queue of one engine's index work and its worker (module docstring)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._items: dict[str, Item] = {}  # by source path, in the order first queued
        self._cond = threading.Condition(threading.Lock())
        self._worker: threading.Thread | None = None
        self._closed = False
        self._first = self._last = 0.0  # when the oldest and newest queued items came
        self.told: dict[str, int] = {}  # the docs count last told, by source path

    def add(self, spec: SourceSpec, *, whole: bool = False, then: Then | None = None) -> None:
        """Queue the index work of a write to `spec` (acknowledged: never raises)."""
        with self._cond:
            self._last = time.monotonic()
            if not self._items:
                self._first = self._last
                self._cond.notify()  # an idle worker starts waiting for quiet
            item = self._items.get(str(spec.path))
            if item is None:
                item = self._items[str(spec.path)] = Item(spec, whole)
            else:
                item.spec, item.whole = spec, item.whole or whole
            if then is not None:
                item.then = then
            if self._worker is None and not self._closed:
                self._worker = threading.Thread(target=self._work, name="memstrata index")
                self._worker.start()

    def __bool__(self) -> bool:
        return bool(self._items)

    def take(self) -> list[Item]:
        with self._cond:
            items, self._items = list(self._items.values()), {}
        return items

    def _work(self) -> None:
        main = threading.main_thread()
        while True:
            with self._cond:
                idle_until = time.monotonic() + IDLE_S
                while not self._items and not self._closed and main.is_alive():
                    if time.monotonic() >= idle_until:
                        break
                    self._cond.wait(POLL_S)
                while self._items and not self._closed and main.is_alive():
                    until = min(self._last + QUIET_S, self._first + MAX_WAIT_S)
                    if time.monotonic() >= until:
                        break
                    self._cond.wait(min(POLL_S, until - time.monotonic()))
                if not self._items or self._closed:
                    self._worker = None
                    return
            self.engine.settle()

    def close(self) -> None:
        """No worker from now on (the engine is closing: it runs what is left itself)."""
        with self._cond:
            self._closed = True
            worker = self._worker
            self._cond.notify_all()
        if worker is not None and worker is not threading.current_thread():
            worker.join()


def run(engine: Engine, items: list[Item]) -> None:
    """Index `items` (the `pending` hook of the engine's database: under its lock)."""
    db = engine.db
    told: list[tuple[Item, int | None]] = []
    try:
        with db.write():
            for item in items:
                told.append((item, _index(engine, item)))
    except INDEX_LAG:
        engine.mark_stale()
        told = [(item, None) for item, _ in told]
    if items:
        engine.semantic.later()
    for item, docs in told:
        path = str(item.spec.path)
        if item.then is None or (docs is not None and engine.deferred.told.get(path) == docs):
            continue
        if docs is not None:
            engine.deferred.told[path] = docs
        item.then(docs)


def _index(engine: Engine, item: Item) -> int | None:
    try:
        if item.whole:
            index_whole(engine.db, engine.origin, item.spec, force=True)
            return None
        catch_up_append(engine.db, engine.origin, item.spec, SyncReport(), False)
        return doc_count(engine.db, source=str(item.spec.path)) if item.then else None
    except INDEX_LAG:
        engine.mark_stale()
        return None
