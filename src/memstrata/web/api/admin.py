"""Items (extracted knowledge, cleanup), events (list and live stream), audit and reviewed
prune, verify, compact, doctor."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal

import anyio
from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field

from memstrata import limits
from memstrata.lifecycle.compaction import compact_log
from memstrata.lifecycle.hygiene import audit as run_audit
from memstrata.lifecycle.hygiene import prune as run_prune
from memstrata.lifecycle.verify import verify_citations
from memstrata.model import ITEM_TYPES, iso
from memstrata.operations.doctor import examine
from memstrata.store.events import EVENT_NAMES, recent_events, tail_events
from memstrata.web.context import context_of, store_of

router = APIRouter()
ItemType = Literal[ITEM_TYPES]  # type: ignore[valid-type]
EventName = Literal[EVENT_NAMES]  # type: ignore[valid-type]
STREAM_POLL_S = 0.2
KEEPALIVE_S = 15.0


class ItemIds(BaseModel):
    ids: list[Annotated[str, Field(max_length=64)]] = Field(min_length=1, max_length=1000)


class Finding(BaseModel):
    kind: str = Field(max_length=64)
    target: str = Field(max_length=1024)


class PruneRequest(BaseModel):
    dry_run: bool = True
    only: list[Finding] | None = Field(
        None, max_length=1000, description="the reviewed findings to act on"
    )


class CompactRequest(BaseModel):
    summary: str | None = Field(None, max_length=32 * 1024)
    force: bool = False


# -- items (extracted knowledge) ---------------------------------------------
@router.get("/items", tags=["items"], summary="Extracted knowledge, newest first, with citations")
def items(
    request: Request,
    type: ItemType | None = None,
    source_file: Annotated[str | None, Query(max_length=limits.PATH_CHARS)] = None,
    before: Annotated[str | None, Query(max_length=64)] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> dict[str, Any]:
    got, nxt = store_of(request).items.page(
        type=type, source_file=source_file, before=before, limit=limit
    )
    return {"items": [i.to_dict() for i in got], "next": nxt}


@router.post(
    "/items/remove",
    tags=["items"],
    summary="Manual cleanup: remove items (a copy is kept in items.removed.jsonl)",
)
def items_remove(request: Request, body: ItemIds) -> dict[str, Any]:
    return {"removed": [i.to_dict() for i in store_of(request).items.remove(body.ids)]}


@router.delete("/items/{item_id}", tags=["items"], summary="Manual cleanup of one item")
def item_remove(request: Request, item_id: str) -> dict[str, Any]:
    return {"removed": [i.to_dict() for i in store_of(request).items.remove([item_id])]}


@router.get(
    "/projects/{project_id}/knowledge",
    tags=["items"],
    summary="The memory search endpoint over extracted knowledge",
)
def knowledge(
    request: Request,
    project_id: str,
    q: Annotated[str, Query(max_length=4000)] = "",
    type: ItemType | None = None,
    limit: Annotated[int, Query(ge=1, le=50)] = 10,
) -> dict[str, Any]:
    store = store_of(request)
    whole = {"default", store.home.name, store.home.parent.name}  # every project's items
    projects = store.items.projects()
    if project_id not in whole and project_id not in projects:
        raise HTTPException(
            404,
            f"no project {project_id!r}: this server serves 'default' "
            f"(every project) and {', '.join(p for p in projects if p) or 'no other'}",
        )
    only = None if project_id in whole and project_id not in projects else project_id
    if q.strip():
        hits = store.items.search(q, project=only, type=type, k=limit)
        return {
            "project": project_id,
            "items": [
                {**(h.meta or {}), "score": round(h.score, 6), "explain": h.explain} for h in hits
            ],
        }
    got, _ = store.items.page(type=type, project=only, limit=limit)
    return {"project": project_id, "items": [i.to_dict() for i in got]}


# -- events ----------------------------------------------------------------
@router.get("/events", tags=["events"], summary="Recent memory events, newest first")
def events(
    request: Request,
    names: Annotated[list[EventName], Query(max_length=5)] = [],  # noqa: B006
    before: Annotated[int | None, Query(ge=0, le=2**53)] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> dict[str, Any]:
    store = store_of(request)
    recs, nxt = recent_events(
        store.layout.events,
        limit=limit,
        before=before,
        agents=store.gate.event_actors(),
        names=tuple(names),
    )
    return {"events": [dated(r) for r in recs], "next": nxt}


def dated(rec: dict[str, Any]) -> dict[str, Any]:
    """An event record with its time in ISO 8601 (the file keeps epoch seconds)."""
    ts = rec.get("ts")
    if isinstance(ts, int | float) and not isinstance(ts, bool):
        return {**rec, "ts": iso(float(ts))}
    return rec


@router.get(
    "/events/stream",
    tags=["events"],
    response_class=StreamingResponse,
    summary="Live memory events as server-sent events (memory:read|write|search|flush|"
    "compact); resumes after Last-Event-ID",
)
async def events_stream(
    request: Request,
    names: Annotated[list[EventName], Query(max_length=5)] = [],  # noqa: B006
) -> StreamingResponse:
    store = store_of(request)
    actors = store.gate.event_actors()
    path = store.layout.events
    last = request.headers.get("last-event-id", "")
    start: int | None = int(last) if last.isdigit() else None

    async def stream() -> AsyncIterator[str]:
        seen = -1 if start is None else start  # Last-Event-ID: the last record received
        try:
            st = path.stat()
            offset, ino = (st.st_size if start is None else start), st.st_ino
        except FileNotFoundError:
            offset, ino = 0, None
        yield ": memstrata events\n\n"
        quiet = 0.0
        while True:
            recs, offset, ino = tail_events(path, offset, ino)
            for rec in recs:
                if rec["offset"] <= seen:
                    continue
                seen = -1
                if (actors is not None and rec.get("agent") not in actors) or (
                    names and rec.get("event") not in names
                ):
                    continue
                yield (
                    f"id: {rec['offset']}\nevent: {rec.get('event')}\n"
                    f"data: {json.dumps(dated(rec), ensure_ascii=False)}\n\n"
                )
                quiet = 0.0
            if quiet >= KEEPALIVE_S:
                yield ": keepalive\n\n"
                quiet = 0.0
            await anyio.sleep(STREAM_POLL_S)
            quiet += STREAM_POLL_S

    return StreamingResponse(
        stream(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


# -- upkeep ---------------------------------------------------------------------------
@router.get("/agents/{agent}/audit", tags=["upkeep"], summary="Memory pollution report")
def audit(request: Request, agent: str) -> dict[str, Any]:

    store = store_of(request)
    report = run_audit(store, store.agent(agent).name)
    return {
        "agent": report.agent,
        "clean": report.clean,
        "findings": [vars(f) for f in report.findings],
    }


@router.post(
    "/agents/{agent}/audit/prune",
    tags=["upkeep"],
    summary="Act on the audit: a dry run unless dry_run is false; `only` the reviewed",
)
def prune(request: Request, agent: str, body: PruneRequest) -> dict[str, Any]:

    store = store_of(request)
    name = store.agent(agent).name
    only = None if body.only is None else [(f.kind, f.target) for f in body.only]
    result = run_prune(store, name, run_audit(store, name), dry_run=body.dry_run, only=only)
    return {
        "dry_run": result.dry_run,
        "actions": [
            {**vars(a.finding), "applied": a.applied, "result": a.result} for a in result.actions
        ],
    }


@router.post(
    "/agents/{agent}/verify",
    tags=["upkeep"],
    summary="Check the code claims in memory against the server's code folder",
)
def verify(request: Request, agent: str) -> dict[str, Any]:

    store = store_of(request)
    root = context_of(request).verify_root
    findings = verify_citations(store, store.agent(agent).name, root)
    return {"root": str(root), "findings": [vars(f) for f in findings]}


@router.post("/agents/{agent}/compact", tags=["upkeep"], summary="Compact LOG.md")
def compact(request: Request, agent: str, body: CompactRequest) -> dict[str, Any]:

    store = store_of(request)
    return compact_log(
        store, store.agent(agent).name, summary=body.summary, force=body.force
    ).to_dict()


@router.get("/doctor", tags=["upkeep"], summary="Does the index agree with the files? (admin)")
def doctor(request: Request) -> dict[str, Any]:

    return examine(store_of(request)).to_dict()
