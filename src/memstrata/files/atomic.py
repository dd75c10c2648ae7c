"""Atomic, durable whole-file rewrites.

write unique temp file in the same folder -> fsync it -> os.replace over the
target -> fsync the folder (unless the caller makes the content durable elsewhere
and asks for no folder sync: `sync_folder=False`, then a power cut may leave the old
file in place, whole). A reader sees the old file or the new one, never a
mix; after return the new content survives a power cut. A full or read-only
disk raises StorageFull / ReadOnlyStore with the old file untouched.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from memstrata.files.diskerrors import disk_errors


def fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write_bytes(path: Path, data: bytes, *, sync_folder: bool = True) -> None:
    with disk_errors(path):
        _replace(path, data, sync_folder)


def _replace(path: Path, data: bytes, sync_folder: bool = True) -> None:
    folder = path.parent
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    try:
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            view = view[n:]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    os.close(fd)
    try:
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if sync_folder:
        fsync_dir(folder)


def read_text(path: Path) -> str | None:
    """The file's text, or None if it does not exist."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except FileNotFoundError:
        return None
