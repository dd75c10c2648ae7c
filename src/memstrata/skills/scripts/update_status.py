"""Skill `update_status`: overwrite NOW.md (hot memory) with a status and next steps."""

from __future__ import annotations

import os
from typing import Any

from memstrata.operations.manager import MemoryManager

SKILL_METADATA: dict[str, Any] = {
    "name": "update_status",
    "description": "Update NOW.md: the current objective and the immediate next steps.",
    "parameters": {
        "agent_name": {"type": "string", "required": True},
        "new_status": {"type": "string", "required": True},
        "next_steps": {"type": "array", "items": {"type": "string"}, "required": False},
    },
    "memory_layer": "hot",
}


def execute(
    agent_name: str,
    new_status: str,
    next_steps: list[str] | None = None,
    *,
    home: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """Overwrite `agent_name`'s NOW.md; returns what was written."""

    with MemoryManager(agent_name, home) as m:
        m.update_now(new_status=new_status, next_steps=next_steps)
        return {
            "ok": True,
            "status": new_status,
            "next_steps": list(next_steps or []),
            "path": m.store.rel(m.memory.now.path),
        }
