"""Self-annealing: an error leaves a recovery trail in memory.

    with annealing(store, "finn"):
        run_step()

    @annealing(manager)            # a MemoryManager knows its agent
    def run_step() -> None: ...

On an exception the block's error is appended to LOG.md as an ERROR entry with
the traceback in its metadata, NOW.md is set to "Error encountered - Recovery
needed" with the recovery steps (the interrupted objective is kept as a
blocker, and kept through repeated errors), and the exception is re-raised
unchanged. If memory itself cannot be written, the original exception still
propagates, with a note saying why. `record_tool_failure` leaves the same trail
for a tool that failed in a coding agent (its hooks report the failure; there is
no exception to re-raise).
"""

from __future__ import annotations

import contextlib
import traceback
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from memstrata.errors import MalformedInput, MemstrataError
from memstrata.reading.failure import clipped, told

if TYPE_CHECKING:
    from memstrata.operations.manager import MemoryManager
    from memstrata.store.view import Store

RECOVERY_STATUS = "Error encountered - Recovery needed"
RECOVERY_STEPS = ("Review LOG.md", "Analyze root cause", "Implement fix")
MAX_TRACEBACK_CHARS = 16 * 1024
INTERRUPTED = "Interrupted objective:"


def _one_line(text: str, limit: int = 300) -> str:
    flat = " ".join(text.split())
    return flat[:limit] + ("…" if len(flat) > limit else "")


def record_error(store: Store, agent: str, exc: BaseException) -> None:
    """Write the ERROR entry and the recovery NOW.md for `exc` (no re-raise)."""
    mem = store.agent(agent)
    tb = "".join(traceback.format_exception(exc))[-MAX_TRACEBACK_CHARS:]
    message = f"Error: {type(exc).__name__}: {exc}"
    mem.log.append("ERROR", message, {"traceback": tb, "error_type": type(exc).__name__})
    _recovery_now(store, agent, message)


def record_tool_failure(
    store: Store, agent: str, tool: str, detail: str, *, recovery: bool = True, **meta: Any
) -> None:
    """A failed tool execution (a coding agent's hook reports it; there is no traceback):
    one ERROR entry naming the tool and the failure (`meta`: its arguments, call id,
    session), and the recovery NOW.md unless `recovery` is False (the agent set NOW in
    this turn: `lifecycle.outcome`)."""
    # What is indexed and read back: the lines that say what went wrong, not the banner a
    # build or run prints first (`reading.failure.told`); the whole output in metadata.
    message = f"Error: tool {tool} failed: {told(detail) if detail.strip() else 'no detail given'}"
    store.agent(agent).log.append(
        "ERROR",
        message,
        {"tool": tool, "outcome": "error", "error": clipped(detail, MAX_TRACEBACK_CHARS), **meta},
    )
    if recovery:
        _recovery_now(store, agent, message)


def _recovery_now(store: Store, agent: str, message: str) -> None:
    """NOW.md: the recovery status and steps, the error first among the blockers, and the
    objective that was interrupted (kept across repeated errors, never lost)."""
    mem = store.agent(agent)
    state = mem.now.state() if mem.now.exists() else None
    blockers = [_one_line(message)]
    if state is not None and state.objective == RECOVERY_STATUS:
        blockers += [b for b in state.blockers if b.startswith(INTERRUPTED)][:1]
    elif state is not None and state.objective and state.objective != "(none)":
        blockers.append(_one_line(f"{INTERRUPTED} {state.objective}"))
    mem.now.update(RECOVERY_STATUS, list(RECOVERY_STEPS), blockers=blockers)


def store_and_agent(target: Store | MemoryManager, agent: str | None) -> tuple[Store, str | None]:
    """The store and agent of a `Store` (its own agent unless `agent` names one) or of a
    `MemoryManager` (anything with `store` and `agent_name`: no import of the manager)."""
    named = getattr(target, "agent_name", None)
    if named is not None:
        manager: Any = target
        return manager.store, agent or named
    store: Any = target
    return store, agent or store.principal.agent


@contextlib.contextmanager
def annealing(target: Store | MemoryManager, agent: str | None = None) -> Iterator[None]:
    """Record any exception raised inside the block in memory, then re-raise it.

    `target` is a `Store` (with `agent`, or the store's own agent) or a
    `MemoryManager`. Also usable as a decorator.
    """
    store, who = store_and_agent(target, agent)
    if who is None:
        raise MalformedInput("annealing needs an agent: pass agent= or open the store as one")
    try:
        yield
    except Exception as exc:
        try:
            record_error(store, who, exc)
        except (MemstrataError, OSError) as failure:
            exc.add_note(f"memstrata: could not record this error in memory: {failure}")
        raise
