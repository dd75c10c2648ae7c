"""Append-only histories that are memory too (all memory is searchable).

* Gate events: `episodes/<task-slug>/observability/<task-id>.ndjson`,
  one JSON object per line, part of task-episodic memory; indexed as layer `gate`.
* Compaction history (`compaction_history`): `compactions.jsonl`, one
  record per LOG compaction (when, how many entries, summary, archive id, sizes);
  indexed as layer `compaction`, so "what did the LOG say before it was compacted"
  finds the summary as well as the archived entries.

Both are written through `Store.append` (durable, then indexed) and parsed
here, one doc per line; a bad line costs that line only.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstrata import limits
from memstrata.errors import MalformedInput
from memstrata.files.jsonl import BadLine, decode, encode
from memstrata.index.docs import Doc, Parsed
from memstrata.index.reconcile import SourceSpec
from memstrata.layers.base import Acting, Layer, check_json
from memstrata.model import iso, now_ts, parse_ts

if TYPE_CHECKING:
    pass

GATE_EVENT_BYTES = limits.LOG_METADATA_BYTES


def _ts(rec: dict[str, Any], key: str) -> float:
    try:
        return parse_ts(rec.get(key))
    except MalformedInput:
        return 0.0


def parse_gate_events(
    data: bytes, base: int, path: str, owner: str, slug: str, task_id: str
) -> Parsed:
    dec = decode(data, base, path)
    out = Parsed(bad=dec.bad, consumed=dec.consumed)
    for off, rec in dec.records:
        name = str(rec.get("event") or rec.get("gate") or "gate event")
        rest = {k: v for k, v in rec.items() if k not in ("ts",)}
        out.docs.append(
            Doc(
                uid=f"gate:{owner}:{slug}:{task_id}:{off}",
                layer="gate",
                ts=_ts(rec, "ts"),
                title=f"{task_id} {name}",
                body=json.dumps(rest, ensure_ascii=False),
                source=path,
                owner=owner,
                kind=str(rec.get("status") or rec.get("verdict") or name),
                thread=slug,
                offset=off,
                meta=rec,
            )
        )
    return out


def gate_spec(path: Path, owner: str, slug: str) -> SourceSpec:
    p, task_id = str(path), path.stem

    def parse(data: bytes, base: int) -> Parsed:
        return parse_gate_events(data, base, p, owner, slug, task_id)

    return SourceSpec(path, "append", parse)


def parse_compactions(data: bytes, base: int, path: str, owner: str) -> Parsed:
    dec = decode(data, base, path)
    out = Parsed(bad=dec.bad, consumed=dec.consumed)
    for off, rec in dec.records:
        if not isinstance(rec.get("summary"), str):
            out.bad.append(
                BadLine(path, off, "not a compaction record (no summary)", json.dumps(rec)[:200])
            )
            continue
        arc = str(rec.get("archive_id") or "")
        out.docs.append(
            Doc(
                uid=f"compaction:{owner}:{arc or off}",
                layer="compaction",
                ts=_ts(rec, "compacted_at"),
                title=f"LOG compaction {arc}: {rec.get('entries_count', '?')} entries",
                body=rec["summary"],
                context=str(rec.get("archive_path") or ""),
                source=path,
                owner=owner,
                kind="log",
                offset=off,
                meta=rec,
            )
        )
    return out


class CompactionHistory(Layer):
    """`compactions.jsonl`: one record per LOG compaction, oldest first."""

    layer = "compaction"

    def __init__(self, acting: Acting, owner: str) -> None:
        super().__init__(acting, owner)
        self.path = acting.engine.layout.compactions(owner)

    def _spec(self) -> SourceSpec:
        p, owner = str(self.path), self.owner or ""
        return SourceSpec(self.path, "append", lambda d, b: parse_compactions(d, b, p, owner))

    def record(self, rec: dict[str, Any]) -> None:
        """Append one compaction record, durably, and index it."""
        self._check("write", "log")
        data = encode(rec)
        self.engine.append(self._spec(), data)
        self._write_event(self.path, len(data))

    def list(self) -> list[dict[str, Any]]:
        self._check("read", "log")
        dec = decode(self.engine.read_from(self.path), 0, str(self.path))
        self._read_event(self.path, dec.consumed)
        return [r for _, r in dec.records]


def gate_record(event: dict[str, Any]) -> dict[str, Any]:
    """A gate event as stored: a `ts` (now, unless the event has one), then its fields."""
    if not isinstance(event, dict):
        raise MalformedInput("a gate event must be a JSON object")
    check_json(event, "gate event", GATE_EVENT_BYTES)
    return {"ts": iso(now_ts()), **event}
