"""Skill `recall_memory`: search the agent's memory (cold archive included)."""

from __future__ import annotations

import os
from typing import Any

from memstrata.operations.manager import MemoryManager
from memstrata.policy.secrets import withhold

SKILL_METADATA: dict[str, Any] = {
    "name": "recall_memory",
    "description": "Search memory (LOG and its archive, files, facts, sessions, shared ledger).",
    "parameters": {
        "agent_name": {"type": "string", "required": True},
        "query": {"type": "string", "required": True},
        "n_results": {"type": "integer", "required": False, "default": 5},
    },
    "memory_layer": "cold",
}


def execute(
    agent_name: str,
    query: str,
    n_results: int = 5,
    *,
    home: str | os.PathLike[str] | None = None,
) -> list[dict[str, Any]]:
    """The best `n_results` memories, best first (secrets withheld: a skill's result
    enters the model's context, `policy.secrets.withhold`)."""

    with MemoryManager(agent_name, home) as m:
        hits: list[dict[str, Any]] = [
            {
                "uid": h.uid,
                "layer": h.layer,
                "title": h.title,
                "snippet": h.snippet,
                "score": h.score,
                "ts": h.ts,
                "source": h.source,
            }
            for h in m.recall_memory(query, n_results=n_results)
        ]
        return list(withhold(hits))
