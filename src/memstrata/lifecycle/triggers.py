"""Maintenance that starts by itself after an acknowledged write (seeds 002 and 004).

    LOG.md past log.compact_bytes / log.compact_entries  -> compact_log       (seed 002)
    transcript past sessions.flush_threshold tokens      -> flush_session     (seed 004 flushThreshold)
    transcript past sessions.compaction_threshold tokens -> compact_session   (seed 004 compactionThreshold)

The layer calls `after_log_append` / `after_session_append` once its append is
on disk and indexed. The check is cheap (a stat, and for LOG.md one indexed
count); the work runs in a background thread (`Store.after_ack`), so the append
returns before any compaction starts and its latency does not include one. A
job takes the compaction lock without waiting: if another process is already
compacting the same file, this one skips (the other sees the same entries).
A failed job is logged and kept in `store.background_errors`; the write that
triggered it stands. Nothing starts in agent-controlled mode (seed 003) or
with `[log] auto_compact = false`.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING

from memstrata.errors import MemstrataError

if TYPE_CHECKING:
    from memstrata.store.engine import Store


def _never_raises(check: Callable[..., bool]) -> Callable[..., bool]:
    """A trigger runs after the ack: whatever goes wrong in it, the write stands."""

    def guarded(store: Store, *args: str) -> bool:
        try:
            return check(store, *args)
        except (MemstrataError, OSError, sqlite3.Error) as exc:
            store.background_errors.append((check.__name__, exc))
            logging.getLogger("memstrata").warning("memstrata: %s: %s", check.__name__, exc)
            return False

    guarded.__name__ = check.__name__
    guarded.__doc__ = check.__doc__
    return guarded


def needs_compaction(store: Store, agent: str) -> str | None:
    """Why LOG.md should be compacted now (seed 002: over 50 KB or 100 entries), or None."""
    log = store.agent(agent).log
    size = log.size()
    if size > store.config.log_compact_bytes:
        return f"LOG.md is {size} bytes (> {store.config.log_compact_bytes})"
    count = log.count()
    if count > store.config.log_compact_entries:
        return f"LOG.md has {count} entries (> {store.config.log_compact_entries})"
    return None


@_never_raises
def after_log_append(store: Store, agent: str) -> bool:
    """Start a LOG compaction in the background if `agent`'s LOG.md is over a limit."""
    config = store.config
    if not (config.automatic_writes and config.log_auto_compact):
        return False
    if needs_compaction(store, agent) is None:
        return False

    def job() -> None:
        from memstrata.lifecycle.compaction import compact_log  # imported only when needed

        compact_log(store, agent, wait=0)

    return store.after_ack(f"compact-log:{agent}", job)


def session_token_floor(store: Store) -> int:
    """The smallest token count at which a transcript needs a flush or a compaction."""
    config = store.config
    floor = config.session_compaction_threshold
    if config.session_flush_enabled:
        floor = min(floor, config.session_flush_threshold)
    return floor


@_never_raises
def after_session_append(store: Store, agent: str, session_id: str) -> bool:
    """Start the seed 004 flush / compaction of a transcript that crossed a token threshold."""
    if not store.config.automatic_writes:
        return False
    entry = store.truth.stat(store.rel(store.layout.session(agent, session_id)))
    if entry is None:
        return False
    size = entry.size
    # Tokens are characters / 4 and a character takes at least one byte of the
    # file: below this size no threshold can have been crossed.
    if size < session_token_floor(store) * 4:
        return False
    from memstrata.lifecycle.flush import apply_session_thresholds

    return store.after_ack(
        f"session:{agent}:{session_id}", lambda: apply_session_thresholds(store, agent, session_id)
    )
