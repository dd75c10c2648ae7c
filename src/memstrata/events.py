"""Memory events (seed 004): delivered to in-process subscribers and to `events.jsonl`.

| event          | payload                           |
|----------------|-----------------------------------|
| memory:read    | {type, path, size}                |
| memory:write   | {type, path, delta}               |
| memory:flush   | {sessionId}                       |
| memory:compact | {sessionId, before, after}        |
| memory:search  | {query, results}                  |

The audit file is an append-only trail: one `O_APPEND` write per event (atomic
for a regular file on Linux, so concurrent processes never interleave lines) and
no fsync: it records what happened, while the memory files themselves carry the
durability promise. Readers skip a line torn by a crash, as for every JSONL file.
Writing the trail is best effort: an event follows an operation that already
happened (often an acknowledged write), so a full or read-only disk never fails
that operation; refused event lines are counted in `EventBus.dropped`.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memstrata.files.jsonl import encode
from memstrata.files.locks import LockTable


@dataclass(frozen=True)
class Event:
    name: str
    payload: dict[str, Any]
    agent: str | None
    ts: float


Subscriber = Callable[[Event], None]


class EventBus:
    def __init__(self, audit_path: Path | None, locks: LockTable, agent: str | None) -> None:
        self._audit = audit_path
        self._locks = locks
        self._agent = agent
        self._subs: list[Subscriber] = []
        self._guard = threading.Lock()
        self._fd: int | None = None
        self.dropped = 0  # audit lines the disk refused (full, read-only)

    def subscribe(self, fn: Subscriber) -> Callable[[], None]:
        """Call `fn(event)` for every event; returns a function that unsubscribes."""
        with self._guard:
            self._subs.append(fn)

        def unsubscribe() -> None:
            with self._guard, contextlib.suppress(ValueError):
                self._subs.remove(fn)

        return unsubscribe

    @contextlib.contextmanager
    def capture(self) -> Iterator[list[Event]]:
        """Collect the events emitted inside the block (used by tests and "ignore memory")."""
        seen: list[Event] = []
        unsubscribe = self.subscribe(seen.append)
        try:
            yield seen
        finally:
            unsubscribe()

    def emit(self, name: str, payload: dict[str, Any]) -> None:
        event = Event(name, payload, self._agent, time.time())
        if self._audit is not None:
            record = {"ts": event.ts, "event": name, "agent": self._agent, "payload": payload}
            self._write(encode(record))
        for fn in list(self._subs):
            fn(event)


    def _write(self, line: bytes) -> None:
        with self._guard:
            try:
                if self._fd is None:
                    assert self._audit is not None
                    self._audit.parent.mkdir(parents=True, exist_ok=True)
                    self._fd = os.open(
                        self._audit, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644
                    )
                os.write(self._fd, line)
            except OSError:
                self.dropped += 1

    def close(self) -> None:
        with self._guard:
            if self._fd is not None:
                with contextlib.suppress(OSError):
                    os.close(self._fd)
                self._fd = None
