"""LOG.md compaction: trigger, archive, summary entry, history, events, races, failures."""

from __future__ import annotations

import dataclasses
import json
import random
import subprocess
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pytest
from lifecycle_stub_llm import StubLLM

from memstrata import MalformedInput, MemoryManager, NotFound, ProviderError, Store
from memstrata.files.jsonl import read_records
from memstrata.layers.log import parse_log
from memstrata.lifecycle import compact_log, compaction_history
from memstrata.llm.openai_compat import ChatClient, LLMSummarizer


def _ids(path: Path) -> list[str]:
    parsed = parse_log(path.read_bytes(), 0, str(path), owner="finn", final=True)
    return [d.meta["id"] for d in parsed.docs if d.meta]


def _archives(store: Store) -> list[Path]:
    return sorted(store.layout.archive_dir("finn").glob("LOG-*.md"))


def _fill(store: Store, n: int, size: int = 20) -> list[str]:
    log = store.agent("finn").log
    return [log.append("THOUGHT", f"thought {i} about parser " + "x" * size).id for i in range(n)]


def test_under_limits_nothing_changes(store: Store) -> None:
    _fill(store, 5)
    before = store.agent("finn").log.path.read_bytes()
    rec = compact_log(store, "finn")
    assert rec.compacted is False
    assert store.agent("finn").log.path.read_bytes() == before
    assert _archives(store) == []
    assert not store.layout.compactions("finn").exists()


def test_entry_limit_triggers_and_everything_is_kept(store: Store) -> None:
    # The explicit call is under test here; the automatic trigger is in test_lifecycle_triggers.
    store.config = dataclasses.replace(store.config, log_auto_compact=False)
    ids = _fill(store, store.config.log_compact_entries + 1)
    with store.events.capture() as seen:
        rec = compact_log(store, "finn")
    assert rec.compacted and rec.entries_count == len(ids)
    log_path = store.agent("finn").log.path
    entries = store.agent("finn").log.entries()
    assert len(entries) == 1
    first = entries[0]
    assert first.entry_type == "SYSTEM"
    assert first.metadata == {
        "archive_id": rec.archive_id,
        "entries": len(ids),
        "compacted": True,
        "archive": rec.archive_path,
    }
    assert rec.summary in first.content
    assert log_path.read_text().startswith("# LOG")
    [archive] = _archives(store)
    assert rec.archive_id in archive.name
    assert _ids(archive) == ids  # verbatim, in order
    assert rec.new_size_kb < rec.original_size_kb
    [hist] = compaction_history(store, "finn")
    assert {k: hist[k] for k in ("entries_count", "summary", "archive_id")} == {
        "entries_count": len(ids),
        "summary": rec.summary,
        "archive_id": rec.archive_id,
    }
    assert hist["original_size_kb"] > hist["new_size_kb"] > 0
    compact = [e for e in seen if e.name == "memory:compact"]
    assert len(compact) == 1
    assert compact[0].payload["before"] == len(ids) and compact[0].payload["after"] == 1
    assert compact[0].payload["sessionId"] is None


def test_byte_limit_triggers(home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(
        "[log]\ncompact_bytes = 2000\ncompact_entries = 1000\nauto_compact = false\n"
    )
    with Store(home, agent="finn") as s:
        _fill(s, 10, size=300)
        assert s.agent("finn").log.size() > 2000
        assert compact_log(s, "finn").compacted


def test_archive_stays_searchable_and_index_follows(store: Store) -> None:
    log = store.agent("finn").log
    old = log.append("TOOL_USE", "configured the zanzibar gateway on port 8443")
    _fill(store, 3)
    rec = compact_log(store, "finn", force=True, summary="Set up a gateway, thought a lot.")
    hits = store.search("zanzibar")
    assert [h.layer for h in hits] == ["archive"]
    assert hits[0].meta["id"] == old.id
    assert log.count() == 1 and log.tail(5)[0].entry_type == "SYSTEM"
    after = log.append("THOUGHT", "after compaction")
    assert [e.id for e in log.tail(5)][-1] == after.id
    store.reindex()
    assert log.count() == 2
    assert store.search("zanzibar gateway")[0].source.endswith(Path(rec.archive_path).name)


def test_repeated_compaction_chains_summaries(store: Store) -> None:
    first = _fill(store, 4)
    r1 = compact_log(store, "finn", force=True)
    second = _fill(store, 4)
    r2 = compact_log(store, "finn", force=True)
    assert r2.entries_count == 5  # previous summary + 4 new entries
    archives = _archives(store)
    assert len(archives) == 2
    all_ids = [i for a in archives for i in _ids(a)]
    assert set(first + second) <= set(all_ids)
    assert len(compaction_history(store, "finn")) == 2
    assert r1.archive_id != r2.archive_id


def test_automatic_compaction_keeps_every_entry_once_in_log_or_archives(store: Store) -> None:
    """LOG.md plus `archives` (the library's read of the archives) hold every entry ever
    appended exactly once, however many automatic compactions ran."""
    n = 2 * store.config.log_compact_entries + 50
    ids = []
    for part in (n // 2, n - n // 2):  # the check runs after the acks, in a background job
        ids += _fill(store, part)
        store.drain()
    mem = store.agent("finn")
    archives = mem.archives.list()
    assert len(archives) >= 2  # the automatic trigger ran
    assert [a.id for a in archives] == [r["archive_id"] for r in compaction_history(store, "finn")]
    every = [e.id for e in mem.archives.all_entries()] + [e.id for e in mem.log.entries()]
    found = Counter(every)
    assert all(found[i] == 1 for i in ids)
    assert len(every) == n + len(archives)  # and each compaction's summary entry, once
    with pytest.raises(MalformedInput):
        mem.archives.entries("../LOG")
    with pytest.raises(NotFound):
        mem.archives.get("arc-0000")


def test_manager_keeps_seed_signature(home: Path) -> None:
    with MemoryManager("finn", home) as m:
        for i in range(3):
            m.append_log("THOUGHT", f"step {i}")
        rec = m.compact_log("Three steps were taken.", force=True)
        assert rec.compacted and rec.summary == "Three steps were taken."
        assert m.read_log(5)[0]["metadata"]["compacted"] is True


def test_bad_summary_is_refused_and_log_unchanged(store: Store) -> None:
    _fill(store, 3)
    before = store.agent("finn").log.path.read_bytes()
    from memstrata.errors import EntryTooLarge, MalformedInput

    with pytest.raises(MalformedInput):
        compact_log(store, "finn", force=True, summary="   ")
    with pytest.raises(EntryTooLarge):
        compact_log(store, "finn", force=True, summary="x" * 100_000)
    assert store.agent("finn").log.path.read_bytes() == before
    assert _archives(store) == []


def _llm(stub: StubLLM, timeout: float = 2.0) -> LLMSummarizer:
    return LLMSummarizer(ChatClient(stub.base_url, "stub-model", timeout=timeout, max_retries=0))


@pytest.mark.parametrize("mode", ["garbage", "no_choices", "sleep"])
def test_llm_failure_leaves_memory_unchanged(store: Store, stub_llm: StubLLM, mode: str) -> None:
    _fill(store, 5)
    log_path = store.agent("finn").log.path
    before = log_path.read_bytes()
    stub_llm.mode, stub_llm.sleep = mode, 1.5
    with pytest.raises(ProviderError):
        compact_log(store, "finn", force=True, summarizer=_llm(stub_llm, timeout=0.3))
    assert log_path.read_bytes() == before
    assert _archives(store) == []
    assert not store.layout.compactions("finn").exists()
    assert stub_llm.requests  # the server really was asked


def test_llm_usage_is_recorded(store: Store, stub_llm: StubLLM) -> None:
    _fill(store, 5)
    stub_llm.reply = "The agent thought about the parser five times."
    rec = compact_log(store, "finn", force=True, summarizer=_llm(stub_llm))
    assert rec.summary == stub_llm.reply
    assert rec.usage == {
        "calls": 1,
        "prompt_tokens": 11,
        "completion_tokens": 7,
        "total_tokens": 18,
    }
    assert compaction_history(store, "finn")[0]["usage"]["calls"] == 1
    sent = stub_llm.requests[0]["messages"][-1]["content"]
    assert "thought 4 about parser" in sent


def test_llm_from_config(home: Path, stub_llm: StubLLM) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(f'[llm]\nsummarizer = "openai:m@{stub_llm.base_url}"\n')
    with Store(home, agent="finn") as s:
        _fill(s, 2)
        rec = compact_log(s, "finn", force=True)
    assert rec.summarizer == "LLMSummarizer" and rec.summary == "stub summary"


class WaitingSummarizer:
    """Returns only after the writer acknowledged `more` appends: those arrived while the
    compaction was under way (no sleep decides that, the writer's acks do)."""

    def __init__(self, writer: subprocess.Popen[str], more: int) -> None:
        self.writer, self.more = writer, more
        self.acked: list[str] = []
        self.calls = 0

    def summarize(self, texts: Sequence[str], *, max_chars: int) -> str:
        self.calls += 1
        assert self.writer.stdout is not None
        self.acked += [self.writer.stdout.readline().strip() for _ in range(self.more)]
        return f"{len(texts)} entries summarised while the writer kept going"


def test_concurrent_appends_survive_slow_compaction(store: Store, tmp_path: Path) -> None:
    """A real second process appends while the summariser waits: every acknowledged
    entry ends up exactly once in the new LOG.md or in the archive."""
    prefill = _fill(store, 40)
    # One explicit compaction is under test: the writer must not start its own
    # (tests/lifecycle/test_lifecycle_triggers.py races the automatic one).
    (store.home / "config.toml").write_text("[log]\nauto_compact = false\n")
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
    try:
        assert writer.stdout is not None
        acked = [writer.stdout.readline().strip() for _ in range(5)]  # writer is running
        summarizer = WaitingSummarizer(writer, 20)
        rec = compact_log(store, "finn", force=True, summarizer=summarizer)
        acked += summarizer.acked
        acked += [writer.stdout.readline().strip() for _ in range(5)]  # after the rewrite too
        stop.touch()
        # Through the same buffered reader: communicate(timeout=...) reads the raw pipe and
        # would miss acknowledgements readline() already buffered.
        out = writer.stdout.read()
        writer.wait(timeout=30)
    finally:
        stop.touch()
        if writer.poll() is None:
            writer.kill()
    acked += [line for line in out.splitlines() if line]
    assert writer.returncode == 0
    assert rec.compacted and rec.carried_over > 0  # entries really arrived mid-compaction
    log_ids = _ids(store.agent("finn").log.path)
    archive_ids = [i for a in _archives(store) for i in _ids(a)]
    counts = Counter(log_ids[1:] + archive_ids)
    expected = prefill + acked
    missing = [i for i in expected if counts[i] == 0]
    doubled = [i for i in expected if counts[i] > 1]
    assert not missing and not doubled
    assert set(counts) == set(expected)
    assert log_ids[0] != expected[0]  # the summary entry leads the new LOG
    meta = json.loads(json.dumps(store.agent("finn").log.entries()[0].metadata))
    assert meta["compacted"] is True and meta["entries"] == rec.entries_count
    assert rec.entries_count + rec.carried_over <= len(expected)
    # the index agrees with the files once caught up
    store.sync()
    assert store.agent("finn").log.count() == len(log_ids)
    assert [r["archive_id"] for _, r in read_records(store.layout.compactions("finn")).records] == [
        rec.archive_id
    ]


def test_scope_and_empty_log(store: Store, home: Path) -> None:
    assert compact_log(store, "finn", force=True).compacted is False  # no LOG.md yet
    with Store(home, agent="other") as other:
        other.agent().log.append("THOUGHT", "mine")
    from memstrata import ScopeDenied

    with pytest.raises(ScopeDenied):
        compact_log(store, "other", force=True)


COMPACTOR = """
import sys
from memstrata import Store
from memstrata.lifecycle import compact_log
s = Store(sys.argv[1], agent="finn")
while True:
    s.agent().log.append("THOUGHT", "churn " + "z" * 200)
    compact_log(s, "finn", force=True)
    print("compacted", flush=True)
"""


def test_sigkill_during_compaction_loses_nothing(store: Store) -> None:
    """A compactor killed at random points: every entry is still in LOG.md or an archive."""
    rng = random.Random(5)
    expected = set(_fill(store, 30))
    for _ in range(8):
        proc = subprocess.Popen(
            [sys.executable, "-c", COMPACTOR, str(store.home)], stdout=subprocess.PIPE, text=True
        )
        assert proc.stdout is not None
        for _ in range(rng.randint(1, 4)):  # killed after its n-th compaction, mid-way
            assert proc.stdout.readline() == "compacted\n"
        proc.kill()
        proc.wait()
        expected |= set(_fill(store, 3))
        ours = set(_ids(store.agent("finn").log.path))
        for a in _archives(store):
            ours |= set(_ids(a))
        assert expected <= ours
        assert not parse_log(
            store.agent("finn").log.path.read_bytes(), 0, "LOG.md", owner="finn", final=True
        ).bad
    assert _archives(store)  # compactions really happened


def test_a_failure_after_log_md_was_replaced_keeps_the_archive(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The compaction fails after the new LOG.md is in place (here: the folder's sync
    after the rename reports an I/O error): the archive then holds the only copy of the
    compacted entries, so it stays; every entry is in LOG.md or the archive."""
    _fill(store, 5)
    log_path = store.agent("finn").log.path
    wanted = sorted(e.content for e in store.agent("finn").log.entries())
    import memstrata.files.atomic as atomic

    real_fsync_dir = atomic.fsync_dir
    replaced: list[bytes] = []

    def failing_fsync_dir(folder: Path) -> None:
        if folder == log_path.parent and not replaced:
            replaced.append(log_path.read_bytes())  # LOG.md is the new one already
            raise OSError(5, "Input/output error")
        real_fsync_dir(folder)

    monkeypatch.setattr(atomic, "fsync_dir", failing_fsync_dir)
    with pytest.raises(OSError):
        compact_log(store, "finn", force=True)
    monkeypatch.undo()
    assert replaced and b"LOG compacted: 5 entries archived" in replaced[0]
    assert log_path.read_bytes() == replaced[0]
    kept = [e.content for e in store.agent("finn").log.entries()]
    kept += [e.content for e in store.agent("finn").archives.all_entries()]
    assert sorted(c for c in kept if not c.startswith("LOG compacted")) == wanted
