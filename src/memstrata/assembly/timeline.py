"""One agent's memory as a timeline, newest first, one page at a time.

    page = timeline(store, "finn", types=("log", "fact"), limit=50)
    page.items[0].title, page.next   # `next` is the cursor of the following page

What an agent did and what changed: LOG entries, session messages, compaction
archives and tasks from the index; every fact change (each `set` and `forget`) from
the facts journal (`facts.jsonl`, read backwards from its end); the LOG compactions
themselves (`compactions.jsonl`). NOW / CONTEXT / identity and memory files are
whole files rewritten in place: no earlier version is kept, so each shows once, as
it is now, at its last change (the writes themselves are in the audit trail, Events,
which records when and how much, not the text). Each type is one ordered walk bounded
by the page size, and the walks are merged, so a page costs the same at 100 or
100,000 entries. Pages are keyset-paginated: the cursor is the (time, row) of the last
item shown, so an entry written meanwhile never shifts a page. A page never ends inside
one time (it then holds more than `limit` items): rows change when records are
re-indexed (a compaction moves LOG entries to an archive), so a cursor's row is no
place to resume within a time. Scope: the gate's read
check on the agent (and on its facts), and its SQL filter on every index row.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstrata.errors import MalformedInput, NotFound
from memstrata.files.jsonl import records_backward
from memstrata.index import overview, queries
from memstrata.layers.facts import to_fact
from memstrata.lifecycle.compaction import compaction_history
from memstrata.model import check_name, iso, parse_ts
from memstrata.values import field, replace, value_type

if TYPE_CHECKING:
    from memstrata.store.view import Store

# Timeline type -> the index layers it shows.
TIMELINE_TYPES: dict[str, tuple[str, ...]] = {
    "log": ("log",),
    "session": ("session",),
    "fact": (),  # every change, from the facts journal, not the index (live keys only)
    "now": ("now",),
    "context": ("context",),
    "identity": ("identity",),
    "file": ("file", "scratch", "episode"),
    "task": ("task",),
    "archive": ("archive",),
    "compaction": (),  # from compactions.jsonl, not the index
}
# Layers whose records carry the metadata `TimelineItem.meta` holds (tool call ids, sessions).
META_LAYERS = frozenset({"log", "archive", "session"})
# Whole-file Markdown layers: one item per file (its first chunk), at its last change.
WHOLE_FILE_LAYERS = frozenset({"now", "context", "identity", "file", "scratch", "episode"})
MAX_PAGE = 200
TEXT_CHARS = 600
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


@value_type(frozen=True)
class TimelineItem:
    """One thing that happened in an agent's memory."""

    uid: str
    type: str  # a key of TIMELINE_TYPES
    layer: str
    kind: str | None
    ts: float
    title: str
    text: str  # at most TEXT_CHARS characters; the full text of an index item: `store.get(uid)`
    source: str  # store-relative path
    thread: str | None = None  # session id, file path
    row: int = 0  # index row id (0 for compactions): the cursor's tie-breaker
    # What the record says about itself (LOG entries, session messages): the LOG entry's
    # metadata, the message's id, name and input; None for other layers.
    meta: dict[str, Any] | None = field(default=None, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "uid": self.uid,
            "type": self.type,
            "layer": self.layer,
            "kind": self.kind,
            "ts": iso(self.ts),  # ISO 8601, as every surface gives times
            "time": iso(self.ts),
            "title": self.title,
            "text": self.text,
            "source": self.source,
            "thread": self.thread,
        }


@value_type(frozen=True)
class TimelinePage:
    items: tuple[TimelineItem, ...]
    next: str | None  # cursor of the next (older) page, None at the end

    def to_dict(self) -> dict[str, Any]:
        return {"items": [i.to_dict() for i in self.items], "next": self.next}


def cursor_of(item: TimelineItem) -> str:
    return queries.cursor(item.ts, item.row)


def _type_of(layer: str) -> str:
    return next(t for t, layers in TIMELINE_TYPES.items() if layer in layers)


def timeline(
    store: Store,
    agent: str,
    *,
    types: tuple[str, ...] | list[str] = (),
    since: float | str | None = None,
    until: float | str | None = None,
    before: str | None = None,
    limit: int = 50,
) -> TimelinePage:
    """A page of `agent`'s timeline, newest first (all types when `types` is empty)."""
    check_name(agent, "agent")
    store.gate.check("read", "log", agent)
    wanted = tuple(types) or tuple(TIMELINE_TYPES)
    unknown = [t for t in wanted if t not in TIMELINE_TYPES]
    if unknown:
        raise MalformedInput(
            f"unknown timeline type {unknown[0]!r}; types are {', '.join(TIMELINE_TYPES)}"
        )
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE:
        raise MalformedInput(f"limit must be an integer from 1 to {MAX_PAGE}, got {limit!r}")
    lo = parse_ts(since) if since is not None else None
    hi = end_of(until) if until is not None else None
    cur = queries.parse_cursor(before) if before else None
    found = _items(store, agent, wanted, lo, hi, cur, limit + 1)
    page, more = found[:limit], len(found) > limit
    cursor = cursor_of(page[-1]) if more and page else None
    if more and page and found[limit].ts == page[-1].ts:
        # The page would end inside one time. Its row (the tie-breaker) is where the index
        # holds a record now, and a re-index (a compaction, which moves LOG entries to an
        # archive) gives records new rows: the next page would skip those of this time
        # not shown yet. So the page ends after the whole time, and the next starts
        # strictly before it (row 0), unless that time alone holds more than a page.
        t = page[-1].ts
        whole = _items(store, agent, wanted, lo, hi, cur, 2 * MAX_PAGE, floor=t)
        if len(whole) < 2 * MAX_PAGE:
            below = _items(store, agent, wanted, lo, hi, (t, 0), 1)
            page, cursor = whole, queries.cursor(t, 0) if below else None  # no empty page
    return TimelinePage(tuple(_whole_file_text(store, page)), cursor)


def _items(
    store: Store,
    agent: str,
    wanted: tuple[str, ...],
    lo: float | None,
    hi: float | None,
    cur: tuple[float, int] | None,
    n: int,
    *,
    floor: float | None = None,
) -> list[TimelineItem]:
    """Up to `n` items of each source below the cursor, newest first (`floor`: only those
    at or after that time; the facts journal is walked as without it, since its records
    are in the order written, which is not quite the order of their times)."""
    since = lo if floor is None else floor if lo is None else max(lo, floor)
    with store.db.snapshot():  # every layer's walk sees the index in one state
        found = _docs(store, agent, wanted, since, hi, cur, n)
    if "fact" in wanted and store.gate.allows("read", "fact", agent):
        found += _fact_changes(store, agent, lo, hi, cur, n)
    if "compaction" in wanted:
        found += _compactions(store, agent, lo, hi, cur)
    if floor is not None:
        found = [i for i in found if i.ts >= floor]
    found.sort(key=lambda i: (-i.ts, -i.row))
    return found


def end_of(until: float | str) -> float:
    """The last moment `until` names: a bare day ("2026-11-14") is the whole day, so a range
    from = to = one day shows that day; a time or epoch seconds is itself."""
    if isinstance(until, str) and _DAY.fullmatch(until.strip()):
        return parse_ts(until.strip()) + 86400 - 0.001  # times are kept to the millisecond
    return parse_ts(until)


def position_of(store: Store, agent: str, uid: str) -> str:
    """The cursor of the page that starts at the record `uid` (it included).

    Raises:
        NotFound: no such record of `agent` that this principal may read.
    """
    check_name(agent, "agent")
    store.gate.check("read", "log", agent)
    found = overview.place_of(store.db, store.gate, uid, agent)
    if found is None:
        raise NotFound(f"no record {uid!r} in the timeline of {agent}")
    return queries.cursor(found[0], found[1] + 1)


def newer_cursor(
    store: Store,
    agent: str,
    cursor: str,
    n: int,
    *,
    types: tuple[str, ...] | list[str] = (),
    since: float | str | None = None,
    until: float | str | None = None,
) -> str | None:
    """The cursor of the page that shows first the `n` records just newer than the page
    `cursor` starts (index records: fact changes and compactions are not counted), or None
    when nothing is newer: the timeline's "newer" link, and a record among its neighbours."""
    newer = newer_items(store, agent, cursor, n, types=types, since=since, until=until)
    return above(newer[min(n, len(newer)) - 1]) if newer else None


def newer_items(
    store: Store,
    agent: str,
    cursor: str,
    n: int,
    *,
    types: tuple[str, ...] | list[str] = (),
    since: float | str | None = None,
    until: float | str | None = None,
) -> list[TimelineItem]:
    """The `n` index records just newer than the page `cursor` starts (at or above it),
    oldest first."""
    check_name(agent, "agent")
    store.gate.check("read", "log", agent)
    wanted = tuple(types) or tuple(TIMELINE_TYPES)
    lo = parse_ts(since) if since is not None else None
    hi = end_of(until) if until is not None else None
    newer = _docs(store, agent, wanted, lo, hi, queries.parse_cursor(cursor), n, newer=True)
    newer.sort(key=lambda i: (i.ts, i.row))
    return newer[:n]


def above(item: TimelineItem) -> str:
    """The cursor of the page that starts with `item` (it included)."""
    return queries.cursor(item.ts, item.row + 1)


def at_or_above(item: TimelineItem, cursor: str) -> bool:
    """Whether `item` is on the page `cursor` starts or above it (not on an older page)."""
    return (item.ts, item.row) >= queries.parse_cursor(cursor)


def _docs(
    store: Store,
    agent: str,
    wanted: tuple[str, ...],
    lo: float | None,
    hi: float | None,
    cur: tuple[float, int] | None,
    n: int,
    *,
    newer: bool = False,
) -> list[TimelineItem]:
    """Up to `n` index records per layer below the cursor, newest first (`newer`: above it,
    oldest first)."""
    out: list[TimelineItem] = []
    rel: dict[str, str] = {}  # a page's records share a few sources

    def placed(path: str) -> str:
        if path not in rel:
            rel[path] = store.rel(Path(path))
        return rel[path]

    for layer in (layer for t in wanted for layer in TIMELINE_TYPES[t]):
        wanted_rows = queries.DocFilter(
            store.gate,
            owner=agent,
            layers=(layer,),
            first_chunk=layer in WHOLE_FILE_LAYERS,
            since=lo,
            until=hi,
            before=None if newer else cur,
        )
        rows = (
            overview.oldest_after(store.db, wanted_rows, cur, n, body_chars=TEXT_CHARS)
            if newer and cur is not None
            else queries.newest(store.db, wanted_rows, n, body_chars=TEXT_CHARS)
        )
        out += [
            TimelineItem(
                r.uid,
                _type_of(r.layer),
                r.layer,
                r.kind,
                r.ts,
                r.title,
                r.body,
                placed(r.source),
                placed(r.thread) if r.thread and r.thread.startswith("/") else r.thread,
                r.id,
                _meta(r.meta) if layer in META_LAYERS else None,
            )
            for r in rows
        ]
    return out


def _meta(raw: str | None) -> dict[str, Any] | None:
    """A LOG entry's own metadata (its footer) or a session message's record, without its
    text (the item has that)."""
    if not raw:
        return None
    try:
        rec = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(rec, dict):
        return None
    inner = rec.get("metadata")
    if isinstance(inner, dict):  # a LOG entry: its footer, and the entry's type
        return {**inner, "entry_type": rec.get("entry_type"), "entry_id": rec.get("id")}
    return {k: v for k, v in rec.items() if k != "content"}


def _compactions(
    store: Store, agent: str, lo: float | None, hi: float | None, cur: tuple[float, int] | None
) -> list[TimelineItem]:

    out = []
    for rec in compaction_history(store, agent):
        try:
            ts = parse_ts(rec.get("compacted_at"))
        except MalformedInput:
            continue
        if (lo is not None and ts < lo) or (hi is not None and ts > hi):
            continue
        if cur is not None and (ts, 0) >= cur:
            continue
        title = f"LOG compacted: {rec.get('entries_count', '?')} entries archived"
        text = json.dumps(
            {
                k: rec.get(k)
                for k in (
                    "reason",
                    "archive_path",
                    "original_size_kb",
                    "new_size_kb",
                    "carried_over",
                )
            }
        )
        out.append(
            TimelineItem(
                f"compaction:{agent}:{rec.get('archive_id', ts)}",
                "compaction",
                "compaction",
                "compaction",
                ts,
                title,
                text,
                str(rec.get("archive_path") or ""),
                None,
                0,
            )
        )
    return out


def _fact_changes(
    store: Store,
    agent: str,
    lo: float | None,
    hi: float | None,
    cur: tuple[float, int] | None,
    n: int,
) -> list[TimelineItem]:
    """The newest `n` set/forget records of the facts journal in range, newest first.

    The journal is in append order, so the walk back from its end stops after `n`
    items, or at the first record older than `since`. Its `row` is the record's byte
    offset (the cursor's tie-breaker within one timestamp).
    """

    rel = store.rel(store.layout.facts(agent))
    engine = store.engine
    entry = engine.stat(rel)
    if entry is None or entry.is_dir:
        return []
    out: list[TimelineItem] = []
    for off, rec in records_backward(lambda o, k: engine.read_from(rel, o, k), entry.size):
        op, key = rec.get("op"), rec.get("key")
        if op not in ("set", "forget") or not isinstance(key, str):
            continue
        try:
            ts = parse_ts(rec.get("updated_at") if op == "set" else rec.get("ts"))
        except MalformedInput:
            continue
        if lo is not None and ts < lo:
            break
        if (hi is not None and ts > hi) or (cur is not None and (ts, off) >= cur):
            continue
        if op == "set":
            fact = to_fact(rec)
            title, text = key, f"{fact.value}\n\n({fact.category})"
        else:
            title, text = key, "forgotten (the journal keeps its earlier values)"
        out.append(
            TimelineItem(
                f"fact-change:{agent}:{off}",
                "fact",
                "fact",
                op,
                ts,
                title,
                text[:TEXT_CHARS],
                rel,
                key,
                off,
            )
        )
        if len(out) >= n:
            break
    return out


def _whole_file_text(store: Store, items: list[TimelineItem]) -> list[TimelineItem]:
    """Whole-file items carry the file's beginning (its first chunks), not only the
    first chunk (for NOW.md that is just its title), under a title that says what
    the item is: the file as it is now."""

    if not any(i.layer in WHOLE_FILE_LAYERS for i in items):
        return items
    out = []
    for item in items:
        if item.layer not in WHOLE_FILE_LAYERS:
            out.append(item)
            continue
        head = queries.file_head(store.db, item.uid, store.gate, chars=TEXT_CHARS, chunks=8)
        text = "\n\n".join(head)[:TEXT_CHARS] or item.text
        name = item.source.rsplit("/", 1)[-1]
        out.append(replace(item, title=f"{name} (current version)", text=text))
    return out
