"""Appends acknowledged before they are indexed, and how every process learns of them.

An append is acknowledged once its bytes are durable in the truth (the files are
the truth); indexing it is not on the write's path. The writer keeps the source
as pending and indexes it in a background job right after the acknowledgement.
Nothing acknowledged is invisible meanwhile:

* the writer's own next index read indexes its pending sources first
  (`Pending.flush`, called by `Engine._before_read`);
* every other process on this host learns of the append from a note the writer
  adds, before acknowledging, to `index/appended` (one line per append: the
  source's store-relative name; a plain write, no fsync: the note is about the
  derived index, not the truth, and a machine that crashed restarts every process,
  each catching up on open). A process's next index read reads the notes added
  since it last looked (one `stat` when there are none) and catches those sources
  up from the files (`index.notes.AppendNotes.news`).

The notes file is replaced by a new one past NOTES_MAX_BYTES; a reader that finds it
gone or replaced cannot tell what it missed and catches up every source once. A
writer killed between its durable append and its note leaves the source for the
next open's catch-up (or the next append to it), as a writer killed before its
index write always did.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memstrata.index.reconcile import SourceSpec


class Pending:
    """Sources this process appended to and has not indexed yet (thread-safe)."""

    def __init__(self) -> None:
        self._specs: dict[str, SourceSpec] = {}
        self._lock = threading.Lock()

    def add(self, spec: SourceSpec) -> None:
        with self._lock:
            self._specs.setdefault(str(spec.path), spec)

    def __bool__(self) -> bool:
        return bool(self._specs)

    def flush(self, index: Callable[[SourceSpec], None]) -> None:
        """Index every pending source (`index(spec)` catches one up from the truth).
        The caller holds the index's lock (`Database.exclusive`), so a reader never
        reads between a background flush taking a source and indexing it."""
        with self._lock:
            specs, self._specs = list(self._specs.values()), {}
        for spec in specs:
            index(spec)
