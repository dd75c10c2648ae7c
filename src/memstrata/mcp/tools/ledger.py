"""The shared ledger: publish, query by filters, search, and the predecessor context.

Every room reads the ledger; by default a room's agents see the other rooms' entries,
not their own (`layers.ledger`). Who may publish as whom, and supersede what, is the
gate's (`policy.scope.Gate`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memstrata.assembly.predecessor import predecessor_context
from memstrata.mcp import shapes
from memstrata.mcp.shapes import Reply
from memstrata.mcp.tools.spec import Caller, ToolSpec, p, req
from memstrata.model import RECORD_KINDS

if TYPE_CHECKING:
    from memstrata.config import Config


def memory_publish(
    caller: Caller,
    kind: str,
    summary: str,
    tags: list[str] | None,
    detail: str | None,
    ref: str | None,
    supersedes: str | None,
    room_id: str | None,
    author_role: str | None,
    ts: str | None,
) -> Reply:
    e = caller.store.ledger.publish(
        kind,
        summary,
        tags=tags,
        detail=detail,
        ref=ref,
        supersedes=supersedes,
        room_id=room_id,
        author_role=author_role,
        ts=ts,
    )
    return Reply(
        f"published {e.id} ({e.kind}, room {e.room_id or '-'})", {"entry": shapes.entry(e)}
    )


def memory_query(
    caller: Caller,
    tags: list[str] | None,
    kind: str | None,
    last_n: int | None,
    exclude_room: str | None,
    in_room: str | None,
    include_own_room: bool,
) -> Reply:
    entries = caller.store.ledger.query(
        tags=tags,
        kind=kind,
        last_n=last_n,
        exclude_room=exclude_room,
        in_room=in_room,
        include_own_room=include_own_room,
    )
    text = "\n".join(shapes.entry_line(e) for e in entries) or "no matching entries"
    return Reply(text, {"entries": [shapes.entry(e) for e in entries]})


def memory_search(
    caller: Caller,
    text: str,
    max_results: int,
    kind: str | None,
    exclude_room: str | None,
    include_own_room: bool,
    explain: bool,
) -> Reply:
    hits = caller.store.ledger.search(
        text,
        max_results=max_results,
        kind=kind,
        exclude_room=exclude_room,
        include_own_room=include_own_room,
    )
    return shapes.hits_reply([shapes.hit(h, caller.where(h.source), explain=explain) for h in hits])


def memory_get_context(
    caller: Caller, room_id: str | None, brief_keywords: list[str] | None, max_entries: int
) -> Reply:

    room = room_id or caller.store.principal.room
    text = predecessor_context(
        caller.store, room=room, keywords=brief_keywords or [], max_entries=max_entries
    )
    return Reply(text, shapes.compact({"room": room, "markdown": text}))


def tools(config: Config) -> list[ToolSpec]:
    """The declarations, in catalogue order."""
    S, obj = shapes.S, shapes._obj
    # The ledger takes the record kinds whatever `[kinds]` says (`layers.decisions`): so do
    # its tools, or an agent that reads `[constraint] ...` could not publish one.
    kinds = (*config.kinds, *(k for k in RECORD_KINDS if k not in config.kinds))
    bounds = config.bounds
    k_max = bounds.query_max
    explain = p("explain", "boolean", "add how each score was computed", False)
    kind = p("kind", "string", "ledger kind", enum=kinds)
    tags = p("tags", "array", 'tags, e.g. ["auth"]', items="string")
    hits_out = shapes.HITS
    return [
        ToolSpec(
            "memory_publish",
            memory_publish,
            "Publish to the ledger every room reads (records your room). Returns the entry.",
            (
                req("kind", "string", "kind of knowledge", enum=kinds),
                req("summary", "string", f"one paragraph, at most {bounds.summary_bytes} bytes"),
                tags,
                p("detail", "string", f"at most {bounds.detail_bytes} bytes"),
                p("ref", "string", "file, commit or URL"),
                p("supersedes", "string", "id of the entry this replaces (hides it)"),
                p("room_id", "string", "default: your room; another: admins only"),
                p("author_role", "string", "default: you; another: admins only"),
                p("ts", "string", "ISO 8601; default: now; another: admins only"),
            ),
            obj({"entry": shapes.ENTRY}, ["entry"]),
            read_only=False,
            group="ledger",
        ),
        ToolSpec(
            "memory_query",
            memory_query,
            "Ledger entries by filters, newest first (no text search). Default: other "
            "rooms' entries, not your room's.",
            (
                tags,
                kind,
                p("last_n", "integer", "at most this many", k_max, minimum=1, maximum=k_max),
                p("exclude_room", "string", "leave out this room"),
                p("in_room", "string", "only this room"),
                p("include_own_room", "boolean", "include your room's entries", False),
            ),
            obj({"entries": {"type": "array", "items": shapes.ENTRY}}, ["entries"]),
            idempotent=True,
            group="ledger",
        ),
        ToolSpec(
            "memory_search",
            memory_search,
            "Search the shared ledger only, other rooms' entries unless include_own_room "
            "(recall_memory searches all your memory). Returns ranked hits.",
            (
                req("text", "string", "words to look for"),
                p(
                    "max_results",
                    "integer",
                    "number of hits",
                    bounds.search_default,
                    minimum=1,
                    maximum=k_max,
                ),
                kind,
                p("exclude_room", "string", "leave out this room"),
                p("include_own_room", "boolean", "include your room's entries", False),
                explain,
            ),
            hits_out,
            idempotent=True,
            group="ledger",
        ),
        ToolSpec(
            "memory_get_context",
            memory_get_context,
            "Other rooms' ledger entries most relevant to a brief, as Markdown "
            "(predecessor context).",
            (
                p("room_id", "string", "the room to prepare for (default: yours)"),
                p("brief_keywords", "array", "what the room is about", items="string"),
                p(
                    "max_entries",
                    "integer",
                    "entries",
                    bounds.context_entries,
                    minimum=1,
                    maximum=bounds.context_entries,
                ),
            ),
            obj({"room": S, "markdown": S}, ["markdown"]),
            idempotent=True,
            group="ledger",
        ),
    ]
