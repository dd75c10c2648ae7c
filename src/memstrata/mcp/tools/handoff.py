"""`skill_handoff` (group `admin`): the Memory Sharing Protocol from the admin's side.

The envelope carries the context a stateless skill agent reads and nothing else
(`operations.envelope.hand_off`); only admins may hand one over.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memstrata.mcp import shapes
from memstrata.mcp.shapes import Reply
from memstrata.mcp.tools.spec import Caller, ToolSpec, p, req
from memstrata.operations.envelope import hand_off

if TYPE_CHECKING:
    from memstrata.config import Config


def skill_handoff(
    caller: Caller,
    skill: str,
    action: str,
    brief: str | None,
    memory_snippet: str | None,
    project_context: str,
) -> Reply:

    env = hand_off(
        caller.store,
        skill,
        action,
        brief=brief,
        memory_snippet=memory_snippet,
        project_context=project_context,
    )
    return Reply(env.to_json(), env.to_dict())


def tools(config: Config) -> list[ToolSpec]:
    """The declarations, in catalogue order."""
    S, obj = shapes.S, shapes._obj
    return [
        ToolSpec(
            "skill_handoff",
            skill_handoff,
            "Admins: the request envelope that hands a skill agent its context ("
            "memory_snippet chosen from your memory for the brief, project_context); the "
            "skill reads that and nothing else.",
            (
                req("skill", "string", "the skill agent"),
                req("action", "string", "what it is asked to do, e.g. analyze"),
                p("brief", "string", "what the task is about (picks the snippet)"),
                p("memory_snippet", "string", "the snippet as is (default: from your memory)"),
                p("project_context", "string", "the project context to pass", ""),
            ),
            obj(
                {"from": S, "to": S, "type": S, "payload": {"type": "object"}},
                ["from", "to", "type", "payload"],
            ),
            idempotent=True,
            group="admin",
        ),
    ]
