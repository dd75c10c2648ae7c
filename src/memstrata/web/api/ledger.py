"""The shared ledger: pages by room, publish, supersede, chains, predecessor context."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, Field

from memstrata import limits
from memstrata.assembly.ledger_pages import MAX_PAGE, ledger_page, supersede_chain
from memstrata.assembly.predecessor import predecessor_context
from memstrata.web.context import store_of

router = APIRouter(prefix="/ledger", tags=["ledger"])
Tag = Annotated[str, Field(max_length=limits.TAG_CHARS)]


class Publish(BaseModel):
    kind: str = Field(
        max_length=200,
        description="artifact, decision, interface, convention, "
        "warning, code (or a configured kind)",
    )
    summary: str = Field(max_length=4096)
    tags: list[Tag] = Field(default_factory=list, max_length=limits.TAGS_PER_ENTRY)
    detail: str | None = Field(None, max_length=16384)
    ref: str | None = Field(None, max_length=limits.LABEL_CHARS)
    room_id: str | None = Field(None, max_length=limits.NAME_CHARS)
    author_role: str | None = Field(None, max_length=64)
    supersedes: str | None = Field(None, max_length=64)


class Supersede(BaseModel):
    kind: str = Field(max_length=200)
    summary: str = Field(max_length=4096)
    tags: list[Tag] = Field(default_factory=list, max_length=limits.TAGS_PER_ENTRY)
    detail: str | None = Field(None, max_length=16384)
    ref: str | None = Field(None, max_length=limits.LABEL_CHARS)


@router.get("", summary="Ledger entries newest first, with freshness and successors")
def entries(
    request: Request,
    room: Annotated[str | None, Query(max_length=limits.NAME_CHARS)] = None,
    exclude_room: Annotated[str | None, Query(max_length=limits.NAME_CHARS)] = None,
    kind: Annotated[str | None, Query(max_length=200)] = None,
    tags: Annotated[
        list[Annotated[str, Query(max_length=limits.TAG_CHARS)]],
        Query(max_length=limits.TAGS_PER_ENTRY),
    ] = [],  # noqa: B006
    match: Literal["any", "all"] = "any",
    include_superseded: bool = False,
    before: Annotated[
        str | None, Query(max_length=64, description="`next` of the page before")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 50,
) -> dict[str, Any]:
    page = ledger_page(
        store_of(request),
        room=room,
        exclude_room=exclude_room,
        kind=kind,
        tags=tags,
        match=match,
        include_superseded=include_superseded,
        before=before,
        limit=limit,
    )
    return page.to_dict()


@router.post("", status_code=201, summary="Publish an entry (durable on 201)")
def publish(request: Request, body: Publish) -> dict[str, Any]:
    e = store_of(request).ledger.publish(
        body.kind,
        body.summary,
        tags=body.tags,
        detail=body.detail,
        ref=body.ref,
        room_id=body.room_id,
        author_role=body.author_role,
        supersedes=body.supersedes,
    )
    return e.to_dict()


@router.get("/context", summary="Predecessor context: other rooms' entries as Markdown")
def context(
    request: Request,
    room: Annotated[str | None, Query(max_length=limits.NAME_CHARS)] = None,
    keywords: Annotated[
        list[Annotated[str, Query(max_length=limits.TAG_CHARS)]],
        Query(max_length=limits.TAGS_PER_ENTRY),
    ] = [],  # noqa: B006
    max_entries: Annotated[int, Query(ge=1, le=15)] = 15,
) -> dict[str, Any]:

    store = store_of(request)
    text = predecessor_context(
        store, room=room or store.principal.room, keywords=keywords, max_entries=max_entries
    )
    return {"markdown": text}


@router.get("/{entry_id}", summary="One entry, superseded or not")
def entry(request: Request, entry_id: str) -> dict[str, Any]:
    chain = supersede_chain(store_of(request), entry_id)
    return next(r.to_dict() for r in chain if r.entry.id == entry_id)


@router.get("/{entry_id}/chain", summary="Every version of this decision, oldest first")
def chain(request: Request, entry_id: str) -> dict[str, Any]:
    return {"chain": [r.to_dict() for r in supersede_chain(store_of(request), entry_id)]}


@router.post(
    "/{entry_id}/supersede",
    status_code=201,
    summary="Publish a new version that hides this entry (409 if already superseded)",
)
def supersede(request: Request, entry_id: str, body: Supersede) -> dict[str, Any]:
    e = store_of(request).ledger.publish(
        body.kind,
        body.summary,
        tags=body.tags,
        detail=body.detail,
        ref=body.ref,
        supersedes=entry_id,
    )
    return e.to_dict()
