"""A flushed decision and the records that say it: the records of an agent, read for the
rules of `search.copies` (no copy outlives the record it copies; see its module doc).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memstrata.layers.decisions import RULE_KINDS
from memstrata.model import RECORD_KINDS
from memstrata.search.copies import (
    FLUSH_HEADING,
    MIN_SHARED,
    Said,
    covered,
    mark_replaced,
    says_same,
    subject,
)

if TYPE_CHECKING:
    from memstrata.layers.agent import AgentMemory

__all__ = [
    "FLUSH_HEADING",
    "MIN_SHARED",
    "Said",
    "covered",
    "mark_replaced",
    "mark_replaced_bullets",
    "records_said",
    "says_same",
    "subject",
]


def records_said(mem: AgentMemory) -> list[Said]:
    """Every decision, constraint and preference of the agent's ledger (and its rules),
    in force or replaced, as these rules read them."""
    return [
        Said(e.id, f"{e.summary} {e.detail or ''}".strip(), by, e.ts)
        for e, by in mem.decisions.history((*RECORD_KINDS, *RULE_KINDS))
    ]


def mark_replaced_bullets(digest: str, records: list[Said]) -> str:
    """A LOG compaction digest with each `- Decision: / Constraint: / Preference:` bullet
    that a replaced record says (and no record in force does) shown as replaced, as a
    flushed CONTEXT.md item is (`mark_replaced`): a digest written after fpdf2 replaced
    WeasyPrint does not list "Let's do that with WeasyPrint" as a decision."""
    if not records or "\n- " not in f"\n{digest}":
        return digest
    heading = "### (memory flush)"
    marked = mark_replaced(f"{heading}\n{digest}", records)
    return marked.split("\n", 1)[1] if marked.startswith(heading) else digest
