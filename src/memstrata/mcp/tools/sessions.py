"""Session transcripts: append a message (created on first use), read the last.

A user message appended is read for a change of plan (`lifecycle.reversal`): an MCP agent's
transcript is the only way the user's words reach memory, so "change of plan on the
region: ..." replaces the region decision in force here, as the UserPromptSubmit hook
does for Claude Code. A tool_result with `is_error` is the call's failure: an ERROR entry in
LOG.md as Claude Code's PostToolUseFailure hook leaves (`operations.loop.record_failed_result`),
so the context's open errors and recall see it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memstrata.lifecycle.reversal import record_reversal
from memstrata.mcp import shapes
from memstrata.mcp.shapes import Reply
from memstrata.mcp.tools.spec import Caller, ToolSpec, p, req
from memstrata.model import SESSION_ROLES
from memstrata.operations.loop import record_failed_result, writes_allowed

if TYPE_CHECKING:
    from memstrata.config import Config


def session_append(
    caller: Caller,
    session_id: str,
    role: str,
    content: str,
    id: str | None,
    name: str | None,
    input: Any,
    is_error: bool,
) -> Reply:
    m = caller.agent.sessions.append(
        session_id, role, content, id=id, name=name, input=input, is_error=is_error or None
    )
    if role == "user" and writes_allowed(caller.store):  # the user's change of plan
        record_reversal(caller.store, caller.agent.name, content, session_id)
    record_failed_result(caller.store, caller.agent.name, session_id, m)  # is_error: an ERROR
    return Reply(
        f"appended {m.id} to session {session_id}",
        {"id": m.id, "session_id": session_id, "timestamp": m.timestamp},
    )


def session_read(caller: Caller, session_id: str, last_n: int) -> Reply:
    msgs = caller.agent.sessions.messages(session_id)[-last_n:]
    text = "\n".join(f"[{m.timestamp[:16]}] {m.role}: {m.content}" for m in msgs)
    return Reply(text or "(no messages)", {"messages": [shapes.compact(m.to_dict()) for m in msgs]})


def tools(config: Config) -> list[ToolSpec]:
    """The declarations, in catalogue order."""
    S, obj = shapes.S, shapes._obj
    return [
        ToolSpec(
            "session_append",
            session_append,
            "Append a message to a session transcript (created on first use). A tool call "
            "is role tool_call with name and input; its result is role tool_result with "
            "the same id.",
            (
                req("session_id", "string", "session name, e.g. 2026-11-23-auth"),
                req("role", "string", "who speaks", enum=SESSION_ROLES),
                req("content", "string", 'the message ("" for a tool call)'),
                p(
                    "id",
                    "string",
                    "message id (default: a new one); a tool_call and its "
                    "tool_result share one, e.g. tool_001",
                ),
                p("name", "string", "tool_call / tool_result: the tool's name"),
                p("input", "object", 'tool_call: the tool\'s input, e.g. {"path": "a.md"}'),
                p(
                    "is_error",
                    "boolean",
                    "tool_result: the call failed (logged as an ERROR, listed as an open "
                    "error until resolved)",
                    False,
                ),
            ),
            obj({"id": S, "session_id": S, "timestamp": S}, ["id", "session_id", "timestamp"]),
            read_only=False,
            group="sessions",
        ),
        ToolSpec(
            "session_read",
            session_read,
            "The last messages of a session transcript.",
            (
                req("session_id", "string", "session name"),
                p("last_n", "integer", "messages", 20, minimum=1, maximum=200),
            ),
            obj({"messages": {"type": "array", "items": shapes.MESSAGE}}, ["messages"]),
            idempotent=True,
            group="sessions",
        ),
    ]
