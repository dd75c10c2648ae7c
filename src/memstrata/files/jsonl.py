"""JSONL records: encode one record per line, decode tolerating torn or corrupt lines."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from memstrata.files.appendlog import read_from
from memstrata.values import value_type


@value_type(frozen=True)
class BadLine:
    """A line that could not be used: torn by a killed writer or edited badly."""

    path: str
    offset: int
    reason: str
    text: str


def encode(record: dict[str, Any]) -> bytes:
    line = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    return (line + "\n").encode("utf-8")


@value_type
class Decoded:
    """The records of a run of JSONL bytes, its bad lines, and how many bytes it covers."""

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
            bad.append(
                BadLine(
                    path,
                    off,
                    f"invalid JSON: {exc.msg if hasattr(exc, 'msg') else exc}",
                    raw[:200].decode("utf-8", "replace"),
                )
            )
            continue
        if not isinstance(value, dict):
            bad.append(
                BadLine(
                    path, off, "line is not a JSON object", raw[:200].decode("utf-8", "replace")
                )
            )
            continue
        records.append((off, value))
    return Decoded(records, bad, end)


def read_records(path: Path, offset: int = 0) -> Decoded:
    return decode(read_from(path, offset), offset, str(path))


def records_backward(
    read: Callable[[int, int], bytes], size: int, *, block: int = 64 * 1024
) -> Iterator[tuple[int, dict[str, Any]]]:
    """The records of a JSONL source newest (last) first, each with its byte offset.

    `read(offset, length)` returns bytes of the source, `size` is its length. It reads
    `block` bytes at a time from the end, so taking the newest few costs a block, not
    the whole source. Lines `decode` would report (torn, not JSON, not an object) are
    skipped, and so is an unterminated last line (a write under way).
    """
    pos, tail, terminated = size, b"", False  # tail: the line the block after `pos` began
    while pos > 0:
        step = min(block, pos)
        pos -= step
        lines = (read(pos, step) + tail).split(b"\n")
        starts = [pos]
        for raw in lines[:-1]:
            starts.append(starts[-1] + len(raw) + 1)
        for i in range(len(lines) - 1, 0, -1):
            if i < len(lines) - 1 or terminated:
                yield from _record(starts[i], lines[i])
        if len(lines) > 1:
            terminated = True  # lines[0] ends at a newline of this block
        tail = lines[0]
    if terminated:
        yield from _record(0, tail)


def _record(offset: int, raw: bytes) -> Iterator[tuple[int, dict[str, Any]]]:
    if not raw.strip():
        return
    try:
        value = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return
    if isinstance(value, dict):
        yield offset, value
