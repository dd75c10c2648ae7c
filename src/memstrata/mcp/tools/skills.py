"""The memory skills as tools, and recall: update_status, log_activity, recall_memory,
save_fact, get_fact, and memory_get (one memory, by a hit's uid).

`recall_memory` searches everything the principal may read (session transcripts only
when named); `get_fact` is the one tool whose value is returned as stored (`reveals`).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from memstrata.mcp import shapes
from memstrata.mcp.shapes import Reply
from memstrata.mcp.tools.spec import Caller, ToolSpec, p, req
from memstrata.model import FACT_CATEGORIES, LOG_TYPES, iso
from memstrata.search.query import LAYERS, SCOPES, SearchQuery

if TYPE_CHECKING:
    from memstrata.config import Config


def _search(caller: Caller, q: SearchQuery, explain: bool) -> Reply:
    hits = caller.store.search(q)
    return shapes.hits_reply([shapes.hit(h, caller.where(h.source), explain=explain) for h in hits])


def _fact(f: Any) -> dict[str, Any]:
    return shapes.compact(
        {
            "key": f.key,
            "value": f.value,
            "category": f.category,
            "created_at": f.created_at,
            "updated_at": f.updated_at,
        }
    )


def memory_get(caller: Caller, uid: str) -> Reply:
    h = caller.store.get(uid)
    data = shapes.compact(
        {
            "uid": h.uid,
            "layer": h.layer,
            "kind": h.kind,
            "title": h.title,
            "text": h.text,
            "when": iso(h.ts),
            "where": caller.where(h.source) + (f":{h.line}" if h.line else ""),
            "room": h.room,
            "owner": h.owner,
            "tags": list(h.tags),
            "meta": h.meta or None,
        }
    )
    return Reply(f"{h.title}\n\n{h.text}".strip(), data)


def update_status(caller: Caller, new_status: str, next_steps: list[str] | None) -> Reply:
    state = caller.agent.now.update(new_status, next_steps or [])
    return Reply(
        "NOW.md updated",
        {
            "objective": state.objective,
            "next_steps": list(state.next_steps),
            "updated_at": state.updated or iso(time.time()),
        },
    )


def log_activity(
    caller: Caller, entry_type: str, content: str, metadata: dict[str, Any] | None
) -> Reply:
    e = caller.agent.log.append(entry_type, content, metadata)
    return Reply(
        f"logged {e.id} ({e.entry_type})", {"id": e.id, "entry_type": e.entry_type, "ts": e.ts}
    )


def recall_memory(
    caller: Caller,
    query: str,
    n_results: int,
    layers: list[str] | None,
    kind: str | None,
    since: str | None,
    until: str | None,
    explain: bool,
) -> Reply:
    return _search(
        caller,
        SearchQuery(
            text=query, k=n_results, layers=tuple(layers or ()), kind=kind, since=since, until=until
        ),
        explain,
    )


def save_fact(
    caller: Caller, key: str, value: str, category: str, citations: list[str] | None
) -> Reply:
    f = caller.agent.facts.set(key, value, category, citations=citations)
    return Reply(f"saved {f.key} = {f.value} ({f.category})", _fact(f))


def get_fact(caller: Caller, key: str) -> Reply:
    f = caller.agent.facts.get(key)
    return Reply(f"{f.key} = {f.value} ({f.category}, updated {f.updated_at[:10]})", _fact(f))


def tools(config: Config) -> list[ToolSpec]:
    """The declarations, in catalogue order."""
    S, obj = shapes.S, shapes._obj
    bounds = config.bounds
    k_max = bounds.query_max
    explain = p("explain", "boolean", "add how each score was computed", False)
    hits_out = shapes.HITS
    return [
        ToolSpec(
            "memory_get",
            memory_get,
            "Full text and metadata of one memory, by a search hit's uid.",
            (req("uid", "string", "a search hit's uid"),),
            obj(
                {"uid": S, "layer": S, "title": S, "text": S, "when": S, "where": S},
                ["uid", "layer", "title", "text", "when", "where"],
            ),
            idempotent=True,
        ),
        ToolSpec(
            "update_status",
            update_status,
            "Overwrite NOW.md with your current objective and next steps.",
            (
                req("new_status", "string", "the current objective"),
                p("next_steps", "array", "next steps, in order", items="string"),
            ),
            obj(
                {"objective": S, "next_steps": shapes.STRS, "updated_at": S},
                ["objective", "next_steps", "updated_at"],
            ),
            read_only=False,
            destructive=True,
            idempotent=True,
        ),
        ToolSpec(
            "log_activity",
            log_activity,
            "Append an entry to your activity log (LOG.md).",
            (
                req("entry_type", "string", "kind of entry", enum=LOG_TYPES),
                req("content", "string", "what you did, saw or decided"),
                p("metadata", "object", 'extra JSON, e.g. {"file": "a.py"}'),
            ),
            obj({"id": S, "entry_type": S, "ts": S}, ["id", "entry_type", "ts"]),
            read_only=False,
        ),
        ToolSpec(
            "recall_memory",
            recall_memory,
            "Search all the memory you may read (LOG and its archive, memory files, "
            "CONTEXT.md, NOW.md, facts, tasks, the ledger); session transcripts only when "
            'layers names "session" (what was said word for word: a pasted value, a tool\'s '
            "output). Returns ranked hits.",
            (
                req("query", "string", "a question or keywords"),
                p("n_results", "integer", "number of hits", 5, minimum=1, maximum=k_max),
                p(
                    "layers",
                    "array",
                    "only these layers or scopes (default: all but session)",
                    items="string",
                    item_enum=(*SCOPES, *LAYERS),
                ),
                p("kind", "string", "only this kind (LOG type, ledger kind, fact category...)"),
                p("since", "string", "not older than this ISO 8601 time"),
                p("until", "string", "not newer than this ISO 8601 time"),
                explain,
            ),
            hits_out,
            idempotent=True,
        ),
        ToolSpec(
            "save_fact",
            save_fact,
            "Save or update a durable key/value fact; repo facts (user, feedback, "
            "project, reference) are create-only, cited, 1-2 sentences.",
            (
                req("key", "string", "a short identifier, e.g. db_engine"),
                req("value", "string", "the value"),
                p("category", "string", "kind of fact", "general", enum=FACT_CATEGORIES),
                p(
                    "citations",
                    "array",
                    "where it comes from (required for repo facts)",
                    items="string",
                ),
            ),
            shapes.FACT,
            read_only=False,
            destructive=True,
            idempotent=True,
        ),
        ToolSpec(
            "get_fact",
            get_fact,
            "A fact by its exact key.",
            (req("key", "string", "the fact's key"),),
            shapes.FACT,
            idempotent=True,
            reveals=True,
        ),
    ]
