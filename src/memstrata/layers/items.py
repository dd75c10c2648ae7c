"""Extracted knowledge (seed 004): `items.json`, a JSON array of typed, cited items.

Only the extraction pipeline writes it (seed 004 write rule 3): `replace_source`
swaps every item extracted from one source file for a new set in one atomic
rewrite, so re-extraction replaces instead of accumulating. Entries it does not
understand (a hand edit) are kept and written back unchanged (`files.jsondoc`).
"""

from __future__ import annotations

import builtins
import os
from collections.abc import Iterable, Sized
from typing import TYPE_CHECKING, Any

from memstrata import limits
from memstrata.errors import EntryTooLarge, MalformedInput
from memstrata.files.jsondoc import Fields, RecordList, whole_file_problems
from memstrata.files.jsonl import BadLine
from memstrata.index.docs import Doc, Parsed
from memstrata.index.reconcile import SourceSpec
from memstrata.layers.base import Layer, check_text
from memstrata.model import ITEM_TYPES, Item, check_plain, iso, now_ts, parse_ts

if TYPE_CHECKING:
    from memstrata.store import Store


def load_items(data: bytes, path: str) -> RecordList:
    """items.json as a document that keeps what it does not understand."""
    return RecordList.parse(data, path, key=None)


def to_item(d: dict[str, Any], path: str = "items.json") -> Item:
    """An item from its JSON object; MalformedInput naming the file, item and field if unusable."""
    f = Fields(d, f"{path}: item {d.get('id')!r}")
    return Item(
        id=f.text("id"), type=f.text("type", "note"), title=f.text("title"),
        content=f.text("content"), sourceFile=f.text("sourceFile"),
        lineNumber=f.integer("lineNumber", 0), confidence=f.number("confidence", 0.5),
        extractedAt=f.text("extractedAt"),
    )


def read_items(doc: RecordList) -> tuple[builtins.list[Item], builtins.list[str]]:
    items: builtins.list[Item] = []
    problems = doc.problems()
    for rec in doc.records():
        try:
            items.append(to_item(rec, doc.path))
        except MalformedInput as exc:
            problems.append(str(exc))
    return items, problems


def parse_items(data: bytes, path: str) -> Parsed:
    try:
        doc = load_items(data, path)
    except MalformedInput as exc:
        return Parsed(bad=[BadLine(path, 0, str(exc), data[:200].decode("utf-8", "replace"))])
    _, problems = read_items(doc)
    docs = []
    for i in doc.records():
        try:
            ts = parse_ts(i.get("extractedAt") or 0)
        except MalformedInput:
            ts = 0.0
        line = i.get("lineNumber")
        docs.append(
            Doc(uid=f"item:{i['id']}", layer="item", ts=ts, title=str(i.get("title", "")),
                body=str(i.get("content", "")), source=path, kind=str(i.get("type")),
                context=str(i.get("sourceFile", "")),
                line=line if isinstance(line, int) else None, meta=i)
        )
    return Parsed(docs=docs, bad=whole_file_problems(path, problems), consumed=len(data))


class Items(Layer):
    layer = "item"

    def __init__(self, store: Store) -> None:
        super().__init__(store, None)
        self.path = store.layout.items

    def spec(self) -> SourceSpec:
        p = str(self.path)
        return SourceSpec(self.path, "whole", lambda d, b: parse_items(d, p))

    def _load(self) -> RecordList:
        return RecordList.read(self.path, key=None)

    def list(self, *, type: str | None = None, source_file: str | None = None) -> builtins.list[Item]:
        """Every usable item (one with an unusable field is named by `problems()`)."""
        self._check("read")
        items, _ = read_items(self._load())
        self._read_event(self.path, len(items))
        if type is not None:
            items = [i for i in items if i.type == type]
        if source_file is not None:
            items = [i for i in items if i.sourceFile == source_file]
        return items

    def problems(self) -> builtins.list[str]:
        self._check("read")
        return read_items(self._load())[1]

    def replace_source(self, source_file: str, drafts: Iterable[dict[str, Any]]) -> builtins.list[Item]:
        """Replace every item from `source_file` with `drafts` (type, title, content,
        lineNumber, confidence); returns the stored items."""
        self._check("write")
        check_plain(source_file, "sourceFile", limits.PATH_CHARS)
        if isinstance(drafts, Sized) and len(drafts) > limits.ITEMS_PER_SOURCE:
            raise EntryTooLarge(f"more than {limits.ITEMS_PER_SOURCE} items from one source")
        now = iso(now_ts())
        new: builtins.list[dict[str, Any]] = []
        for d in drafts:  # bounded as it goes
            if len(new) == limits.ITEMS_PER_SOURCE:
                raise EntryTooLarge(f"more than {limits.ITEMS_PER_SOURCE} items from one source")
            if not isinstance(d, dict):
                raise MalformedInput("each item must be an object")
            if d.get("type") not in ITEM_TYPES:
                raise MalformedInput(f"unknown item type {d.get('type')!r}; use {', '.join(ITEM_TYPES)}")
            conf = d.get("confidence", 0.5)
            if isinstance(conf, bool) or not isinstance(conf, int | float) or not 0.0 <= conf <= 1.0:
                raise MalformedInput(f"confidence must be a number between 0 and 1, got {conf!r}")
            line = d.get("lineNumber") or 0
            if isinstance(line, bool) or not isinstance(line, int) or line < 0:
                raise MalformedInput(f"lineNumber must be a non-negative integer, got {line!r}")
            new.append({
                "id": "item_" + os.urandom(4).hex(), "type": d["type"],
                "title": self._screen(
                    check_text(d.get("title", ""), "title", limits.ITEM_TITLE_BYTES), "item title"),
                "content": self._screen(
                    check_text(d.get("content", ""), "content", limits.ITEM_CONTENT_BYTES),
                    "item content"),
                "sourceFile": source_file, "lineNumber": line,
                "confidence": float(conf), "extractedAt": now,
            })
        with self.store.editing(self.spec()) as commit:
            doc = self._load()
            doc.remove(lambda i: i.get("sourceFile") == source_file)
            for item in new:
                doc.append(item)
            commit(doc.dumps())
        self._write_event(self.path, len(new))
        return [to_item(i) for i in new]
