"""`record_decision` (group `core`): a decision, constraint or preference in one call.

The tool translates and never decides: `layers.decisions` records it as a ledger entry
and resolves `replaces` (an id, or text matching one record in force) into the ledger's
`supersedes`, so the replaced record is never presented as current again (it stays
readable with `memory_get`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memstrata.mcp import shapes
from memstrata.mcp.schema import REQUIRED, Param
from memstrata.mcp.shapes import Reply
from memstrata.mcp.tools.spec import Caller, ToolSpec
from memstrata.model import RECORD_KINDS

if TYPE_CHECKING:
    from memstrata.config import Config


def record_decision(
    caller: Caller, text: str, kind: str, replaces: str | None, detail: str | None
) -> Reply:
    decisions = caller.agent.decisions
    old = decisions.resolve(replaces, kind) if replaces else None
    e = decisions.record(text, kind, replaces=old.id if old is not None else None, detail=detail)
    said = f"recorded {e.id} ({e.kind})" + (
        f"; it replaces {old.id}: {old.summary[:120]}" if old is not None else ""
    )
    data: dict[str, Any] = {"entry": shapes.entry(e)}
    if old is not None:
        data["replaced"] = old.id
    return Reply(said, data)


def tools(config: Config) -> list[ToolSpec]:
    """The declarations, in catalogue order."""
    return [
        ToolSpec(
            "record_decision",
            record_decision,
            "Record a decision, constraint or preference that holds from now on. replaces "
            "(an id or words of its text) retires the earlier one.",
            (
                Param("text", "string", 'what holds, e.g. "Use ReportLab for PDFs"', REQUIRED),
                Param("kind", "string", "what it is", "decision", enum=RECORD_KINDS),
                Param("replaces", "string", "the record it replaces", None),
                Param("detail", "string", "why", None),
            ),
            shapes._obj({"entry": shapes.ENTRY, "replaced": shapes.S}, ["entry"]),
            read_only=False,
        ),
    ]
