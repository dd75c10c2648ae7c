"""`bench paraphrase` computes well-formed rows, and finds a record on every layer."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from memstrata.bench import paraphrase
from memstrata.bench.paraphrase_data import WRITE_LAYERS, Record, filler, load
from memstrata.lifecycle import triggers
from memstrata.store.engine import Engine
from memstrata.store.view import Store

# One record per write layer, each with words no other record holds; each question is
# its record's own text, so a bench that resolves hits to records finds all of them.
SMALL = """\
G t01 dev | ledger:decision | 30 | Zanzibar ledger quokka decision // vermilion detail || Zanzibar ledger quokka decision
D | ledger:convention | 29 | Unrelated convention about commit hooks
G t02 dev | fact:config:alpha.key | 0 | Tangerine fact wombat value || tangerine fact wombat value
D | fact:general:beta.key | 0 | Something else entirely about backups
G t03 heldout | context:Constraints | 0 | Marmalade context narwhal bullet || marmalade context narwhal bullet
D | context:Constraints | 0 | Another constraint about licences
G t04 dev | file:notes.md:Runbook | 0 | Pistachio runbook axolotl step || pistachio runbook axolotl step
G t05 heldout | log:ERROR | 5 | Cinnamon error pangolin trace || cinnamon error pangolin trace
D | log:SYSTEM | 4 | Deploy finished without errors
G t06 dev | session:s-one:user | 3 | Saffron session okapi message || the saffron okapi session
D | session:s-one:assistant | 3 | Noted, I will look at it tomorrow
"""


@pytest.fixture(autouse=True)
def _bench_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Built stores are kept in this test's folder, not the user's temp dir."""
    monkeypatch.setenv("MEMSTRATA_BENCH_CACHE", str(tmp_path / "bench-cache"))


def small(tmp_path: Path) -> Path:
    path = tmp_path / "small.txt"
    path.write_text(SMALL)
    return path


def test_rows_are_well_formed_for_every_mode_split_and_layer(
    tmp_path: Path, semantic_default: None
) -> None:
    pairs, records = load(small(tmp_path))
    rows = paraphrase.run(path=small(tmp_path), embedder="fake", filler_count=30, baselines=False)
    rows += paraphrase.run_fts5(pairs, records).summary("fts5", pairs)
    systems = {r["system"] for r in rows}
    assert systems == {"memstrata-lexical", "memstrata-semantic", "memstrata-hybrid", "fts5"}
    for r in rows:
        tops = [r[f"top{k}"] for k in paraphrase.KS]
        assert all(0.0 <= t <= 1.0 for t in tops) and tops == sorted(tops)
        assert ("p50_ms" in r) == (r["layer"] == "all")
        if "p50_ms" in r:
            assert 0.0 <= r["p50_ms"] <= r["p95_ms"]
    by = {(r["system"], r["split"], r["layer"]): r for r in rows}
    assert by["memstrata-lexical", "dev", "all"]["questions"] == 4
    assert by["memstrata-lexical", "heldout", "all"]["questions"] == 2
    assert {r["layer"] for r in rows if r["split"] == "all"} == {"all", *WRITE_LAYERS}
    # every layer's record is found: the bench resolves hits of each write path
    for layer in WRITE_LAYERS:
        assert by["memstrata-lexical", "all", layer]["top10"] == 1.0, layer
    assert "memstrata-semantic" in paraphrase.format_rows(rows)


def test_a_question_that_misses_counts_as_missed(tmp_path: Path) -> None:
    pairs, records = load(small(tmp_path))
    ranks = paraphrase.run_fts5(
        [replace(p, question="nothing matches this") for p in pairs], records
    )
    assert all(rank is None for rank in ranks.rank.values())
    row = ranks.summary("fts5", pairs)[0]
    assert row["top10"] == 0.0


def test_cli_prints_the_held_out_part_on_its_own(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "MEMSTRATA_HOME": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-m", "memstrata", "bench", "paraphrase", "--data", str(small(tmp_path)),
         "--mode", "lexical", "--no-baselines", "--split", "heldout", "--json"],
        capture_output=True, text=True, env=env, check=True, timeout=120,
    )  # fmt: skip
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert [(r["system"], r["split"], r["layer"]) for r in rows] == [
        ("memstrata-lexical", "heldout", "all")
    ]
    assert rows[0]["questions"] == 2 and "p95_ms" in rows[0]


def _log_split(home: Path) -> list[list[str]]:
    """The record ids in LOG.md, then in each archive (in the order of their contents)."""
    agent = home / "agents" / paraphrase.AGENT
    rec = re.compile(r'"rec": "(\w+)"')
    log = rec.findall((agent / "memory" / "LOG.md").read_text())
    archives = sorted(rec.findall(p.read_text()) for p in (agent / "archive").glob("*.md"))
    return [log, *archives]


def _ingest(home: Path, records: list[Record], now: float, compact_late: bool) -> list[list[str]]:
    """`paraphrase.ingest` into a fresh store whose LOG compactions run at once, or
    only once someone waits for the background work (`compact_late`: a busy machine)."""
    home.mkdir()
    (home / "config.toml").write_text(
        f'[roles]\nadmin = ["{paraphrase.AGENT}"]\n[log]\ncompact_entries = 10\n'
    )
    release = threading.Event()
    if not compact_late:
        release.set()
    compact, drain = triggers.compact_log_if_due, Engine.drain

    def held(store: Any, agent: str) -> bool:
        release.wait(timeout=60)
        return compact(store, agent)

    def draining(engine: Engine, timeout: float | None = None) -> None:
        release.set()
        drain(engine, timeout)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(triggers, "compact_log_if_due", held)
        mp.setattr(Engine, "drain", draining)
        with Store(home, agent=paraphrase.AGENT) as store:
            paraphrase.ingest(store, records, now)
    return _log_split(home)


def test_the_built_store_does_not_depend_on_when_a_compaction_thread_runs(
    tmp_path: Path,
) -> None:
    # Appended back to back, the entries a LOG compaction archived were those written
    # by the time its thread ran: two builds of the same code split LOG.md / archive/
    # differently, and a question's rank moved (p090: 4 to 7). Fails before the fix.
    _pairs, records = load(small(tmp_path))
    records = records + filler(60)
    now = time.time()
    prompt = _ingest(tmp_path / "prompt", records, now, compact_late=False)
    late = _ingest(tmp_path / "late", records, now, compact_late=True)
    assert prompt == late
    assert len(prompt) > 2  # compacted more than once


def test_a_change_to_ingest_builds_the_store_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `bench` counts as query-side for the cache's code version, yet `ingest` decides
    # what the store holds: a store built by an earlier ingest was searched again
    # (the compaction fix above measured nothing until the cache was cleared).
    # Fails before: the second run copied the first run's store.
    pairs, records = load(small(tmp_path))
    said: list[str] = []

    def built() -> bool:
        said.clear()
        paraphrase.run_memstrata(pairs, records, ("lexical",), progress=said.append)
        return not any("from the cache" in s for s in said)

    assert built()
    assert not built()  # the same ingest: copied
    ingest = paraphrase.ingest

    def another_ingest(store: Any, records: list[Record], now: float) -> dict[str, str]:
        return ingest(store, records, now)

    monkeypatch.setattr(paraphrase, "ingest", another_ingest)
    assert built()
