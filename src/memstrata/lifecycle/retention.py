"""Session retention (MemoryConfig `sessionRetentionDays`, default 30).

A transcript whose last message is older than `[sessions] retention_days` is
moved (one atomic rename, under the transcript's lock) to
`archive/sessions/<id>-<stamp>.jsonl` and marked `archived` in sessions.json.
Nothing is deleted; `Sessions.list(include_archived=True)` still shows it.
Order: rename, fsync both folders, then mark - a crash in between leaves an
unmarked session with no transcript, never a lost transcript.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from memstrata.errors import MalformedInput
from memstrata.files.jsonl import decode
from memstrata.lifecycle.compaction import stamp
from memstrata.lifecycle.splice import move_durably
from memstrata.model import iso, parse_ts
from memstrata.values import value_type

if TYPE_CHECKING:
    from memstrata.layers.sessions import Sessions
    from memstrata.store.view import Store

DAY = 86400.0


@value_type(frozen=True)
class ArchivedSession:
    id: str
    last_activity: str
    archive_path: str


def last_activity(sessions: Sessions, sid: str) -> float | None:
    """Newest message timestamp of a transcript (file mtime if none parse)."""
    path = sessions._spec(sid).path
    newest: float | None = None
    engine = sessions.engine
    for _, rec in decode(engine.read_from(path)).records:
        try:
            ts = parse_ts(rec.get("timestamp"))
        except MalformedInput:
            continue
        newest = ts if newest is None else max(newest, ts)
    if newest is None:
        entry = engine.stat(path)
        newest = entry.mtime if entry is not None else None
    return newest


def archive_old_sessions(
    store: Store, agent: str, now: float | None = None, *, retention_days: float | None = None
) -> list[ArchivedSession]:
    """Archive every transcript of `agent` idle for longer than the retention period."""
    store.gate.check("write", "session", agent)
    days = store.config.session_retention_days if retention_days is None else retention_days
    if not isinstance(days, int | float) or isinstance(days, bool) or days < 0:
        raise MalformedInput("retention_days must be a non-negative number")
    clock = time.time() if now is None else now
    sessions = store.agent(agent).sessions
    moved: list[ArchivedSession] = []
    for sid in sessions.ids():
        spec = sessions._spec(sid)
        with store.engine.lock(store.rel(spec.path)):
            last = last_activity(sessions, sid)
            if last is None or clock - last <= days * DAY:
                continue
            dest = store.layout.archive_dir(agent) / "sessions" / f"{sid}-{stamp(clock)}.jsonl"
            move_durably(store, spec.path, dest)
            store.engine.index_file(spec)  # the transcript is gone: drop its docs
        moved.append(ArchivedSession(sid, iso(last), store.rel(dest)))
    if moved:
        sessions.mark_archived({m.id: m.archive_path for m in moved})
        for m in moved:
            store.events.emit(
                "memory:write",
                {"type": "session", "path": m.archive_path, "delta": 0, "archived": m.id},
            )
    return moved
