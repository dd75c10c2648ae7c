"""LOG.md compaction: warm memory stays small, nothing is forgotten.

Trigger: LOG.md over `log.compact_bytes` (50 KB) or `log.compact_entries` (100)
(checked after every append, see `lifecycle.triggers`), an explicit `summary`
(the manual `compact_log(summary)`, honoured at any size), or `force`.
Protocol, in an order that never loses an entry:

1. snapshot the entries (under the LOG lock for an instant);
2. summarise them with no lock held (a model may take seconds; writers go on):
   the compaction policy's digest (`lifecycle.digest`): objective, phase, blockers,
   decisions and constraints first, tool output only as counts and outcomes;
3. write the entries verbatim to `archive/LOG-<stamp>-<archive_id>.md`, durably,
   in LOG format, so they stay searchable as layer "archive" (cold memory);
4. under the LOG lock: replace the compacted prefix with one SYSTEM summary
   entry (metadata `archive_id`, `entries`, `compacted`), carrying every entry
   appended since the snapshot over verbatim (`lifecycle.splice`);
5. append the record to `compactions.jsonl` (`compaction_history`) and
   emit `memory:compact`.

A summariser failure (ProviderError) or a bad `summary` raises before step 3:
memory is unchanged. A splice that fails (StaleWrite: LOG.md was rewritten
meanwhile) removes the archive again; a failure after LOG.md was replaced keeps it (it
holds the only copy). A crash between steps 3 and 4 leaves the
entries in both LOG.md and the archive (a duplicate, never a loss).

    record = compact_log(store, "finn", force=True)
    record.archive_path  # 'agents/finn/archive/LOG-20261122T103000Z-arc-1a2b3c4d.md'
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from memstrata.errors import LockTimeout, MalformedInput
from memstrata.layers.archives import archive_spec
from memstrata.layers.base import check_text
from memstrata.layers.log import LOG_HEADER, MAX_CONTENT_BYTES, encode_entry, parse_log, to_entry
from memstrata.lifecycle.digest import digest, log_records
from memstrata.lifecycle.flushed import mark_replaced_bullets, records_said
from memstrata.lifecycle.providers import (
    default_classifier,
    default_summarizer,
    usage_delta,
    usage_snapshot,
    usage_sum,
)
from memstrata.lifecycle.splice import archived, splice, take_snapshot
from memstrata.lifecycle.thresholds import needs_compaction
from memstrata.llm.extractive import ExtractiveSummarizer
from memstrata.model import LogEntry, iso, now_ts
from memstrata.values import value_type

if TYPE_CHECKING:
    from memstrata.llm.base import Summarizer
    from memstrata.store.view import Store

DEFAULT_SUMMARY_CHARS = 2000


@value_type(frozen=True)
class CompactionRecord:
    """What one compaction did (one line of `compactions.jsonl` when `compacted`)."""

    compacted: bool
    reason: str
    compacted_at: str = ""
    entries_count: int = 0
    summary: str = ""
    archive_id: str = ""
    archive_path: str = ""
    original_size_kb: float = 0.0
    new_size_kb: float = 0.0
    carried_over: int = 0
    summarizer: str = ""
    usage: dict[str, int] | None = None

    def to_dict(self) -> dict[str, Any]:
        from dataclasses import asdict  # only for a listing: not at import

        return asdict(self)


def stamp(ts: float) -> str:
    """'20261122T103000Z': a timestamp that sorts and is safe in file names."""
    return iso(ts)[:19].replace("-", "").replace(":", "") + "Z"


def compact_log(
    store: Store,
    agent: str,
    *,
    summary: str | None = None,
    summarizer: Summarizer | None = None,
    force: bool = False,
    max_summary_chars: int = DEFAULT_SUMMARY_CHARS,
    wait: float = 600.0,
) -> CompactionRecord:
    """Compact `agent`'s LOG.md if it is over its limits (or `force`, or a `summary` is given).

    Args:
        summary: Use this text as the summary (`compact_log(summary)`):
            the caller asks for this compaction, so it runs at any size.
        summarizer: Writes the narrative part of the policy digest; default:
            `[llm] summarizer` from config, else the deterministic extractive one.
        force: Compact even under the thresholds.
        wait: Seconds to wait for a compaction another process is running
            (0: skip instead; the triggers do that).

    Returns:
        A `CompactionRecord`; `compacted` is False (and nothing changed) when
        no compaction was needed or there was nothing to compact.

    Raises:
        ProviderError: the summariser failed; LOG.md is unchanged.
        StaleWrite: LOG.md was rewritten meanwhile; LOG.md is unchanged.
    """
    mem = store.agent(agent)
    log = mem.log
    store.gate.check("write", "log", agent)
    if summary is not None:
        check_text(summary, "summary", MAX_CONTENT_BYTES // 2)
    if not isinstance(max_summary_chars, int) or max_summary_chars < 100:
        raise MalformedInput("max_summary_chars must be an integer >= 100")
    asked = "forced" if force else ("summary given" if summary is not None else None)
    if asked is None and needs_compaction(store, agent) is None:
        return CompactionRecord(False, "under the LOG.md size and entry limits")
    # One compaction per LOG at a time; appenders never take this lock.
    try:
        with store.engine.lock(f"compact:{log.rel}", timeout=wait):
            # Checked again under the lock: another process may just have compacted.
            reason = asked or needs_compaction(store, agent)
            if reason is None:
                return CompactionRecord(False, "under the LOG.md size and entry limits")
            record, old_size, new_size = _compact_locked(
                store, agent, reason, summary, summarizer, max_summary_chars
            )
    except LockTimeout:
        if wait > 0:
            raise
        return CompactionRecord(False, "another compaction of this LOG is running")
    if not record.compacted:
        return record
    store.events.emit(
        "memory:write",
        {
            "type": "log",
            "path": store.rel(store.agent(agent).log.path),
            "delta": new_size - old_size,
        },
    )
    store.events.emit(
        "memory:compact",
        {
            "sessionId": None,
            "agent": agent,
            "layer": "log",
            "before": record.entries_count + record.carried_over,
            "after": 1 + record.carried_over,
            "before_bytes": old_size,
            "after_bytes": new_size,
            "archive_id": record.archive_id,
        },
    )
    return record


def _compact_locked(
    store: Store,
    agent: str,
    reason: str,
    summary: str | None,
    summarizer: Summarizer | None,
    max_summary_chars: int,
) -> tuple[CompactionRecord, int, int]:
    log = store.agent(agent).log
    snap = take_snapshot(store, log.path)
    parsed = parse_log(snap.data, 0, str(log.path), owner=agent)
    if not parsed.docs:
        return CompactionRecord(False, "LOG.md has no entries to compact"), 0, 0
    first = min([d.offset or 0 for d in parsed.docs] + [b.offset for b in parsed.bad])
    upto = parsed.consumed
    metas = [d.meta or {} for d in parsed.docs]
    provider_name = "given"
    usage = None
    archive_id = "arc-" + os.urandom(4).hex()  # named by the digest's "+N more ..." lines
    if summary is None:
        chosen = summarizer if summarizer is not None else default_summarizer(store)
        classifier = default_classifier(store)
        provider_name = type(chosen).__name__
        before = [usage_snapshot(p) for p in (chosen, classifier)]
        mem = store.agent(agent)
        now = mem.now.state() if mem.now.exists() else None
        summary = digest(
            log_records(to_entry(m) for m in metas),
            now=now,
            narrative=chosen,
            max_chars=max_summary_chars,
            bulletize=isinstance(chosen, ExtractiveSummarizer),
            classifier=classifier,
            archive=archive_id,
        )
        usage = usage_sum(usage_delta(before[0], chosen), usage_delta(before[1], classifier))
        if isinstance(summary, str):  # a decision replaced since is not listed as one
            summary = mark_replaced_bullets(summary, records_said(mem))
        if not isinstance(summary, str) or not summary.strip():
            summary = f"{len(metas)} entries compacted (the summariser returned no text)."
        summary = summary[:max_summary_chars]
    when = now_ts()
    archive = store.layout.archive_dir(agent) / f"LOG-{stamp(when)}-{archive_id}.md"
    head = (
        f"# LOG archive {archive_id}\n\n{len(metas)} entries compacted out of "
        f"LOG.md at {iso(when)}. Same format as LOG.md.\n\n"
    ).encode()
    entry = LogEntry(
        "log-" + os.urandom(4).hex(),
        iso(when),
        "SYSTEM",
        f"LOG compacted: {len(metas)} entries archived to {store.rel(archive)}.\n\n{summary}",
        {
            "archive_id": archive_id,
            "entries": len(metas),
            "compacted": True,
            "archive": store.rel(archive),
        },
    )
    new_head = (snap.data[:first] or LOG_HEADER.encode()) + encode_entry(entry)
    with archived(
        store,
        head + snap.data[first:upto],
        archive,
        archive_spec(store.engine, archive, agent),
        source=log.path,
        head=new_head,
    ):
        old_size, tail = splice(store, snap, upto, new_head, log._spec())
    new_size = log.size()
    carried = len(parse_log(tail, 0, str(log.path), owner=agent, final=True).docs)
    record = CompactionRecord(
        True,
        reason,
        iso(when),
        len(metas),
        summary,
        archive_id,
        store.rel(archive),
        round(old_size / 1024, 3),
        round(new_size / 1024, 3),
        carried,
        provider_name,
        usage,
    )
    store.agent(agent).compactions.record(record.to_dict())
    return record, old_size, new_size


def compaction_history(store: Store, agent: str) -> list[dict[str, Any]]:
    """Every compaction of `agent`'s LOG, oldest first (`compaction_history`)."""
    return store.agent(agent).compactions.list()
