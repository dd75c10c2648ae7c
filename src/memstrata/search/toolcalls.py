"""The records of one tool call, found among search hits so that they come back once.

A coding agent's tool call leaves up to four records: the LOG `TOOL_USE` entry the
PostToolUse hook writes, the transcript's `tool_use` and `tool_result` messages the
Stop / PreCompact hooks capture, and, when it failed, an ERROR entry. They belong together:

    exact      the same id in the same session: the LOG entry's `tool_use_id` (hook
               metadata) and the `id` a transcript's `tool_call` shares with its
               `tool_result` (the transcript roles; the hooks capture Claude Code's blocks so)
    clues      (stores older than the id) the same session, the same tool name and first
               argument where both records say them, the tool_use first, the records of
               the tool's end (result, LOG entry, ERROR) within `END_GAP` seconds of one
               another, all within `TOOL_CALL_WINDOW`; the nearest such call is joined;
               two records of one slot (two LOG entries, two results) are never one
               call, and different exact ids never merge

`group_calls` returns the groups by their members' positions in the worth order, so the
caller keeps the first (best) one. Pure functions over `Hit` values.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from pathlib import PurePath
from typing import Any

from memstrata.search.query import Hit
from memstrata.values import value_type

LOG_LAYERS = frozenset({"log", "archive"})
TOOL_ROLES = frozenset({"tool_call", "tool_use", "tool_result"})
# A tool trace: `name(args) -> outcome`, as `loop.describe_tool` writes it (hooks, MCP
# auto-log, AgentLoop: "-> ok, 812 chars") and as agents log their own calls ("-> 10 results").
TRACE = re.compile(r"^([\w.:/-]+)\((.*?)\)\s*(?:->|→)\s*\S", re.S)
# Claude Code's content blocks as the hooks capture them into a transcript message.
TRANSCRIPT_TOOL = re.compile(r"^\[(?:tool_use ([^\]]*)|tool_result)\]\s*(.*)", re.S)
_QUOTED_VALUE = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"\s*:\s*"((?:[^"\\]|\\.)*)')
_CLIPPED_BLOB = re.compile(r"^<\d+ chars>$")
TOOL_CALL_WINDOW = 600.0  # seconds between the records of one call matched by their clues
RESULT_SLACK = 5.0  # clock slack: a record of the tool's end this much before its tool_use
END_GAP = 60.0  # the result, LOG entry and ERROR of one call are written when the tool ends
FIRST_LINE_CHARS = 300
# NOW.md's objective as `AgentLoop` leaves it at a turn's end where the agent set none:
# "Task complete: " and the turn's prompt (the prompt again, already logged as the intent).
_LOOP_DONE = re.compile(r"^(?:#+\s*objective\s*)?task complete\b", re.I)
_LOOP_PROMPT = re.compile(r"^(?:#+\s*objective\s*)?task complete:[ \t]*(\S[^\n]*)", re.I)


def log_metadata(hit: Hit) -> dict[str, Any]:
    """A LOG entry's own metadata (its footer); {} for records of other layers."""
    if hit.layer not in LOG_LAYERS:
        return {}
    inner = hit.meta.get("metadata")
    return inner if isinstance(inner, dict) else {}


def loop_mark(hit: Hit, meta: Mapping[str, Any]) -> tuple[str, str] | None:
    """The signal of a record an agent loop leaves that its kind alone misreads, or None:
    NOW.md's "Task complete: <prompt>" (`AgentLoop`'s turn end: the prompt again, an
    intent, not a status) and a TOOL_USE entry of a failed call that carries its error
    (`loop.describe_tool`: AgentLoop, MCP auto-log; the hooks log an ERROR instead)."""
    if hit.layer == "now" and _LOOP_DONE.match(hit.text.lstrip()):
        return "intent", "NOW.md 'Task complete: <prompt>' (AgentLoop's turn end)"
    if hit.kind == "TOOL_USE" and meta.get("outcome") == "error" and meta.get("error"):
        return "error", "TOOL_USE of a failed call (metadata.error)"
    return None


def loop_prompt(hit: Hit) -> str | None:
    """The prompt NOW.md's "Task complete: <prompt>" restates (`loop.mark_complete`, its
    first 200 characters), or None for any other record."""
    if hit.layer != "now":
        return None
    m = _LOOP_PROMPT.match(hit.text.lstrip())
    return m.group(1).strip() if m else None


def first_line(text: str) -> str:
    """The first non-blank line, stripped, at most `FIRST_LINE_CHARS` characters."""
    text = text.lstrip()
    end = text.find("\n")  # not `split`: that copies the rest of a long text
    return (text if end < 0 else text[:end]).strip()[:FIRST_LINE_CHARS]


@value_type
class Clues:
    """What one hit says about the tool call it records."""

    index: int  # position in worth order (0 = best)
    exact: str | None
    session: str | None
    tool: str | None
    arg: str | None
    ts: float
    slot: str  # "log", "error", "call" or "result"


@value_type
class _Call:
    exact: set[str]
    session: str | None
    tool: str | None
    arg: str | None
    times: dict[str, float]  # slot -> when
    members: list[int]


def _norm_arg(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    flat = " ".join(value.split()).rstrip("…").strip()
    return None if not flat or _CLIPPED_BLOB.match(flat) else flat[:40]


def _first_arg(args: Any) -> str | None:
    if isinstance(args, Mapping):
        for value in args.values():
            if isinstance(value, str):
                return _norm_arg(value)
    return None


def _tool_use_id(hit: Hit) -> str | None:
    for where in (hit.meta, log_metadata(hit), hit.meta.get("meta")):
        if isinstance(where, Mapping) and isinstance(where.get("tool_use_id"), str):
            return str(where["tool_use_id"])
    return None


def clues_of(index: int, hit: Hit, signal: str) -> Clues | None:
    """What ties `hit` to one tool call, or None when it is not a record of one."""
    if signal not in ("tool", "error"):
        return None
    exact = _tool_use_id(hit)
    meta = log_metadata(hit)
    if hit.layer in LOG_LAYERS:
        if signal == "error" and "tool" not in meta and not exact:
            return None
        session = meta.get("session") or meta.get("sessionId")
        m = TRACE.match(first_line(hit.text))
        tool = meta.get("tool") or (m.group(1) if m else None)
        arg = _first_arg(meta.get("args"))
        if arg is None and m:
            found = re.search(r'="((?:[^"\\]|\\.)*)', m.group(2))
            arg = _norm_arg(found.group(1)) if found else None
        slot = "error" if signal == "error" else "log"
        return Clues(index, exact, session, tool, arg, hit.ts, slot)
    if hit.layer != "session" or signal != "tool":
        return None
    session = PurePath(hit.source).stem or None
    role = hit.kind or ""
    if role in TOOL_ROLES:  # a tool_call and its tool_result share their message id
        msg_id = hit.meta.get("id")
        key = exact or (str(msg_id) if msg_id else None)
        slot = "result" if role == "tool_result" else "call"
        name = hit.meta.get("name")
        return Clues(
            index,
            key,
            session,
            name if isinstance(name, str) else None,
            _first_arg(hit.meta.get("input")),
            hit.ts,
            slot,
        )
    m = TRANSCRIPT_TOOL.match(hit.text.strip())
    if m is None:
        return None
    if m.group(1) is None:
        return Clues(index, exact, session, None, None, hit.ts, "result")
    return Clues(index, exact, session, m.group(1).strip(), _json_arg(m.group(2)), hit.ts, "call")


def _json_arg(text: str) -> str | None:
    """The first string value of a tool input shown as JSON (possibly cut short)."""
    try:
        return _first_arg(json.loads(text.strip()))
    except ValueError:
        found = _QUOTED_VALUE.search(text)
    try:
        return _norm_arg(json.loads(f'"{found.group(1)}"')) if found else None
    except ValueError:
        return None


def _consistent(times: Mapping[str, float]) -> bool:
    """Whether records at these times (slot -> ts) can be one call: the tool_use first, the
    result, LOG entry and ERROR (all written when the tool ends) close together."""
    ends = [times[s] for s in ("result", "log", "error") if s in times]
    start = times.get("call")
    if start is not None and any(end < start - RESULT_SLACK for end in ends):
        return False
    if ends and max(ends) - min(ends) > END_GAP:
        return False
    return max(times.values()) - min(times.values()) <= TOOL_CALL_WINDOW


def _joins(call: _Call, c: Clues) -> float | None:
    """How far (seconds) `c` is from `call` when it can be a record of the same call, else None."""
    same_session = c.session is None or call.session is None or c.session == call.session
    if c.exact and call.exact:  # transcript ids ("tool_001") repeat from session to session
        return 0.0 if c.exact in call.exact and same_session else None
    if c.slot in call.times or c.session is None or c.session != call.session:
        return None
    if (c.tool and call.tool and c.tool != call.tool) or (c.arg and call.arg and c.arg != call.arg):
        return None
    if not _consistent({**call.times, c.slot: c.ts}):
        return None
    return min(abs(c.ts - t) for t in call.times.values())


def group_calls(clues: Iterable[Clues]) -> list[list[int]]:
    """Group the records of one tool call; each group lists pool positions, best first."""
    calls: list[_Call] = []
    for c in sorted(clues, key=lambda x: (x.ts, x.index)):
        fits = [(gap, n) for n, call in enumerate(calls) if (gap := _joins(call, c)) is not None]
        if not fits:
            exact = set() if c.exact is None else {c.exact}
            calls.append(_Call(exact, c.session, c.tool, c.arg, {c.slot: c.ts}, [c.index]))
            continue
        call = calls[min(fits)[1]]
        if c.exact is not None:
            call.exact.add(c.exact)
        call.tool, call.arg = call.tool or c.tool, call.arg or c.arg
        call.session = call.session or c.session
        call.times.setdefault(c.slot, c.ts)
        call.members.append(c.index)
    return [sorted(call.members) for call in calls if len(call.members) > 1]
