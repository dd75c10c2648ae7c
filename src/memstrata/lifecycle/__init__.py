"""Memory lifecycle: how memory moves between layers and stays small and true.

    compaction          LOG.md -> summary entry + searchable archive (seed 002)
    session_compaction  transcript -> summary + recent N; tool-result pruning (seed 004)
    promotion           scratch -> task-episodic -> durable fact, with exclusions (seed 001)
    hygiene             pollution audit and non-destructive pruning (seed 001)
    verify              verify-before-use of file/line/symbol claims (seed 001)
    anneal              errors leave a recovery trail in LOG.md and NOW.md (seed 002)
    retention           idle transcripts move to the archive (seed 004)
    extraction          project files -> items.json (seed 004)

Everything here works through the store's two write doors and the layer
handles; summaries and extraction use `memstrata.llm` (deterministic by default).
"""

from memstrata.lifecycle.anneal import annealing, record_error
from memstrata.lifecycle.compaction import (
    CompactionRecord,
    compact_log,
    compaction_history,
    needs_compaction,
)
from memstrata.lifecycle.extraction import ExtractReport, extract_items
from memstrata.lifecycle.hygiene import AuditFinding, AuditReport, PruneReport, audit, prune
from memstrata.lifecycle.promotion import (
    classify_fact,
    promote_fact,
    promote_scratch,
    save_exclusion,
)
from memstrata.lifecycle.retention import archive_old_sessions
from memstrata.lifecycle.session_compaction import (
    SessionCompaction,
    compact_session,
    context_view,
    session_context_view,
)
from memstrata.lifecycle.verify import Finding, flag_stale, recall_verified, verify_citations

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
