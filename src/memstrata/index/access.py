"""How a store reaches its index: the shared live generation, or a private copy.

The index lives in `<home>/index` (see `generations`), shared by every process
that opens the store. Two disks refuse it:

* a read-only disk (a mounted backup): nothing can be written there, so the
  store reads and searches a private copy of the live generation in a temporary
  folder, caught up with the files there;
* a full disk: an index nobody has open cannot even be opened (SQLite needs
  space for its shared-memory file), so the store does the same until space
  returns, then moves back to the shared index (looked at no more often than
  every `RETRY_SHARED_S`). Nothing is created in `<home>/index` meanwhile.

Either way `notices` says so. A damaged generation is replaced by a new, empty
one that the store fills from the files. `rebuild` makes a new generation beside
the live one and publishes it; on a read-only or full disk it refuses with the
typed error rather than rebuild a throwaway private copy and call that done.

    access = IndexAccess(home, locks, read_only=False, notices=store.notices)
    db, fill = access.connect()    # fill: catch it up from the files before use
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from memstrata.errors import IndexDamaged, MemstrataError, ReadOnlyStore, StorageError, StorageFull
from memstrata.files.locks import LockTable
from memstrata.index.db import Database
from memstrata.index.generations import IndexFiles, low_space

RETRY_SHARED_S = 5.0  # a store reading a private copy on a full disk looks for space this often
R = TypeVar("R")


class IndexAccess:
    """The index a store uses, and why it is a private copy when it is one."""

    def __init__(
        self, home: Path, locks: LockTable, *, read_only: bool, notices: list[str]
    ) -> None:
        self.home = home
        self.shared = IndexFiles(home / "index", locks)
        self.files = self.shared  # the generations in use
        self.private: Path | None = None  # the temporary folder of a private copy
        self.refusal: StorageError | None = None  # why the shared index is not used
        self.notices = notices
        self._retry_at = 0.0
        self._notice: str | None = None  # the notice saying a private copy is read
        if read_only:
            self._go_private(
                ReadOnlyStore(f"{home} is on a read-only disk"),
                f"{home} is read-only: searching a private copy of its index in {{}}",
            )

    def connect(self) -> tuple[Database, bool]:
        """The index in use, and True when it must be filled from the files before use
        (a new, empty one replacing a damaged one)."""
        if self.refusal is None:
            try:
                return Database(files=self.shared), False
            except StorageFull as exc:
                self._go_private(exc, self._full_notice())
            except IndexDamaged as exc:
                try:
                    return self._replace_damaged(exc), True
                except StorageFull as full:
                    self._go_private(full, self._full_notice())
        try:  # (a copy is caught up like the shared index: on open, unless sync=False)
            return Database(files=self.files), False
        except IndexDamaged:  # a copy taken mid-checkpoint, or of a damaged index
            assert self.private is not None
            self.files = IndexFiles(self.private / "rebuilt", LockTable(self.private / "locks"))
            return Database(files=self.files), True

    def retry_shared(self) -> Database | None:
        """On a full disk, the shared index once space has returned (else None)."""
        if not isinstance(self.refusal, StorageFull) or time.monotonic() < self._retry_at:
            return None
        self._retry_at = time.monotonic() + RETRY_SHARED_S
        if low_space(self.shared.folder):
            return None
        try:
            db = Database(files=self.shared)
        except MemstrataError:
            return None
        self.files, self.refusal = self.shared, None
        with contextlib.suppress(ValueError):
            self.notices.remove(self._notice or "")
        return db

    def cannot_rebuild(self) -> str | None:
        """Why the index on disk cannot be rebuilt from here (None: it can)."""
        if isinstance(self.refusal, ReadOnlyStore):
            return (
                f"{self.home} is on a read-only disk: the index on it cannot be rebuilt "
                "here (`reindex` and `doctor --fix` refuse) and no file can be edited; "
                "searches read a private copy caught up with the files, so they miss "
                "nothing. Mount it read-write to rebuild it (`memstrata reindex`)"
            )
        if self.refusal is not None:
            return (
                f"no space left on the disk holding {self.home}: its index cannot be "
                "rebuilt until space returns (`reindex` and `doctor --fix` refuse); "
                "searches read a private copy caught up with the files"
            )
        return None

    def check_rebuild(self) -> None:
        """Raise ReadOnlyStore or StorageFull when the index cannot be rebuilt here."""
        why = self.cannot_rebuild()
        if why is not None:
            raise (ReadOnlyStore if isinstance(self.refusal, ReadOnlyStore) else StorageFull)(why)

    def rebuild(self, fill: Callable[[Database], R]) -> R:
        """Build a new generation with `fill` and publish it (old vectors carried over)."""
        self.check_rebuild()
        files = self.shared
        with files.building():
            old = files.current()
            name = files.new_name()
            try:
                files.folder.mkdir(parents=True, exist_ok=True)
                build = Database(files.path(name))
                try:
                    if old is not None and files.path(old).exists():
                        _carry_vectors(build, files.path(old))
                    result = fill(build)
                    build.checkpoint()
                finally:
                    build.close()
                files.publish(name)
            except BaseException:
                if files.current() != name:
                    files.discard(name)  # a failed build (a full disk) leaves nothing
                raise
        return result

    def close(self) -> None:
        if self.private is not None:
            import shutil  # only for a private index (start-up)

            shutil.rmtree(self.private, ignore_errors=True)
            self.private = None

    # -- private copies --------------------------------------------------------
    def _full_notice(self) -> str:
        return (
            f"no space left on the disk holding {self.home}: reading a private copy of "
            "its index in {} until space returns (writes are refused meanwhile)"
        )

    def _go_private(self, why: StorageError, notice: str) -> None:
        try:
            if self.private is None:
                import shutil  # a private index only (start-up)
                import tempfile

                self.private = Path(tempfile.mkdtemp(prefix="memstrata-private-index-"))
                weakref.finalize(self, shutil.rmtree, self.private, ignore_errors=True)
            folder = self.private / f"index{time.monotonic_ns():x}"  # a fresh copy each time
            self.files = self.shared.copy_to(folder, LockTable(self.private / "locks"))
        except OSError as exc:  # no room for a copy either: say what the store's disk said
            raise why from exc
        self.refusal = why
        head, _, tail = notice.rpartition("{}")  # (not format(): a home may hold braces)
        self._notice = f"{head}{self.private}{tail}"
        if self._notice not in self.notices:
            self.notices.append(self._notice)

    def _replace_damaged(self, exc: IndexDamaged) -> Database:
        """A damaged generation is replaced by a new, empty one (filled from the files)."""
        files = self.shared
        with files.building():
            name = files.new_name()
            try:
                Database(files.path(name)).close()
                files.publish(name)
            except BaseException:
                if files.current() != name:
                    files.discard(name)
                raise
        self.notices.append(f"rebuilt a damaged index ({exc})")
        return Database(files=files)


def _carry_vectors(build: Database, old: Path) -> None:
    """Copy the stored vectors of the old generation into a new one (best effort)."""
    with contextlib.suppress(sqlite3.Error):
        build.conn.execute("ATTACH DATABASE ? AS old", (f"file:{old}?mode=ro",))
        try:
            with build.write() as conn:
                conn.execute(
                    "INSERT OR IGNORE INTO vectors(uid, model, unit, dim, content_hash, vector) "
                    "SELECT uid, model, unit, dim, content_hash, vector FROM old.vectors"
                )
        finally:
            build.conn.execute("DETACH DATABASE old")
