"""`LocalTruth`: the `files.truth` protocol over the plain files of one folder.

The default backend, and the files are exactly what they always were: appends
are `files.appendlog` (lock, one write, fdatasync, torn tails repaired),
rewrites are `files.atomic` (temp file, fsync, rename, fsync of the folder),
locks are `files.locks` (flock, released by the kernel when a holder dies) and
watching is `files.watch` (inotify). A source's generation is its inode and its
version is (inode, size, mtime_ns), so a hand edit made with any editor is a new
version. Folders exist on disk; paths private to this host (the index, locks,
settings, the audit trail, hidden and temporary files) are never listed.

    truth = LocalTruth(Path("/tmp/mem"), LockTable(Path("/tmp/mem/.locks")))
    truth.append("agents/finn/facts.jsonl", b'{"op": "set", ...}\\n')
"""

from __future__ import annotations

import builtins
import contextlib
import os
import stat as statmod
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from memstrata.errors import (
    AlreadyExists,
    MalformedInput,
    NotFound,
    PathOutsideStore,
    StaleWrite,
)
from memstrata.files.appendlog import durable_append, read_from
from memstrata.files.atomic import atomic_write_bytes, fsync_dir
from memstrata.files.diskerrors import disk_errors
from memstrata.files.locks import LockTable
from memstrata.files.truth import (
    EVENTS,
    MISSING,
    SETTINGS,
    Appended,
    Content,
    Entry,
    Misnamed,
    is_local_only,
)
from memstrata.files.watch import ChangeWatcher, default_watcher

MAX_LIST = 100_000  # entries one listing returns at most (a runaway folder stays bounded)


def _entry(rel: str, st: os.stat_result) -> Entry:
    return Entry(
        rel,
        st.st_size,
        st.st_mtime,
        st.st_ino,
        f"{st.st_ino}-{st.st_size}-{st.st_mtime_ns}",
        statmod.S_ISDIR(st.st_mode),
    )


class LocalTruth:
    """A store's sources as the files below `root`."""

    def __init__(self, root: Path, locks: LockTable) -> None:
        self.root = root
        self._root = str(root)
        self.locks = locks
        self.location = str(root)
        self.misnamed = Misnamed()

    def path(self, rel: str) -> Path:
        """The file of a store-relative path (refusing any way out of the root)."""
        return Path(self._fs(rel))

    def _fs(self, rel: str) -> str:
        """The file system path of `rel` as a string (pathlib costs more than a stat)."""
        if rel.startswith("/") or "\x00" in rel or any(p in ("..", ".") for p in rel.split("/")):
            raise PathOutsideStore(f"not a store-relative path: {rel!r}")
        rel = rel.strip("/")
        return f"{self._root}/{rel}" if rel else self._root

    # -- writes -------------------------------------------------------------
    def append(
        self, path: str, data: bytes, *, blank_line: bool = False, record_id: str | None = None
    ) -> Appended:
        app = durable_append(self.locks, self.path(path), data, blank_line=blank_line)
        return Appended(
            path, app.start, app.end, app.repaired, app.ino, f"{app.ino}-{app.end}-{app.mtime_ns}"
        )

    def rewrite(
        self, path: str, data: bytes, *, expected: str | None = None, sync_folder: bool = True
    ) -> Entry:
        target = self.path(path)
        if path.endswith("/"):  # a folder
            with disk_errors(target):
                target.mkdir(parents=True, exist_ok=True)
            return _entry(path.rstrip("/"), os.stat(target))
        with self.locks.hold(str(target)):
            if expected is not None:
                now = self.stat(path)
                if (now.version if now is not None else MISSING) != expected:
                    raise StaleWrite(f"{path} changed since it was read; read it again and retry")
            atomic_write_bytes(target, data, sync_folder=sync_folder)
            return _entry(path, os.stat(target))

    def move(self, src: str, dest: str | None) -> None:
        source = self.path(src)
        if dest is None:
            with disk_errors(source):
                if source.is_dir() and not source.is_symlink():
                    import shutil  # a folder deleted (start-up)

                    shutil.rmtree(source)
                else:
                    try:
                        source.unlink()
                    except FileNotFoundError:
                        return
                fsync_dir(source.parent)
            return
        target = self.path(dest)
        if not os.path.lexists(source):
            raise NotFound(f"no {src!r} in the store")
        if os.path.lexists(target):
            raise AlreadyExists(f"{dest!r} already exists")
        with disk_errors(target):
            target.parent.mkdir(parents=True, exist_ok=True)
            os.rename(source, target)
            fsync_dir(target.parent)
            fsync_dir(source.parent)

    # -- reads --------------------------------------------------------------
    def read_from(self, path: str, offset: int = 0, length: int | None = None) -> bytes:
        return read_from(self._fs(path), offset, length)

    def read(self, path: str) -> Content | None:
        try:
            with open(self._fs(path), "rb") as fh:
                st = os.fstat(fh.fileno())
                return Content(fh.read(), _entry(path, st))
        except (FileNotFoundError, NotADirectoryError):
            return None
        except IsADirectoryError:
            raise MalformedInput(f"{path} is a folder, not a file") from None

    def stat(self, path: str) -> Entry | None:
        try:
            return _entry(path.rstrip("/"), os.stat(self._fs(path)))
        except (FileNotFoundError, NotADirectoryError):
            return None

    def list(
        self,
        folder: str = "",
        *,
        recursive: bool = True,
        skip: Callable[[str], bool] | None = None,
    ) -> list[Entry]:
        """Files and folders below `folder`, sorted; a symlink is followed only when it
        stays inside `folder` (never out of it, not even for a size). A file or folder
        whose name is no valid name (made by hand) is left out and noted in `misnamed`."""
        base = self.path(folder) if folder else self.root
        try:
            real_base = Path(os.path.realpath(base))
        except OSError:
            return []
        prefix = f"{folder.strip('/')}/" if folder.strip("/") else ""
        if not prefix and recursive:
            self.misnamed.found.clear()  # a full listing finds them all again
        out: list[Entry] = []
        for dirpath, dirnames, filenames in os.walk(base):
            here = Path(dirpath)
            rel_here = here.relative_to(base).as_posix()
            rel_here = "" if rel_here == "." else f"{rel_here}/"
            dirnames[:] = sorted(
                d
                for d in dirnames
                if not is_local_only(prefix + rel_here + d)
                and not self.misnamed.skips(prefix + rel_here + d, d)
                and not (skip is not None and skip(prefix + rel_here + d))
            )
            for name in [*dirnames, *filenames]:
                rel = prefix + rel_here + name
                if is_local_only(rel) or self.misnamed.skips(rel, name):
                    continue
                if skip is not None and not recursive and skip(rel):
                    continue
                found = _lstat_inside(f"{dirpath}/{name}", real_base)  # no Path per file
                if found is not None:
                    out.append(_entry(rel, found))
            if len(out) > MAX_LIST or not recursive:
                break
        out.sort(key=lambda e: e.path)
        return out

    # -- coordination -------------------------------------------------------
    def lock(self, name: str, timeout: float = 30.0) -> contextlib.AbstractContextManager[None]:
        # Named after the absolute path, as appends and rewrites name theirs.
        return self.locks.hold(f"{self.root}/{name}", timeout=timeout)

    def watch(self) -> ChangeWatcher:
        return _Private(default_watcher(self.root))

    def host_files(self) -> builtins.list[str]:
        """This host's settings and audit trail (no memory, but exported for the record)."""
        try:
            names = sorted(os.listdir(self.root))
        except FileNotFoundError:
            return []
        return [
            n for n in names if (n in SETTINGS or EVENTS.match(n)) and (self.root / n).is_file()
        ]

    def close(self) -> None:
        pass


def _lstat_inside(path: str | Path, root: Path) -> os.stat_result | None:
    """stat of `path`, following a symlink only if it stays below `root`; None if it
    vanished meanwhile, dangles or leads out."""
    try:
        st = os.lstat(path)
        if statmod.S_ISLNK(st.st_mode):
            target = Path(os.path.realpath(path))
            if root not in target.parents:
                return None
            st = os.stat(target)
    except OSError:
        return None
    return st


class _Private:
    """A folder watcher that leaves out what is private to this host."""

    def __init__(self, inner: ChangeWatcher) -> None:
        self.inner = inner

    def changes(self, stop: threading.Event) -> Iterator[set[str] | None]:
        for batch in self.inner.changes(stop):
            yield None if batch is None else {p for p in batch if not is_local_only(p)}
