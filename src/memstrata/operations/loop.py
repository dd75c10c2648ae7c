"""The AgentOS engine integration: the "Automatic" memory list around one agent turn.

    from memstrata.operations.loop import AgentLoop

    loop = AgentLoop.open("finn")                      # or AgentLoop(MemoryManager("finn"))
    with loop.turn("Research Python decorators") as turn:   # logs the user's intent
        prompt = turn.before_llm_call()                # NOW + LOG + facts, read fresh each call
        result = run_tool(...)
        turn.tool_executed("web_search", {"q": "decorators"}, result, duration=0.8)
        turn.final_response("Here is the outline ...")     # logged
    # on leaving the block: NOW.md says "Task complete: Research Python decorators"

What the harness does by itself, as AgentOS lists it: read NOW + LOG (+ facts)
before each LLM call, log the user's intent (USER_FEEDBACK), log every tool
execution (TOOL_USE: the tool, a clipped view of its parameters, the size and
outcome of its result, never the output itself), log the final response, set
NOW.md to "task complete", and on an exception self-anneal (`lifecycle.anneal`:
ERROR entry with the traceback, recovery steps in NOW.md) and re-raise. The loop owns
NOW, except in a turn where the agent set it itself (`update_now` during the turn, the
agent's own "updating NOW.md mid-task"): that NOW is kept, not replaced by "Task complete".
And it says "Task complete" only when no task is open: while one is, a NOW the agent set
in an earlier turn stands (the hooks' rule, `lifecycle.outcome.agent_owns_now`), and
otherwise the turn's outcome is recorded as the Stop hook records it
(`lifecycle.outcome.write_outcome`: the user's goal, the open tasks as next steps, the last
turn), so a session never starts from a false "complete" nor loses the agent's next steps.

With a `session_id` the turn is also the transcript's PERSIST stage: the user's
message, each tool call (name, input) and result, and the final response are
appended to `sessions/<session_id>.jsonl` as they happen (tool results clipped
to 8000 characters, an unserialisable input shown as its clipped parameters).

A user's message that states a change of plan replaces the one decision in force it
names (`lifecycle.reversal`, the rule of the hooks and MCP `session_append`).

When the user asks to ignore memory ("ignore memory", "fresh context", ...),
`before_llm_call` reads nothing from memory for that turn. In
agent-controlled mode (`[memory] mode = "agent-controlled"`) the turn
writes nothing at all: the agent writes memory itself or not at all.

The same entry shapes are used by the coding-agent hooks and the MCP server's
auto-log (`log_intent`, `log_tool`), so every surface logs alike.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any

from memstrata.assembly.context import assemble_context, wants_no_memory
from memstrata.errors import MalformedInput, MemstrataError
from memstrata.lifecycle.anneal import record_error, record_tool_failure, store_and_agent
from memstrata.lifecycle.outcome import agent_owns_now, open_work, write_outcome
from memstrata.lifecycle.reversal import record_reversal
from memstrata.reading.failure import told
from memstrata.store.view import Store

if TYPE_CHECKING:
    from memstrata.model import LogEntry, SessionMessage
    from memstrata.operations.manager import MemoryManager

COMPLETE = "Task complete"
MAX_INTENT_CHARS = 4000
MAX_RESPONSE_CHARS = 2000
MAX_ARG_CHARS = 80
MAX_ARGS_CHARS = 300
MAX_RESULT_CHARS = 8000  # a tool result as the session transcript keeps it
_FAILED_KEYS = ("is_error", "isError", "error", "interrupted")
# memstrata's own memory tools, by the names the MCP server (`mcp.tools`) and the framework
# integrations (`integrations.memory_tools`) give them. Their effect is memory already: a
# turn keeps their call in the transcript but logs no TOOL_USE entry for them, as the hooks
# skip `mcp__memstrata__*` and the MCP server logs none by default (`[mcp] auto_log`).
# `tests/test_loop.py` holds this list to the MCP catalogue.
MEMORY_TOOLS = frozenset(
    [
        "recall_memory",
        "memory_get",
        "log_activity",
        "update_status",
        "save_fact",
        "get_fact",
        "record_decision",
        "memory_read",
        "memory_write",
        "memory_replace",
        "memory_insert",
        "memory_list",
        "memory_publish",
        "memory_query",
        "memory_search",
        "memory_get_context",
        "room_channel",
        "room_artifact",
        "room_close",
        "room_upstream",
        "task_add",
        "task_update",
        "task_list",
        "session_append",
        "session_read",
        "task_folder_create",
        "task_folder_write",
        "task_folder_read",
        "task_verified",
        "gate_event",
        "task_phase",
        "scratch_promote",
        "memory_promote",
        "memory_audit",
        "memory_verify",
        "skill_handoff",
        "memory",
        "memory_history",
        "memory_restore",
        "recall",
    ]
)


def _clip(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(value)


def _json_input(args: Any) -> Any:
    """A tool's input as the transcript stores it: as given when it is small JSON, else
    its clipped parameters (`compact_args`)."""
    if args is None:
        return {}
    try:
        if len(json.dumps(args, ensure_ascii=False)) <= 64 * 1024:
            return args
    except (TypeError, ValueError):
        pass
    return compact_args(args)


def compact_args(args: Any) -> dict[str, Any]:
    """Tool parameters as a small JSON object: scalars kept, long text clipped, sizes for blobs."""
    if args is None:
        return {}
    if not isinstance(args, Mapping):
        return {"args": _clip(_as_text(args), MAX_ARG_CHARS)}
    out: dict[str, Any] = {}
    used = 0
    for key, value in args.items():
        if isinstance(value, bool | int | float) or value is None:
            shown: Any = value
        else:
            text = _as_text(value)
            shown = (
                _clip(text, MAX_ARG_CHARS)
                if len(text) <= 4 * MAX_ARG_CHARS
                else f"<{len(text)} chars>"
            )
        used += len(str(key)) + len(str(shown))
        if used > MAX_ARGS_CHARS:
            out["…"] = f"{len(args) - len(out)} more"
            break
        out[str(key)] = shown
    return out


def outcome_of(result: Any, error: BaseException | str | None = None) -> str:
    """'error' when the call raised or its result says it failed, else 'ok'."""
    if (
        error
        or getattr(result, "is_error", False) is True
        or getattr(result, "isError", False) is True
    ):
        return "error"
    if isinstance(result, Mapping):
        if any(result.get(k) for k in _FAILED_KEYS) or result.get("success") is False:
            return "error"
        for key in ("exit_code", "returncode", "exitCode"):
            code = result.get(key)
            if isinstance(code, int) and not isinstance(code, bool) and code != 0:
                return "error"
    return "ok"


def describe_tool(
    name: str,
    args: Any = None,
    result: Any = None,
    duration: float | None = None,
    error: BaseException | str | None = None,
) -> tuple[str, dict[str, Any]]:
    """The one-line LOG content and the metadata of a tool execution."""
    shown = compact_args(args)
    size = len(_as_text(result))
    outcome = outcome_of(result, error)
    params = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in shown.items())
    took = f" in {duration:.2f}s" if isinstance(duration, int | float) else ""
    content = f"{name}({params}) -> {outcome}, {size} chars{took}"
    meta: dict[str, Any] = {"tool": name, "args": shown, "result_chars": size, "outcome": outcome}
    if isinstance(duration, int | float):
        meta["duration_s"] = round(float(duration), 3)
    if error:
        detail = f"{type(error).__name__}: {error}" if isinstance(error, BaseException) else error
        meta["error"] = told(str(detail), 300)  # what went wrong, not the output's banner
        content += f": {told(str(detail), 160)}"
    return content, meta


def writes_allowed(store: Store) -> bool:
    """False in agent-controlled mode (the harness writes nothing on the agent's behalf)
    and for a skill agent (stateless, it writes no memory)."""
    return store.config.automatic_writes and store.principal.role != "skill"


def log_intent(store: Store, agent: str, message: str, **meta: Any) -> LogEntry | None:
    """Automatic "logging user intents": a USER_FEEDBACK entry (None in agent-controlled mode)."""
    if not writes_allowed(store) or not message.strip():
        return None
    text = message.strip()
    clipped = text if len(text) <= MAX_INTENT_CHARS else text[: MAX_INTENT_CHARS - 1] + "…"
    return store.agent(agent).log.append(
        "USER_FEEDBACK", clipped, {"event": "user_intent", "chars": len(text), **meta}
    )


def log_tool(
    store: Store,
    agent: str,
    name: str,
    args: Any = None,
    result: Any = None,
    duration: float | None = None,
    error: BaseException | str | None = None,
    **meta: Any,
) -> LogEntry | None:
    """Automatic "logging tool executions": a compact TOOL_USE entry (never the output)."""
    if not writes_allowed(store):
        return None
    content, info = describe_tool(name, args, result, duration, error)
    return store.agent(agent).log.append("TOOL_USE", content, {**info, **meta})


def record_failed_result(
    store: Store, agent: str, session_id: str, message: SessionMessage
) -> bool:
    """A transcript's tool_result flagged `is_error` (MCP `session_append`, the HTTP API,
    `memstrata sessions append --is-error`): the ERROR entry Claude Code's
    PostToolUseFailure hook leaves (`lifecycle.anneal.record_tool_failure`: the tool, the
    arguments of the transcript's tool_call with the same id, the call id, the session),
    so the context's open errors and recall read it as they read a hook's; the recovery
    NOW.md only when NOW is not the agent's (`lifecycle.outcome.agent_owns_now`). False
    when there is nothing to record (no flag, or no automatic writes)."""
    if not message.is_error or message.role != "tool_result" or not writes_allowed(store):
        return False
    transcript = store.agent(agent).sessions.messages(session_id)
    call = next(
        (m for m in reversed(transcript) if m.role == "tool_call" and m.id == message.id), None
    )
    record_tool_failure(
        store,
        agent,
        message.name or (call.name if call else None) or "tool",
        message.content,
        recovery=not agent_owns_now(store, agent, session_id),
        args=compact_args(call.input if call is not None else None),
        tool_use_id=message.id,
        session=session_id,
    )
    return True


def log_final_response(store: Store, agent: str, text: str, **meta: Any) -> LogEntry | None:
    """Automatic "logging final responses": a SYSTEM entry, clipped to 2000 characters."""
    if not writes_allowed(store) or not text.strip():
        return None
    body = text.strip()
    clipped = body if len(body) <= MAX_RESPONSE_CHARS else body[: MAX_RESPONSE_CHARS - 1] + "…"
    return store.agent(agent).log.append(
        "SYSTEM",
        f"Final response: {clipped}",
        {"event": "final_response", "chars": len(body), **meta},
    )


def mark_complete(store: Store, agent: str, intent: str = "") -> None:
    """Automatic "updating status on completion": NOW.md says "Task complete: <intent>"."""
    if not writes_allowed(store):
        return
    flat = " ".join(intent.split())
    store.agent(agent).now.update(f"{COMPLETE}: {flat[:200]}" if flat else COMPLETE, [])


class Turn:
    """One agent turn: a user message in, a final response out (see module docstring)."""

    def __init__(self, loop: AgentLoop, message: str, *, session_id: str | None = None) -> None:

        self.loop = loop
        self.message = message
        self.session_id = session_id
        self.ignore_memory = wants_no_memory(message)
        self.entries: list[LogEntry] = []
        self.now_at_start: str | None = None  # NOW.md as the turn found it
        self.answer = ""  # the turn's final response, once given

    @property
    def store(self) -> Store:
        return self.loop.store

    @property
    def agent(self) -> str:
        return self.loop.agent

    def _meta(self) -> dict[str, Any]:
        return {"session": self.session_id} if self.session_id else {}

    def _keep(self, entry: LogEntry | None) -> LogEntry | None:
        if entry is not None:
            self.entries.append(entry)
        return entry

    def _persist(self, *messages: dict[str, Any]) -> None:
        """The PERSIST stage: append to the turn's session transcript (if it has one)."""
        if self.session_id and writes_allowed(self.store):
            self.store.agent(self.agent).sessions.append_many(self.session_id, list(messages))

    def __enter__(self) -> Turn:
        if writes_allowed(self.store):
            self.now_at_start = self.store.agent(self.agent).now.read()
        logged = self._keep(log_intent(self.store, self.agent, self.message, **self._meta()))
        if logged is not None and not self.ignore_memory:  # a change of plan the user states
            record_reversal(self.store, self.agent, self.message, self.session_id)
        if self.message.strip():
            self._persist({"role": "user", "content": self.message})
        return self

    def before_llm_call(self, **kw: Any) -> str:
        """The memory block for the next LLM call (read fresh: other processes' writes count).

        Keyword arguments go to `assemble_context` (budget_chars, brief, log_entries...).
        """

        kw.setdefault("ignore_memory", self.ignore_memory)
        return assemble_context(self.store, self.agent, **kw).text

    def agent_state(self) -> dict[str, Any]:
        """AgentOS's `AgentState` memory fields for this turn: `memory_context` (what
        `before_llm_call` returns), `agent_name`, `auto_log_enabled` (false in
        agent-controlled mode)."""
        return {
            "memory_context": self.before_llm_call(),
            "agent_name": self.agent,
            "auto_log_enabled": writes_allowed(self.store),
        }

    def tool_executed(
        self,
        name: str,
        args: Any = None,
        result: Any = None,
        duration: float | None = None,
        *,
        error: BaseException | str | None = None,
    ) -> LogEntry | None:
        """Log one tool execution (TOOL_USE): parameters clipped, result as size and outcome;
        with a session, the call and its result go to the transcript too. A call of one of
        memstrata's own memory tools (`MEMORY_TOOLS`) goes to the transcript only: its effect
        is memory already, and its LOG line would come back from recall as an answer."""
        entry = (
            None
            if name in MEMORY_TOOLS
            else self._keep(
                log_tool(
                    self.store, self.agent, name, args, result, duration, error, **self._meta()
                )
            )
        )
        if self.session_id:
            call_id = "tool_" + os.urandom(4).hex()  # a call and its result share it
            detail = (
                (
                    f"{type(error).__name__}: {error}"
                    if isinstance(error, BaseException)
                    else str(error)
                )
                if error
                else ""
            )
            text = f"error: {detail}" if error else _as_text(result)
            if len(text) > MAX_RESULT_CHARS:
                text = text[:MAX_RESULT_CHARS] + f"… ({len(text)} chars)"
            self._persist(
                {
                    "id": call_id,
                    "role": "tool_call",
                    "name": name[:200],
                    "input": _json_input(args),
                    "content": "",
                },
                {
                    "id": call_id,
                    "role": "tool_result",
                    "name": name[:200],
                    "content": text,
                    **({"is_error": True} if error else {}),
                },
            )
        return entry

    def final_response(self, text: str) -> LogEntry | None:
        """Log the turn's final response (SYSTEM, clipped to 2000 characters); with a
        session, the whole response goes to the transcript as the assistant's message."""
        self.answer = text
        entry = self._keep(log_final_response(self.store, self.agent, text, **self._meta()))
        if text.strip():
            self._persist({"role": "assistant", "content": text})
        return entry

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        if not writes_allowed(self.store):
            return
        if ev is not None:
            if isinstance(ev, Exception):
                try:
                    record_error(self.store, self.agent, ev)
                except (MemstrataError, OSError) as failure:
                    ev.add_note(f"memstrata: could not record this error in memory: {failure}")
            return  # the exception propagates unchanged
        if self.store.agent(self.agent).now.read() != self.now_at_start:
            return  # the agent set NOW during the turn (`update_now`): it is the agent's
        if open_work(self.store, self.agent):  # "complete" would be false: say what is open
            if agent_owns_now(self.store, self.agent, None):
                return  # the agent set it in an earlier turn: it stands, as for the hooks
            write_outcome(self.store, self.agent, self.session_id, self.message, self.answer)
            return
        mark_complete(self.store, self.agent, self.message)


class AgentLoop:
    """Memory for an agent's loop: one `turn()` per user message.

    Example:
        >>> with AgentLoop.open("finn", "/tmp/mem") as loop:  # doctest: +SKIP
        ...     with loop.turn("Summarise the report") as turn:
        ...         context = turn.before_llm_call()
        ...         turn.final_response("Done: 3 findings")
    """

    def __init__(self, target: Store | MemoryManager, agent: str | None = None) -> None:
        self.store, name = store_and_agent(target, agent)
        if name is None:
            raise MalformedInput("AgentLoop needs an agent: pass agent= or open the store as one")
        self.agent: str = name
        self._owned = False

    @classmethod
    def open(cls, agent: str, home: str | os.PathLike[str] | None = None, **kw: Any) -> AgentLoop:
        """A loop over its own store (closed with the loop), the agent's files initialised
        as `MemoryManager` does."""
        given = kw.pop("store", None)
        store = given or Store(home, agent=agent, room=kw.get("room"), role=kw.get("role"))
        store.agent(agent, create=True)._ensure_files()
        loop = cls(store, agent)
        loop._owned = True
        return loop

    def turn(self, message: str, *, session_id: str | None = None) -> Turn:
        return Turn(self, message, session_id=session_id)

    def close(self) -> None:
        if self._owned:
            self.store.close()

    def __enter__(self) -> AgentLoop:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
