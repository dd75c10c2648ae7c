"""Replace the head of a growing append-only file without losing what arrives meanwhile.

Compaction (LOG.md, session transcripts) is slow when a model writes the
summary, and writers must not wait for it. So it works in three steps:

1. `take_snapshot`: read the file under its lock (a moment), release the lock.
2. The caller summarises and archives the snapshot with no lock held; writers
   keep appending after the snapshot's end.
3. `splice`: take the lock again, check the file still starts with the bytes
   that were compacted (else `StaleWrite`: someone rewrote it), and atomically
   replace it with `head + everything after the compacted prefix`, verbatim.

Appends are serialised by the same lock (`Engine.lock(path)`: the flock of
`files.appendlog`, or the advisory lock PostgreSQL appends wait on), so every
append acknowledged before step 3 is in the carried-over tail, and every later
one lands in the new file. `archived` removes the archive copy again when the
splice fails before replacing the file, so a refused compaction stores nothing twice
(and keeps it when the failure came after the replace: the copy is then the only one).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from memstrata.errors import MemstrataError, StaleWrite
from memstrata.values import value_type

if TYPE_CHECKING:
    from memstrata.index.reconcile import SourceSpec
    from memstrata.store.view import Store


@value_type(frozen=True)
class Snapshot:
    path: Path
    data: bytes


def take_snapshot(store: Store, path: Path) -> Snapshot:
    """The source's bytes, read under its lock so no append is seen half-written."""
    engine = store.engine
    with engine.lock(engine.rel(path)):
        return Snapshot(path, engine.read_from(path))


def splice(
    store: Store, snap: Snapshot, upto: int, head: bytes, spec: SourceSpec
) -> tuple[int, bytes]:
    """Replace `snap.data[:upto]` with `head`, keeping every byte after it.

    Returns (size of the source before, the carried-over tail). Re-indexes the
    source while still holding the lock, so the index never sees a half-applied state.

    Raises:
        StaleWrite: the compacted prefix changed since the snapshot (hand edit,
            another compaction); the source is left as it was.
    """
    engine = store.engine
    with engine.editing(snap.path) as edit:
        current = edit.data
        if not edit.exists or current[:upto] != snap.data[:upto]:
            raise StaleWrite(
                f"{snap.path.name} was rewritten while it was being compacted; nothing was "
                "changed: compact again"
            )
        tail = current[upto:]
        # The edit passes the version it read: a lost lock (a database connection that
        # dropped) ends in a StaleWrite instead of a lost append.
        edit(head + tail)
        engine.reparse(spec)  # its generation changed: re-parsed from scratch
    return len(current), tail


def durable_copy(store: Store, data: bytes, dest: Path) -> None:
    """Write `data` to a new source `dest`, durably."""
    store.engine.put(dest, data)


@contextlib.contextmanager
def archived(
    store: Store,
    data: bytes,
    dest: Path,
    spec: SourceSpec | None = None,
    *,
    source: Path,
    head: bytes,
) -> Iterator[None]:
    """Write the archive copy `dest` (indexed by `spec`, if given) before the splice in
    the body, which puts `head` in place of the archived bytes at the start of `source`;
    if the body raises before that landed, remove the copy again: the entries are still
    in the source, and a copy kept would store (and find) them twice.

    The copy comes first so that a crash between the two leaves a duplicate, never a
    loss; only a process killed in that moment leaves one. A body that raises once the
    source starts with `head` (the folder's sync after the rename failed, the re-index
    raised) leaves the copy alone: it holds the only copy of what was spliced out.
    """
    durable_copy(store, data, dest)
    if spec is not None:
        store.engine.index_file(spec)
    try:
        yield
    except BaseException:
        with contextlib.suppress(MemstrataError, OSError):  # if this fails: a duplicate
            if store.engine.read_from(source, 0, len(head)) != head:
                store.engine.move(dest, None, lock=False)
                if spec is not None:
                    store.engine.index_file(spec)  # the copy is gone: its docs go with it
        raise


def move_durably(store: Store, src: Path, dest: Path) -> None:
    """Move the source `src` to `dest`, durably."""
    store.engine.move(src, dest, lock=False)
