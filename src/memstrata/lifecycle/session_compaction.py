"""Session transcript compaction and tool-result pruning.

Compaction modifies the transcript: the older messages become one `summary`
message and the most recent N (`sessions.keep_recent`, 10) stay verbatim:

    [m1 .. m10]  ->  [summary_of_m1_to_m7, m8, m9, m10]      (keep_recent=3)

Order, so nothing is lost and no model cooperation is needed:

1. snapshot the transcript (lock held for an instant) and summarise the older
   messages with no lock held (a failure raises here: nothing changed);
2. pre-compaction flush (`lifecycle.flush`, when `[sessions] flush_enabled`):
   the decisions, constraints and preferences of the older messages go to
   CONTEXT.md / MEMORY.md, then `memory:flush {sessionId}`; a
   SYSTEM entry in LOG.md records the summary and the last messages before the cut;
3. archive the full original transcript to `archive/sessions/<id>-<stamp>.jsonl`;
4. splice the transcript under its lock, carrying over messages appended since
   the snapshot verbatim (a refused splice removes the archive of step 3 again);
   then `memory:compact {sessionId, before, after}`.

Pruning does not modify the transcript: `context_view` returns the messages an
agent should see, with tool results older than the last N replaced by a
placeholder (tool calls stay, so the agent still knows what it did).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from memstrata.errors import MalformedInput, NotFound
from memstrata.files.jsonl import decode, encode
from memstrata.layers.base import check_text
from memstrata.layers.sessions import to_message
from memstrata.lifecycle.compaction import DEFAULT_SUMMARY_CHARS, stamp
from memstrata.lifecycle.digest import digest, message_records
from memstrata.lifecycle.flush import (
    current_cycle,
    flush_session,
    session_row,
    transcript_tokens,
)
from memstrata.lifecycle.providers import (
    default_classifier,
    default_summarizer,
    usage_delta,
    usage_snapshot,
    usage_sum,
)
from memstrata.lifecycle.splice import archived, splice, take_snapshot
from memstrata.llm.extractive import ExtractiveSummarizer
from memstrata.model import SessionMessage, check_name, iso, now_ts
from memstrata.values import replace, value_type

if TYPE_CHECKING:
    from memstrata.llm.base import Summarizer
    from memstrata.store.view import Store

DEFAULT_TOOL_RESULT_RETENTION = 5  # Config.tool_result_retention; [sessions] in config.toml
FLUSH_TAIL = 5
M = TypeVar("M", SessionMessage, dict[str, Any])


@value_type(frozen=True)
class SessionCompaction:
    compacted: bool
    reason: str
    session_id: str
    before: int = 0
    after: int = 0
    summarized: int = 0
    kept: int = 0
    carried_over: int = 0
    archive_path: str = ""
    summary: str = ""
    usage: dict[str, int] | None = None


def _line(rec: dict[str, Any], limit: int = 300) -> str:
    body = rec.get("content")
    if rec.get("role") == "tool_call":
        body = f"{rec.get('name') or ''} {json.dumps(rec.get('input'), ensure_ascii=False)}"
    flat = " ".join(str(body if body is not None else "").split())
    return f"{rec.get('role')}: {flat[:limit]}{'…' if len(flat) > limit else ''}"


def compact_session(
    store: Store,
    agent: str,
    session_id: str,
    *,
    keep_recent: int | None = None,
    summary: str | None = None,
    summarizer: Summarizer | None = None,
    max_summary_chars: int = DEFAULT_SUMMARY_CHARS,
) -> SessionCompaction:
    """Summarise all but the last `keep_recent` messages of a session transcript.

    Raises:
        NotFound: no such session. ProviderError: the summariser failed
        (nothing changed). StaleWrite: the transcript was rewritten meanwhile.
    """
    sessions = store.agent(agent).sessions
    store.gate.check("write", "session", agent)
    sid = check_name(session_id, "session id")
    keep = store.config.session_keep_recent if keep_recent is None else keep_recent
    if not isinstance(keep, int) or isinstance(keep, bool) or keep < 0:
        raise MalformedInput("keep_recent must be a non-negative integer")
    if summary is not None:
        check_text(summary, "summary", 64 * 1024)
    path = sessions._spec(sid).path
    if store.engine.stat(path) is None:
        raise NotFound(f"no transcript for session {sid!r}")
    with store.engine.lock(f"compact:{store.rel(path)}", timeout=600):
        snap = take_snapshot(store, path)
        dec = decode(snap.data, 0, str(path))
        records = [(off, r) for off, r in dec.records if "role" in r]
        if len(records) <= keep:
            return SessionCompaction(
                False, f"{len(records)} message(s), keeping {keep}", sid, len(records), len(records)
            )
        older = records[: len(records) - keep]
        kept = records[len(records) - keep :]
        upto = dec.consumed
        cut = kept[0][0] if kept else upto
        usage = None
        when = now_ts()
        if summary is None:
            chosen = summarizer if summarizer is not None else default_summarizer(store)
            classifier = default_classifier(store)
            before = [usage_snapshot(p) for p in (chosen, classifier)]
            mem = store.agent(agent)
            now = mem.now.state() if mem.now.exists() else None
            summary = digest(
                message_records(to_message(r) for _, r in older),
                now=now,
                narrative=chosen,
                max_chars=max_summary_chars,
                bulletize=isinstance(chosen, ExtractiveSummarizer),
                classifier=classifier,
                archive=f"sessions/{sid}-{stamp(when)}.jsonl",
            )
            usage = usage_sum(usage_delta(before[0], chosen), usage_delta(before[1], classifier))
            if not isinstance(summary, str) or not summary.strip():
                summary = f"{len(older)} earlier messages (the summariser returned no text)."
            summary = summary[:max_summary_chars]
        # Deterministic pre-compaction flush: what is about to leave the transcript
        # reaches long-term memory first, whether or not the agent saves anything itself.
        if store.config.session_flush_enabled:
            flush_session(store, agent, sid, [to_message(r) for _, r in older])
        if store.config.automatic_writes:
            said = [r for _, r in older if r.get("role") in ("user", "assistant")]
            last = "\n".join(f"- {_line(r)}" for r in said[-FLUSH_TAIL:])  # no tool pairs
            store.agent(agent).log.append(
                "SYSTEM",
                f"Session {sid} compacted: {len(older)} message(s) summarised, "
                f"{len(kept)} kept.\n\nSummary:\n{summary}\n\nLast messages before the cut:\n{last}",
                {"sessionId": sid, "flush": True, "summarized": len(older)},
            )
        archive = store.layout.archive_dir(agent) / "sessions" / f"{sid}-{stamp(when)}.jsonl"
        rec = {
            "id": "msg_" + os.urandom(4).hex(),
            "role": "summary",
            "content": summary,
            "timestamp": iso(when),
            "compacted": len(older),
            "archive": store.rel(archive),
        }
        head = encode(rec) + snap.data[cut:upto]
        with archived(store, snap.data[:upto], archive, source=snap.path, head=head):
            _, tail = splice(store, snap, upto, head, sessions._spec(sid))
    carried = sum(1 for _, r in decode(tail).records if "role" in r)
    result = SessionCompaction(
        True,
        f"{len(older)} message(s) summarised",
        sid,
        len(records) + carried,
        1 + len(kept) + carried,
        len(older),
        len(kept),
        carried,
        store.rel(archive),
        summary,
        usage,
    )
    store.events.emit(
        "memory:compact",
        {
            "sessionId": sid,
            "agent": agent,
            "layer": "session",
            "before": result.before,
            "after": result.after,
        },
    )
    return result


def context_view(
    messages: Sequence[M], keep_tool_results: int = DEFAULT_TOOL_RESULT_RETENTION
) -> list[M]:
    """The messages for the context window, with old tool results pruned.

    Only the last `keep_tool_results` tool results keep their content; older ones
    become a placeholder naming their size. Pure: the inputs (and the transcript
    they came from) are not modified.

    Example:
        >>> view = context_view(store.agent("finn").sessions.messages("s1"), 5)  # doctest: +SKIP
    """
    if (
        not isinstance(keep_tool_results, int)
        or isinstance(keep_tool_results, bool)
        or keep_tool_results < 0
    ):
        raise MalformedInput("keep_tool_results must be a non-negative integer")
    roles = [m.role if isinstance(m, SessionMessage) else m.get("role") for m in messages]
    results = [i for i, r in enumerate(roles) if r == "tool_result"]
    prune = set(results[: max(0, len(results) - keep_tool_results)])
    out: list[M] = []
    for i, m in enumerate(messages):
        if i not in prune:
            out.append(m)
            continue
        content = m.content if isinstance(m, SessionMessage) else str(m.get("content", ""))
        note = (
            f"[tool result pruned from the context view ({len(content)} chars); "
            "the full result is in the session transcript]"
        )
        if isinstance(m, SessionMessage):
            out.append(replace(m, content=note))
        else:
            out.append({**m, "content": note, "pruned": True})
    return out


def session_context_view(store: Store, agent: str, session_id: str) -> list[SessionMessage]:
    """A transcript as the agent should see it (`[sessions] tool_result_retention`)."""
    messages = store.agent(agent).sessions.messages(session_id)
    return context_view(messages, store.config.tool_result_retention)


def apply_session_thresholds(store: Store, agent: str, session_id: str) -> str:
    """Flush and/or compact one transcript as the transcript thresholds say; what was done."""
    config = store.config
    cycle = current_cycle(store.agent(agent).sessions.messages(session_id))
    tokens = transcript_tokens(cycle)
    done = []
    if config.session_flush_enabled and tokens >= config.session_flush_threshold:
        flushed = session_row(store, agent, session_id).get("flushed_upto")
        if flushed not in {m.id for m in cycle}:
            flush_session(store, agent, session_id, cycle)
            done.append("flushed")
    if tokens >= config.session_compaction_threshold:
        result = compact_session(store, agent, session_id)
        if result.compacted:
            done.append("compacted")
    return ", ".join(done) or f"{tokens} tokens: under the thresholds"
