"""Pre-compaction memory flush: durable items go to long-term memory first.

Long-term memory (MEMORY.md) is "Updated: agent writes during loop, or memory flush".
Before a transcript is compacted (and already when it passes
`[sessions] flush_threshold` tokens, 80 000 by default), the decisions,
constraints and preferences found in the messages about to leave the context
(`lifecycle.digest`, line rules, no model) are appended to the agent's
CONTEXT.md / MEMORY.md under "## Session Summaries", one dated subsection per
flush, skipping lines the file already holds and never passing
`memory.max_chars`. Then `memory:flush {sessionId}` is emitted and the flush is
recorded in sessions.json (`flushed_upto`), so one token cycle flushes once.

A full long-term memory never loses a durable item and never says it was
flushed: the items that do not fit are appended to LOG.md in one SYSTEM entry
(`event: memory_flush_overflow`, durable, searchable, archived by compaction),
and the result says so: `flushed=False` unless every item was written, the file's
size and limit in `reason`, `left_over` and `log_entry` naming them. Making room is the
agent's or a person's decision ("Pruned: manual or scheduled cleanup"),
never the flush's.

Token counts are characters / 4 (`model.estimate_tokens`) over the messages
since the transcript's last compaction summary. In agent-controlled mode the
flush writes nothing (the agent alone decides what CONTEXT.md holds).

    result = flush_session(store, "finn", "s1")
    result.items   # ('- Decision: ship on Friday', ...)
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from memstrata.errors import StaleWrite
from memstrata.files.versions import surface
from memstrata.lifecycle.digest import durable_items, message_records
from memstrata.lifecycle.flushed import covered, records_said
from memstrata.model import SessionMessage, estimate_tokens, iso, now_ts
from memstrata.store.editing import sha256_text
from memstrata.values import value_type

if TYPE_CHECKING:
    from memstrata.store.view import Store

SECTION = "## Session Summaries"
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)
MAX_FLUSH_ITEMS = 30


@value_type(frozen=True)
class FlushResult:
    flushed: bool
    reason: str
    session_id: str
    items: tuple[str, ...] = ()  # written to CONTEXT.md / MEMORY.md
    path: str = ""
    left_over: tuple[str, ...] = ()  # durable items that did not fit: kept in LOG.md
    log_entry: str | None = None  # the LOG.md entry holding `left_over`


def current_cycle(messages: list[SessionMessage]) -> list[SessionMessage]:
    """The messages since the last compaction summary (what the context holds)."""
    last = max((i for i, m in enumerate(messages) if m.role == "summary"), default=-1)
    return messages[last + 1 :]


def transcript_tokens(messages: list[SessionMessage]) -> int:
    return sum(estimate_tokens(m.content) for m in messages)


def session_row(store: Store, agent: str, sid: str) -> dict[str, Any]:
    return store.agent(agent).sessions._read_index().find(sid) or {}


def _item_text(item: str) -> str:
    """'- Decision: use X' -> 'use X'."""
    return item.split(": ", 1)[1] if ": " in item else item


def _fresh(existing: str, items: list[str]) -> list[str]:
    return [i for i in items if i not in existing]


def _merge(existing: str, sid: str, items: list[str], limit: int) -> tuple[str, list[str]]:
    """CONTEXT.md text with a new dated flush subsection; the items that fit."""
    fresh = _fresh(existing, items)
    if not fresh:
        return existing, []
    base = existing.rstrip("\n")
    if not base:
        base = "# Agent Memory"
    if SECTION not in base:
        base += f"\n\n{SECTION}"
    # A session named by a person is named; a UUID (Claude Code's ids) is noise in the file
    # the user curates and every prompt loads (issue 19): sessions.json keeps the link.
    named = "" if _UUID.search(sid) else f"session {sid}, "
    head = f"\n\n### {iso(now_ts())[:10]} ({named}memory flush)\n"
    kept: list[str] = []
    for item in fresh:
        if len(base) + len(head) + sum(len(k) + 1 for k in kept) + len(item) + 2 > limit:
            break
        kept.append(item)
    if not kept:
        return existing, []
    return base + head + "\n".join(kept) + "\n", kept


def flush_session(
    store: Store, agent: str, session_id: str, messages: list[SessionMessage] | None = None
) -> FlushResult:
    """Append the durable items of `messages` (default: the current cycle) to CONTEXT.md."""
    if not store.config.automatic_writes:
        return FlushResult(
            False, "agent-controlled mode: the agent writes CONTEXT.md itself", session_id
        )
    mem = store.agent(agent)
    msgs = messages if messages is not None else current_cycle(mem.sessions.messages(session_id))
    # What a record says already (stated in a prompt and recorded by the hooks, or by the
    # agent), in force or replaced, stays out: CONTEXT.md cannot be superseded, so a copy
    # there would outlive the record that replaced it (`lifecycle.flushed`).
    found = durable_items(message_records(msgs))
    records = records_said(mem) if found else []
    items = [i for i in found if covered(_item_text(i), records) is None][:MAX_FLUSH_ITEMS]
    kept: list[str] = []
    fresh: list[str] = []
    path = ""
    current = ""
    limit = store.config.max_memory_chars
    if items:
        for _ in range(5):  # read-modify-write; retried if someone wrote CONTEXT.md meanwhile
            current = mem.context.read()
            fresh = _fresh(current, items)
            text, kept = _merge(current, session_id, items, limit)
            if not kept:
                break
            try:
                with surface("flush"):  # what CONTEXT.md's version records
                    mem.context.write(text, expected_sha=sha256_text(current))
                path = store.rel(mem.context.path)
                break
            except StaleWrite:
                kept = []
                continue
    left = [i for i in fresh if i not in kept]
    entry = None
    if left:  # never dropped: the items that did not fit are kept in LOG.md
        where = store.rel(mem.context.path)
        entry = mem.log.append(
            "SYSTEM",
            f"Memory flush of session {session_id}: {len(left)} durable item(s) did not "
            f"fit in {where} ({len(current)} of {limit} characters used), kept here:\n"
            + "\n".join(left),
            {"event": "memory_flush_overflow", "session": session_id, "items": len(left)},
        ).id
    if msgs:
        mem.sessions._update_index(session_id, flushed_upto=msgs[-1].id, flushed_at=iso(now_ts()))
    store.events.emit("memory:flush", {"sessionId": session_id})
    if not fresh:
        reason = "no new durable items"
    elif not left:
        reason = f"{len(kept)} durable item(s) written"
    else:
        reason = (
            f"{store.rel(mem.context.path)} is full ({len(current)} of {limit} characters): "
            f"{len(kept)} durable item(s) written, {len(left)} kept in LOG.md entry {entry} "
            "instead; make room in it (prune, consolidate) and flush again"
        )
    # Flushed only when every durable item reached long-term memory.
    return FlushResult(not left, reason, session_id, tuple(kept), path, tuple(left), entry)
