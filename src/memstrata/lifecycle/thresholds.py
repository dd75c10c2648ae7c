"""When maintenance is due: the limits of the LOG and of transcripts, checked against the config.

    LOG.md past log.compact_bytes / log.compact_entries  -> compact it
    a transcript past the smaller of sessions.flush_threshold and
    sessions.compaction_threshold tokens                  -> look at it

Cheap checks (a stat, one indexed count), made after every append by
`lifecycle.triggers` and before every explicit compaction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memstrata.store.view import Store


def needs_compaction(store: Store, agent: str) -> str | None:
    """Why LOG.md should be compacted now (by default: over 50 KB or 100 entries), or None."""
    log = store.agent(agent).log
    size = log.size()
    if size > store.config.log_compact_bytes:
        return f"LOG.md is {size} bytes (> {store.config.log_compact_bytes})"
    count = log.count()
    if count > store.config.log_compact_entries:
        return f"LOG.md has {count} entries (> {store.config.log_compact_entries})"
    return None


def session_token_floor(store: Store) -> int:
    """The smallest token count at which a transcript needs a flush or a compaction."""
    config = store.config
    floor = config.session_compaction_threshold
    if config.session_flush_enabled:
        floor = min(floor, config.session_flush_threshold)
    return floor
