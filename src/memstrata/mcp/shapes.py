"""What MCP tools return: structured content with a published schema, and a short text.

Every tool answers with a `Reply`: `data` is the structured content (validated by
clients against the tool's `outputSchema`), `text` is a few readable lines for
clients and models that read text only. Conventions, the same in every tool:

* times are ISO 8601 UTC strings (`2026-11-23T15:45:54.175Z`), never epoch floats;
* a field with no value is left out, never sent as null;
* a hit's `score` ranks it within its query: BM25 relevance relative to the best
  hit (1.0) x recency decay; `matched` lists the query words the memory holds,
  which is what compares across queries (all words found, or only a minor one).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memstrata.model import iso
from memstrata.values import value_type

if TYPE_CHECKING:
    from memstrata.model import LedgerEntry, Task
    from memstrata.search.query import Hit


@value_type(frozen=True)
class Reply:
    """A tool's answer: readable `text`, structured `data` (None: text only)."""

    text: str
    data: dict[str, Any] | None
    is_error: bool = False


def _obj(props: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        out["required"] = required
    return out


S: dict[str, Any] = {"type": "string"}
INT: dict[str, Any] = {"type": "integer"}
STRS = {"type": "array", "items": S}

# Output schemas declare the fields an agent relies on; the optional ones (kind,
# room, owner, tags, explain, detail, ...) appear when they have a value.
HIT = _obj(
    {
        "uid": S,
        "layer": S,
        "title": S,
        "snippet": S,
        "when": S,
        "where": {"type": "string", "description": "file:line"},
        "score": {"type": "number", "description": "best hit = 1, x recency decay"},
        "matched": {"type": "array", "items": S, "description": "query words it holds"},
    },
    ["uid", "layer", "snippet", "when", "where", "score", "matched"],
)
HITS = _obj({"results": {"type": "array", "items": HIT}}, ["results"])
ENTRY = _obj({"id": S, "ts": S, "kind": S, "summary": S}, ["id", "ts", "kind", "summary"])
TASK = _obj(
    {"id": S, "description": S, "status": S, "priority": INT},
    ["id", "description", "status", "priority"],
)
MESSAGE = _obj(
    {"id": S, "role": S, "content": S, "timestamp": S}, ["id", "role", "content", "timestamp"]
)
FILE = _obj({"path": S, "bytes": INT, "modified": S}, ["path", "bytes", "modified"])
FACT = _obj(
    {"key": S, "value": S, "category": S, "updated_at": S},
    ["key", "value", "category", "updated_at"],
)


def compact(d: dict[str, Any]) -> dict[str, Any]:
    """Leave out fields without a value (None, empty list)."""
    return {k: v for k, v in d.items() if v is not None and v != []}


def hit(h: Hit, where: str, *, explain: bool = False) -> dict[str, Any]:
    d = compact(
        {
            "uid": h.uid,
            "layer": h.layer,
            "kind": h.kind,
            "title": h.title,
            "snippet": h.snippet,
            "when": iso(h.ts),
            "where": where + (f":{h.line}" if h.line is not None else ""),
            "room": h.room,
            "owner": h.owner,
            "tags": list(h.tags),
            "score": round(h.score, 4),
        }
    )
    d["matched"] = list(h.explain.get("matched", []))
    if explain:
        d["explain"] = {k: v for k, v in h.explain.items() if v is not None}
    return d


def hits_reply(hits: list[dict[str, Any]]) -> Reply:
    if not hits:
        return Reply("no matching memories", {"results": []})
    lines = [
        f"{n}. [{h['layer']}{' ' + h['kind'] if 'kind' in h else ''}] {h['snippet'][:160]} "
        f"(uid {h['uid']}, {h['when'][:10]}, score {h['score']}, "
        f"matched {', '.join(h['matched']) or 'neighbouring text'})"
        for n, h in enumerate(hits, 1)
    ]
    lines.append("memory_get(uid) gives a result's full text")
    return Reply("\n".join(lines), {"results": hits})


def entry(e: LedgerEntry) -> dict[str, Any]:
    return compact(e.to_dict())


def entry_line(e: LedgerEntry) -> str:
    tags = f" [{', '.join(e.tags)}]" if e.tags else ""
    return f"{e.id} {e.ts[:10]} {e.kind} (room {e.room_id or '-'}){tags}: {e.summary}"


def task(t: Task) -> dict[str, Any]:
    return compact(t.to_dict())


def task_line(t: Task) -> str:
    return f"{t.id} [{t.status}] p{t.priority} {t.description}"
