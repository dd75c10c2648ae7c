"""Maintenance that starts by itself after an acknowledged write.

    LOG.md past log.compact_bytes / log.compact_entries  -> compact_log
    transcript past sessions.flush_threshold tokens      -> flush_session     (MemoryConfig flushThreshold)
    transcript past sessions.compaction_threshold tokens -> compact_session   (MemoryConfig compactionThreshold)

A layer announces its append once it is on disk (`SessionGrew`) or, for LOG.md,
once it is indexed too (`LogAppended`, from the engine's deferred index work:
`store.deferred`); `register`, called when a store opens, connects
`after_log_append` / `after_session_append` to those signals. The check is cheap
(a stat; for LOG.md the indexed count the index work reports), so a background
thread starts only when there is work; the work runs in that thread
(`Engine.after_ack`), so the append returns before any compaction starts and its
latency does not include one. A
job takes the compaction lock without waiting: if another process is already
compacting the same file, this one skips (the other sees the same entries).
A failed job is logged and kept in `store.background_errors`; the write that
triggered it stands. Nothing starts in agent-controlled mode or
with `[log] auto_compact = false`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from memstrata.index.db import INDEX_LAG
from memstrata.lifecycle.thresholds import compaction_due, needs_compaction, session_token_floor
from memstrata.store.signals import LogAppended, SessionGrew

if TYPE_CHECKING:
    from memstrata.model import Principal
    from memstrata.store.engine import Engine
    from memstrata.store.view import Store


def register(engine: Engine, view_of: Callable[[Principal], Store]) -> None:
    """Connect the triggers to what `engine`'s layers announce (when a store opens).

    `view_of` gives the store of the principal whose write crossed a limit: the
    maintenance runs as that principal, as if it had asked for it.
    """

    def log_appended(signal: LogAppended) -> bool:
        return after_log_append(engine, view_of, signal)

    engine.signals.connect(LogAppended, log_appended)
    engine.signals.connect(
        SessionGrew, lambda s: after_session_append(view_of(s.principal), s.owner, s.session)
    )


def _never_raises(check: Callable[..., bool]) -> Callable[..., bool]:
    """A trigger runs after the ack: whatever goes wrong in it, the write stands."""

    def guarded(store: Store, *args: str) -> bool:
        try:
            return check(store, *args)
        except INDEX_LAG as exc:
            store.engine.background_errors.append((check.__name__, exc))
            import logging  # only when a check failed (5-7 ms at start-up)

            logging.getLogger("memstrata").warning("memstrata: %s: %s", check.__name__, exc)
            return False

    guarded.__name__ = check.__name__
    guarded.__doc__ = check.__doc__
    return guarded


def after_log_append(
    engine: Engine, view_of: Callable[[Principal], Store], signal: LogAppended
) -> bool:
    """Start a LOG compaction in the background if the LOG.md of `signal` is over a
    limit. Checked from the size and entry count the append's index work reported (a
    thread started per append to look cost more than the look); the job looks again."""
    config = engine.config
    if not (config.automatic_writes and config.log_auto_compact):
        return False
    if signal.size is None or signal.entries is None:
        return _check_and_start(view_of(signal.principal), signal.owner)
    if compaction_due(config, signal.size, signal.entries) is None:
        return False
    store = view_of(signal.principal)
    agent = signal.owner
    return engine.after_ack(f"compact-log:{agent}", lambda: compact_log_if_due(store, agent))


@_never_raises
def _check_and_start(store: Store, agent: str) -> bool:
    """The check when the append could not report (its index write failed): look."""
    if needs_compaction(store, agent) is None:
        return False
    return store.engine.after_ack(f"compact-log:{agent}", lambda: compact_log_if_due(store, agent))


@_never_raises
def compact_log_if_due(store: Store, agent: str) -> bool:
    """Compact `agent`'s LOG.md if it is still over a limit (a background job: another
    process's compaction may have run meanwhile)."""
    if needs_compaction(store, agent) is None:
        return False
    from memstrata.lifecycle.compaction import compact_log  # kept out of start-up

    compact_log(store, agent, wait=0)
    return True


@_never_raises
def after_session_append(store: Store, agent: str, session_id: str) -> bool:
    """Start the flush / compaction of a transcript that crossed a token threshold."""
    if not store.config.automatic_writes:
        return False
    entry = store.engine.stat(store.layout.session(agent, session_id))
    if entry is None:
        return False
    size = entry.size
    # Tokens are characters / 4 and a character takes at least one byte of the
    # file: below this size no threshold can have been crossed.
    if size < session_token_floor(store) * 4:
        return False
    from memstrata.lifecycle.session_compaction import apply_session_thresholds  # (start-up)

    return store.engine.after_ack(
        f"session:{agent}:{session_id}", lambda: apply_session_thresholds(store, agent, session_id)
    )
