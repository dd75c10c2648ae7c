"""The one call path of both transports: validate, call, answer (and auto-log).

Tools translate and never decide: every call goes to the library, which enforces
scope and bounds. A tool's result enters the model's context, so it passes
`policy.secrets.withhold` (each secret shown as `[withheld: <kind>]`), the rule
assembled context follows; only a spec that `reveals` (get_fact: the agent asked
for one value by its key) is exempt.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from memstrata.errors import MemstrataError
from memstrata.files.versions import surface
from memstrata.mcp.schema import validate
from memstrata.mcp.shapes import Reply
from memstrata.operations.loop import log_tool
from memstrata.policy.secrets import collect_notices, withhold

if TYPE_CHECKING:
    from memstrata.mcp.tools.spec import ToolSpec
    from memstrata.store.view import Store

# Tools whose whole effect is a LOG entry: logging them again would only double it.
NOT_AUTO_LOGGED = frozenset({"log_activity"})


def auto_log_target(store: Store) -> Store | None:
    """The store to auto-log tool calls to (`[mcp] auto_log = true`), or None."""
    return store if store.config.mcp_auto_log and store.config.automatic_writes else None


def run(
    spec: ToolSpec, arguments: Mapping[str, Any] | None, *, log_to: Store | None = None
) -> Reply:
    """Validate the arguments against the spec and call the tool (the one call path of
    both transports); with `log_to`, every call also leaves a compact TOOL_USE entry.

    Raises the library's typed errors (MalformedInput for bad arguments); the
    transport turns them into a tool error whose text starts with the error code.
    """
    kwargs = validate(spec.params, arguments)
    start = time.perf_counter()
    with collect_notices() as notices, surface(f"mcp {spec.name}"):
        try:
            reply = spec.fn(**kwargs)
        except MemstrataError as exc:
            _auto_log(log_to, spec.name, kwargs, None, time.perf_counter() - start, exc)
            raise
        _auto_log(log_to, spec.name, kwargs, reply.text, time.perf_counter() - start, None)
    if not spec.reveals:
        reply = Reply(withhold(reply.text), withhold(reply.data), reply.is_error)
    if notices:  # secrets policy `warn`: tell the agent, in the text it reads
        warn = "".join(f"\nwarning: {n}" for n in dict.fromkeys(notices))
        reply = Reply(reply.text + warn, reply.data, reply.is_error)
    return reply


def _auto_log(
    store: Store | None,
    name: str,
    args: dict[str, Any],
    result: Any,
    duration: float,
    error: BaseException | None,
) -> None:
    if store is None or name in NOT_AUTO_LOGGED or store.principal.agent is None:
        return
    given = {k: v for k, v in args.items() if v is not None}  # defaults left out: as called
    try:
        log_tool(store, store.principal.agent, name, given, result, duration, error, via="mcp")
    except (MemstrataError, OSError) as exc:  # the tool call itself succeeded or failed already
        sys.stderr.write(f"memstrata: could not auto-log {name}: {exc}\n")
