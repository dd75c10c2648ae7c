"""Facts, tasks and sessions (with transcripts) of one agent."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, Field

from memstrata import limits
from memstrata.model import FACT_CATEGORIES, SESSION_ROLES, TASK_STATUSES
from memstrata.operations.loop import record_failed_result
from memstrata.web.context import store_of

router = APIRouter(prefix="/agents", tags=["facts, tasks, sessions"])
Category = Literal[FACT_CATEGORIES]  # type: ignore[valid-type]
Status = Literal[TASK_STATUSES]  # type: ignore[valid-type]
Line = Annotated[str, Field(max_length=limits.TASK_CRITERION_BYTES)]


class FactSet(BaseModel):
    key: str = Field(max_length=limits.FACT_KEY_CHARS)
    value: str = Field(max_length=limits.FACT_VALUE_BYTES)
    category: Category = "general"
    citations: list[Annotated[str, Field(max_length=limits.CITATION_CHARS)]] = Field(
        default_factory=list, max_length=limits.FACT_CITATIONS
    )


class FactValue(BaseModel):
    value: str = Field(max_length=limits.FACT_VALUE_BYTES)
    category: Category = "general"
    citations: list[Annotated[str, Field(max_length=limits.CITATION_CHARS)]] = Field(
        default_factory=list, max_length=limits.FACT_CITATIONS
    )


class TaskAdd(BaseModel):
    description: str = Field(max_length=limits.TASK_DESCRIPTION_BYTES)
    milestone: str | None = Field(None, max_length=limits.TASK_MILESTONE_CHARS)
    priority: int = Field(3, ge=0, le=limits.TASK_PRIORITY_MAX)
    acceptance_criteria: list[Line] = Field(default_factory=list, max_length=limits.TASK_CRITERIA)
    blocked_by: list[Annotated[str, Field(max_length=64)]] = Field(
        default_factory=list, max_length=64
    )


class TaskChange(BaseModel):
    status: Status | None = None
    priority: int | None = Field(None, ge=0, le=limits.TASK_PRIORITY_MAX)
    milestone: str | None = Field(None, max_length=limits.TASK_MILESTONE_CHARS)
    description: str | None = Field(None, max_length=limits.TASK_DESCRIPTION_BYTES)
    acceptance_criteria: list[Line] | None = Field(None, max_length=limits.TASK_CRITERIA)
    blocked_by: list[Annotated[str, Field(max_length=64)]] | None = Field(None, max_length=64)


class SessionStart(BaseModel):
    session_id: str | None = Field(None, max_length=64)
    title: str | None = Field(None, max_length=1000)


class Message(BaseModel):
    role: Literal[SESSION_ROLES]  # type: ignore[valid-type]
    content: str = Field("", max_length=limits.SESSION_MESSAGE_BYTES)
    id: str | None = Field(None, max_length=limits.SESSION_LABEL_CHARS)
    name: str | None = Field(None, max_length=limits.SESSION_LABEL_CHARS)
    speaker: str | None = Field(None, max_length=limits.SESSION_LABEL_CHARS)
    timestamp: str | None = Field(None, max_length=64)
    is_error: bool | None = Field(None, description="tool_result: the call failed")


class MessageBatch(BaseModel):
    messages: list[Message] = Field(min_length=1, max_length=1000)


# -- facts ---------------------------------------------------------------------------
@router.get("/{agent}/facts", summary="Facts, by key")
def facts_list(request: Request, agent: str, category: Category | None = None) -> dict[str, Any]:
    facts = store_of(request).agent(agent).facts.list(category)
    return {"facts": [asdict(f) for f in facts]}


@router.post("/{agent}/facts", status_code=201, summary="Save a fact (save_fact)")
def fact_set(request: Request, agent: str, body: FactSet) -> dict[str, Any]:
    f = (
        store_of(request)
        .agent(agent)
        .facts.set(body.key, body.value, body.category, citations=body.citations)
    )
    return asdict(f)


@router.get("/{agent}/facts/{key:path}", summary="One fact (get_fact)")
def fact_get(request: Request, agent: str, key: str) -> dict[str, Any]:
    return asdict(store_of(request).agent(agent).facts.get(key))


@router.put("/{agent}/facts/{key:path}", summary="Save the fact under this key")
def fact_put(request: Request, agent: str, key: str, body: FactValue) -> dict[str, Any]:
    f = (
        store_of(request)
        .agent(agent)
        .facts.set(key, body.value, body.category, citations=body.citations)
    )
    return asdict(f)


@router.delete("/{agent}/facts/{key:path}", summary="Forget a fact (the journal keeps it)")
def fact_forget(request: Request, agent: str, key: str) -> dict[str, Any]:
    store_of(request).agent(agent).facts.forget(key)
    return {"forgotten": key}


# -- tasks ---------------------------------------------------------------------------
@router.get("/{agent}/tasks", summary="Tasks by priority (task memory)")
def tasks_list(
    request: Request,
    agent: str,
    status: Status | None = None,
    milestone: Annotated[str | None, Query(max_length=limits.TASK_MILESTONE_CHARS)] = None,
) -> dict[str, Any]:
    tasks = store_of(request).agent(agent).tasks
    return {
        "tasks": [t.to_dict() for t in tasks.list(status, milestone)],
        "problems": tasks.problems(),
    }


@router.post("/{agent}/tasks", status_code=201, summary="Add a task")
def task_add(request: Request, agent: str, body: TaskAdd) -> dict[str, Any]:
    t = (
        store_of(request)
        .agent(agent)
        .tasks.add(
            body.description,
            milestone=body.milestone,
            priority=body.priority,
            acceptance_criteria=body.acceptance_criteria,
            blocked_by=body.blocked_by,
        )
    )
    return t.to_dict()


@router.get("/{agent}/tasks/{task_id}", summary="One task")
def task_get(request: Request, agent: str, task_id: str) -> dict[str, Any]:
    return store_of(request).agent(agent).tasks.get(task_id).to_dict()


@router.patch("/{agent}/tasks/{task_id}", summary="Change a task (status, priority, ...)")
def task_update(request: Request, agent: str, task_id: str, body: TaskChange) -> dict[str, Any]:
    changes = body.model_dump(exclude_none=True)
    return store_of(request).agent(agent).tasks.update(task_id, **changes).to_dict()


# -- sessions ------------------------------------------------------------------------
@router.get("/{agent}/sessions", summary="Sessions (sessions.json)")
def sessions_list(request: Request, agent: str, include_archived: bool = False) -> dict[str, Any]:
    sessions = store_of(request).agent(agent).sessions
    return {"sessions": [s.to_dict() for s in sessions.list(include_archived=include_archived)]}


@router.post("/{agent}/sessions", status_code=201, summary="Start a session")
def session_start(request: Request, agent: str, body: SessionStart) -> dict[str, Any]:
    return (
        store_of(request).agent(agent).sessions.start(body.session_id, title=body.title).to_dict()
    )


@router.get("/{agent}/sessions/{session_id}", summary="A page of a transcript, in order")
def session_read(
    request: Request,
    agent: str,
    session_id: str,
    after: Annotated[int, Query(ge=-1, le=2**53)] = -1,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> dict[str, Any]:
    msgs, nxt = store_of(request).agent(agent).sessions.page(session_id, after=after, limit=limit)
    return {"session_id": session_id, "messages": [m.to_dict() for m in msgs], "next": nxt}


@router.post(
    "/{agent}/sessions/{session_id}/messages",
    status_code=201,
    summary="Append messages in one durable write (the PERSIST stage)",
)
def session_append(
    request: Request, agent: str, session_id: str, body: MessageBatch
) -> dict[str, Any]:
    msgs = [m.model_dump(exclude_none=True) for m in body.messages]
    store = store_of(request)
    out = store.agent(agent).sessions.append_many(session_id, msgs)
    for m in out:  # a failed call's result: an ERROR entry, as MCP session_append records it
        record_failed_result(store, agent, session_id, m)
    return {"session_id": session_id, "messages": [m.to_dict() for m in out]}


@router.post("/{agent}/sessions/{session_id}/end", summary="Mark a session ended")
def session_end(request: Request, agent: str, session_id: str) -> dict[str, Any]:
    store_of(request).agent(agent).sessions.end(session_id)
    return {"session_id": session_id, "ended": True}
