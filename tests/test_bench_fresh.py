"""`bench fresh` runs: a hand-edited transcript message is found by the next search (the
bench searches transcripts by name: they are opt-in, and it used to stop at its first
hand edit with "edit not found")."""

from __future__ import annotations

from memstrata.bench.fresh import run_fresh


def test_bench_fresh_runs_on_a_small_store() -> None:
    result = run_fresh(size=300, sources=30, queries=10, edits=5)
    assert result["after_edit_p50_ms"] > 0 and result["ratio_p50"] > 0
