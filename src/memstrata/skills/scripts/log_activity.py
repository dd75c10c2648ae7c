"""Skill `log_activity`: append one typed entry to LOG.md (warm memory)."""

from __future__ import annotations

import os
from typing import Any

from memstrata.operations.manager import MemoryManager

SKILL_METADATA: dict[str, Any] = {
    "name": "log_activity",
    "description": "Append to LOG.md: entry_type TOOL_USE, THOUGHT, USER_FEEDBACK, ERROR or SYSTEM.",
    "parameters": {
        "agent_name": {"type": "string", "required": True},
        "entry_type": {"type": "string", "required": True},
        "content": {"type": "string", "required": True},
        "metadata": {"type": "object", "required": False},
    },
    "memory_layer": "warm",
}


def execute(
    agent_name: str,
    entry_type: str,
    content: str,
    metadata: dict[str, Any] | None = None,
    *,
    home: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """Append one entry; returns its id once it is on disk."""

    with MemoryManager(agent_name, home) as m:
        entry = m.memory.log.append(entry_type, content, metadata)
        return {
            "ok": True,
            "id": entry.id,
            "ts": entry.ts,
            "entry_type": entry.entry_type,
            "content_hash": entry.content_hash,
            "token_count": entry.token_count,
        }
