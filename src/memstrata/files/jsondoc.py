"""Whole-JSON files that people edit by hand: tasks.json, items.json, sessions.json.

Each holds a list of records, under one key of a top-level object
(`{"tasks": [...]}`) or as a bare array. Rewriting such a file must never drop
what the code does not understand, so `RecordList` keeps the document as
found: every top-level key, every entry, in order. Entries a layer cannot use
(not an object, no string `id`, an id already taken) stay where they are,
unchanged, and are reported by `problems()`; the layer reads and changes only
the records it understands, and `dumps()` writes everything back.

`Fields` reads one record's fields with their types checked, so a hand-made
`"priority": "high"` is a `MalformedInput` naming the file, the record and the
field, never a traceback.

    doc = RecordList.read(path, key="tasks")
    doc.records()[0]["status"] = "done"      # changes the entry in place
    doc.append({"id": "TASK-002", ...})
    text = doc.dumps()                        # unknown keys and entries kept
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memstrata.errors import MalformedInput
from memstrata.files.jsonl import BadLine
from memstrata.values import value_type


@value_type
class RecordList:
    """A JSON document holding one list of records (under `key`, or a bare array)."""

    path: str
    key: str | None  # the top-level key holding the list; None for a bare array
    top: dict[str, Any]  # the top-level object, every key kept (empty for a bare array)
    entries: list[Any]  # every element as found, usable or not

    @classmethod
    def parse(cls, data: bytes, path: str, *, key: str | None) -> RecordList:
        """The document in `data`; MalformedInput (naming `path`) if it is not one."""
        if not data.strip():
            return cls(path, key, {}, [])
        try:
            doc = json.loads(data)
        except json.JSONDecodeError as exc:
            raise MalformedInput(f"{path}: invalid JSON: {exc.msg} at line {exc.lineno}") from None
        except UnicodeDecodeError:
            raise MalformedInput(f"{path}: not UTF-8 text") from None
        if key is None:
            if not isinstance(doc, list):
                raise MalformedInput(f"{path}: expected a JSON array")
            return cls(path, None, {}, doc)
        entries = doc.get(key) if isinstance(doc, dict) else None
        if not isinstance(doc, dict) or not isinstance(entries, list | None):
            raise MalformedInput(f'{path}: expected {{"{key}": [...]}}')
        return cls(path, key, doc, entries if entries is not None else [])

    @classmethod
    def read(cls, path: Path, *, key: str | None) -> RecordList:
        """The document at `path` (empty if the file does not exist)."""
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            data = b""
        return cls.parse(data, str(path), key=key)

    def records(self) -> list[dict[str, Any]]:
        """The entries the code understands: objects with a string id, the first of each id.

        They are the document's own objects: changing one changes the document.
        """
        seen: set[str] = set()
        out = []
        for e in self.entries:
            if _usable(e) and e["id"] not in seen:
                seen.add(e["id"])
                out.append(e)
        return out

    def find(self, record_id: str) -> dict[str, Any] | None:
        return next((r for r in self.records() if r["id"] == record_id), None)

    def problems(self) -> list[str]:
        """One line per entry kept but not understood."""
        out = []
        seen: set[str] = set()
        for n, e in enumerate(self.entries, 1):
            if not isinstance(e, dict):
                out.append(f"{self.path}: entry {n} is not an object; kept unchanged")
            elif not _usable(e):
                out.append(f"{self.path}: entry {n} has no string id; kept unchanged")
            elif e["id"] in seen:
                out.append(
                    f"{self.path}: entry {n} repeats id {e['id']!r}; kept unchanged, "
                    "the first one is used"
                )
            else:
                seen.add(e["id"])
        return out

    def append(self, record: dict[str, Any]) -> None:
        self.entries.append(record)

    def remove(self, drop: Callable[[dict[str, Any]], bool]) -> None:
        """Remove the understood records `drop` selects; every other entry stays."""
        usable = {id(r) for r in self.records()}
        self.entries[:] = [e for e in self.entries if id(e) not in usable or not drop(e)]

    def dumps(self) -> str:
        doc: Any = self.entries if self.key is None else {**self.top, self.key: self.entries}
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def whole_file_problems(path: str, problems: list[str]) -> list[BadLine]:
    """A whole file's problems as one bad line (the index keys bad lines by byte offset,
    and JSON entries have none)."""
    if not problems:
        return []
    reasons = [p.removeprefix(f"{path}: ") for p in problems]
    return [BadLine(path, 0, " | ".join(reasons), "")]


def _usable(entry: Any) -> bool:
    return isinstance(entry, dict) and isinstance(entry.get("id"), str) and bool(entry["id"])


class Fields:
    """Typed reads of one record's fields; a value of the wrong type raises MalformedInput
    naming `where` (file and record) and the field. A missing field gets its default."""

    def __init__(self, record: dict[str, Any], where: str) -> None:
        self.record = record
        self.where = where

    def _bad(self, name: str, expected: str) -> MalformedInput:
        return MalformedInput(
            f"{self.where}: field {name!r} must be {expected}, got {self.record[name]!r}"
        )

    def text(self, name: str, default: str = "") -> str:
        value = self.record.get(name)
        if value is None:
            return default
        if not isinstance(value, str):
            raise self._bad(name, "a string")
        return value

    def optional_text(self, name: str) -> str | None:
        return self.text(name) if self.record.get(name) is not None else None

    def integer(self, name: str, default: int) -> int:
        value = self.record.get(name)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            raise self._bad(name, "an integer")
        return value

    def number(self, name: str, default: float) -> float:
        value = self.record.get(name)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self._bad(name, "a number")
        return float(value)

    def flag(self, name: str, default: bool = False) -> bool:
        value = self.record.get(name)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self._bad(name, "true or false")
        return value

    def texts(self, name: str) -> tuple[str, ...]:
        value = self.record.get(name)
        if value is None:
            return ()
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self._bad(name, "a list of strings")
        return tuple(value)

    def choice(self, name: str, choices: tuple[str, ...], default: str) -> str:
        value = self.text(name, default)
        if value not in choices:
            raise self._bad(name, f"one of {', '.join(choices)}")
        return value
