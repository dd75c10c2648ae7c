"""Pages of one agent's memory: timeline, NOW / CONTEXT / identity and memory files (view
and edit, conflicts shown), facts, the task board, sessions, the assembled prompt, audit."""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Form, Query, Request
from starlette.responses import Response

from memstrata.assembly.context import assemble_context
from memstrata.assembly.health import agent_health
from memstrata.assembly.story import KINDS, tell
from memstrata.errors import NotFound, StaleWrite
from memstrata.lifecycle.hygiene import audit, prune
from memstrata.model import FACT_CATEGORIES, TASK_STATUSES
from memstrata.store.editing import sha256_text
from memstrata.web.context import store_of
from memstrata.web.pages.forms import back, require_csrf
from memstrata.web.pages.render import page

router = APIRouter(prefix="/a/{agent}")
HOT = {"now": "NOW.md", "context": "CONTEXT.md", "identity": "AGENT.md"}
Text = Annotated[str, Form(max_length=1024 * 1024)]
Csrf = Annotated[str, Form(max_length=128)]


def _agent_page(
    request: Request, agent: str, template: str, tab: str, status: int = 200, **values: Any
) -> Response:
    store = store_of(request)
    mem = store.agent(agent)  # NotFound / MalformedInput before anything is shown
    return page(request, template, status, agent=mem.name, tab=tab, **values)


@router.get("")
def agent_home(agent: str) -> Response:
    return back(f"/a/{quote(agent)}/timeline")


@router.get("/timeline")
def timeline_page(
    request: Request,
    agent: str,
    kinds: Annotated[list[str], Query(max_length=len(KINDS))] = [],  # noqa: B006
    since: Annotated[str | None, Query(max_length=64)] = None,
    until: Annotated[str | None, Query(max_length=64)] = None,
    before: Annotated[str | None, Query(max_length=64)] = None,
    newer: Annotated[str | None, Query(max_length=64)] = None,
    at: Annotated[str | None, Query(max_length=2000)] = None,
) -> Response:
    """The agent's story: one line per event, by session (`assembly.story`)."""
    chosen = [k for k in kinds if k]
    story = tell(
        store_of(request),
        agent,
        kinds=chosen,
        since=since or None,
        until=until or None,
        before=before or None,
        newer=newer or None,
        at=at or None,
    )
    return _agent_page(
        request,
        agent,
        "timeline.html",
        "timeline",
        story=story,
        all_kinds=list(KINDS),
        chosen=chosen,
        since=since or "",
        until=until or "",
        filters=_query(kinds=chosen, since=since or "", until=until or ""),
    )


def _query(**values: Any) -> str:
    """`values` as a query string (lists repeated, empty values left out)."""
    from urllib.parse import urlencode

    pairs = [
        (k, v)
        for k, vs in values.items()
        for v in (vs if isinstance(vs, list) else [vs])
        if v not in ("", None)
    ]
    return urlencode(pairs)


@router.get("/health")
def health_page(request: Request, agent: str) -> Response:
    """The agent's memory health: index freshness, what could not be read, sizes."""
    store = store_of(request)
    mem = store.agent(agent)
    problems = [*mem.tasks.problems(), *mem.facts.problems(), *mem.sessions.problems()]
    return _agent_page(
        request,
        agent,
        "health.html",
        "health",
        health=agent_health(store, mem.name, show=200),
        problems=[p.replace(f"{store.home}/", "") for p in problems],
    )


# -- NOW / CONTEXT / identity ----------------------------------------------------------------
def _hot(request: Request, agent: str, which: str) -> Any:
    from fastapi import HTTPException

    if which not in HOT:
        raise HTTPException(404, f"no such file {which!r}: now, context or identity")
    mem = store_of(request).agent(agent)
    return {"now": mem.now, "context": mem.context, "identity": mem.identity}[which]


Line = Annotated[int | None, Query(ge=1, le=10**7)]


def excerpt(text: str, line: int | None, before: int = 4, after: int = 16) -> list[tuple[int, str]]:
    """The lines around `line` (1-based), numbered: a search hit's place in its file."""
    if line is None:
        return []
    lines = text.splitlines()
    lo, hi = max(1, line - before), min(len(lines), line + after)
    return [(n, lines[n - 1]) for n in range(lo, hi + 1)]


@router.get("/edit/{which}")
def hot_view(request: Request, agent: str, which: str, line: Line = None) -> Response:
    text = _hot(request, agent, which).read()
    return _agent_page(
        request,
        agent,
        "edit.html",
        which,
        name=HOT[which],
        text=text,
        sha=sha256_text(text),
        action=f"/a/{quote(agent)}/edit/{which}",
        line=line,
        excerpt=excerpt(text, line),
    )


@router.post("/edit/{which}")
def hot_save(
    request: Request, agent: str, which: str, text: Text, expected_sha: Csrf, csrf: Csrf
) -> Response:
    require_csrf(request, csrf)
    layer = _hot(request, agent, which)
    text = text.replace("\r\n", "\n")  # browsers send CRLF from a textarea
    try:
        layer.write(text, expected_sha=expected_sha)
    except StaleWrite as exc:
        theirs = layer.read()
        return _agent_page(
            request,
            agent,
            "edit.html",
            which,
            status=409,
            name=HOT[which],
            text=theirs,
            sha=sha256_text(theirs),
            yours=text,
            conflict=str(exc),
            action=f"/a/{quote(agent)}/edit/{which}",
        )
    return back(f"/a/{quote(agent)}/edit/{which}?saved=1")


# -- memory files ------------------------------------------------------------------------
@router.get("/files")
def files_page(
    request: Request, agent: str, path: Annotated[str, Query(max_length=512)] = ""
) -> Response:
    files = store_of(request).agent(agent).files.list(path)
    return _agent_page(request, agent, "files.html", "files", files=files, folder=path)


@router.get("/file")
def file_view(
    request: Request,
    agent: str,
    path: Annotated[str, Query(min_length=1, max_length=512)],
    line: Line = None,
) -> Response:
    files = store_of(request).agent(agent).files

    try:
        text = files.read(path)
    except NotFound:
        text = ""  # a new file: the editor starts empty, sha of ""
    return _agent_page(
        request,
        agent,
        "edit.html",
        "files",
        name=path,
        text=text,
        sha=sha256_text(text),
        file_path=path,
        action=f"/a/{quote(agent)}/file",
        line=line,
        excerpt=excerpt(text, line),
    )


@router.post("/file")
def file_save(
    request: Request,
    agent: str,
    path: Annotated[str, Form(max_length=512)],
    text: Text,
    expected_sha: Csrf,
    csrf: Csrf,
) -> Response:
    require_csrf(request, csrf)
    files = store_of(request).agent(agent).files
    text = text.replace("\r\n", "\n")
    try:
        files.write(path, text, expected_sha=expected_sha)
    except StaleWrite as exc:
        theirs = files.read(path)
        return _agent_page(
            request,
            agent,
            "edit.html",
            "files",
            status=409,
            name=path,
            text=theirs,
            sha=sha256_text(theirs),
            yours=text,
            file_path=path,
            conflict=str(exc),
            action=f"/a/{quote(agent)}/file",
        )
    return back(f"/a/{quote(agent)}/file?path={quote(path)}&saved=1")


@router.post("/file/delete")
def file_delete(
    request: Request, agent: str, path: Annotated[str, Form(max_length=512)], csrf: Csrf
) -> Response:
    require_csrf(request, csrf)
    store_of(request).agent(agent).files.delete(path)
    return back(f"/a/{quote(agent)}/files")


# -- facts, tasks, sessions ------------------------------------------------------------
@router.get("/facts")
def facts_page(request: Request, agent: str) -> Response:
    facts = store_of(request).agent(agent).facts
    return _agent_page(
        request,
        agent,
        "facts.html",
        "facts",
        facts=facts.list(),
        problems=facts.problems(),
        categories=FACT_CATEGORIES,
    )


@router.post("/facts")
def fact_save(
    request: Request,
    agent: str,
    key: Annotated[str, Form(max_length=200)],
    value: Annotated[str, Form(max_length=16384)],
    category: Annotated[str, Form(max_length=32)],
    csrf: Csrf,
    citations: Annotated[str, Form(max_length=4096)] = "",
) -> Response:
    require_csrf(request, csrf)
    cites = [c.strip() for c in citations.replace("\n", ",").split(",") if c.strip()]
    store_of(request).agent(agent).facts.set(key, value, category, citations=cites)
    return back(f"/a/{quote(agent)}/facts")


@router.post("/facts/forget")
def fact_forget(
    request: Request, agent: str, key: Annotated[str, Form(max_length=200)], csrf: Csrf
) -> Response:
    require_csrf(request, csrf)
    store_of(request).agent(agent).facts.forget(key)
    return back(f"/a/{quote(agent)}/facts")


@router.get("/tasks")
def tasks_page(request: Request, agent: str) -> Response:
    tasks = store_of(request).agent(agent).tasks
    board = {s: [t for t in tasks.list() if t.status == s] for s in TASK_STATUSES}
    return _agent_page(
        request,
        agent,
        "tasks.html",
        "tasks",
        board=board,
        problems=tasks.problems(),
        statuses=TASK_STATUSES,
    )


@router.post("/tasks")
def task_add(
    request: Request,
    agent: str,
    description: Annotated[str, Form(max_length=16384)],
    priority: Annotated[int, Form(ge=0, le=1000)],
    csrf: Csrf,
    milestone: Annotated[str, Form(max_length=200)] = "",
) -> Response:
    require_csrf(request, csrf)
    store_of(request).agent(agent).tasks.add(
        description, priority=priority, milestone=milestone or None
    )
    return back(f"/a/{quote(agent)}/tasks")


@router.post("/tasks/status")
def task_status(
    request: Request,
    agent: str,
    task_id: Annotated[str, Form(max_length=64)],
    status: Annotated[str, Form(max_length=32)],
    csrf: Csrf,
) -> Response:
    require_csrf(request, csrf)
    store_of(request).agent(agent).tasks.update(task_id, status=status)
    return back(f"/a/{quote(agent)}/tasks")


@router.get("/sessions")
def sessions_page(request: Request, agent: str, archived: bool = False) -> Response:
    sessions = store_of(request).agent(agent).sessions.list(include_archived=archived)
    sessions.sort(key=lambda s: s.last_active or s.created, reverse=True)
    return _agent_page(
        request, agent, "sessions.html", "sessions", sessions=sessions, archived=archived
    )


@router.get("/sessions/{session_id}")
def session_page(
    request: Request,
    agent: str,
    session_id: str,
    after: Annotated[int, Query(ge=-1, le=2**53)] = -1,
    at: Annotated[int | None, Query(ge=0, le=2**53)] = None,
) -> Response:
    """A transcript, a page at a time; `at` (a message's position) opens it at that
    message, a few before it shown first."""
    sessions = store_of(request).agent(agent).sessions
    if at is not None:
        after = sessions.cursor_before(session_id, at)
    msgs, nxt = sessions.numbered(session_id, after=after, limit=100)
    told = sessions.transcripts([session_id]).get(session_id)
    return _agent_page(
        request,
        agent,
        "session.html",
        "sessions",
        session_id=session_id,
        told=told,
        messages=msgs,
        next=nxt,
        at=at,
        after=after,
    )


# -- the assembled prompt, the audit ---------------------------------------------------------
@router.get("/prompt")
def prompt_page(
    request: Request,
    agent: str,
    budget_chars: Annotated[int, Query(ge=200, le=1_000_000)] = 24_000,
    brief: Annotated[str, Query(max_length=4000)] = "",
) -> Response:

    store = store_of(request)
    ctx = assemble_context(
        store,
        store.agent(agent).name,
        budget_chars=budget_chars,
        brief=brief or None,
        workspace=str(store.home),
    )
    return _agent_page(
        request, agent, "prompt.html", "prompt", ctx=ctx, budget_chars=budget_chars, brief=brief
    )


@router.get("/audit")
def audit_page(request: Request, agent: str) -> Response:

    store = store_of(request)
    name = store.agent(agent).name
    report = audit(store, name)
    dry = prune(store, name, report, dry_run=True)
    return _agent_page(request, agent, "audit.html", "audit", report=report, dry=dry)


@router.post("/audit/prune")
def audit_prune(
    request: Request,
    agent: str,
    csrf: Csrf,
    reviewed: Annotated[list[str], Form(max_length=1000)] = [],  # noqa: B006
) -> Response:
    """Apply the findings the person ticked on the dry run it was shown."""

    require_csrf(request, csrf)
    store = store_of(request)
    name = store.agent(agent).name
    only = [tuple(r.split("\x1f", 1)) for r in reviewed if "\x1f" in r]
    result = prune(store, name, audit(store, name), dry_run=False, only=[(k, t) for k, t in only])
    return _agent_page(
        request,
        agent,
        "audit.html",
        "audit",
        report=audit(store, name),
        dry=prune(store, name, audit(store, name), dry_run=True),
        applied=result,
    )
