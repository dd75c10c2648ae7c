"""Replace the head of a growing append-only file without losing what arrives meanwhile.

Compaction (LOG.md, session transcripts) is slow when a model writes the
summary, and writers must not wait for it. So it works in three steps:

1. `take_snapshot`: read the file under its lock (a moment), release the lock.
2. The caller summarises and archives the snapshot with no lock held; writers
   keep appending after the snapshot's end.
3. `splice`: take the lock again, check the file still starts with the bytes
   that were compacted (else `StaleWrite`: someone rewrote it), and atomically
   replace it with `head + everything after the compacted prefix`, verbatim.

Appends are serialised by the same lock (`files.appendlog`), so every append
acknowledged before step 3 is in the carried-over tail, and every later one
lands in the new file.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from memstrata.errors import IndexError_, StaleWrite
from memstrata.files.appendlog import read_from
from memstrata.files.atomic import atomic_write_bytes, fsync_dir
from memstrata.index.reconcile import SourceSpec, SyncReport, catch_up_append

if TYPE_CHECKING:
    from memstrata.store import Store


@dataclass(frozen=True)
class Snapshot:
    path: Path
    data: bytes


def take_snapshot(store: Store, path: Path) -> Snapshot:
    """The file's bytes, read under its lock so no append is seen half-written."""
    with store.locks.hold(str(path)):
        return Snapshot(path, read_from(path, 0))


def splice(
    store: Store, snap: Snapshot, upto: int, head: bytes, spec: SourceSpec
) -> tuple[int, bytes]:
    """Replace `snap.data[:upto]` with `head`, keeping every byte after it.

    Returns (size of the file before, the carried-over tail). Re-indexes the file
    while still holding the lock, so the index never sees a half-applied state.

    Raises:
        StaleWrite: the compacted prefix changed since the snapshot (hand edit,
            another compaction); the file is left as it was.
    """
    with store.locks.hold(str(snap.path)):
        current = read_from(snap.path, 0)
        if current[:upto] != snap.data[:upto]:
            raise StaleWrite(
                f"{snap.path.name} was rewritten while it was being compacted; nothing was "
                "changed: compact again"
            )
        tail = current[upto:]
        atomic_write_bytes(snap.path, head + tail)
        reindex_append(store, spec)
    return len(current), tail


def reindex_append(store: Store, spec: SourceSpec) -> None:
    """Re-parse an append source from scratch (its inode changed); a failure only
    leaves the index stale, which the next open repairs from the files."""
    try:
        catch_up_append(store.db, spec, SyncReport(), True)
    except (sqlite3.Error, IndexError_):
        store.sync()


def durable_copy(data: bytes, dest: Path) -> None:
    """Write `data` to a new file `dest` and make both it and its folder durable."""
    created = not dest.parent.exists()
    atomic_write_bytes(dest, data)
    if created:
        fsync_dir(dest.parent.parent)


def move_durably(src: Path, dest: Path) -> None:
    """Rename `src` to `dest` (same file system) and fsync both folders."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    os.replace(src, dest)
    fsync_dir(dest.parent)
    fsync_dir(src.parent)
