"""Search (every `SearchQuery` option, each hit with its explain), full text by uid, who am I."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, Field

from memstrata import limits
from memstrata.model import iso
from memstrata.search.query import LAYERS, MAX_K, MAX_QUERY_CHARS, SCOPES, SearchQuery
from memstrata.web.context import identity_of, store_of

if TYPE_CHECKING:
    from memstrata.search.query import Hit
    from memstrata.store.view import Store


def placed(store: Store, hit: Hit) -> Hit:
    """The hit with its source as a store-relative path, as the CLI and MCP show it: a
    client of the server never learns where the store lives on the server's disk."""
    return dataclasses.replace(hit, source=store.rel(Path(hit.source)))


def hit_json(store: Store, hit: Hit, *, full: bool) -> dict[str, Any]:
    """A hit as the API answers it: store-relative source, ISO 8601 time (as MCP and the
    CLI give it)."""
    d = placed(store, hit).to_dict(full=full)
    d["ts"] = iso(hit.ts)
    return d


router = APIRouter(tags=["search"])
Layer = Literal[(*SCOPES, *LAYERS)]  # type: ignore[valid-type]  # search scopes too
Mode = Literal["lexical", "hybrid", "semantic"]
Room = Annotated[str, Field(max_length=limits.NAME_CHARS)]
MODE_HELP = "lexical, hybrid or semantic; unset: the store's `[search] provider`"
NOW_HELP = "epoch seconds decay is measured against (default: the server's clock)"


class SearchBody(BaseModel):
    """A search: empty `text` is a structured query (newest first)."""

    text: str = Field("", max_length=MAX_QUERY_CHARS)
    layers: list[Layer] = Field(default_factory=list, max_length=len(LAYERS) + len(SCOPES))
    kind: str | None = Field(None, max_length=200)
    tags: list[Annotated[str, Field(max_length=limits.TAG_CHARS)]] = Field(
        default_factory=list, max_length=limits.TAGS_PER_ENTRY
    )
    tags_match: Literal["any", "all"] = "any"
    agent: str | None = Field(None, max_length=limits.NAME_CHARS)
    room: str | None = Field(None, max_length=limits.NAME_CHARS)
    rooms: list[Room] = Field(
        default_factory=list, max_length=32, description="only entries of these rooms"
    )
    exclude_room: str | None = Field(None, max_length=limits.NAME_CHARS)
    since: float | str | None = Field(None, description="ISO 8601 time or epoch seconds")
    until: float | str | None = Field(None, description="ISO 8601 time or epoch seconds")
    include_superseded: bool = False
    k: int = Field(10, ge=1, le=MAX_K)
    mode: Mode | None = Field(None, description=MODE_HELP)
    now: float | None = Field(None, ge=0, le=2**40, description=NOW_HELP)


def run_search(request: Request, body: SearchBody) -> dict[str, Any]:
    q = SearchQuery(
        text=body.text,
        layers=tuple(body.layers),
        kind=body.kind,
        tags=tuple(body.tags),
        tags_match=body.tags_match,
        agent=body.agent,
        room=body.room,
        rooms=tuple(body.rooms),
        exclude_room=body.exclude_room,
        since=body.since,
        until=body.until,
        include_superseded=body.include_superseded,
        k=body.k,
        mode=body.mode,
        now=body.now,
    )
    store = store_of(request)
    hits = store.search(q)
    return {
        "query": body.model_dump(),
        "hits": [hit_json(store, h, full=False) for h in hits],
    }


@router.get("/search", summary="Search every layer you may read (BM25 x decay, explained)")
def search_get(
    request: Request,
    q: Annotated[str, Query(max_length=MAX_QUERY_CHARS, description="query text")] = "",
    layers: Annotated[list[Layer], Query(max_length=len(LAYERS) + len(SCOPES))] = [],  # noqa: B006
    kind: Annotated[str | None, Query(max_length=200)] = None,
    tags: Annotated[
        list[Annotated[str, Query(max_length=limits.TAG_CHARS)]],
        Query(max_length=limits.TAGS_PER_ENTRY),
    ] = [],  # noqa: B006
    tags_match: Literal["any", "all"] = "any",
    agent: Annotated[str | None, Query(max_length=limits.NAME_CHARS)] = None,
    room: Annotated[str | None, Query(max_length=limits.NAME_CHARS)] = None,
    rooms: Annotated[
        list[Annotated[str, Query(max_length=limits.NAME_CHARS)]],
        Query(max_length=limits.TAGS_PER_ENTRY),
    ] = [],  # noqa: B006
    exclude_room: Annotated[str | None, Query(max_length=limits.NAME_CHARS)] = None,
    since: Annotated[str | None, Query(max_length=64)] = None,
    until: Annotated[str | None, Query(max_length=64)] = None,
    include_superseded: bool = False,
    k: Annotated[int, Query(ge=1, le=MAX_K)] = 10,
    mode: Annotated[Mode | None, Query(description=MODE_HELP)] = None,
    now: Annotated[float | None, Query(ge=0, le=2**40, description=NOW_HELP)] = None,
) -> dict[str, Any]:
    body = SearchBody(
        text=q,
        layers=layers,
        kind=kind,
        tags=tags,
        tags_match=tags_match,
        agent=agent,
        room=room,
        rooms=rooms,
        exclude_room=exclude_room,
        since=since,
        until=until,
        include_superseded=include_superseded,
        k=k,
        mode=mode,
        now=now,
    )
    return run_search(request, body)


@router.post("/search", summary="Search with a JSON body (same options)")
def search_post(request: Request, body: SearchBody) -> dict[str, Any]:
    return run_search(request, body)


@router.get("/memories", summary="The full text of one memory, by the uid a hit carries")
def memory_get(
    request: Request, uid: Annotated[str, Query(min_length=1, max_length=2000)]
) -> dict[str, Any]:
    store = store_of(request)
    return hit_json(store, store.get(uid), full=True)


@router.get("/whoami", tags=["meta"], summary="The principal this request acts as")
def whoami(request: Request) -> dict[str, Any]:
    who = identity_of(request)
    p = store_of(request).principal
    return {"agent": p.agent, "role": p.role, "room": p.room, "via": who.via}
