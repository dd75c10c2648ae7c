"""What every layer handle shares: its store, owner, scope checks and event helpers."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from memstrata.errors import EntryTooLarge, MalformedInput

if TYPE_CHECKING:
    from memstrata.store import Store


class Layer:
    """Base for layer handles bound to one owner agent (or to shared memory when owner is None)."""

    layer = "layer"

    def __init__(self, store: Store, owner: str | None = None, room: str | None = None) -> None:
        self.store = store
        self.owner = owner
        self.room = room

    def _check(self, action: str, layer: str | None = None) -> None:
        self.store.gate.check(action, layer or self.layer, self.owner, self.room)

    def _read_event(self, path: Path, size: int, kind: str | None = None) -> None:
        self.store.events.emit(
            "memory:read", {"type": kind or self.layer, "path": self._rel(path), "size": size}
        )

    def _write_event(self, path: Path, delta: int, kind: str | None = None) -> None:
        self.store.events.emit(
            "memory:write", {"type": kind or self.layer, "path": self._rel(path), "delta": delta}
        )

    def _index_problems(self, path: Path) -> list[str]:
        """What the index could not read cleanly in one of this layer's files, one line each
        (`memstrata doctor` lists the same)."""
        with self.store.db.read() as conn:
            rows = conn.execute(
                "SELECT offset, reason FROM bad_lines WHERE source = ? ORDER BY offset", (str(path),)
            ).fetchall()
        return [f"{path}: byte {offset}: {reason}" for offset, reason in rows]

    def _rel(self, path: Path) -> str:
        try:
            return os.path.relpath(path, self.store.home)
        except ValueError:
            return str(path)


def check_text(value: object, what: str, max_bytes: int, *, allow_empty: bool = False) -> str:
    if not isinstance(value, str):
        raise MalformedInput(f"{what} must be a string, got {type(value).__name__}")
    if "\x00" in value:
        raise MalformedInput(f"{what} contains a NUL byte")
    if not allow_empty and not value.strip():
        raise MalformedInput(f"{what} must not be empty")
    size = len(value.encode("utf-8"))
    if size > max_bytes:
        raise EntryTooLarge(f"{what} is {size} bytes; the limit is {max_bytes} bytes")
    return value


def check_tags(tags: object, max_tags: int = 32) -> tuple[str, ...]:
    if tags is None:
        return ()
    if isinstance(tags, str) or not isinstance(tags, list | tuple):
        raise MalformedInput("tags must be a list of strings")
    out: list[str] = []
    for t in tags:
        if not isinstance(t, str) or not t.strip() or len(t) > 100 or "\x00" in t:
            raise MalformedInput(f"invalid tag {t!r}: tags are non-empty strings of <= 100 chars")
        t = t.strip()
        if t not in out:
            out.append(t)
    if len(out) > max_tags:
        raise MalformedInput(f"at most {max_tags} tags per entry")
    return tuple(out)
