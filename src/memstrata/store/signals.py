"""What layers announce after an acknowledged write, and who listens.

A layer knows that it appended to LOG.md or to a transcript; it does not know
what should follow (a compaction, a memory flush). So it announces the fact
on the engine's `Signals`, and whoever cares registered for it when the store
opened (`lifecycle.triggers.register`): the call points down, never up.

    engine.signals.connect(LogAppended, on_log)          # when a store opens
    engine.signals.announce(LogAppended(principal, "finn"))   # after the append

Handlers run in the announcing thread, after the write was acknowledged: one
that raises is logged and kept in `failures` (the engine's `background_errors`),
never raised to the writer.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

from memstrata.model import Principal
from memstrata.values import value_type


@value_type(frozen=True)
class LogAppended:
    """An entry was appended to `owner`'s LOG.md by `principal`; the file's `size` and
    the index's `entries` of it right after (None: unknown, a listener looks)."""

    principal: Principal
    owner: str
    size: int | None = None
    entries: int | None = None


@value_type(frozen=True)
class SessionGrew:
    """Messages were appended to `owner`'s transcript `session` by `principal`."""

    principal: Principal
    owner: str
    session: str


S = TypeVar("S")


class Signals:
    """Handlers by signal type; `announce` calls each one registered for its type."""

    def __init__(self, failures: list[tuple[str, BaseException]]) -> None:
        self._handlers: dict[type, list[Callable[[Any], object]]] = {}
        self._guard = threading.Lock()
        self._failures = failures

    def connect(self, kind: type[S], handler: Callable[[S], object]) -> None:
        with self._guard:
            self._handlers.setdefault(kind, []).append(handler)

    def announce(self, signal: object) -> None:
        for handler in list(self._handlers.get(type(signal), ())):
            try:
                handler(signal)
            except Exception as exc:  # the write that announced it stands
                name = getattr(handler, "__name__", repr(handler))
                self._failures.append((name, exc))
                import logging  # only when a handler failed: 5-7 ms at start-up

                logging.getLogger("memstrata").warning("memstrata: %s: %s", name, exc)
