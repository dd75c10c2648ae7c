"""Hooks for coding agents (Claude Code's hook events), deterministic and never blocking.

    SessionStart      -> the assembled memory context (`additionalContext`); with
                         `source` "resume" or "compact", the session's last captured
                         user and assistant messages too, so the agent picks up where the
                         transcript was cut
    UserPromptSubmit  -> logs the user's intent, records the turn's start
                         (`lifecycle.outcome`), records a change of plan the prompt
                         states as the decision that replaces the one it names
                         (`lifecycle.reversal`), and injects NOW + the last meaningful LOG
                         entries; "ignore memory" injects no memory at all
    PostToolUse       -> one compact TOOL_USE entry per tool execution (auto-log,
                         with the call's `tool_use_id`); a failed one (error, non-zero exit,
                         interrupted) is one ERROR entry instead, with its arguments and
                         call id, and self-anneals: recovery steps in NOW.md, unless
                         NOW.md is the agent's
    PostToolUseFailure-> the same for a tool Claude Code reports as failed
    PreCompact        -> capture the transcript's new messages, then the memory
                         flush: their durable items go to CONTEXT.md / MEMORY.md
                         (`lifecycle.flush`), `memory:flush` is emitted
    Stop              -> capture the transcript's new messages; log the turn's final
                         response (`last_assistant_message`, else the transcript's last
                         assistant text), record what the turn's prompts and response
                         clearly state (a decision, constraint, preference: first-class
                         records, unless the agent recorded that kind itself), leave NOW.md
                         to the agent: a NOW it set stays, else the outcome is recorded
                         without claiming any work complete
                         (`lifecycle.outcome.record_outcome`), once per response
    (capture: into the memstrata session of the same id, in transcript order: text as
    user/assistant messages, each tool call and result as `tool_call` / `tool_result`
    messages carrying the call's id; no LOG entry, the transcript is the record)
    SessionEnd        -> the conversation ended: the rest of the transcript is
                         captured, the session marked ended, session scratch cleared
                         (moved to the archive)

Each function takes the hook's JSON input (`session_id`, `transcript_path`,
`prompt`, `tool_name`, `tool_input`, `tool_response`, `source`...) and returns
what the hook prints on stdout (or None). Capture is idempotent: messages are
keyed by their transcript uuid, so running it twice appends nothing the second
time. In agent-controlled mode (`[memory] mode`) nothing is written; reads
(session start, prompt context) still work. Exit codes are the CLI's business
(`cli/hooks_cmd.py`): no hook ever blocks the agent by accident.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstrata.errors import MalformedInput
from memstrata.files.jsonl import read_records
from memstrata.model import check_name
from memstrata.values import value_type

if TYPE_CHECKING:
    from memstrata.store.view import Store

MAX_CAPTURE = 2000  # messages per hook call, oldest first; the next call takes the rest
CHUNK = 500  # messages per durable write
MAX_CONTENT = 8000
PROMPT_LOG_ENTRIES = 5
RESUME_MESSAGES = 6
SKIPPED_TOOL_PREFIX = "mcp__memstrata__"  # their effect is memory already ([mcp] auto_log)


@value_type(frozen=True)
class Captured:
    session_id: str
    appended: int
    skipped: int
    remaining: int = 0


def parse_hook_input(raw: str) -> dict[str, Any]:
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise MalformedInput(f"hook input is not JSON: {exc.msg}") from None
    if not isinstance(data, dict):
        raise MalformedInput("hook input must be a JSON object")
    return data


def session_id_of(hook: dict[str, Any]) -> str:
    raw = str(hook.get("session_id") or "hook-session").replace(":", "-")[:64]
    return check_name(raw, "session id")


def _output(event: str, context: str) -> dict[str, Any]:
    """What a hook injects into the agent's context: secrets withheld (`policy.secrets`)."""
    from memstrata.policy.secrets import mask

    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": mask(context)}}


def _one_line(text: str, limit: int = 200) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def resumed_tail(store: Store, agent: str, sid: str, source: str) -> tuple[str, list[str]] | None:
    """What session `sid` said last (its user, assistant and summary messages), for the
    context after a compaction (`source` "compact") or a break ("resume"); None without."""
    sessions = store.agent(agent).sessions
    if not store.engine.exists(sessions._spec(sid).path):
        return None
    said = [
        (m.role, _without_tool_text(m.content))
        for m in sessions.messages(sid)
        if m.role in ("user", "assistant", "summary")
    ]
    said = [(role, text) for role, text in said if text]
    lines = [f"- {role}: {_one_line(text)}" for role, text in said[-RESUME_MESSAGES:]]
    if not lines:
        return None
    cut = "compaction" if source == "compact" else "break"
    return f"## This session before the {cut} (its last {len(lines)} messages)", lines


def session_start(
    store: Store, agent: str, hook: dict[str, Any] | None = None, *, budget_chars: int = 12000
) -> dict[str, Any]:
    """The SessionStart output: memory context, plus this session's tail when resumed."""
    from memstrata.assembly.context import assemble_context

    hook = hook or {}
    source = str(hook.get("source") or "startup")
    resumed: tuple[str, list[str]] | None = None
    if hook.get("session_id") and source in ("resume", "compact"):
        resumed = resumed_tail(store, agent, session_id_of(hook), source)
    cwd = hook.get("cwd")  # the agent's workspace, as Claude Code reports it
    ctx = assemble_context(
        store,
        agent,
        budget_chars=budget_chars,
        workspace=cwd if isinstance(cwd, str) else None,
        resumed=resumed,
    )
    return _output("SessionStart", ctx.text)


def prompt_context(
    store: Store,
    agent: str,
    *,
    log_entries: int = PROMPT_LOG_ENTRIES,
    skip: str | None = None,
) -> str:
    """NOW.md and the last meaningful LOG entries (AgentOS reads NOW + LOG before every
    LLM call): tool traces and bookkeeping are left out, and so is the entry `skip` (the
    prompt just logged: it never answers itself)."""
    from memstrata.lifecycle.activity import is_bookkeeping, is_call

    mem = store.agent(agent)
    parts = []
    now = mem.now.read().strip()
    if now:
        parts.append(f'<memory source="{store.rel(mem.now.path)}">\n{now}\n</memory>')
    recent = mem.log.tail(max(50, log_entries)) if log_entries else []
    entries = [e for e in recent if e.id != skip and not (is_call(e) or is_bookkeeping(e))]
    entries = entries[-log_entries:] if log_entries else []
    if entries:
        parts.append(
            "Recent activity (LOG.md):\n"
            + "\n".join(
                f"- {e.ts[:16].replace('T', ' ')} {e.entry_type}: {_one_line(e.content)}"
                for e in entries
            )
        )
    return "\n\n".join(parts)


def user_prompt_submit(store: Store, agent: str, hook: dict[str, Any]) -> dict[str, Any] | None:
    """Log the prompt as the user's intent; inject NOW + LOG, or nothing on "ignore memory"."""
    from memstrata.assembly.context import wants_no_memory
    from memstrata.lifecycle.outcome import turn_started
    from memstrata.operations.loop import log_intent

    prompt = str(hook.get("prompt") or "")
    ignore = wants_no_memory(prompt)
    sid = session_id_of(hook) if hook.get("session_id") else None
    meta: dict[str, Any] = {"session": sid} if sid else {}
    if ignore:
        meta["ignore_memory"] = True
    logged = log_intent(store, agent, prompt, **meta)
    if logged is not None and sid is not None:  # writes allowed
        turn_started(store, agent, sid)
    if logged is not None and not ignore:  # a change of plan replaces its decision
        from memstrata.lifecycle.reversal import record_reversal

        record_reversal(store, agent, prompt, sid)
    if ignore:
        return None  # "ignore memory": memory is not consulted for this turn
    text = prompt_context(store, agent, skip=logged.id if logged is not None else None)
    return _output("UserPromptSubmit", text) if text else None


def post_tool_use(store: Store, agent: str, hook: dict[str, Any]) -> None:
    """One TOOL_USE entry: tool, clipped parameters, result size, outcome and call id. A
    failed tool is one ERROR entry instead, and self-anneals."""
    from memstrata.operations.loop import log_tool, outcome_of, writes_allowed

    name = str(hook.get("tool_name") or "tool")
    if name.startswith(SKIPPED_TOOL_PREFIX) or not writes_allowed(store):
        return
    meta = _tool_meta(hook)
    result = hook.get("tool_response")
    if outcome_of(result) == "error":
        _anneal(store, agent, name, _failure_detail(result), hook, meta)
        return
    log_tool(store, agent, name, hook.get("tool_input"), result, **meta)


def post_tool_use_failure(store: Store, agent: str, hook: dict[str, Any]) -> None:
    """Claude Code's PostToolUseFailure (`error`, `is_interrupt`): one ERROR entry with the
    tool, its arguments and call id, and the recovery steps (self-annealing)."""
    from memstrata.operations.loop import writes_allowed

    name = str(hook.get("tool_name") or "tool")
    if name.startswith(SKIPPED_TOOL_PREFIX) or not writes_allowed(store):
        return
    detail = str(hook.get("error") or ("interrupted" if hook.get("is_interrupt") else "failed"))
    _anneal(store, agent, name, detail, hook, _tool_meta(hook))


def _tool_meta(hook: dict[str, Any]) -> dict[str, Any]:
    meta = {k: hook[k] for k in ("tool_use_id",) if hook.get(k)}
    if hook.get("session_id"):
        meta["session"] = session_id_of(hook)
    return meta


def _anneal(
    store: Store, agent: str, tool: str, detail: str, hook: dict[str, Any], meta: dict[str, Any]
) -> None:
    """A failed tool, recorded once: the ERROR entry (with the call's clipped arguments and
    id), and recovery steps in NOW.md unless NOW.md is the agent's (`lifecycle.outcome`)."""
    from memstrata.lifecycle.anneal import record_tool_failure
    from memstrata.lifecycle.outcome import agent_owns_now
    from memstrata.operations.loop import compact_args

    agents = agent_owns_now(store, agent, meta.get("session"))
    args = compact_args(hook.get("tool_input"))
    from memstrata.reading.failure import clipped

    record_tool_failure(  # a long output's error is at its end: both ends are kept
        store, agent, tool, clipped(detail, MAX_CONTENT), recovery=not agents, args=args, **meta
    )


def _failure_detail(result: Any) -> str:
    """What a failed tool's response says went wrong: its error, stderr, exit code."""
    if isinstance(result, dict):
        for key in ("error", "stderr"):
            value = result.get(key)
            if isinstance(value, str) and value.strip():
                return value
        for key in ("exit_code", "returncode", "exitCode"):
            code = result.get(key)
            if isinstance(code, int) and not isinstance(code, bool) and code:
                return f"exit code {code}"
        if result.get("interrupted"):
            return "interrupted"
    return "the tool reported a failure"


def stop(
    store: Store, agent: str, hook: dict[str, Any], *, max_capture: int | None = None
) -> dict[str, Any]:
    """Claude finished its response ("after execution"): capture the transcript,
    log the final response, record what the turn clearly states, and record the outcome in
    NOW.md unless the agent set NOW (`lifecycle.outcome`: NOW belongs to the agent; `AgentLoop`, which owns NOW, still says "Task complete"). Once per
    response: the response's key (the prompt's transcript uuid + a hash of the text) is
    recorded in sessions.json, and a Stop hook that sees the same response again writes
    nothing."""
    from memstrata.lifecycle.outcome import record_outcome, record_statements, turn_prompts
    from memstrata.operations.loop import log_final_response, writes_allowed

    got = capture_transcript(store, agent, hook, event="stop", max_capture=max_capture)
    out: dict[str, Any] = {**got.__dict__, "final_response": False}
    final = _final_response(hook) if writes_allowed(store) else None
    if final is None:
        return out
    key, text, intent = final
    sessions = store.agent(agent).sessions
    if (sessions._read_index().find(got.session_id) or {}).get("responded") == key:
        return out
    log_final_response(store, agent, _compact(text), session=got.session_id)
    prompts = turn_prompts(store, agent, got.session_id, intent)
    record_statements(store, agent, got.session_id, prompts, text)
    out["now"] = record_outcome(store, agent, got.session_id, intent, text)
    sessions._update_index(got.session_id, responded=key)
    out["final_response"] = True
    return out


def pre_compact(
    store: Store, agent: str, hook: dict[str, Any], *, max_capture: int | None = None
) -> dict[str, Any]:
    """Before Claude Code compacts its context ("memory flush before
    compaction"): capture the transcript, then flush the durable items of the session's
    current cycle into CONTEXT.md / MEMORY.md (`lifecycle.flush.flush_session`, which
    emits `memory:flush`). In agent-controlled mode nothing is written or emitted."""
    from memstrata.lifecycle.flush import flush_session
    from memstrata.operations.loop import writes_allowed

    got = capture_transcript(store, agent, hook, event="pre-compact", max_capture=max_capture)
    out: dict[str, Any] = {**got.__dict__, "flushed": False}
    if not writes_allowed(store) or got.session_id not in store.agent(agent).sessions.ids():
        return out
    result = flush_session(store, agent, got.session_id)
    out.update(flushed=result.flushed, flush=result.reason, items=list(result.items))
    if result.left_over:  # did not fit in long-term memory: kept in LOG.md (`lifecycle.flush`)
        out["left_over"] = list(result.left_over)
    return out


def _compact(text: str) -> str:
    """A final response as one paragraph: blank lines and indentation folded."""
    return "\n".join(" ".join(line.split()) for line in text.strip().splitlines() if line.strip())


def _prompt_text(content: Any) -> str:
    """The user's own words in a transcript record: a string, or its text blocks; "" for a
    tool result (Claude Code records those as user messages too)."""
    if isinstance(content, str):
        return content.strip()
    if isinstance(content, list):
        if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            return ""
        return "\n".join(
            str(b.get("text", ""))
            for b in content
            if isinstance(b, dict) and b.get("type") == "text"
        ).strip()
    return ""


def _final_response(hook: dict[str, Any]) -> tuple[str, str, str] | None:
    """(key, text, prompt) of the turn that just ended, or None if it has no response.

    The text is the hook's `last_assistant_message` (newer Claude Code sends it: the
    transcript may not hold the last line yet), else the last assistant text after the
    last user prompt in the transcript."""
    import hashlib

    path = hook.get("transcript_path")
    records = read_records(Path(path)).records if path and Path(path).is_file() else []
    prompt, prompt_id, answer = "", "", ""
    for off, rec in records:
        inner = rec.get("message")
        msg: dict[str, Any] = inner if isinstance(inner, dict) else rec
        role = msg.get("role") or rec.get("type")
        if role == "user" and not rec.get("isMeta"):
            said = _prompt_text(msg.get("content"))
            if said:
                prompt, prompt_id, answer = said, str(rec.get("uuid") or f"t{off}"), ""
        elif role == "assistant":
            said = _prompt_text(msg.get("content"))
            answer = said or answer
    given = hook.get("last_assistant_message")
    text = given.strip() if isinstance(given, str) and given.strip() else answer
    if not text:
        return None
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    return f"{prompt_id}:{digest}", text, prompt


def session_end(store: Store, agent: str, hook: dict[str, Any]) -> dict[str, Any]:
    """Conversation end ("session files cleared"): capture what is left of the
    transcript, mark the session ended and archive the session scratch."""
    from memstrata.lifecycle.phases import end_conversation
    from memstrata.operations.loop import writes_allowed

    if not writes_allowed(store):
        return {"cleared": None}
    sid = session_id_of(hook) if hook.get("session_id") else None
    if sid is not None:
        capture_transcript(store, agent, hook, event="session-end")
    return {"cleared": end_conversation(store, agent, sid), "session": sid}


_TOOL_TEXT = ("[tool_use ", "[tool_result]")  # how earlier versions captured tool blocks


def _without_tool_text(text: str) -> str:
    """A captured message without the tool lines earlier versions folded into it."""
    return "\n".join(x for x in text.splitlines() if not x.startswith(_TOOL_TEXT)).strip()


def _text(content: Any) -> str:
    """The text blocks of a message's content (tool blocks are messages of their own)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            str(b.get("text", ""))
            for b in content
            if isinstance(b, dict) and b.get("type") == "text"
        ]
        return "\n".join(p for p in parts if p)
    return "" if content is None else json.dumps(content)[:MAX_CONTENT]


def _messages(transcript: Path) -> list[tuple[str, list[dict[str, Any]]]]:
    """Each transcript record's uuid and the messages it becomes, in order: its text as a
    user / assistant message (a meta record, Claude Code's own notes, as `system`), each
    `tool_use` block as a `tool_call` and each `tool_result` as a `tool_result`, both with
    the call's id (a call and its result share one; DESIGN-recall: the LOG's
    TOOL_USE entry of the call carries it too as `tool_use_id`)."""
    from memstrata.operations.loop import _json_input

    out: list[tuple[str, list[dict[str, Any]]]] = []
    names: dict[str, str] = {}
    for off, rec in read_records(transcript).records:
        inner = rec.get("message")
        msg: dict[str, Any] = inner if isinstance(inner, dict) else rec
        role = msg.get("role") or rec.get("type")
        if role not in ("user", "assistant"):
            continue
        rid = str(rec.get("uuid") or f"t{off}")
        when = rec.get("timestamp")
        got: list[dict[str, Any]] = []
        text = _text(msg.get("content")).strip()
        if text:
            got.append(
                {
                    "id": rid,
                    "role": "system" if rec.get("isMeta") else role,
                    "content": text[:MAX_CONTENT],
                    "timestamp": when,
                }
            )
        content = msg.get("content")
        blocks: list[Any] = content if isinstance(content, list) else []
        for n, b in enumerate(blocks):
            if not isinstance(b, dict):
                continue
            if b.get("type") == "tool_use":
                call = str(b.get("id") or f"{rid}-tool{n}")[:200]
                names[call] = str(b.get("name") or "tool")[:200]
                got.append(
                    {
                        "id": call,
                        "role": "tool_call",
                        "name": names[call],
                        "input": _json_input(b.get("input")),
                        "content": "",
                        "timestamp": when,
                    }
                )
            elif b.get("type") == "tool_result" and b.get("tool_use_id"):
                call = str(b["tool_use_id"])[:200]
                result = _text(b.get("content"))
                if b.get("is_error"):
                    result = f"error: {result}"
                got.append(
                    {
                        "id": call,
                        "role": "tool_result",
                        "name": names.get(call, "tool"),
                        "content": result[:MAX_CONTENT],
                        "timestamp": when,
                    }
                )
        if got:
            out.append((rid, got))
    return out


def _key(role: str, mid: str) -> tuple[str, str]:
    """What identifies a captured message: a text message by its record's uuid (whatever
    its role), a tool call or result by its role and the call's id (which they share)."""
    return (role if role in ("tool_call", "tool_result") else "text", mid)


def capture_transcript(
    store: Store, agent: str, hook: dict[str, Any], *, event: str, max_capture: int | None = None
) -> Captured:
    """Append the transcript's messages not captured yet, oldest first, in transcript order.

    At most `max_capture` (default `MAX_CAPTURE`) per call: the next call appends
    the rest after them, so the session file always follows the transcript.
    """
    limit = MAX_CAPTURE if max_capture is None else max_capture
    sid = session_id_of(hook)
    from memstrata.operations.loop import writes_allowed

    if not writes_allowed(store):
        return Captured(sid, 0, 0)
    path = hook.get("transcript_path")
    records = _messages(Path(path)) if path and Path(path).is_file() else []
    sessions = store.agent(agent).sessions
    stored = sessions.messages(sid) if store.engine.exists(sessions._spec(sid).path) else []
    keys = {_key(m.role, m.id) for m in stored}
    # Earlier versions stored one message per record, tool blocks folded into its text:
    # such a record was captured whole. Otherwise each message is new unless its key is.
    folded = {m.id for m in stored if any(x.startswith(_TOOL_TEXT) for x in m.content.splitlines())}
    msgs = [m for rid, got in records if rid not in folded for m in got]
    pending = [m for m in msgs if _key(m["role"], m["id"]) not in keys]
    total = sum(len(got) for _, got in records)
    new = pending[:limit]  # the oldest first: a later call appends the rest after them
    for m in new:
        if m["timestamp"] is None:
            del m["timestamp"]
    for start in range(0, len(new), CHUNK):
        sessions.append_many(sid, new[start : start + CHUNK])
    # No LOG entry says so: the transcript is the record, and a capture notice in LOG.md
    # served nobody (it only came back as noise in recall and the context, issue 19).
    return Captured(sid, len(new), total - len(pending), len(pending) - len(new))
