"""When maintenance is due: the limits of the LOG and of transcripts, checked against the config.

    LOG.md past log.compact_bytes / log.compact_entries  -> compact it
    a transcript past the smaller of sessions.flush_threshold and
    sessions.compaction_threshold tokens                  -> look at it

Cheap checks (a stat, one indexed count), made after every append by
`lifecycle.triggers` (from the size and count the append itself reported, when it
did) and before every explicit compaction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memstrata.config import Config
    from memstrata.store.view import Store


def needs_compaction(store: Store, agent: str) -> str | None:
    """Why LOG.md should be compacted now (by default: over 50 KB or 100 entries), or None."""
    log = store.agent(agent).log
    size = log.size()
    return compaction_due(store.config, size, None) or compaction_due(
        store.config, size, log.count()
    )


def compaction_due(config: Config, size: int, entries: int | None) -> str | None:
    """Why a LOG.md of `size` bytes holding `entries` entries (None: not counted) is over
    a limit, or None."""
    if size > config.log_compact_bytes:
        return f"LOG.md is {size} bytes (> {config.log_compact_bytes})"
    if entries is not None and entries > config.log_compact_entries:
        return f"LOG.md has {entries} entries (> {config.log_compact_entries})"
    return None


def session_token_floor(store: Store) -> int:
    """The smallest token count at which a transcript needs a flush or a compaction."""
    config = store.config
    floor = config.session_compaction_threshold
    if config.session_flush_enabled:
        floor = min(floor, config.session_flush_threshold)
    return floor
