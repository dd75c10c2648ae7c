"""Skill `save_fact`: store a key/value user fact (`user_facts`)."""

from __future__ import annotations

import os
from typing import Any

from memstrata.operations.manager import MemoryManager

SKILL_METADATA: dict[str, Any] = {
    "name": "save_fact",
    "description": "Store a user fact or preference (category: general, preference, personal, config).",
    "parameters": {
        "agent_name": {"type": "string", "required": True},
        "key": {"type": "string", "required": True},
        "value": {"type": "string", "required": True},
        "category": {"type": "string", "required": False, "default": "general"},
        "citations": {
            "type": "array",
            "required": False,
            "description": "sources; required for the repo categories",
        },
    },
    "memory_layer": "cold",
}


def execute(
    agent_name: str,
    key: str,
    value: str,
    category: str = "general",
    *,
    citations: list[str] | None = None,
    home: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """Create or update the fact `key`."""

    with MemoryManager(agent_name, home) as m:
        m.save_fact(key, value, category, citations=citations)
        return {"ok": True, "key": key, "value": value, "category": category}
