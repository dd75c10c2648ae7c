"""Extracted knowledge: `items.json`, a JSON array of typed, cited items.

Only the extraction pipeline writes it (the write rule "Extracted knowledge
is pipeline-only"): `lifecycle.extraction` writes through `_pipeline_replace`, for
whoever triggered it (any agent but a skill); the public `replace_source` and
`remove` are for admins (`scope.ADMIN_WRITTEN`, checked by `Gate`).

The extraction design keeps one `<project>/items.json` per project; memstrata keeps one
items.json per store and names the project in each item (`project`), so an item's
key is (project, sourceFile): `replace_source` swaps every item extracted from one
source file *of one project* for a new set in one atomic rewrite, so re-extraction
replaces instead of accumulating, and extracting project B's README.md leaves
project A's README.md items alone. Items from before projects were recorded have
project "" and are replaced only by an extraction under project "".

Entries it does not understand (a hand edit) are kept and written back unchanged
(`files.jsondoc`). People clean up by hand ("manual cleanup via UI"):
admins only (the web app's cleanup page acts as the signed-in admin); `remove`
keeps a copy of each removed item in `items.removed.jsonl`.
"""

from __future__ import annotations

import builtins
import os
from collections.abc import Iterable, Sized
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstrata import limits
from memstrata.errors import EntryTooLarge, MalformedInput, NotFound
from memstrata.files.jsondoc import Fields, RecordList, whole_file_problems
from memstrata.files.jsonl import BadLine, encode
from memstrata.index import queries
from memstrata.index.docs import Doc, Parsed
from memstrata.index.reconcile import SourceSpec
from memstrata.layers.base import Acting, Layer, check_count, check_text
from memstrata.model import ITEM_TYPES, Item, check_name, check_plain, iso, now_ts, parse_ts

if TYPE_CHECKING:
    from memstrata.layers.base import Find


def load_items(data: bytes, path: str) -> RecordList:
    """items.json as a document that keeps what it does not understand."""
    return RecordList.parse(data, path, key=None)


def to_item(d: dict[str, Any], path: str = "items.json") -> Item:
    """An item from its JSON object; MalformedInput naming the file, item and field if unusable."""
    f = Fields(d, f"{path}: item {d.get('id')!r}")
    return Item(
        id=f.text("id"),
        type=f.text("type", "note"),
        title=f.text("title"),
        content=f.text("content"),
        sourceFile=f.text("sourceFile"),
        lineNumber=f.integer("lineNumber", 0),
        confidence=f.number("confidence", 0.5),
        extractedAt=f.text("extractedAt"),
        project=f.text("project", ""),
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
            Doc(
                uid=f"item:{i['id']}",
                layer="item",
                ts=ts,
                title=str(i.get("title", "")),
                body=str(i.get("content", "")),
                source=path,
                kind=str(i.get("type")),
                context=str(i.get("sourceFile", "")),
                thread=str(i.get("project") or "") or None,
                line=line if isinstance(line, int) else None,
                meta=i,
            )
        )
    return Parsed(docs=docs, bad=whole_file_problems(path, problems), consumed=len(data))


class Items(Layer):
    layer = "item"

    def __init__(self, acting: Acting, *, search: Find | None = None) -> None:
        super().__init__(acting, None)
        self.path = acting.engine.layout.items
        self._find = search

    def _spec(self) -> SourceSpec:
        p = str(self.path)
        return SourceSpec(self.path, "whole", lambda d, b: parse_items(d, p))

    def _load(self) -> RecordList:
        return self._document(self.path, key=None)

    def list(
        self, *, type: str | None = None, source_file: str | None = None, project: str | None = None
    ) -> builtins.list[Item]:
        """Every usable item (one with an unusable field is named by `problems()`)."""
        self._check("read")
        items, _ = read_items(self._load())
        self._read_event(self.path, len(items))
        if type is not None:
            items = [i for i in items if i.type == type]
        if source_file is not None:
            items = [i for i in items if i.sourceFile == source_file]
        if project is not None:
            items = [i for i in items if i.project == project]
        return items

    def projects(self) -> builtins.list[str]:
        """The projects items were extracted from ("" for items with none), sorted."""
        self._check("read")
        self.engine.fresh(self._spec())
        return queries.threads(self.engine.db, layer="item")

    def search(
        self, text: str, *, project: str | None = None, type: str | None = None, k: int = 10
    ) -> builtins.list[Any]:
        """Ranked items for `text` (the store's search over layer `item`), only `project`'s
        when given: among the best `query_max` hits of every project."""
        self._check("read")  # the search would filter them out too; a denial says so
        if self._find is None:
            raise MalformedInput("this items handle has no search (open it from a store)")
        wide = k if project is None else max(k, self.engine.config.bounds.query_max)
        from memstrata.search.query import SearchQuery  # (start-up: a context finds none)

        hits = self._find(SearchQuery(text=text, layers=("item",), kind=type, k=wide))
        if project is not None:
            hits = [h for h in hits if ((h.meta or {}).get("project") or "") == project]
        return hits[:k]

    def problems(self) -> builtins.list[str]:
        self._check("read")
        return read_items(self._load())[1]

    def replace_source(
        self, source_file: str, drafts: Iterable[dict[str, Any]], *, project: str = ""
    ) -> builtins.list[Item]:
        """Replace every item from `source_file` of `project` with `drafts` (type, title,
        content, lineNumber, confidence); returns the stored items. Admins only: agents
        write items by triggering extraction (`lifecycle.extract_items`)."""
        self._check("write")
        return self._pipeline_replace(source_file, drafts, project=project)

    def _pipeline_replace(
        self, source_file: str, drafts: Iterable[dict[str, Any]], *, project: str = ""
    ) -> builtins.list[Item]:
        """The extraction pipeline's door: any principal that may read items."""
        self._check("read")
        check_plain(source_file, "sourceFile", limits.PATH_CHARS)
        if project:
            check_name(project, "project")
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
                raise MalformedInput(
                    f"unknown item type {d.get('type')!r}; use {', '.join(ITEM_TYPES)}"
                )
            conf = d.get("confidence", 0.5)
            if (
                isinstance(conf, bool)
                or not isinstance(conf, int | float)
                or not 0.0 <= conf <= 1.0
            ):
                raise MalformedInput(f"confidence must be a number between 0 and 1, got {conf!r}")
            line = d.get("lineNumber") or 0
            if isinstance(line, bool) or not isinstance(line, int) or line < 0:
                raise MalformedInput(f"lineNumber must be a non-negative integer, got {line!r}")
            new.append(
                {
                    "id": "item_" + os.urandom(4).hex(),
                    "type": d["type"],
                    "title": self._screen(
                        check_text(d.get("title", ""), "title", limits.ITEM_TITLE_BYTES),
                        "item title",
                    ),
                    "content": self._screen(
                        check_text(d.get("content", ""), "content", limits.ITEM_CONTENT_BYTES),
                        "item content",
                    ),
                    "sourceFile": source_file,
                    "lineNumber": line,
                    "confidence": float(conf),
                    "extractedAt": now,
                    **({"project": project} if project else {}),
                }
            )
        with self.engine.editing(self._spec()) as commit:
            doc = self._load()
            doc.remove(
                lambda i: i.get("sourceFile") == source_file and (i.get("project") or "") == project
            )
            for item in new:
                doc.append(item)
            commit(doc.dumps())
        self._write_event(self.path, len(new))
        return [to_item(i) for i in new]

    def page(
        self,
        *,
        type: str | None = None,
        source_file: str | None = None,
        project: str | None = None,
        before: str | None = None,
        limit: int = 50,
    ) -> tuple[builtins.list[Item], str | None]:
        """One page of items from the index, newest extraction first, and the cursor of the
        next page (None at the end): a page costs the same with 10 or 100,000 items."""
        self._check("read")
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 200:
            raise MalformedInput(f"limit must be an integer from 1 to 200, got {limit!r}")
        wanted = queries.DocFilter(
            self.gate,
            layers=("item",),
            kind=type,
            context=source_file,
            project=project,
            before=queries.parse_cursor(before) if before else None,
        )
        rows = queries.newest(self.engine.db, wanted, limit + 1)
        items = []
        for row in rows[:limit]:
            try:
                items.append(to_item(row.record(), str(self.path)))
            except MalformedInput:
                continue  # named by problems()
        last = rows[limit - 1] if len(rows) > limit else None
        return items, (queries.cursor(last.ts, last.id) if last is not None else None)

    def remove(self, ids: Iterable[str]) -> builtins.list[Item]:
        """Manual cleanup: take the items `ids` out of items.json.

        Nothing is destroyed: each removed item is first appended, durably, to
        `items.removed.jsonl` beside items.json (with `removedAt` and `removedBy`),
        then items.json is rewritten without it. A crash in between leaves a copy in
        both, never a loss. Unknown ids raise NotFound and change nothing. The design lets
        items be deleted by "manual cleanup via UI" besides the pipeline: that cleanup
        is an admin's (a project agent gets ScopeDenied, as for `replace_source`).
        """
        self._check("write")
        wanted = builtins.list(ids)
        check_count(wanted, "item ids", limits.ITEMS_PER_SOURCE)
        for i in wanted:
            check_plain(i, "item id", limits.NAME_CHARS)
        drop = set(wanted)
        with self.engine.editing(self._spec()) as commit:
            doc = self._load()
            found = [r for r in doc.records() if r["id"] in drop]
            missing = drop - {r["id"] for r in found}
            if missing:
                raise NotFound(f"no item with id {sorted(missing)[0]!r}")
            stamp = {"removedAt": iso(now_ts()), "removedBy": self.gate.principal.agent}
            self.engine.append_raw(
                self._removed_path, b"".join(encode({**r, **stamp}) for r in found)
            )
            doc.remove(lambda r: r["id"] in drop)
            commit(doc.dumps())
        self._write_event(self.path, -len(found))
        return [to_item(r) for r in found]

    @property
    def _removed_path(self) -> Path:
        return self.path.with_name("items.removed.jsonl")
