"""`memstrata bench fresh` at a tiny size, so the benchmark cannot rot unnoticed: it
once crashed (its hand edits went to session transcripts, which became opt-in for
search) and its watcher numbers covered the ledger alone."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from memstrata.bench.fresh import format_report, run_fresh, run_wal

EXE = shutil.which("memstrata", path=str(Path(sys.executable).parent)) or "memstrata"


def test_bench_fresh_runs_and_its_queries_reach_the_transcripts() -> None:
    r = run_fresh(size=400, sources=8, queries=12, edits=3)
    assert r["entries"] == 400 and r["sources"] >= 8
    assert {"ledger", "session"} <= set(r["hit_layers"])  # not the ledger alone
    for key in ("off_p50_ms", "on_p50_ms", "after_edit_p50_ms", "full_catch_up_p50_ms"):
        assert r[key] > 0
    wal = run_wal(writes=20)
    assert [row["policy"] for row in wal] == ["sqlite defaults", "memstrata policy"]
    assert all(row["db_kb"] > 0 for row in wal)
    report = format_report(r, wal)
    assert "session" in report and "index after 20 writes" in report


def test_bench_fresh_through_the_cli() -> None:
    out = subprocess.run(
        [
            EXE,
            "--json",
            "bench",
            "fresh",
            "--size",
            "200",
            "--sources",
            "4",
            "--queries",
            "6",
            "--writes",
            "10",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["fresh"]["entries"] == 200 and "session" in data["fresh"]["hit_layers"]
    assert len(data["wal"]) == 2
