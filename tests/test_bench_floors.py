"""`memstrata bench ops` times each hot operation against its bare primitive, in turn."""

from __future__ import annotations

import pytest

from memstrata.bench import floors
from memstrata.bench.ops import format_table, run_ops


def test_bench_ops_gives_each_hot_operation_a_ratio_to_its_floor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(floors, "COLD_RUNS", 1)  # two `memstrata context` processes
    rows = run_ops(sizes=(200,), repeat=5, floors=True)
    ratios = {r["operation"]: r for r in rows if "floor" in r}
    assert set(ratios) == {
        "append LOG (durable)",
        "update NOW",
        "recall (lexical)",
        "context cold start",
    }
    for r in ratios.values():
        assert r["p50_ms"] > 0 and r["floor_p50_ms"] > 0  # both were timed
        assert r["ratio"] == pytest.approx(
            (r["p95_ms"] / r["floor_p95_ms"])
            if r["ratio_of"] == "p95"
            else (r["p50_ms"] / r["floor_p50_ms"]),
            rel=0.01,
        )
    assert ratios["recall (lexical)"]["ratio_of"] == "p95"
    assert ratios["context cold start"]["target"] == "<= 150 ms"
    cold = ratios["context cold start"]
    assert cold["cpu_p50_ms"] > 0 and cold["floor_cpu_p50_ms"] > 0  # both processes' CPU
    assert cold["cpu_ratio"] == pytest.approx(
        cold["cpu_p50_ms"] / cold["floor_cpu_p50_ms"], rel=0.01
    )
    recall = ratios["recall (lexical)"]
    assert recall["cpu_p95_ms"] > 0 and recall["floor_cpu_p95_ms"] > 0  # each side's CPU
    assert recall["cpu_ratio"] == pytest.approx(
        recall["cpu_p95_ms"] / recall["floor_cpu_p95_ms"], rel=0.01
    )
    table = format_table(rows)
    assert "bare fdatasync append" in table and "python -c pass" in table
    assert f"bare {recall['floor_cpu_p95_ms']} ms" in table


def test_bench_ops_times_nothing_while_a_vector_backlog_is_embedded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The store's vectors are built (cheaply: the fake embedder) and drained before the
    first operation is timed; with the default MiniLM a 10k store was still being
    embedded while its floors were timed."""
    monkeypatch.delenv("MEMSTRATA_EMBEDDER", raising=False)  # the bench's own config
    rows = run_ops(sizes=(300,), repeat=3, floors=False)
    assert rows and all(r["vector_backlog"] == 0 for r in rows), rows
