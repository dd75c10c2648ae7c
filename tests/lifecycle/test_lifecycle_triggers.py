"""Compaction that triggers itself (seed 002: "LOG.md exceeds 50KB or 100 entries") and seed
004's token thresholds: the append is acknowledged first, compaction runs after it, one at a
time, and nothing acknowledged is lost, even to a writer in another process."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pytest

from memstrata import IndexError_, Store
from memstrata.layers.log import parse_log
from memstrata.lifecycle import compaction as compaction_module
from memstrata.lifecycle import compaction_history


class GateSummarizer:
    """Blocks in `summarize` until released: proves the append returned before compaction ran."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.release = threading.Event()

    def summarize(self, texts: Sequence[str], *, max_chars: int) -> str:
        self.started.set()
        assert self.release.wait(30)
        return "the agent thought about the parser"


def _ids(path: Path) -> list[str]:
    parsed = parse_log(path.read_bytes(), 0, str(path), owner="finn", final=True)
    return [d.meta["id"] for d in parsed.docs if d.meta]


def _summaries(path: Path) -> set[str]:
    parsed = parse_log(path.read_bytes(), 0, str(path), owner="finn", final=True)
    return {d.meta["id"] for d in parsed.docs if d.meta and d.meta["metadata"].get("compacted")}


def test_seed002_log_at_101_entries_compacts_by_itself_after_the_ack(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = GateSummarizer()
    monkeypatch.setattr(compaction_module, "default_summarizer", lambda s: gate)
    log = store.agent("finn").log
    ids = [log.append("THOUGHT", f"thought {i} about the parser").id for i in range(100)]
    assert not gate.started.is_set()  # 100 entries is the limit, not over it
    ids.append(log.append("THOUGHT", "thought 100 about the parser").id)  # acknowledged here
    assert gate.started.wait(30)  # ... and the compaction started after that, in the background
    assert log.count() == 101 and _ids(log.path) == ids  # nothing rewritten before the release
    gate.release.set()
    store.drain()
    entries = log.entries()
    assert len(entries) == 1 and entries[0].metadata["entries"] == 101
    [hist] = compaction_history(store, "finn")
    assert hist["entries_count"] == 101 and hist["reason"] == "LOG.md has 101 entries (> 100)"
    archive = store.home / hist["archive_path"]
    assert _ids(archive) == ids
    assert store.background_errors == []


def test_triggers_are_off_in_agent_controlled_mode_and_when_disabled(home: Path) -> None:
    home.mkdir(parents=True)
    for config in ('[memory]\nmode = "agent-controlled"\n', "[log]\nauto_compact = false\n"):
        (home / "config.toml").write_text(config)
        with Store(home, agent="finn") as s:
            for i in range(101):
                s.agent().log.append("THOUGHT", f"thought {i}")
            s.drain()
            assert s.agent().log.count() >= 101 and not s.layout.compactions("finn").exists()


def test_a_failing_trigger_never_fails_the_acknowledged_append(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*a: object) -> None:
        raise IndexError_("index unreadable")

    from memstrata.lifecycle import triggers

    monkeypatch.setattr(triggers, "compaction_due", broken)
    entry = store.agent("finn").log.append("THOUGHT", "still stored")
    assert _ids(store.agent("finn").log.path) == [entry.id]
    store.drain()
    assert [k for k, _ in store.background_errors] == ["log_appended"]


def test_a_failing_compaction_job_never_fails_the_acknowledged_append(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*a: object) -> None:
        raise IndexError_("index unreadable")

    from memstrata.lifecycle import triggers

    monkeypatch.setattr(triggers, "needs_compaction", broken)
    log = store.agent("finn").log
    entries = [log.append("THOUGHT", f"still stored {i}") for i in range(101)]
    assert _ids(log.path) == [e.id for e in entries]
    store.drain()  # the job (started by the 101st entry) runs after the acknowledgement
    assert [k for k, _ in store.background_errors] == ["compact_log_if_due"]


def test_auto_compaction_races_a_writer_in_another_process_and_loses_nothing(
    store: Store, tmp_path: Path
) -> None:
    """Both processes append past the limit; each may trigger compactions. Every acknowledged
    entry ends up exactly once in LOG.md or an archive."""
    stop = tmp_path / "stop"
    writer = subprocess.Popen(
        [
            sys.executable,
            str(Path(__file__).with_name("log_appender.py")),
            str(store.home),
            "finn",
            str(stop),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    log = store.agent("finn").log
    mine: list[str] = []
    try:
        assert writer.stdout is not None
        theirs = [writer.stdout.readline().strip() for _ in range(5)]  # the writer is running
        while not compaction_history(store, "finn") or len(theirs) < 150:
            mine.append(log.append("THOUGHT", f"mine {len(mine)}").id)
            theirs.append(writer.stdout.readline().strip())
            assert len(mine) < 5000
        stop.touch()
        # Read through the same buffered reader: communicate() would skip what it read ahead.
        out = writer.stdout.read()
        writer.wait(timeout=60)
    finally:
        stop.touch()
        if writer.poll() is None:
            writer.kill()
    store.drain()
    assert writer.returncode == 0
    theirs += [line for line in out.splitlines() if line]
    archives = sorted(store.layout.archive_dir("finn").glob("LOG-*.md"))
    summaries = _summaries(log.path).union(*(_summaries(a) for a in archives))
    counts = Counter(_ids(log.path) + [i for a in archives for i in _ids(a)])
    acked = mine + theirs
    assert [i for i in acked if counts[i] != 1] == []
    assert set(counts) - set(acked) == summaries  # nothing else appeared
    assert len(compaction_history(store, "finn")) >= 1
    store.sync()
    assert log.count() == len(_ids(log.path))


def test_seed002_compact_log_with_a_summary_is_honoured_at_any_size(store: Store) -> None:
    log = store.agent("finn").log
    for i in range(3):
        log.append("THOUGHT", f"t{i}")
    from memstrata import MemoryManager

    rec = MemoryManager("finn", store=store).compact_log("Three short thoughts.")
    assert rec.compacted and rec.entries_count == 3
    assert log.entries()[0].content.endswith("Three short thoughts.")


def _pytest_output(i: int) -> str:
    lines = [
        "============================= test session starts ==============================",
        f"collected 42 items (run {i})",
    ]
    lines += [
        f"tests/test_parser.py::test_case_{k} PASSED                            [{k}%]"
        for k in range(38)
    ]
    lines += [
        "=============================== warnings summary ===============================",
        "tests/test_parser.py::test_case_3: DeprecationWarning: never use imp, use importlib",
        "========================= 42 passed, 1 warning in 1.21s =========================",
    ]
    return "\n".join(lines)


def test_seed001_policy_summary_keeps_decision_and_constraint_drops_tool_output(
    store: Store,
) -> None:
    """200 tool outputs, one approved decision, one safety constraint: the summary keeps both,
    as bullets, first, and the tool output only as counts and outcomes."""
    store.config = dataclasses.replace(store.config, log_auto_compact=False)
    mem = store.agent("finn")
    mem.now.update(
        "Make the parser reject trailing commas",
        ["fix test_case_7"],
        blockers=["CI runner lacks Python 3.12"],
        phase="implementation",
    )
    for i in range(200):
        if i == 57:
            mem.log.append("THOUGHT", "Decision: keep the index in WAL mode (approved by the user)")
        if i == 120:
            mem.log.append("USER_FEEDBACK", "Safety constraint: never push to main without review")
        mem.log.append(
            "TOOL_USE", _pytest_output(i), {"tool": "pytest", "exit_code": 0 if i % 50 else 1}
        )
    rec = compaction_module.compact_log(store, "finn")
    lines = rec.summary.splitlines()
    assert all(line.startswith("- ") for line in lines), rec.summary
    assert lines[:6] == [
        "- Objective: Make the parser reject trailing commas",
        "- Phase: implementation",
        "- Blocker: CI runner lacks Python 3.12",
        "- Decision: keep the index in WAL mode (approved by the user)",
        "- Constraint: never push to main without review",
        "- Tool use: 200 call(s): pytest ×200 (4 error, 196 ok)",
    ]
    assert "PASSED" not in rec.summary and "test session starts" not in rec.summary
    assert "never use imp" not in rec.summary  # a tool's "warning" is output, not a constraint
    assert len(rec.summary) < 600
    # the same LOG gives the same summary (deterministic)
    assert compaction_module.digest(
        compaction_module.log_records(mem.log.entries()[1:])
    ) == compaction_module.digest(compaction_module.log_records(mem.log.entries()[1:]))


def test_seed001_decisions_survive_repeated_compactions(store: Store) -> None:
    store.config = dataclasses.replace(store.config, log_auto_compact=False)
    log = store.agent("finn").log
    log.append("THOUGHT", "We decided to ship the importer behind a flag")
    log.append("THOUGHT", "Blocked by the missing S3 credentials")
    for i in range(5):
        log.append("TOOL_USE", f"ls -la run {i}\n" + "x\n" * 50)
    compaction_module.compact_log(store, "finn", force=True)
    log.append("THOUGHT", "Resolved: the S3 credentials arrived, unblocked")
    log.append("THOUGHT", "Warning: the staging bucket is shared with billing")
    rec = compaction_module.compact_log(store, "finn", force=True)
    assert "- Decision: We decided to ship the importer behind a flag" in rec.summary
    assert "- Constraint: Warning: the staging bucket is shared with billing" in rec.summary
    assert "Blocker" not in rec.summary  # resolved later
    assert "- Earlier: 7 entries archived to" in rec.summary


def _small_thresholds(home: Path, extra: str = "") -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(
        "[sessions]\nflush_threshold = 60\ncompaction_threshold = 120\nkeep_recent = 2\n" + extra
    )


def test_seed004_flush_threshold_writes_durable_items_to_memory_md(home: Path) -> None:
    _small_thresholds(home)
    with Store(home, agent="finn") as s:
        s.agent().context.write(
            "# Agent Memory\n\n## User Preferences\n- Prefers concise answers\n"
        )
        sessions = s.agent().sessions
        sessions.append("s1", "user", "Decision: we ship the billing migration on Friday")
        sessions.append(
            "s1", "assistant", "Noted. I must not touch the payments table before then."
        )
        s.drain()
        assert "## Session Summaries" not in s.agent().context.read()  # under 60 tokens so far
        sessions.append("s1", "user", "Please also run the full regression suite " + "again " * 30)
        s.drain()
        memory = s.agent().context.read()
    assert memory.startswith("# Agent Memory\n\n## User Preferences\n- Prefers concise answers\n")
    assert "## Session Summaries\n\n### " in memory and "(session s1, memory flush)" in memory
    assert "- Decision: we ship the billing migration on Friday" in memory
    assert "- Constraint: I must not touch the payments table before then." in memory
    events = [json.loads(x) for x in (home / "events.jsonl").read_text().splitlines()]
    assert [e["payload"] for e in events if e["event"] == "memory:flush"] == [{"sessionId": "s1"}]


def test_seed004_compaction_threshold_compacts_the_transcript_after_flushing(home: Path) -> None:
    _small_thresholds(home)
    with Store(home, agent="finn") as s:
        sessions = s.agent().sessions
        sessions.append("s1", "user", "Decision: the API uses Fastify, not Express")
        for i in range(6):
            sessions.append("s1", "assistant", f"step {i} of the refactor " + "detail " * 12)
        s.drain()
        msgs = sessions.messages("s1")
        memory = s.agent().context.read()
    assert (
        msgs[0].role == "summary"
        and "Decision: the API uses Fastify, not Express" in msgs[0].content
    )
    assert "- Decision: the API uses Fastify, not Express" in memory
    names = [json.loads(x)["event"] for x in (home / "events.jsonl").read_text().splitlines()]
    flush_at = names.index("memory:flush")
    assert "memory:compact" in names[flush_at:]


def test_seed003_agent_controlled_mode_never_flushes_or_compacts(home: Path) -> None:
    _small_thresholds(home, '[memory]\nmode = "agent-controlled"\n')
    with Store(home, agent="finn") as s:
        for i in range(10):
            s.agent().sessions.append("s1", "user", f"Decision: number {i} " + "word " * 20)
        s.drain()
        assert not s.agent().context.exists()
        assert [m.role for m in s.agent().sessions.messages("s1")] == ["user"] * 10
