"""Memory lifecycle: how memory moves between layers and stays small and true.

    compaction          LOG.md -> summary entry + searchable archive
    session_compaction  transcript -> summary + recent N; tool-result pruning
    promotion           scratch -> task-episodic -> durable fact, with exclusions
    hygiene             pollution audit and non-destructive pruning
    verify              verify-before-use of file/line/symbol claims
    anneal              errors leave a recovery trail in LOG.md and NOW.md
    retention           idle transcripts move to the archive
    extraction          project files -> items.json

Everything here works through the store's two write doors and the layer
handles; summaries and extraction use `memstrata.llm` (deterministic by default).
Names are loaded on first use: a LOG append imports only the trigger it needs.

    triggers            compaction / flush after an acknowledged append
    digest              the context compaction policy as deterministic bullets
    classify            what a line is for that policy: decision, constraint, blocker, phase
    flush               pre-compaction flush of durable items to CONTEXT.md
    maintain            retention, milestone archival, LOG upkeep (`memstrata maintain`)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_WHERE: dict[str, str] = {
    "AuditFinding": "memstrata.lifecycle.hygiene",
    "AuditReport": "memstrata.lifecycle.hygiene",
    "CompactionRecord": "memstrata.lifecycle.compaction",
    "ExtractReport": "memstrata.lifecycle.extraction",
    "Finding": "memstrata.lifecycle.verify",
    "PruneReport": "memstrata.lifecycle.hygiene",
    "SessionCompaction": "memstrata.lifecycle.session_compaction",
    "annealing": "memstrata.lifecycle.anneal",
    "archive_old_sessions": "memstrata.lifecycle.retention",
    "audit": "memstrata.lifecycle.hygiene",
    "classify_fact": "memstrata.lifecycle.promotion",
    "compact_log": "memstrata.lifecycle.compaction",
    "compact_session": "memstrata.lifecycle.session_compaction",
    "compaction_history": "memstrata.lifecycle.compaction",
    "context_view": "memstrata.lifecycle.session_compaction",
    "extract_items": "memstrata.lifecycle.extraction",
    "flag_stale": "memstrata.lifecycle.verify",
    "needs_compaction": "memstrata.lifecycle.thresholds",
    "promote_fact": "memstrata.lifecycle.promotion",
    "promote_scratch": "memstrata.lifecycle.promotion",
    "prune": "memstrata.lifecycle.hygiene",
    "recall_verified": "memstrata.lifecycle.verify",
    "record_error": "memstrata.lifecycle.anneal",
    "save_exclusion": "memstrata.layers.durable",
    "session_context_view": "memstrata.lifecycle.session_compaction",
    "verify_citations": "memstrata.lifecycle.verify",
}


__all__ = [
    "AuditFinding",
    "AuditReport",
    "CompactionRecord",
    "ExtractReport",
    "Finding",
    "PruneReport",
    "SessionCompaction",
    "annealing",
    "archive_old_sessions",
    "audit",
    "classify_fact",
    "compact_log",
    "compact_session",
    "compaction_history",
    "context_view",
    "extract_items",
    "flag_stale",
    "needs_compaction",
    "promote_fact",
    "promote_scratch",
    "prune",
    "recall_verified",
    "record_error",
    "save_exclusion",
    "session_context_view",
    "verify_citations",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'memstrata.lifecycle' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:  # pragma: no cover
    from memstrata.layers.durable import save_exclusion
    from memstrata.lifecycle.anneal import annealing, record_error
    from memstrata.lifecycle.compaction import (
        CompactionRecord,
        compact_log,
        compaction_history,
    )
    from memstrata.lifecycle.extraction import ExtractReport, extract_items
    from memstrata.lifecycle.hygiene import AuditFinding, AuditReport, PruneReport, audit, prune
    from memstrata.lifecycle.promotion import classify_fact, promote_fact, promote_scratch
    from memstrata.lifecycle.retention import archive_old_sessions
    from memstrata.lifecycle.session_compaction import (
        SessionCompaction,
        compact_session,
        context_view,
        session_context_view,
    )
    from memstrata.lifecycle.thresholds import needs_compaction
    from memstrata.lifecycle.verify import Finding, flag_stale, recall_verified, verify_citations
