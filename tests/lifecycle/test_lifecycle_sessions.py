"""Session compaction (keep recent N + summary, flush first), tool-result pruning, retention."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from lifecycle_stub_llm import StubLLM

from memstrata import MalformedInput, NotFound, ProviderError, Store
from memstrata.files.jsonl import read_records
from memstrata.lifecycle import (
    archive_old_sessions,
    compact_session,
    context_view,
    session_context_view,
)
from memstrata.llm.openai_compat import ChatClient, LLMSummarizer
from memstrata.model import SessionMessage, iso


def _talk(store: Store, sid: str, n: int) -> list[str]:
    s = store.agent("finn").sessions
    ids = []
    for i in range(n):
        role = "user" if i % 2 == 0 else "assistant"
        ids.append(s.append(sid, role, f"message {i} about the billing migration").id)
    return ids


def test_keeps_recent_n_plus_summary_and_archives_original(store: Store) -> None:
    ids = _talk(store, "s1", 14)
    path = store.layout.session("finn", "s1")
    original = path.read_bytes()
    with store.events.capture() as seen:
        res = compact_session(store, "finn", "s1", keep_recent=4)
    assert res.compacted and res.summarized == 10 and res.kept == 4
    msgs = store.agent("finn").sessions.messages("s1")
    assert [m.role for m in msgs] == ["summary", "user", "assistant", "user", "assistant"]
    assert [m.id for m in msgs[1:]] == ids[-4:]
    assert "billing migration" in msgs[0].content
    archived = store.home / res.archive_path
    assert archived.read_bytes() == original  # the full transcript, byte for byte
    assert archived.parent == store.layout.archive_dir("finn") / "sessions"
    # flush happened before compaction, then compact
    names = [e.name for e in seen if e.name in ("memory:flush", "memory:compact")]
    assert names == ["memory:flush", "memory:compact"]
    flush = next(e for e in seen if e.name == "memory:flush")
    compact = next(e for e in seen if e.name == "memory:compact")
    assert flush.payload == {"sessionId": "s1"}
    assert (compact.payload["sessionId"], compact.payload["before"], compact.payload["after"]) == (
        "s1",
        14,
        5,
    )
    note = store.agent("finn").log.entries()[-1]
    assert note.entry_type == "SYSTEM" and note.metadata["sessionId"] == "s1"
    assert "message 9 about" in note.content  # the last message before the cut


def test_default_keep_recent_from_config(store: Store) -> None:
    _talk(store, "s2", store.config.session_keep_recent + 3)
    res = compact_session(store, "finn", "s2")
    assert res.kept == store.config.session_keep_recent == 10
    assert len(store.agent("finn").sessions.messages("s2")) == 11


def test_short_session_is_left_alone(store: Store) -> None:
    _talk(store, "s3", 3)
    path = store.layout.session("finn", "s3")
    before = path.read_bytes()
    with store.events.capture() as seen:
        res = compact_session(store, "finn", "s3", keep_recent=5)
    assert not res.compacted and path.read_bytes() == before
    assert not [e for e in seen if e.name.startswith("memory:f")]


def test_bad_input_is_typed(store: Store) -> None:
    _talk(store, "s4", 4)
    with pytest.raises(NotFound):
        compact_session(store, "finn", "nope")
    with pytest.raises(MalformedInput):
        compact_session(store, "finn", "../etc")
    with pytest.raises(MalformedInput):
        compact_session(store, "finn", "s4", keep_recent=-1)


def test_llm_failure_changes_nothing(store: Store, stub_llm: StubLLM) -> None:
    _talk(store, "s5", 8)
    path = store.layout.session("finn", "s5")
    before, log_before = path.read_bytes(), store.agent("finn").log.size()
    stub_llm.mode = "garbage"
    bad = LLMSummarizer(ChatClient(stub_llm.base_url, "m", timeout=1, max_retries=0))
    with store.events.capture() as seen, pytest.raises(ProviderError):
        compact_session(store, "finn", "s5", keep_recent=2, summarizer=bad)
    assert path.read_bytes() == before
    assert store.agent("finn").log.size() == log_before
    assert not (store.layout.archive_dir("finn") / "sessions").exists()
    assert not [e for e in seen if e.name in ("memory:flush", "memory:compact")]


def test_llm_summary_and_usage(store: Store, stub_llm: StubLLM) -> None:
    _talk(store, "s6", 6)
    stub_llm.reply = "User and assistant planned the billing migration."
    llm = LLMSummarizer(ChatClient(stub_llm.base_url, "m", max_retries=0))
    res = compact_session(store, "finn", "s6", keep_recent=2, summarizer=llm)
    assert res.summary == stub_llm.reply and res.usage is not None and res.usage["calls"] == 1


def _mixed() -> list[SessionMessage]:
    out = []
    for i in range(8):
        out.append(
            SessionMessage(
                f"c{i}",
                "tool_call",
                "",
                "2026-01-01T00:00:00Z",
                name="read",
                input={"path": f"f{i}.py"},
            )
        )
        out.append(
            SessionMessage(
                f"r{i}", "tool_result", f"contents of f{i}.py " * 20, "2026-01-01T00:00:01Z"
            )
        )
    return out


def test_context_view_prunes_old_tool_results_only() -> None:
    msgs = _mixed()
    view = context_view(msgs, keep_tool_results=3)
    results = [m for m in view if m.role == "tool_result"]
    assert [m.content.startswith("[tool result pruned") for m in results] == [True] * 5 + [
        False
    ] * 3
    assert [m.content for m in view if m.role == "tool_call"] == [
        m.content for m in msgs if m.role == "tool_call"
    ]
    assert [m.id for m in view] == [m.id for m in msgs]
    assert msgs[1].content.startswith("contents of f0")  # inputs untouched
    assert context_view(msgs, keep_tool_results=100) == msgs
    dicts = [m.to_dict() for m in msgs]
    dview = context_view(dicts, keep_tool_results=0)
    assert all(d["pruned"] for d in dview if d["role"] == "tool_result")
    assert "pruned" not in dicts[1]
    with pytest.raises(MalformedInput):
        context_view(msgs, keep_tool_results=-2)


def test_session_context_view_leaves_transcript_alone(store: Store) -> None:
    s = store.agent("finn").sessions
    for i in range(7):
        s.append("t1", "tool_call", "", name="grep", input={"q": str(i)})
        s.append("t1", "tool_result", f"result number {i}")
    path = store.layout.session("finn", "t1")
    before = path.read_bytes()
    view = session_context_view(store, "finn", "t1")
    kept = [m.content for m in view if m.role == "tool_result" and "pruned" not in m.content]
    assert kept == [f"result number {i}" for i in range(2, 7)]  # default retention 5
    assert path.read_bytes() == before


def test_retention_archives_idle_sessions(store: Store) -> None:
    s = store.agent("finn").sessions
    old_ts = iso(time.time() - 40 * 86400)
    s.append("old", "user", "ancient question about invoices", timestamp=old_ts)
    s.append("new", "user", "fresh question")
    now = time.time()
    assert store.search("invoices", layers=("sessions",))  # transcripts: opt-in
    moved = archive_old_sessions(store, "finn", now=now)
    assert [m.id for m in moved] == ["old"]
    assert not store.layout.session("finn", "old").exists()
    archived = store.home / moved[0].archive_path
    assert [r["content"] for _, r in read_records(archived).records] == [
        "ancient question about invoices"
    ]
    index = json.loads(store.layout.session_index("finn").read_text())
    row = next(r for r in index["sessions"] if r["id"] == "old")
    assert row["archived"] is True and row["archive"] == moved[0].archive_path
    assert [x.id for x in s.list()] == ["new"]
    assert {x.id for x in s.list(include_archived=True)} == {"old", "new"}
    assert not [h for h in store.search("invoices", layers=("sessions",)) if h.layer == "session"]
    assert archive_old_sessions(store, "finn", now=now) == []  # idempotent


def test_retention_respects_config(home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text("[sessions]\nretention_days = 45\n")
    with Store(home, agent="finn") as s:
        s.agent("finn").sessions.append(
            "old", "user", "hi", timestamp=iso(time.time() - 40 * 86400)
        )
        assert archive_old_sessions(s, "finn", now=time.time()) == []
        with pytest.raises(MalformedInput):
            archive_old_sessions(s, "finn", retention_days=-1)


class _Waiting:
    """Returns once the writer acknowledged `more` messages: they arrived mid-compaction."""

    def __init__(self, writer: subprocess.Popen[str], more: int) -> None:
        self.writer, self.more = writer, more
        self.acked: list[str] = []

    def summarize(self, texts: Sequence[str], *, max_chars: int) -> str:
        assert self.writer.stdout is not None
        self.acked += [self.writer.stdout.readline().strip() for _ in range(self.more)]
        return f"{len(texts)} messages"


def test_messages_appended_during_compaction_are_kept(store: Store, tmp_path: Path) -> None:
    before = _talk(store, "live", 12)
    stop = tmp_path / "stop"
    writer = subprocess.Popen(
        [
            sys.executable,
            str(Path(__file__).with_name("log_appender.py")),
            str(store.home),
            "finn",
            str(stop),
            "live",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert writer.stdout is not None
        acked = [writer.stdout.readline().strip() for _ in range(3)]
        waiting = _Waiting(writer, 10)
        res = compact_session(store, "finn", "live", keep_recent=3, summarizer=waiting)
        acked += waiting.acked
        stop.touch()
        # Through the same buffered reader: communicate(timeout=...) reads the raw pipe and
        # would miss acknowledgements readline() already buffered.
        out = writer.stdout.read()
        writer.wait(timeout=30)
    finally:
        stop.touch()
        if writer.poll() is None:
            writer.kill()
    acked += [x for x in out.splitlines() if x]
    assert res.carried_over > 0
    live = [m.id for m in store.agent("finn").sessions.messages("live")]
    archived = [r["id"] for _, r in read_records(store.home / res.archive_path).records]
    assert (
        live[0] != before[0] and store.agent("finn").sessions.messages("live")[0].role == "summary"
    )
    for mid in before + acked:
        assert mid in live or mid in archived
    # An acked message the snapshot caught may be summarised (then it is only in the archive,
    # which holds the whole snapshot); none is ever twice in the transcript, and every one
    # that arrived after the snapshot is in it.
    assert all(live.count(m) <= 1 for m in acked)
    assert set(acked) - set(archived) <= set(live)


def test_a_failure_after_the_transcript_was_replaced_keeps_the_archive(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The compaction fails after the new transcript is in place (the folder's sync after
    the rename reports an I/O error): the archive holds the only full copy, so it stays."""
    ids = _talk(store, "s1", 14)
    path = store.layout.session("finn", "s1")
    original = path.read_bytes()
    import memstrata.files.atomic as atomic

    real_fsync_dir = atomic.fsync_dir
    replaced: list[bytes] = []

    def failing_fsync_dir(folder: Path) -> None:
        if folder == path.parent and path.read_bytes() != original and not replaced:
            replaced.append(path.read_bytes())  # the transcript is the new one already
            raise OSError(5, "Input/output error")
        real_fsync_dir(folder)

    monkeypatch.setattr(atomic, "fsync_dir", failing_fsync_dir)
    with pytest.raises(OSError):
        compact_session(store, "finn", "s1", keep_recent=4)
    monkeypatch.undo()
    assert replaced and path.read_bytes() == replaced[0]
    archives = sorted((store.layout.archive_dir("finn") / "sessions").glob("s1-*.jsonl"))
    assert [a.read_bytes() for a in archives] == [original]
    kept = {r.get("id") for _, r in read_records(path).records}
    assert set(ids) <= kept | {r.get("id") for _, r in read_records(archives[0]).records}
