"""Index generations: the derived index is swapped whole, never replaced under a reader.

    <home>/index/
      CURRENT              the live generation's name, replaced atomically
      <gen>.db             one generation, with its own <gen>.db-wal and <gen>.db-shm

SQLite pairs `X-wal` and `X-shm` with a database by file name, so renaming a new
database over one that other processes hold open in WAL mode could pair an old
connection's log with the new file. A rebuild (`reindex`, `doctor --fix`, the
recovery of a damaged index) therefore writes a new generation under a name
never used before, then points CURRENT at it. Before each top-level read or
write, an open index compares the identity of CURRENT and of its own generation
file with what it opened (two `stat` calls) and reopens on a difference; a
missing folder or generation (deleted by hand) gets a new, empty generation that
the store fills from the files. A process still writing into an unlinked
generation harms nothing: the index is derived, and that process moves to the
live generation on its next access and catches it up from the files.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

from memstrata.errors import LockTimeout
from memstrata.files.atomic import atomic_write_bytes
from memstrata.files.diskerrors import translate
from memstrata.files.locks import LockTable

POINTER = "CURRENT"
SUFFIXES = ("", "-wal", "-shm", "-journal")
BUILD_LOCK = "index-generation"
BUILD_TIMEOUT_S = 600.0

Identity = tuple[int, int, int]  # (inode, size, mtime_ns) of the pointer file
# Less free space than this and a connection may not get its shared-memory file (32 KiB)
# or its first log frames: the disk counts as full for opening an index.
LOW_SPACE_BYTES = 256 * 1024
SHM_BYTES = 32 * 1024  # a WAL database's -shm file once a connection has set it up


def low_space(folder: Path) -> bool:
    """True when the disk holding `folder` has (almost) no space left."""
    try:
        st = os.statvfs(folder)
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < LOW_SPACE_BYTES


def identity(path: Path) -> Identity | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


def inode(path: Path) -> int | None:
    """The inode of `path` (None if missing): a generation's database changes size and
    time with every checkpoint, but only a replacement changes its inode."""
    try:
        return os.stat(path).st_ino
    except FileNotFoundError:
        return None


class IndexFiles:
    """The folder of generations and its CURRENT pointer.

    Example:
        >>> files = IndexFiles(home / "index", engine.locks)  # doctest: +SKIP
        >>> files.path(files.ensure())  # doctest: +SKIP
        PosixPath('.../index/g18a2....db')
    """

    def __init__(self, folder: Path, locks: LockTable) -> None:
        self.folder = folder
        self.pointer = folder / POINTER
        self.locks = locks

    def path(self, name: str) -> Path:
        return self.folder / f"{name}.db"

    def current(self) -> str | None:
        """The live generation's name, or None if there is none (yet, or deleted)."""
        try:
            name = self.pointer.read_text(encoding="utf-8").strip()
        except (FileNotFoundError, NotADirectoryError, UnicodeDecodeError):
            return None
        return name if name.isalnum() else None

    def new_name(self) -> str:
        """A generation name never used before (sortable by creation time)."""
        return f"g{time.time_ns():x}{os.urandom(3).hex()}"

    @contextlib.contextmanager
    def building(self) -> Iterator[None]:
        """Serialise the creation and publication of generations across processes."""
        with self.locks.hold(BUILD_LOCK, timeout=BUILD_TIMEOUT_S):
            yield

    def ensure(self) -> str:
        """The live generation, creating an empty one if there is none."""
        name = self.current()
        if name is not None and self.path(name).exists():
            self.collect_leftovers(name)
            return name
        with self.building():
            name = self.current()
            if name is not None and self.path(name).exists():
                return name
            self.folder.mkdir(parents=True, exist_ok=True)
            name = self.new_name()
            try:
                sqlite3.connect(self.path(name)).close()  # the schema comes with the first open
                self.publish(name)
            except OSError as exc:  # a full disk: leave no empty generation behind
                self.discard(name)
                raise translate(exc, self.folder) or exc from exc
            return name

    def ready(self, name: str) -> bool:
        """True when opening generation `name` needs no new space: its shared-memory
        file is set up already (another connection has it open, or had it)."""
        try:
            return os.stat(f"{self.path(name)}-shm").st_size >= SHM_BYTES
        except OSError:
            return False

    def discard(self, name: str) -> None:
        """Unlink a generation that was never published (a failed build)."""
        for suffix in SUFFIXES:
            with contextlib.suppress(OSError):
                os.unlink(self.folder / f"{name}.db{suffix}")

    def collect_leftovers(self, live: str) -> None:
        """Unlink generations other than `live` left by failed builds or swaps (a full
        disk, a killed rebuild), unless a build is running now (it holds the lock)."""
        try:
            names = os.listdir(self.folder)
        except OSError:
            return
        if all(n.split(".db", 1)[0] == live for n in names if ".db" in n):
            return  # the common case: a listing, no lock
        with contextlib.suppress(LockTimeout, OSError), self.locks.hold(BUILD_LOCK, timeout=0):
            if self.current() == live:
                self.collect(keep=live)

    def publish(self, name: str) -> None:
        """Make `name` the live generation and delete every other one. Hold `building()`."""
        atomic_write_bytes(self.pointer, f"{name}\n".encode())
        self.collect(keep=name)

    def collect(self, keep: str) -> None:
        """Unlink the files of every generation but `keep` (database first, then its logs,
        so no process can open a generation whose log is gone)."""
        try:
            names = os.listdir(self.folder)
        except FileNotFoundError:
            return
        stale = {n.split(".db", 1)[0] for n in names if ".db" in n} - {keep}
        for gen in sorted(stale):
            for suffix in SUFFIXES:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.folder / f"{gen}.db{suffix}")

    def copy_to(self, folder: Path, locks: LockTable) -> IndexFiles:
        """A private copy of the live generation in `folder` (for a read-only store)."""
        copy = IndexFiles(folder, locks)
        folder.mkdir(parents=True, exist_ok=True)
        name = self.current()
        if name is not None and self.path(name).exists():
            for suffix in ("", "-wal"):
                src = Path(f"{self.path(name)}{suffix}")
                with contextlib.suppress(FileNotFoundError):
                    import shutil  # a copy of a generation (start-up)

                    shutil.copyfile(src, f"{copy.path(name)}{suffix}")
            if copy.path(name).exists():
                atomic_write_bytes(copy.pointer, f"{name}\n".encode())
        return copy


def live_database(index_dir: Path) -> Path | None:
    """The live generation's database file under `<home>/index`, if there is one."""
    name = IndexFiles(index_dir, LockTable(index_dir)).current()
    path = index_dir / f"{name}.db" if name else None
    return path if path is not None and path.exists() else None
