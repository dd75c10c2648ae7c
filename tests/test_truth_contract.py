"""One contract, two truths: the `files.truth` protocol and the layers above it behave the
same whether the truth is a folder of files or a PostgreSQL database (issue 14).

Part 1 checks the protocol itself (`truth` fixture: a `LocalTruth` or a `PostgresTruth`);
part 2 runs the layers (scope, supersede, purge, bounds included) on a `Store` opened on
either backend (`backend` fixture, see conftest). The full suites test_scope, test_supersede,
test_purge and test_bounds run on both backends too.
"""

from __future__ import annotations

import contextlib
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest

from memstrata import Store
from memstrata.assembly.timeline import timeline
from memstrata.errors import (
    AlreadyExists,
    AlreadySuperseded,
    EntryTooLarge,
    LockTimeout,
    NotFound,
    ScopeDenied,
    StaleWrite,
    SupersedeDenied,
)
from memstrata.files.local import LocalTruth
from memstrata.files.locks import LockTable
from memstrata.files.truth import MISSING, Truth

# -- part 1: the protocol ------------------------------------------------------------


@pytest.fixture(params=["local", "postgres"])
def truth(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Truth]:
    if request.param == "local":
        (tmp_path / "t").mkdir()  # a store's home always exists
        made: Truth = LocalTruth(tmp_path / "t", LockTable(tmp_path / "t" / ".locks"))
    else:
        from memstrata.files.postgres.truth import PostgresTruth

        made = PostgresTruth(request.getfixturevalue("pg_url"), retry_seconds=5)
    yield made
    made.close()


def test_append_reports_positions_and_read_from_returns_the_bytes(truth: Truth) -> None:
    a = truth.append("agents/finn/facts.jsonl", b'{"a": 1}\n')
    b = truth.append("agents/finn/facts.jsonl", b'{"b": 2}\n')
    assert (a.start, a.end, b.start, b.end) == (0, 9, 9, 18)
    assert truth.read_from("agents/finn/facts.jsonl") == b'{"a": 1}\n{"b": 2}\n'
    assert truth.read_from("agents/finn/facts.jsonl", 9) == b'{"b": 2}\n'
    assert truth.read_from("agents/finn/facts.jsonl", 6, 4) == b"1}\n{"
    assert truth.read_from("agents/finn/missing.jsonl") == b""
    assert a.generation == b.generation and a.version != b.version
    entry = truth.stat("agents/finn/facts.jsonl")
    assert entry is not None and entry.size == 18 and entry.version == b.version


def test_append_blank_line_and_an_unterminated_tail(truth: Truth) -> None:
    truth.rewrite("LOG.md", b"# LOG\n")
    first = truth.append("LOG.md", b"### entry\n", blank_line=True)
    assert first.repaired and first.start == 7
    truth.rewrite("x.jsonl", b'{"torn": ')
    fixed = truth.append("x.jsonl", b'{"ok": 1}\n')
    assert fixed.repaired and truth.read_from("x.jsonl") == b'{"torn": \n{"ok": 1}\n'


def test_rewrite_checks_the_version_and_changes_the_generation(truth: Truth) -> None:
    e1 = truth.rewrite("agents/finn/tasks.json", b"{}\n", expected=MISSING)
    with pytest.raises(StaleWrite):
        truth.rewrite("agents/finn/tasks.json", b"[]\n", expected=MISSING)
    found = truth.read("agents/finn/tasks.json")
    assert found is not None and found.data == b"{}\n" and found.entry.version == e1.version
    truth.append("agents/finn/tasks.json", b"\n")  # someone else wrote meanwhile
    with pytest.raises(StaleWrite):
        truth.rewrite("agents/finn/tasks.json", b"[]\n", expected=e1.version)
    now = truth.stat("agents/finn/tasks.json")
    assert now is not None
    e2 = truth.rewrite("agents/finn/tasks.json", b'{"tasks": []}\n', expected=now.version)
    assert e2.generation != e1.generation
    assert truth.read_from("agents/finn/tasks.json") == b'{"tasks": []}\n'


def test_list_folders_and_moves(truth: Truth) -> None:
    truth.rewrite("agents/finn/memory/notes/a.md", b"a\n")
    truth.rewrite("agents/finn/memory/b.md", b"bb\n")
    truth.rewrite("agents/bob/", b"")
    assert [e.path for e in truth.list("agents", recursive=False)] == ["agents/bob", "agents/finn"]
    listed = {e.path: e for e in truth.list("agents/finn/memory")}
    assert set(listed) == {
        "agents/finn/memory/b.md",
        "agents/finn/memory/notes",
        "agents/finn/memory/notes/a.md",
    }
    assert listed["agents/finn/memory/notes"].is_dir and listed["agents/finn/memory/b.md"].size == 3
    truth.move("agents/finn/memory/notes", "agents/finn/archive/deleted/1/notes")
    assert truth.stat("agents/finn/memory/notes/a.md") is None
    assert truth.read_from("agents/finn/archive/deleted/1/notes/a.md") == b"a\n"
    with pytest.raises(AlreadyExists):
        truth.move("agents/finn/memory/b.md", "agents/finn/archive/deleted/1/notes/a.md")
    with pytest.raises(NotFound):
        truth.move("agents/finn/memory/none.md", "agents/finn/x.md")
    truth.move("agents/finn/memory/b.md", None)
    assert truth.stat("agents/finn/memory/b.md") is None


def test_list_leaves_out_the_folders_skip_names(truth: Truth) -> None:
    truth.rewrite("agents/finn/memory/a.md", b"a\n")
    truth.rewrite("agents/finn/versions/x.1/log.jsonl", b"{}\n")
    truth.rewrite("agents/finn/versions-not/b.md", b"b\n")

    def skip(rel: str) -> bool:
        return rel == "agents/finn/versions"

    everything = {e.path for e in truth.list("")}
    assert "agents/finn/versions/x.1/log.jsonl" in everything
    assert {e.path for e in truth.list("", skip=skip)} == everything - {
        "agents/finn/versions",
        "agents/finn/versions/x.1",
        "agents/finn/versions/x.1/log.jsonl",
    }
    assert [e.path for e in truth.list("agents/finn", recursive=False, skip=skip)] == [
        "agents/finn/memory",
        "agents/finn/versions-not",
    ]


def test_lock_excludes_other_holders(truth: Truth, tmp_path: Path) -> None:
    held, release = threading.Event(), threading.Event()

    def holder() -> None:
        with truth.lock("ledger.jsonl"):
            held.set()
            release.wait(10)

    t = threading.Thread(target=holder)
    t.start()
    assert held.wait(10)
    with pytest.raises(LockTimeout), truth.lock("ledger.jsonl", timeout=0.2):
        pass
    release.set()
    t.join()
    with truth.lock("ledger.jsonl", timeout=5), truth.lock("ledger.jsonl"):
        pass  # re-entrant in one thread


APPENDER = """
import sys
from pathlib import Path
kind, where, path = sys.argv[1:4]
if kind == "local":
    from memstrata.files.local import LocalTruth
    from memstrata.files.locks import LockTable
    truth = LocalTruth(Path(where), LockTable(Path(where) / ".locks"))
else:
    from memstrata.files.postgres.truth import PostgresTruth
    truth = PostgresTruth(where, retry_seconds=5)
print("appending", flush=True)
done = truth.append(path, b"from the other process\\n")
print(f"appended {done.start}", flush=True)
truth.close()
"""


def _lines(stream: IO[str]) -> queue.Queue[str]:
    got: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [got.put(x.strip()) for x in stream], daemon=True).start()
    return got


def _waiting_on_advisory_lock(url: str) -> bool:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        return bool(
            conn.execute(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
            ).fetchone()[0]
        )


def test_lock_keeps_appends_of_another_process_out(truth: Truth) -> None:
    """What compaction and purge rely on: while one process holds lock(p), another
    process's append(p) waits, so a read-modify-rewrite under the lock loses nothing."""
    path = "agents/finn/memory/LOG.md"
    truth.append(path, b"first\n")
    where = str(truth.root) if isinstance(truth, LocalTruth) else truth.url  # type: ignore[attr-defined]
    args = ["local" if isinstance(truth, LocalTruth) else "postgres", where]
    with truth.lock(path):
        child = subprocess.Popen(
            [sys.executable, "-c", APPENDER, *args, path], stdout=subprocess.PIPE, text=True
        )
        assert child.stdout is not None
        said = _lines(child.stdout)
        assert said.get(timeout=60) == "appending"
        if args[0] == "postgres":  # proof that it waits: its session queues on the lock
            deadline = time.monotonic() + 60
            while not _waiting_on_advisory_lock(args[1]):
                assert said.empty(), f"the append went through under the lock: {said.get()}"
                assert time.monotonic() < deadline, "the other process never waited"
                time.sleep(0.02)
        else:  # flock is polled: give the other process a moment to get in if it could
            with contextlib.suppress(queue.Empty):
                pytest.fail(f"the append went through under the lock: {said.get(timeout=1)}")
        assert said.empty()
        found = truth.read(path)
        assert found is not None and found.data == b"first\n"
        truth.rewrite(path, b"first\nrewritten under the lock\n", expected=found.entry.version)
        truth.append(path, b"by the holder\n")  # re-entrant: the holder's own appends go on
    assert child.wait(timeout=60) == 0
    landed = said.get(timeout=10)
    body = b"first\nrewritten under the lock\nby the holder\n"
    assert landed == f"appended {len(body)}"
    assert truth.read_from(path) == body + b"from the other process\n"


def test_watch_reports_changed_paths(truth: Truth) -> None:
    stop = threading.Event()
    seen: list[set[str] | None] = []
    ready = threading.Event()

    def run() -> None:
        for batch in truth.watch().changes(stop):
            seen.append(batch)
            ready.set()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    assert ready.wait(10)
    target = "rooms/r1/channel.jsonl"
    truth.append(target, b"{}\n")

    def reported(batch: set[str] | None) -> bool:
        # the path, or a new folder above it (inotify may see only the folder: the
        # store then catches up everything), or None (rescan everything)
        return batch is None or any(p == target or target.startswith(f"{p}/") for p in batch)

    deadline = time.monotonic() + 60  # a loaded machine: a watcher's thread runs late
    while not any(reported(b) for b in seen):
        assert time.monotonic() < deadline, seen
        time.sleep(0.01)
    stop.set()
    t.join(5)


def test_postgres_append_retry_with_the_same_record_id_is_not_a_duplicate(pg_url: str) -> None:
    from memstrata.files.postgres.truth import PostgresTruth

    truth = PostgresTruth(pg_url, retry_seconds=5)
    first = truth.append("ledger.jsonl", b'{"id": "mem-1"}\n', record_id="rid-1")
    again = truth.append("ledger.jsonl", b'{"id": "mem-1"}\n', record_id="rid-1")
    assert (again.start, again.end) == (first.start, first.end)
    assert truth.read_from("ledger.jsonl") == b'{"id": "mem-1"}\n'
    assert truth.migrations() == ["001_truth", "002_feed"]
    truth.close()


# -- part 2: the layers over either truth ---------------------------------------------


def test_layers_round_trip_and_search(backend: str, home: Path) -> None:
    with Store(home, agent="finn", room="room-1") as s:
        mem = s.agent()
        mem.now.update("Ship the auth service", ["write tests"])
        mem.log.append("THOUGHT", "bcrypt work factor twelve is enough")
        mem.facts.set("preferred_currency", "USD", "preference")
        mem.files.write("notes/plan.md", "# Plan\n\nmigrate the zebra database\n")
        mem.tasks.add("Implement session locking")
        mem.sessions.append("s1", "user", "what about the quokka cache?")
        entry = s.ledger.publish("decision", "Chose bcrypt over argon2", tags=["auth"])
        s.room().post("review the pelican endpoint")
        assert mem.now.state().objective == "Ship the auth service"
        assert [e.content for e in mem.log.tail(5)] == ["bcrypt work factor twelve is enough"]
        assert mem.facts.get("preferred_currency").value == "USD"
        mem.facts.set("preferred_currency", "EUR", "preference")  # the timeline reads the
        # facts journal backwards through the truth: the history, newest first
        assert [
            (i.kind, i.text.split("\n")[0]) for i in timeline(s, "finn", types=("fact",)).items
        ] == [("set", "EUR"), ("set", "USD")]
        mem.facts.set("preferred_currency", "USD", "preference")
        assert mem.files.read("notes/plan.md").startswith("# Plan")
        assert [t.id for t in mem.tasks.list()] == ["TASK-001"]
        assert s.ledger.get(entry.id).summary == "Chose bcrypt over argon2"
        for word, layer in (
            ("zebra", "file"),
            ("pelican", "channel"),
            ("bcrypt", "ledger"),
            ("twelve", "log"),
        ):
            assert layer in {h.layer for h in s.search(word)}, word
        # transcripts are searched on request (seed 004: `sessions` scope is opt-in)
        assert "session" in {h.layer for h in s.search("quokka", layers=("sessions",))}
        if backend == "postgres":
            assert not (home / "agents").exists(), "the truth is in PostgreSQL, not the folder"
    with Store(home, agent="finn", room="room-1") as again:  # another process's view
        assert again.agent().facts.get("preferred_currency").value == "USD"
        assert [h.layer for h in again.search("argon2")] == ["ledger"]


def test_verify_reads_memory_files_through_the_truth(
    backend: str, home: Path, tmp_path: Path
) -> None:
    code = tmp_path / "code"
    (code / "src").mkdir(parents=True)
    (code / "src" / "store.py").write_text("def open_store():\n    pass\n")
    with Store(home, agent="finn") as s:
        s.agent().files.write("notes.md", "The cache lives in src/cache.py.\n")
        from memstrata.lifecycle import verify_citations

        got = {(f.ref, f.problem) for f in verify_citations(s, "finn", code)}
    assert ("src/cache.py", "missing") in got


def test_scope_is_enforced_by_the_gate(backend: str, home: Path) -> None:
    with Store(home, agent="alice") as a:
        a.agent().facts.set("launch_plan", "alice only", "project", citations=["plan.md"])
        a.agent().now.update("alice works", [])
        assert {h.owner for h in a.search("alice")} == {"alice"}  # there to be found
        assert a.agent().facts.get("launch_plan").value == "alice only"
    with Store(home, agent="bob") as b:
        with pytest.raises(ScopeDenied):
            b.agent("alice").facts.get("launch_plan")
        assert all(h.owner != "alice" for h in b.search("alice"))


def test_supersede_rules(backend: str, home: Path) -> None:
    with (
        Store(home, agent="arch", room="room-1") as s1,
        Store(home, agent="dev", room="room-2") as s2,
    ):
        old = s1.ledger.publish("decision", "Use MySQL")
        with pytest.raises(SupersedeDenied):
            s2.ledger.publish("decision", "Use SQLite", supersedes=old.id)
        new = s1.ledger.publish("decision", "Use PostgreSQL", supersedes=old.id)
        with pytest.raises(AlreadySuperseded):
            s1.ledger.publish("decision", "Use Oracle", supersedes=old.id)
        assert [e.id for e in s2.ledger.query()] == [new.id]
        assert s2.ledger.is_superseded(old.id)


def test_purge_is_gone_from_the_truth_and_the_index(
    backend: str, home: Path, tmp_path: Path
) -> None:
    from memstrata.operations.purge import purge_fact
    from memstrata.operations.transfer import export_store

    with Store(home, agent="finn") as s:
        s.agent().facts.set("api_note", "the walrus password is hunter2", "general")
        s.agent().facts.set("keep", "kept value", "general")
        purge_fact(s, "api_note", reason="pasted by mistake")
        assert b"walrus" not in s.engine.truth.read_from("agents/finn/facts.jsonl")
        assert s.search("walrus") == []
        with pytest.raises(NotFound):
            s.agent().facts.get("api_note")
    with Store(home, role="admin") as admin:
        export_store(admin, tmp_path / "out")
    exported = b"".join(p.read_bytes() for p in (tmp_path / "out").rglob("*") if p.is_file())
    assert b"walrus" not in exported and b"kept value" in exported


def test_bounds_refuse_before_writing(backend: str, home: Path) -> None:
    with Store(home, agent="finn") as s:
        with pytest.raises(EntryTooLarge):
            s.ledger.publish("decision", "x" * 5000)
        with pytest.raises(EntryTooLarge):
            s.ledger.publish("decision", "ok", tags=[f"t{i}" for i in range(100)])
        assert s.engine.truth.stat("ledger.jsonl") is None


def test_memory_files_and_compaction(backend: str, home: Path) -> None:
    from memstrata.lifecycle.compaction import compact_log

    with Store(home, agent="finn") as s:
        files = s.agent().files
        files.write("a.md", "alpha\n")
        files.replace("a.md", "alpha", "beta")
        files.insert("a.md", 0, "top")
        files.rename("a.md", "sub/b.md")
        assert files.read("sub/b.md") == "top\nbeta\n"
        assert [f.path for f in files.list()] == ["LOG.md", "sub", "sub/b.md"] or [
            f.path for f in files.list()
        ] == ["sub", "sub/b.md"]
        archived = files.delete("sub/b.md")
        assert archived.startswith("agents/finn/archive/deleted/")
        for i in range(5):
            s.agent().log.append("TOOL_USE", f"step {i} of the ostrich job")
        record = compact_log(s, "finn", force=True)
        assert record.compacted and record.entries_count == 5
        assert any(h.layer == "archive" for h in s.search("ostrich"))
        assert len(s.agent().log.entries()) == 1
        # The archives, listed and read back through the truth (not the folder).
        archives = s.agent().archives
        assert [(a.id, a.path) for a in archives.list()] == [
            (record.archive_id, record.archive_path)
        ]
        five = [f"step {i} of the ostrich job" for i in range(5)]
        assert [e.content for e in archives.entries(record.archive_id)] == five
        for i in range(3):
            s.agent().log.append("THOUGHT", f"later {i}")
        second = compact_log(s, "finn", force=True)  # within the same second, most likely
        assert [a.id for a in archives.list()] == [record.archive_id, second.archive_id]
        summary = s.agent().archives.entries(second.archive_id)[0]
        assert (
            summary.entry_type == "SYSTEM" and summary.metadata["archive_id"] == record.archive_id
        )
        assert [e.content for e in archives.all_entries()] == [
            *five,
            summary.content,
            "later 0",
            "later 1",
            "later 2",
        ]
        with pytest.raises(NotFound):
            archives.entries("arc-00000000")


def test_doctor_compares_this_hosts_index_with_the_truth(
    backend: str, tmp_path: Path, home: Path
) -> None:
    from memstrata.operations.doctor import examine

    if backend == "local":
        pytest.skip("one folder is one host: there is no other host's write to lag behind")
    with Store(home, agent="finn", watch=False) as s:
        s.ledger.publish("decision", "first")
    with Store(tmp_path / "other-host", agent="finn", watch=False) as other:
        other.ledger.publish("decision", "written on another host")
    with Store(home, role="admin", sync=False, watch=False) as s:  # not caught up yet
        found = examine(s)
        problems = {d["problem"] for d in found.drift if d["source"] == "ledger.jsonl"}
        assert problems == {"docs differ", "behind the truth"}
        s.sync()
        assert examine(s).index_ok


class _HandEditDuringSummary:
    """A summariser during whose call someone rewrites the source being compacted."""

    def __init__(self, store: Store, rel: str, data: bytes) -> None:
        self.store, self.rel, self.data = store, rel, data

    def summarize(self, texts: list[str], *, max_chars: int) -> str:
        self.store.engine.truth.rewrite(self.rel, self.data)
        return "a summary nobody will keep"


def test_a_failed_compaction_leaves_no_archive_behind(backend: str, home: Path) -> None:
    """The splice refuses (the LOG was rewritten meanwhile): the entries stay in LOG.md
    only, not also in an orphan archive (stored twice, found twice by search)."""
    from memstrata.lifecycle.compaction import compact_log, compaction_history
    from memstrata.lifecycle.session_compaction import compact_session

    with Store(home, agent="finn") as s:
        log = s.agent().log
        for i in range(5):
            log.append("THOUGHT", f"step {i} of the pangolin job")
        edited = s.engine.truth.read_from(log.rel).replace(b"step 0 of", b"step zero of")
        with pytest.raises(StaleWrite):
            compact_log(
                s, "finn", force=True, summarizer=_HandEditDuringSummary(s, log.rel, edited)
            )
        assert s.engine.truth.read_from(log.rel) == edited
        assert [e.path for e in s.engine.truth.list("agents/finn/archive") if not e.is_dir] == []
        assert compaction_history(s, "finn") == []
        assert {h.layer for h in s.search("pangolin")} == {"log"}
        sessions = s.agent().sessions
        for i in range(4):
            sessions.append("s1", "user", f"message {i} about the armadillo")
        rel = s.rel(sessions._spec("s1").path)
        with pytest.raises(StaleWrite):
            compact_session(
                s, "finn", "s1", keep_recent=1, summarizer=_HandEditDuringSummary(s, rel, b"")
            )
        assert [e.path for e in s.engine.truth.list("agents/finn/archive") if not e.is_dir] == []
