"""JSONL records: encode one record per line, decode tolerating torn or corrupt lines."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memstrata.files.appendlog import read_from


@dataclass(frozen=True)
class BadLine:
    """A line that could not be used: torn by a killed writer or edited badly."""

    path: str
    offset: int
    reason: str
    text: str


def encode(record: dict[str, Any]) -> bytes:
    line = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    return (line + "\n").encode("utf-8")


@dataclass
class Decoded:
    records: list[tuple[int, dict[str, Any]]]  # (byte offset of the line, record)
    bad: list[BadLine]
    consumed: int  # bytes of complete lines read (the unterminated tail is not consumed)


def decode(data: bytes, base_offset: int = 0, path: str = "") -> Decoded:
    """Split complete lines, parse each; a trailing unterminated line is left unconsumed."""
    records: list[tuple[int, dict[str, Any]]] = []
    bad: list[BadLine] = []
    pos = 0
    end = data.rfind(b"\n") + 1
    while pos < end:
        nl = data.index(b"\n", pos)
        raw = data[pos:nl]
        off = base_offset + pos
        pos = nl + 1
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            bad.append(BadLine(path, off, f"invalid JSON: {exc.msg if hasattr(exc, 'msg') else exc}", raw[:200].decode("utf-8", "replace")))
            continue
        if not isinstance(value, dict):
            bad.append(BadLine(path, off, "line is not a JSON object", raw[:200].decode("utf-8", "replace")))
            continue
        records.append((off, value))
    return Decoded(records, bad, end)


def read_records(path: Path, offset: int = 0) -> Decoded:
    return decode(read_from(path, offset), offset, str(path))
