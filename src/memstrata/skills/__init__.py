"""The five AgentOS memory skills, each in the AgentOS skill shape (`SKILL_METADATA` + `execute`).

    from memstrata.skills import update_status, save_fact, recall_memory

    update_status(agent_name="finn", new_status="Analyzing portfolio data",
                  next_steps=["Load CSV", "Calculate returns", "Generate report"])
    save_fact(agent_name="finn", key="preferred_currency", value="USD", category="preference")
    memories = recall_memory(agent_name="finn", query="stocks the user asked about", n_results=3)

Each skill lives in `memstrata.skills.scripts.<name>` (AgentOS's
`core/skills/memory/scripts/<name>.py`) and opens the agent's memory for the
call (`home=` or `$MEMSTRATA_HOME`), so it can run from any process. Results are
plain JSON-ready values. `SKILLS` maps each name to its metadata.
"""

from __future__ import annotations

from typing import Any

from memstrata.skills.scripts import get_fact as _get_fact
from memstrata.skills.scripts import log_activity as _log_activity
from memstrata.skills.scripts import recall_memory as _recall_memory
from memstrata.skills.scripts import save_fact as _save_fact
from memstrata.skills.scripts import update_status as _update_status

update_status = _update_status.execute
log_activity = _log_activity.execute
recall_memory = _recall_memory.execute
save_fact = _save_fact.execute
get_fact = _get_fact.execute

SKILLS: dict[str, dict[str, Any]] = {
    m.SKILL_METADATA["name"]: m.SKILL_METADATA
    for m in (_update_status, _log_activity, _recall_memory, _save_fact, _get_fact)
}


def skill_md() -> str:
    """AgentOS's `core/skills/memory/SKILL.md`: the five skills' documentation, made from
    their `SKILL_METADATA` (so it cannot drift from what `execute` takes)."""
    out = [
        "# Memory skills",
        "",
        "Five native skills available to all agents (`memstrata.skills`); each takes "
        "`agent_name` and opens that agent's memory for the call.",
        "",
    ]
    for name, meta in SKILLS.items():
        out += [
            f"## {name}",
            "",
            str(meta.get("description", "")),
            "",
            "| parameter | type | required | default |",
            "|---|---|---|---|",
        ]
        for pname, spec in meta.get("parameters", {}).items():
            default = spec.get("default", "")
            out.append(
                f"| `{pname}` | {spec.get('type', '')} | "
                f"{'yes' if spec.get('required') else 'no'} | {default} |"
            )
        out.append("")
    return "\n".join(out)


__all__ = [
    "SKILLS",
    "get_fact",
    "log_activity",
    "recall_memory",
    "save_fact",
    "skill_md",
    "update_status",
]
