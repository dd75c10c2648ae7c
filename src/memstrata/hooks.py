"""Session hooks for coding agents (Claude Code style): start, pre-compact, stop.

* `session_start` returns the assembled memory context in the JSON a
  SessionStart hook prints (`hookSpecificOutput.additionalContext`).
* `capture_transcript` (pre-compact and stop) reads the agent's transcript file
  (JSONL; the hook input names it), appends the messages not captured yet to the
  memstrata session of the same id, and writes one SYSTEM entry to LOG.md. It is
  deterministic (no model involved) and idempotent: messages are keyed by their
  transcript uuid, so running it twice appends nothing the second time. Before a
  compaction it emits `memory:flush` with the session id.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstrata.errors import MalformedInput
from memstrata.files.jsonl import read_records
from memstrata.model import check_name

if TYPE_CHECKING:
    from memstrata.store import Store

MAX_CAPTURE = 500  # messages per hook call; older ones were captured by earlier hooks
MAX_CONTENT = 8000


@dataclass(frozen=True)
class Captured:
    session_id: str
    appended: int
    skipped: int


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


def session_start(store: Store, agent: str, *, budget_chars: int = 12000) -> dict[str, Any]:
    from memstrata.assembly.context import assemble_context

    ctx = assemble_context(store, agent, budget_chars=budget_chars)
    return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": ctx.text}}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict):
                if block.get("type") == "text":
                    parts.append(str(block.get("text", "")))
                elif block.get("type") == "tool_use":
                    parts.append(f"[tool_use {block.get('name')}] {json.dumps(block.get('input'))[:500]}")
                elif block.get("type") == "tool_result":
                    parts.append(f"[tool_result] {_text(block.get('content'))[:500]}")
        return "\n".join(p for p in parts if p)
    return "" if content is None else json.dumps(content)[:MAX_CONTENT]


def _messages(transcript: Path) -> list[dict[str, Any]]:
    out = []
    for off, rec in read_records(transcript).records:
        inner = rec.get("message")
        msg: dict[str, Any] = inner if isinstance(inner, dict) else rec
        role = msg.get("role") or rec.get("type")
        if role not in ("user", "assistant"):
            continue
        text = _text(msg.get("content")).strip()
        if not text:
            continue
        out.append({"id": str(rec.get("uuid") or f"t{off}"), "role": role,
                    "content": text[:MAX_CONTENT], "timestamp": rec.get("timestamp")})
    return out


def capture_transcript(store: Store, agent: str, hook: dict[str, Any], *, event: str) -> Captured:
    sid = check_name(str(hook.get("session_id") or "hook-session").replace(":", "-")[:64], "session id")
    path = hook.get("transcript_path")
    msgs = _messages(Path(path)) if path and Path(path).is_file() else []
    sessions = store.agent(agent).sessions
    have = {m.id for m in sessions.messages(sid)} if sessions.spec(sid).path.exists() else set()
    new = [m for m in msgs if m["id"] not in have][-MAX_CAPTURE:]
    for m in new:
        if m["timestamp"] is None:
            del m["timestamp"]
    if event == "pre-compact":
        store.events.emit("memory:flush", {"sessionId": sid})
    if new:
        sessions.append_many(sid, new)
    tail = " | ".join(f"{m['role']}: {' '.join(m['content'].split())[:160]}" for m in new[-3:])
    store.agent(agent).log.append(
        "SYSTEM", f"{event} hook: captured {len(new)} new message(s) of session {sid}"
        + (f"; last: {tail}" if tail else ""), {"session": sid, "event": event, "captured": len(new)})
    return Captured(sid, len(new), len(msgs) - len(new))
