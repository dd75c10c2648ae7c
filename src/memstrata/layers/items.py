"""Extracted knowledge (seed 004): `items.json`, a JSON array of typed, cited items.

Only the extraction pipeline writes it (seed 004 write rule 3): `replace_source`
swaps every item extracted from one source file for a new set in one atomic
rewrite, so re-extraction replaces instead of accumulating.
"""

from __future__ import annotations

import builtins
import json
import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from memstrata.errors import MalformedInput
from memstrata.files.jsonl import BadLine
from memstrata.index.docs import Doc, Parsed
from memstrata.index.reconcile import SourceSpec
from memstrata.layers.base import Layer, check_text
from memstrata.model import ITEM_TYPES, Item, iso, now_ts, parse_ts

if TYPE_CHECKING:
    from memstrata.store import Store


def load_items(data: bytes, path: str) -> builtins.list[dict[str, Any]]:
    if not data.strip():
        return []
    try:
        items = json.loads(data)
    except json.JSONDecodeError as exc:
        raise MalformedInput(f"{path}: invalid JSON: {exc.msg} at line {exc.lineno}") from None
    if not isinstance(items, list):
        raise MalformedInput(f"{path}: expected a JSON array of items")
    return [i for i in items if isinstance(i, dict) and "id" in i]


def to_item(d: dict[str, Any]) -> Item:
    return Item(
        id=str(d["id"]), type=str(d.get("type", "note")), title=str(d.get("title", "")),
        content=str(d.get("content", "")), sourceFile=str(d.get("sourceFile", "")),
        lineNumber=int(d.get("lineNumber") or 0), confidence=float(d.get("confidence", 0.5)),
        extractedAt=str(d.get("extractedAt", "")),
    )


def parse_items(data: bytes, path: str) -> Parsed:
    try:
        items = load_items(data, path)
    except MalformedInput as exc:
        return Parsed(bad=[BadLine(path, 0, str(exc), data[:200].decode("utf-8", "replace"))])
    docs = []
    for i in items:
        try:
            ts = parse_ts(i.get("extractedAt") or 0)
        except MalformedInput:
            ts = 0.0
        docs.append(
            Doc(uid=f"item:{i['id']}", layer="item", ts=ts, title=str(i.get("title", "")),
                body=str(i.get("content", "")), source=path, kind=str(i.get("type")),
                context=str(i.get("sourceFile", "")), line=i.get("lineNumber"), meta=i)
        )
    return Parsed(docs=docs, consumed=len(data))


class Items(Layer):
    layer = "item"

    def __init__(self, store: Store) -> None:
        super().__init__(store, None)
        self.path = store.layout.items

    def spec(self) -> SourceSpec:
        p = str(self.path)
        return SourceSpec(self.path, "whole", lambda d, b: parse_items(d, p))

    def _load(self) -> builtins.list[dict[str, Any]]:
        try:
            return load_items(self.path.read_bytes(), str(self.path))
        except FileNotFoundError:
            return []

    def list(self, *, type: str | None = None, source_file: str | None = None) -> builtins.list[Item]:
        self._check("read")
        items = [to_item(i) for i in self._load()]
        self._read_event(self.path, len(items))
        if type is not None:
            items = [i for i in items if i.type == type]
        if source_file is not None:
            items = [i for i in items if i.sourceFile == source_file]
        return items

    def replace_source(self, source_file: str, drafts: Iterable[dict[str, Any]]) -> builtins.list[Item]:
        """Replace every item from `source_file` with `drafts` (type, title, content,
        lineNumber, confidence); returns the stored items."""
        self._check("write")
        now = iso(now_ts())
        new: builtins.list[dict[str, Any]] = []
        for d in drafts:
            if d.get("type") not in ITEM_TYPES:
                raise MalformedInput(f"unknown item type {d.get('type')!r}; use {', '.join(ITEM_TYPES)}")
            conf = float(d.get("confidence", 0.5))
            if not 0.0 <= conf <= 1.0:
                raise MalformedInput("confidence must be between 0 and 1")
            new.append({
                "id": "item_" + os.urandom(4).hex(), "type": d["type"],
                "title": check_text(str(d.get("title", "")), "title", 1024),
                "content": check_text(str(d.get("content", "")), "content", 16 * 1024),
                "sourceFile": source_file, "lineNumber": int(d.get("lineNumber") or 0),
                "confidence": conf, "extractedAt": now,
            })
        with self.store.editing(self.spec()) as commit:
            kept = [i for i in self._load() if i.get("sourceFile") != source_file]
            commit(json.dumps(kept + new, indent=2, ensure_ascii=False) + "\n")
        self._write_event(self.path, len(new))
        return [to_item(i) for i in new]
