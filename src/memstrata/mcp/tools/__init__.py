"""The MCP tool catalogue: the design documents' own tool names, each declared once, in its module.

    files      memory files: memory_read, memory_write, memory_replace, memory_insert, memory_list
    ledger     shared ledger: memory_publish, memory_query, memory_search, memory_get_context
    skills     AgentOS skills: memory_get, update_status, log_activity, recall_memory, save_fact,
               get_fact
    tasks      task memory: task_add, task_update, task_list
    sessions   transcripts: session_append, session_read
    claude     Anthropic's memory tool: memory
    decisions  record_decision
    versions   memory_history, memory_restore (earlier versions of memory files)
    episodes   task folders, verified items, gate events, phases, promotion,
               audit and verify
    rooms      rooms: room_channel, room_artifact, room_close, room_upstream
    handoff    skill hand-off: skill_handoff

Each module defines its tools as plain functions of a `Caller` and declares them in
`tools(config)` (`mcp.tools.spec`); `build_tools` binds every declaration to one
caller, in this order. Both transports (the light stdio server and the SDK's HTTP
server) list and call tools from these specs through `run` (`mcp.tools.call`), the
one call path: validate, call, answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memstrata.mcp.tools import (
    claude,
    decisions,
    episodes,
    files,
    handoff,
    ledger,
    rooms,
    sessions,
    skills,
    tasks,
    versions,
)
from memstrata.mcp.tools.call import NOT_AUTO_LOGGED, auto_log_target, run
from memstrata.mcp.tools.spec import Caller, ToolSpec

if TYPE_CHECKING:
    from memstrata.config import Config
    from memstrata.store.view import Store

__all__ = [
    "DEFAULT_GROUPS",
    "GROUPS",
    "NOT_AUTO_LOGGED",
    "Caller",
    "ToolSpec",
    "auto_log_target",
    "build_tools",
    "declarations",
    "run",
]

# Tool groups, by the layer each serves. A server exposes DEFAULT_GROUPS (and "ledger" when
# it acts in a room) unless `--tools` names groups or tools ("all": every group but
# "claude"): every tool listed costs an agent context tokens at every session start.
GROUPS: dict[str, str] = {
    "core": "memory skills and recall: recall_memory, memory_get, log_activity, "
    "update_status, save_fact, get_fact, record_decision",
    "files": "memory files: memory_read, memory_write, memory_replace, memory_insert, "
    "memory_list (off with [tools.memory] enabled = false)",
    "ledger": "shared ledger: memory_publish, memory_query, memory_search, "
    "memory_get_context (default when the server acts in a room)",
    "rooms": "rooms: room_channel, room_artifact, room_close, room_upstream",
    "tasks": "task memory: task_add, task_update, task_list",
    "sessions": "session transcripts: session_append, session_read",
    "episodes": "task folders, phases and hygiene: task_folder_create, "
    "task_folder_write, task_folder_read, task_verified, gate_event, task_phase, "
    "scratch_promote, memory_promote, memory_audit, memory_verify",
    "admin": "skill hand-off: skill_handoff (admins; others are refused)",
    "claude": "Anthropic's memory tool (memory_20250818): memory",
    "versions": "earlier versions of memory files: memory_history, memory_restore (off by "
    "default: restoring is rare, and every listed tool costs tokens)",
}
DEFAULT_GROUPS = ("core", "files")

MODULES = (
    files,
    ledger,
    skills,
    tasks,
    sessions,
    claude,
    decisions,
    versions,
    episodes,
    rooms,
    handoff,
)


def declarations(config: Config) -> list[ToolSpec]:
    """Every tool as its module declares it (its function still takes the caller)."""
    return [spec for module in MODULES for spec in module.tools(config)]


def build_tools(store: Store) -> list[ToolSpec]:
    """The catalogue for one principal's store: every tool, bound to its caller."""
    caller = Caller(store)
    return [spec.bound(caller) for spec in declarations(store.config)]
