"""Durable appends to shared line- or block-oriented logs (JSONL, LOG.md).

One append = one `os.write` of complete bytes under the file's cross-process
lock, then `fdatasync`: the write is acknowledged only once it is on disk. A
writer killed mid-write can leave an unterminated tail; the next appender sees
the file does not end in a newline and terminates it first, so the fragment
becomes one corrupt line that readers skip and report instead of a line that
swallows the next record. A write the disk refuses (full, read-only) is cut
back to where it started, so a failed append stores nothing and a caller's
retry never duplicates it. The first append to a file (size 0 before it) also syncs
its folder, and the folders made for it theirs, so that its name lasts as its bytes do.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from memstrata.files.atomic import fsync_dir
from memstrata.files.diskerrors import disk_errors
from memstrata.files.locks import LockTable
from memstrata.values import value_type


@value_type(frozen=True)
class Appended:
    """Where an append landed: byte range [start, end) in the file."""

    path: Path
    start: int
    end: int
    repaired: bool
    ino: int
    mtime_ns: int = 0  # of the file right after this append (its version, with ino and end)


def durable_append(
    locks: LockTable, path: Path, data: bytes, *, blank_line: bool = False
) -> Appended:
    """Append `data` (which must end with a newline) to `path` durably.

    With `blank_line`, the file is first made to end in an empty line, so that
    block formats (LOG.md entries) always start a fresh block.
    """
    if not data.endswith(b"\n"):
        raise ValueError("appended data must end with a newline")
    with disk_errors(path):
        made: list[Path] = []
        with locks.hold(str(path)):
            flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
            try:  # the folder exists but for a new file's first append: no stat before
                fd = os.open(path, flags, 0o644)
            except (FileNotFoundError, NotADirectoryError):
                made = _make_folders(path.parent)
                fd = os.open(path, flags, 0o644)
            try:
                st = os.fstat(fd)
                size, repaired = _append(fd, st.st_size, data, blank_line=blank_line)
                after = os.fstat(fd)
            finally:
                os.close(fd)
            if st.st_size == 0:  # a new file: its name, and the folders made for it
                for folder in (path.parent, *(f.parent for f in made)):
                    fsync_dir(folder)
    return Appended(path, size, size + len(data), repaired, st.st_ino, after.st_mtime_ns)


def _make_folders(folder: Path) -> list[Path]:
    """Make `folder` and its missing parents; return those made, innermost first."""
    if folder.is_dir():
        return []
    missing = [folder, *(p for p in folder.parents if not p.is_dir())]
    folder.mkdir(parents=True, exist_ok=True)
    return [f for f in missing if f.is_dir()]


def _append(fd: int, size: int, data: bytes, *, blank_line: bool) -> tuple[int, bool]:
    """Write `data` at the end of `fd` (size `size`); return where it starts and if repaired.

    On any failure the file is truncated back to `size`: nothing of this append stays.
    """
    original = size
    repaired = False
    try:
        if size > 0:
            tail = os.pread(fd, 2, max(0, size - 2))
            fix = b""
            if not tail.endswith(b"\n"):
                fix = b"\n\n" if blank_line else b"\n"
            elif blank_line and tail != b"\n\n" and size > 1:
                fix = b"\n"
            if fix:
                os.write(fd, fix)
                size += len(fix)
                repaired = True
        view = memoryview(data)
        written = 0
        while written < len(data):
            written += os.write(fd, view[written:])
        os.fdatasync(fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, original)
        raise
    return size, repaired


def read_from(path: str | os.PathLike[str], offset: int = 0, length: int | None = None) -> bytes:
    """Bytes of `path` from `offset` to its current end, or `length` of them (b'' if missing)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(offset)
            return fh.read() if length is None else fh.read(length)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return b""
