"""Skill `get_fact`: read one user fact by key."""

from __future__ import annotations

import os
from typing import Any

from memstrata.operations.manager import MemoryManager

SKILL_METADATA: dict[str, Any] = {
    "name": "get_fact",
    "description": "Retrieve a user fact by its key (None when there is none).",
    "parameters": {
        "agent_name": {"type": "string", "required": True},
        "key": {"type": "string", "required": True},
    },
    "memory_layer": "cold",
}


def execute(agent_name: str, key: str, *, home: str | os.PathLike[str] | None = None) -> str | None:
    """The fact's value, or None."""

    with MemoryManager(agent_name, home) as m:
        return m.get_fact(key)
