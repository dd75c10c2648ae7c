"""Pages over shared memory and the store: home, login, ledger, search, items, events, the
API explorer."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Annotated
from urllib.parse import quote

from fastapi import APIRouter, Form, Query, Request
from starlette.responses import Response

from memstrata.assembly.ledger_pages import LedgerRow, ledger_page, supersede_chain
from memstrata.assembly.overview import overview
from memstrata.model import ITEM_TYPES
from memstrata.search.query import LAYERS, SCOPES, SearchQuery
from memstrata.store.events import recent_events
from memstrata.web.api.search import placed
from memstrata.web.context import context_of, identity_of, store_of
from memstrata.web.identity import REVEAL_COOKIE, REVEAL_SECONDS, SESSION_COOKIE, SESSION_SECONDS
from memstrata.web.pages.forms import back, require_csrf
from memstrata.web.pages.links import ShownHit, shown
from memstrata.web.pages.render import page

if TYPE_CHECKING:
    from memstrata.store.view import Store

router = APIRouter()
Csrf = Annotated[str, Form(max_length=128)]
Short = Annotated[str | None, Query(max_length=200)]


@router.get("/")
def home(request: Request) -> Response:
    """Where are my agents? (`assembly.overview`)"""
    return page(request, "home.html", view=overview(store_of(request)))


def _rooms(store: Store, rows: Iterable[LedgerRow], *also: str) -> list[str]:
    """The rooms with a folder, and those the ledger rows shown name (a room may exist
    only as entries' `room_id`)."""
    named = {r.entry.room_id for r in rows if r.entry.room_id}
    return sorted({*store.rooms(), *named, *(a for a in also if a)})


@router.get("/login")
def login_form(request: Request, next: Annotated[str, Query(max_length=512)] = "/") -> Response:
    return page(request, "login.html", next=next if next.startswith("/") else "/")


@router.post("/login")
def login(
    request: Request,
    token: Annotated[str, Form(max_length=512)],
    csrf: Csrf,
    next: Annotated[str, Form(max_length=512)] = "/",
) -> Response:
    require_csrf(request, csrf)
    ids = context_of(request).identities
    sid = ids.login(token)
    if sid is None:
        return page(request, "login.html", 401, next=next, failed=True)
    target = next if next.startswith("/") and not next.startswith("//") else "/"
    resp = back(target)
    resp.set_cookie(
        SESSION_COOKIE, sid, max_age=SESSION_SECONDS, httponly=True, samesite="strict", path="/"
    )
    return resp


@router.get("/reveal")
def reveal_form(request: Request, next: Annotated[str, Query(max_length=2048)] = "/") -> Response:
    """Confirm before secrets are shown in clear (`web.identity` reveal cookie)."""
    return page(request, "reveal.html", next=_local(next), minutes=REVEAL_SECONDS // 60)


@router.post("/reveal")
def reveal(
    request: Request,
    csrf: Csrf,
    confirm: Annotated[str, Form(max_length=8)] = "",
    next: Annotated[str, Form(max_length=2048)] = "/",
) -> Response:
    require_csrf(request, csrf)
    if confirm != "yes":
        from fastapi import HTTPException

        raise HTTPException(400, "tick the box to confirm that secrets may be shown in clear")
    until = int(time.time()) + REVEAL_SECONDS
    resp = back(_local(next))
    resp.set_cookie(
        REVEAL_COOKIE,
        context_of(request).identities.reveal_cookie(identity_of(request), until),
        max_age=REVEAL_SECONDS,
        httponly=True,
        samesite="strict",
        path="/",
    )
    return resp


@router.post("/reveal/hide")
def reveal_hide(
    request: Request, csrf: Csrf, next: Annotated[str, Form(max_length=2048)] = "/"
) -> Response:
    require_csrf(request, csrf)
    resp = back(_local(next))
    resp.delete_cookie(REVEAL_COOKIE, path="/")
    return resp


def _local(target: str) -> str:
    """A redirect target on this server (never `//elsewhere` or `https://...`)."""
    return target if target.startswith("/") and not target.startswith("//") else "/"


@router.post("/logout")
def logout(request: Request, csrf: Csrf) -> Response:
    require_csrf(request, csrf)
    context_of(request).identities.logout(identity_of(request).session)
    resp = back("/login")
    resp.delete_cookie(SESSION_COOKIE, path="/")
    return resp


@router.get("/ledger")
def ledger(
    request: Request,
    room: Short = None,
    kind: Short = None,
    tag: Short = None,
    include_superseded: bool = False,
    before: Annotated[str | None, Query(max_length=64)] = None,
) -> Response:
    store = store_of(request)
    pg = ledger_page(
        store,
        room=room or None,
        kind=kind or None,
        tags=[tag] if tag else [],
        include_superseded=include_superseded,
        before=before,
        limit=50,
    )
    return page(
        request,
        "ledger.html",
        page=pg,
        rooms=_rooms(store, pg.rows, room or ""),
        kinds=store.config.kinds,
        room=room or "",
        kind=kind or "",
        tag=tag or "",
        include_superseded=include_superseded,
    )


@router.get("/ledger/{entry_id}")
def ledger_entry(request: Request, entry_id: str) -> Response:
    store = store_of(request)
    chain = supersede_chain(store, entry_id)
    return page(
        request, "ledger_entry.html", chain=chain, entry_id=entry_id, kinds=store.config.kinds
    )


@router.post("/ledger/{entry_id}/supersede")
def ledger_supersede(
    request: Request,
    entry_id: str,
    kind: Annotated[str, Form(max_length=200)],
    summary: Annotated[str, Form(max_length=4096)],
    csrf: Csrf,
    detail: Annotated[str, Form(max_length=16384)] = "",
) -> Response:
    require_csrf(request, csrf)
    new = store_of(request).ledger.publish(
        kind, summary, detail=detail or None, supersedes=entry_id
    )
    return back(f"/ledger/{quote(new.id)}")


@router.get("/search")
def search(
    request: Request,
    q: Annotated[str, Query(max_length=4000)] = "",
    layers: Annotated[list[str], Query(max_length=len(LAYERS) + len(SCOPES))] = [],  # noqa: B006
    kind: Short = None,
    agent: Short = None,
    room: Short = None,
    exclude_room: Short = None,
    tags: Annotated[str | None, Query(max_length=3400)] = None,
    tags_match: Short = None,
    since: Short = None,
    until: Short = None,
    include_superseded: bool = False,
    k: Annotated[int, Query(ge=1, le=50)] = 10,
    mode: Short = None,
) -> Response:
    """`tags` is one field, comma-separated (as typed in the form)."""
    store = store_of(request)
    chosen = [x for x in layers if x]
    wanted = tuple(t.strip() for t in (tags or "").split(",") if t.strip())
    hits: list[ShownHit] | None = None
    if q.strip() or chosen or kind or agent or room or exclude_room or wanted or since or until:
        found = store.search(
            SearchQuery(
                text=q,
                layers=tuple(chosen),
                kind=kind or None,
                agent=agent or None,
                room=room or None,
                exclude_room=exclude_room or None,
                tags=wanted,
                tags_match=tags_match or "any",
                since=since or None,
                until=until or None,
                include_superseded=include_superseded,
                k=k,
                mode=mode or None,
            )
        )
        hits = [shown(placed(store, h)) for h in found]
    return page(
        request,
        "search.html",
        hits=hits,
        q=q,
        all_layers=(*SCOPES, *LAYERS),
        chosen=chosen,
        kind=kind or "",
        agent=agent or "",
        room=room or "",
        exclude_room=exclude_room or "",
        tags=", ".join(wanted),
        tags_match=tags_match or "any",
        since=since or "",
        until=until or "",
        include_superseded=include_superseded,
        k=k,
        mode=mode or "",
        provider=store.config.search_provider,
    )


@router.get("/memory")
def memory(request: Request, uid: Annotated[str, Query(min_length=1, max_length=2000)]) -> Response:
    """One memory by uid, whole, with where it comes from (a project file at its lines)."""
    store = store_of(request)
    hit = shown(placed(store, store.get(uid)))
    first = hit.hit.line or 1
    lines = list(enumerate(hit.hit.text.splitlines(), start=first))
    return page(request, "memory.html", s=hit, lines=lines)


@router.get("/items")
def items(
    request: Request,
    type: Short = None,
    source_file: Short = None,
    before: Annotated[str | None, Query(max_length=64)] = None,
) -> Response:
    got, nxt = store_of(request).items.page(
        type=type or None, source_file=source_file or None, before=before, limit=50
    )
    return page(
        request,
        "items.html",
        items=got,
        next=nxt,
        types=ITEM_TYPES,
        type=type or "",
        source_file=source_file or "",
    )


@router.post("/items/remove")
def items_remove(
    request: Request,
    csrf: Csrf,
    ids: Annotated[list[str], Form(max_length=1000)] = [],  # noqa: B006
) -> Response:
    require_csrf(request, csrf)
    if ids:
        store_of(request).items.remove(ids)
    return back("/items")


@router.get("/events")
def events(request: Request) -> Response:

    store = store_of(request)
    recs, _ = recent_events(store.layout.events, limit=100, agents=store.gate.event_actors())
    return page(request, "events.html", events=recs)


@router.get("/api/docs")
def api_docs(request: Request) -> Response:
    return page(request, "api_docs.html")
