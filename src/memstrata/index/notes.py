"""The host's notes of appends, read by every other process before its next index read
(`Engine.append` notes each one): a file in the index folder, derived state like the
index itself."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

NOTES = "appended"  # in the index folder
NOTES_MAX_BYTES = 1 << 20


class AppendNotes:
    """The host's notes of appends not yet known to be indexed (module docstring).

    The notes file starts with a line of its own ("#" and random hex): a reader that
    finds another first line than the one it read from knows the file was replaced."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / NOTES
        self._head: bytes | None = None  # the first line of the file read from (None: none)
        self._at = 0  # bytes of it read

    def start(self) -> None:
        """Look from the end of the notes as they are now (before the opening catch-up:
        an append noted during it is read again, never missed)."""
        self._head, self._at = self._read(None)[:2]

    def note(self, rel: str) -> None:
        """Add a note that `rel` grew (before the append is acknowledged)."""
        line = (rel.replace("\n", " ") + "\n").encode("utf-8")
        with contextlib.suppress(OSError):  # a full disk, a deleted index: see docstring
            try:  # the notes exist but for the first append (no failing call on every one)
                fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
            except FileNotFoundError:
                try:
                    fd = os.open(
                        self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o644
                    )
                    line = b"#" + os.urandom(8).hex().encode() + b"\n" + line
                except FileExistsError:  # another process made them meanwhile
                    fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
            try:
                if os.fstat(fd).st_size > NOTES_MAX_BYTES:
                    os.unlink(self.path)  # readers catch up every source once
                os.write(fd, line)
            finally:
                os.close(fd)

    def news(self) -> tuple[bool, set[str]]:
        """(catch up everything?, the sources noted since the last look)."""
        try:
            size = os.stat(self.path).st_size
        except OSError:
            size = -1
        if size == self._at and (size > 0) == (self._head is not None):
            return False, set()  # nothing noted since (one stat)
        had = self._head
        head, at, data = self._read(self._at if had is not None else 0)
        self._head, self._at = head, at
        if had is not None and head != had:
            return True, set()  # replaced or gone: what was missed cannot be told
        lines = data.splitlines()
        return False, {x.decode("utf-8", "replace") for x in lines if x and not x.startswith(b"#")}

    def _read(self, start: int | None) -> tuple[bytes | None, int, bytes]:
        """(the file's first line, where its whole lines end, its whole lines from
        `start`; None: read none)."""
        try:
            with open(self.path, "rb") as fh:
                head = fh.readline()
                end = fh.seek(0, os.SEEK_END)
                if start is None:
                    fh.seek(end - 4096 if end > 4096 else 0)
                    tail = fh.read()
                    return head or None, end - len(tail) + tail.rfind(b"\n") + 1, b""
                fh.seek(start)
                data = fh.read()
        except OSError:
            return None, 0, b""
        whole = data[: data.rfind(b"\n") + 1]  # a line being written is read next time
        return head or None, start + len(whole), whole
