"""One agent's memory: NOW / CONTEXT / identity, memory files, LOG, timeline, prompt context.

Whole-file writes carry the sha256 of the text the editor started from
(`expected_sha`); if the file changed meanwhile the write is refused with 409
`stale_write` and nothing is overwritten (`Store.rewrite`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Request
from pydantic import BaseModel, Field

from memstrata import limits
from memstrata.assembly.context import DEFAULT_LOG_ENTRIES, assemble_context
from memstrata.assembly.timeline import MAX_PAGE, TIMELINE_TYPES, timeline
from memstrata.lifecycle.compaction import compaction_history
from memstrata.model import LOG_TYPES
from memstrata.store.editing import sha256_text
from memstrata.web.context import store_of

router = APIRouter(prefix="/agents", tags=["agents"])
TimelineType = Literal[
    "log", "session", "fact", "now", "context", "identity", "file", "task", "archive", "compaction"
]  # TIMELINE_TYPES (a test checks they agree)
AgentName = Annotated[str, Field(max_length=limits.NAME_CHARS)]
Sha = Annotated[
    str | None,
    Field(
        None,
        max_length=64,
        pattern="^[0-9a-f]{64}$",
        description="sha256 of the text this edit started from",
    ),
]


class TextWrite(BaseModel):
    text: str = Field(max_length=limits.MEMORY_FILE_BYTES)
    expected_sha: Sha = None


class FileWrite(BaseModel):
    content: str = Field(max_length=limits.MEMORY_FILE_BYTES)
    expected_sha: Sha = None


class StatusUpdate(BaseModel):
    status: str = Field(max_length=limits.NOW_STATUS_BYTES)
    next_steps: list[Annotated[str, Field(max_length=limits.NOW_STEP_CHARS)]] = Field(
        default_factory=list, max_length=limits.NOW_STEPS
    )
    blockers: list[Annotated[str, Field(max_length=limits.NOW_STEP_CHARS)]] = Field(
        default_factory=list, max_length=limits.NOW_STEPS
    )
    phase: str | None = Field(None, max_length=limits.NOW_PHASE_CHARS)


class LogAppend(BaseModel):
    entry_type: Literal[LOG_TYPES]  # type: ignore[valid-type]
    content: str = Field(max_length=limits.LOG_CONTENT_BYTES)
    metadata: dict[str, Any] | None = None


def _hot(request: Request, agent: str, which: str) -> Any:
    mem = store_of(request).agent(agent)
    return {"now": mem.now, "context": mem.context, "identity": mem.identity}[which]


@router.get("", summary="Agents whose memory you may read")
def agents(request: Request) -> dict[str, Any]:
    store = store_of(request)
    names = [a for a in store.agents() if store.gate.allows("read", "file", a)]
    own = store.principal.agent
    if own and own not in names and store.gate.allows("read", "file", own):
        names.insert(0, own)
    return {"agents": names}


def _hot_routes(which: str, name: str) -> None:
    def read(request: Request, agent: str) -> dict[str, Any]:
        layer = _hot(request, agent, which)
        text = layer.read()
        return {"agent": agent, "file": layer.path.name, "text": text, "sha256": sha256_text(text)}

    def write(request: Request, agent: str, body: TextWrite) -> dict[str, Any]:
        layer = _hot(request, agent, which)
        layer.write(body.text, expected_sha=body.expected_sha)
        return {"agent": agent, "file": layer.path.name, "sha256": sha256_text(body.text)}

    router.add_api_route(
        f"/{{agent}}/{which}",
        read,
        methods=["GET"],
        name=f"{which}_read",
        summary=f"{name}: its text and sha256",
    )
    router.add_api_route(
        f"/{{agent}}/{which}",
        write,
        methods=["PUT"],
        name=f"{which}_write",
        summary=f"Replace {name} (409 stale_write if it changed since expected_sha)",
    )


for _which, _name in (("now", "NOW.md"), ("context", "CONTEXT.md"), ("identity", "AGENT.md")):
    _hot_routes(_which, _name)


@router.post("/{agent}/now/status", summary="update_status: objective and next steps")
def now_status(request: Request, agent: str, body: StatusUpdate) -> dict[str, Any]:
    state = (
        store_of(request)
        .agent(agent)
        .now.update(body.status, body.next_steps, blockers=body.blockers, phase=body.phase)
    )
    return {
        "objective": state.objective,
        "next_steps": list(state.next_steps),
        "blockers": list(state.blockers),
        "phase": state.phase,
        "updated": state.updated,
    }


@router.get("/{agent}/memory-files", summary="Memory files below a folder")
def files_list(
    request: Request, agent: str, path: Annotated[str, Query(max_length=limits.PATH_CHARS)] = ""
) -> dict[str, Any]:
    files = store_of(request).agent(agent).files.list(path)
    return {
        "files": [
            {"path": f.path, "size": f.size, "modified": f.modified, "is_dir": f.is_dir}
            for f in files
        ]
    }


@router.get("/{agent}/memory-files/{path:path}", summary="One memory file: text and sha256")
def file_read(request: Request, agent: str, path: str) -> dict[str, Any]:
    files = store_of(request).agent(agent).files
    text = files.read(path)
    return {"path": path, "text": text, "sha256": sha256_text(text)}


@router.put(
    "/{agent}/memory-files/{path:path}",
    summary="Create or replace a memory file (409 if it changed since expected_sha)",
)
def file_write(request: Request, agent: str, path: str, body: FileWrite) -> dict[str, Any]:
    info = (
        store_of(request)
        .agent(agent)
        .files.write(path, body.content, expected_sha=body.expected_sha)
    )
    return {"path": info.path, "size": info.size, "sha256": info.sha256}


@router.delete("/{agent}/memory-files/{path:path}", summary="Move a memory file to the archive")
def file_delete(request: Request, agent: str, path: str) -> dict[str, Any]:
    return {"archived_to": store_of(request).agent(agent).files.delete(path)}


@router.get("/{agent}/log", summary="The last LOG.md entries, oldest first")
def log_tail(
    request: Request, agent: str, n: Annotated[int, Query(ge=0, le=500)] = 20
) -> dict[str, Any]:
    log = store_of(request).agent(agent).log
    return {"entries": [_entry(e) for e in log.tail(n)]}


def _entry(e: Any) -> dict[str, Any]:
    return {
        "id": e.id,
        "ts": e.ts,
        "entry_type": e.entry_type,
        "content": e.content,
        "metadata": e.metadata,
    }


@router.post("/{agent}/log", status_code=201, summary="Append one LOG.md entry (durable on 201)")
def log_append(request: Request, agent: str, body: LogAppend) -> dict[str, Any]:
    e = store_of(request).agent(agent).log.append(body.entry_type, body.content, body.metadata)
    return _entry(e)


@router.get("/{agent}/archive", summary="The LOG archives compaction wrote, oldest first")
def archives_list(request: Request, agent: str) -> dict[str, Any]:
    archives = store_of(request).agent(agent).archives
    return {"archives": [a.to_dict() for a in archives.list()]}


@router.get(
    "/{agent}/archive/{archive_id}",
    summary="One LOG archive's entries, in the order they were logged",
)
def archive_read(
    request: Request, agent: str, archive_id: Annotated[str, Path(max_length=64)]
) -> dict[str, Any]:
    archives = store_of(request).agent(agent).archives
    return {
        "archive": archives.get(archive_id).to_dict(),
        "entries": [_entry(e) for e in archives.entries(archive_id)],
    }


@router.get("/{agent}/timeline", summary="The agent's memory newest first, a page at a time")
def agent_timeline(
    request: Request,
    agent: str,
    types: Annotated[list[TimelineType], Query(max_length=len(TIMELINE_TYPES))] = [],  # noqa: B006
    since: Annotated[str | None, Query(max_length=64)] = None,
    until: Annotated[str | None, Query(max_length=64)] = None,
    before: Annotated[
        str | None, Query(max_length=64, description="`next` of the page before")
    ] = None,
    limit: Annotated[
        int,
        Query(
            ge=1,
            le=MAX_PAGE,
            description="items per page; a page never ends inside one time (it can hold more)",
        ),
    ] = 50,
) -> dict[str, Any]:
    page = timeline(
        store_of(request),
        agent,
        types=tuple(types),
        since=since,
        until=until,
        before=before,
        limit=limit,
    )
    return page.to_dict()


@router.get("/{agent}/prompt", summary="The assembled prompt context, with the budget cut")
def prompt(
    request: Request,
    agent: str,
    budget_chars: Annotated[int, Query(ge=200, le=1_000_000)] = 24_000,
    brief: Annotated[str | None, Query(max_length=4000)] = None,
    log_entries: Annotated[int, Query(ge=0, le=500)] = DEFAULT_LOG_ENTRIES,
) -> dict[str, Any]:

    store = store_of(request)
    ctx = assemble_context(
        store,
        store.agent(agent).name,
        budget_chars=budget_chars,
        brief=brief,
        log_entries=log_entries,
        workspace=str(store.home),
    )
    return {
        "text": ctx.text,
        "chars": ctx.chars,
        "budget_chars": budget_chars,
        "truncated": ctx.truncated,
        "sections": list(ctx.sections),
        "cuts": [
            {"section": k, "lines_kept": kept, "lines_dropped": dropped}
            for k, kept, dropped in ctx.cuts
        ],
        "warnings": list(ctx.warnings),
    }


@router.get("/{agent}/compactions", summary="Every LOG compaction (compaction_history)")
def compactions(request: Request, agent: str) -> dict[str, Any]:

    store = store_of(request)
    return {"compactions": compaction_history(store, store.agent(agent).name)}
