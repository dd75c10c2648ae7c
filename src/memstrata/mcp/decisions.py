"""MCP `record_decision` (group `core`): a decision, constraint or preference in one call.

The tool translates and never decides: `layers.decisions` records it as a ledger entry
and resolves `replaces` (an id, or text matching one record in force) into seed 000's
`supersedes`, so the replaced record is never presented as current again (it stays
readable with `memory_get`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memstrata.mcp import shapes
from memstrata.mcp.schema import REQUIRED, Param
from memstrata.mcp.shapes import Reply
from memstrata.model import RECORD_KINDS

if TYPE_CHECKING:
    from memstrata.mcp.tools import ToolSpec


def build_decision_tools(agent: Any) -> list[ToolSpec]:
    """`agent` is the caller's `AgentMemory` handle (resolved on first use)."""
    from memstrata.mcp.tools import ToolSpec

    def record_decision(
        text: str, kind: str, replaces: str | None, tags: list[str] | None, detail: str | None
    ) -> Reply:
        decisions = agent.decisions
        old = decisions.resolve(replaces, kind) if replaces else None
        e = decisions.record(
            text, kind, replaces=old.id if old is not None else None, tags=tags, detail=detail
        )
        said = f"recorded {e.id} ({e.kind})" + (
            f"; it replaces {old.id}: {old.summary[:120]}" if old is not None else ""
        )
        data: dict[str, Any] = {"entry": shapes.entry(e)}
        if old is not None:
            data["replaced"] = shapes.entry(old)
        return Reply(said, data)

    entry = shapes.ENTRY
    return [
        ToolSpec(
            "record_decision",
            record_decision,
            "Record a decision, constraint or preference that stands from now on (one call). "
            "With replaces, the earlier one (its id, or words of its text) is never shown as "
            "current again. Returns the entry.",
            (
                Param(
                    "text", "string", 'what was decided, e.g. "Use ReportLab for PDFs"', REQUIRED
                ),
                Param("kind", "string", "what it is", "decision", enum=RECORD_KINDS),
                Param("replaces", "string", "the record this replaces: id or matching text", None),
                Param("tags", "array", 'tags, e.g. ["pdf"]', None, items="string"),
                Param("detail", "string", "why, alternatives weighed", None),
            ),
            shapes._obj({"entry": entry, "replaced": entry}, ["entry"]),
            read_only=False,
        )
    ]
