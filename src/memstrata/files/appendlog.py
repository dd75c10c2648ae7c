"""Durable appends to shared line- or block-oriented logs (JSONL, LOG.md).

One append = one `os.write` of complete bytes under the file's cross-process
lock, then `fdatasync`: the write is acknowledged only once it is on disk. A
writer killed mid-write can leave an unterminated tail; the next appender sees
the file does not end in a newline and terminates it first, so the fragment
becomes one corrupt line that readers skip and report instead of a line that
swallows the next record.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from memstrata.files.locks import LockTable


@dataclass(frozen=True)
class Appended:
    """Where an append landed: byte range [start, end) in the file."""

    path: Path
    start: int
    end: int
    repaired: bool
    ino: int


def durable_append(
    locks: LockTable, path: Path, data: bytes, *, fsync: bool = True
) -> Appended:
    """Append `data` (which must end with a newline) to `path` durably."""
    if not data.endswith(b"\n"):
        raise ValueError("appended data must end with a newline")
    path.parent.mkdir(parents=True, exist_ok=True)
    with locks.hold(str(path)):
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            st = os.fstat(fd)
            size = st.st_size
            repaired = False
            if size > 0 and os.pread(fd, 1, size - 1) != b"\n":
                os.write(fd, b"\n")
                size += 1
                repaired = True
            view = memoryview(data)
            written = 0
            while written < len(data):
                written += os.write(fd, view[written:])
            if fsync:
                os.fdatasync(fd)
        finally:
            os.close(fd)
    return Appended(path, size, size + len(data), repaired, st.st_ino)


def read_from(path: Path, offset: int = 0) -> bytes:
    """Bytes of `path` from `offset` to its current end (b'' if missing)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(offset)
            return fh.read()
    except FileNotFoundError:
        return b""
