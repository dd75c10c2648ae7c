"""Real processes, real kills: nothing acknowledged is ever lost, the index agrees."""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from memstrata import Store
from memstrata.files.jsonl import read_records
from memstrata.layers.log import parse_log

WORKER = str(Path(__file__).with_name("workers.py"))
CRASH_ROUNDS = int(
    os.environ.get("MEMSTRATA_CRASH_ROUNDS", "200" if os.environ.get("MEMSTRATA_SLOW") else "30")
)


def _spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, WORKER, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _file_ids(path: Path) -> list[str]:
    return [r["id"] for _, r in read_records(path).records]


def _log_ids(path: Path) -> list[str]:
    data = path.read_bytes() if path.exists() else b""
    return [
        d.meta["id"] for d in parse_log(data, 0, str(path), owner=None, final=True).docs if d.meta
    ]


def _log_and_archive_ids(store: Store, agent: str) -> list[str]:
    """Every entry id written to `agent`'s LOG.md that is still there or in a compaction
    archive (LOG.md compacts itself past 100 entries), compaction summaries left out."""
    paths = [store.layout.log_file(agent), *store.layout.archive_dir(agent).glob("LOG-*.md")]
    ids = []
    for path in (p for p in paths if p.exists()):
        for d in parse_log(path.read_bytes(), 0, str(path), owner=None, final=True).docs:
            if d.meta and not d.meta["metadata"].get("compacted"):
                ids.append(d.meta["id"])
    return ids


def _index_count(store: Store, where: str, *params: object) -> int:
    with store.db.read() as conn:
        return int(conn.execute(f"SELECT count(*) FROM docs WHERE {where}", params).fetchone()[0])


@pytest.mark.timeout(600)  # 8 x 1000 real appends: minutes on a loaded 2-core machine
def test_eight_processes_appending_at_once(home: Path) -> None:
    # 8 x 200 in the default run (about 15 s on 2 cores); 8 x 500 with MEMSTRATA_SLOW=1.
    n, procs = (500 if os.environ.get("MEMSTRATA_SLOW") else 200), 8
    workers = [_spawn("append", str(home), "shared", f"room-{i}", str(n)) for i in range(procs)]
    acked: dict[str, list[str]] = {"ledger": [], "log": []}
    for w in workers:
        out, err = w.communicate(timeout=300)
        assert w.returncode == 0, err
        for line in out.splitlines():
            kind, ident = line.split()
            acked[kind].append(ident)
    assert len(acked["ledger"]) == len(acked["log"]) == n * procs
    store = Store(home, agent="shared")
    ledger_ids = _file_ids(store.layout.ledger)
    log_ids = _log_and_archive_ids(store, "shared")
    # every entry exactly once, nothing torn (the automatic compactions included)
    assert sorted(ledger_ids) == sorted(acked["ledger"])
    assert sorted(log_ids) == sorted(acked["log"])
    assert read_records(store.layout.ledger).bad == []
    assert _index_count(store, "layer = 'ledger'") == n * procs
    assert _index_count(store, "layer = 'log' AND owner = 'shared'") == len(
        _log_ids(store.layout.log_file("shared"))
    )
    store.close()


class _Forked:
    """A writer forked by `_ForkServer`: its own process, with the parts of a
    `subprocess.Popen` a crash round uses."""

    def __init__(self, server: _ForkServer, pid: int, out: int, err: int) -> None:
        self.server, self.pid = server, pid
        self.stdout = open(out, encoding="utf-8")  # noqa: SIM115 (closed by communicate)
        self.stderr = open(err, encoding="utf-8")  # noqa: SIM115
        self.returncode: int | None = None

    def send_signal(self, sig: int) -> None:
        os.kill(self.pid, sig)

    def communicate(self, timeout: float | None = None) -> tuple[str, str]:
        """The rest of its output (to the end: it died) and its exit status."""
        with self.stdout, self.stderr:
            out, err = self.stdout.read(), self.stderr.read()
        self.returncode = self.server.wait(self.pid)
        return out, err


class _ForkServer:
    """`workers.py forks`: writers forked from one process that imported memstrata,
    instead of a new interpreter each (its import cost more CPU than a round's writes)."""

    def __init__(self) -> None:
        self.sock, theirs = socket.socketpair()
        with theirs:
            self.proc = subprocess.Popen(
                [sys.executable, WORKER, "forks", str(theirs.fileno())],
                pass_fds=(theirs.fileno(),),
            )

    def spawn(self, *args: str) -> _Forked:
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        try:
            socket.send_fds(self.sock, [" ".join(args).encode()], [out_w, err_w])
        finally:
            os.close(out_w)
            os.close(err_w)
        kind, pid = self.sock.recv(64).decode().split()
        assert kind == "pid", kind
        return _Forked(self, int(pid), out_r, err_r)

    def wait(self, pid: int) -> int:
        self.sock.sendall(f"wait {pid}".encode())
        kind, status = self.sock.recv(64).decode().split()
        assert kind == "exit", kind
        return int(status)

    def close(self) -> None:
        self.sock.close()  # the server kills any writer still running, and ends
        self.proc.wait(60)


def _crash_round(home: Path, rng: random.Random, forks: _ForkServer) -> dict[str, set[str]]:
    """Three writers, each SIGKILLed after a random number (4..40) of its own
    acknowledgements: no sleep decides when, so a slow machine only runs slower."""
    agents = ["a1", "a2", "a3"]
    procs = [forks.spawn("crash", str(home), a, f"room-{a}") for a in agents]
    acked: dict[str, set[str]] = {}

    def record(agent: str, line: str) -> None:
        if line.endswith("\n") and " " in line:  # a whole line: the ack was printed
            kind, ident = line.strip().split(" ", 1)
            acked.setdefault(f"{kind}:{agent}" if kind != "ledger" else "ledger", set()).add(ident)

    for a, p in zip(agents, procs, strict=True):
        assert p.stdout is not None
        for _ in range(rng.randint(4, 40)):
            line = p.stdout.readline()
            if not line:
                break  # the writer died on its own: its stderr says why, below
            record(a, line)
        p.send_signal(signal.SIGKILL)
    for a, p in zip(agents, procs, strict=True):
        out, err = p.communicate(timeout=60)
        assert p.returncode == -signal.SIGKILL, err
        for line in out.splitlines(keepends=True):
            record(a, line)  # acknowledged between our last read and the kill
    return acked


@pytest.mark.slow
@pytest.mark.timeout(900)  # 90 writer processes and their kills; a loaded machine is slower
def test_sigkill_rounds_lose_nothing_acknowledged(
    home: Path, request: pytest.FixtureRequest
) -> None:
    rng = random.Random(1234)
    all_acked: dict[str, set[str]] = {}
    forks = _ForkServer()
    request.addfinalizer(forks.close)
    for _ in range(CRASH_ROUNDS):
        for key, ids in _crash_round(home, rng, forks).items():
            all_acked.setdefault(key, set()).update(ids)
        store = Store(home, role="admin")  # opening catches the index up
        ledger_file = set(_file_ids(store.layout.ledger))
        assert all_acked.get("ledger", set()) <= ledger_file
        assert _index_count(store, "layer = 'ledger'") == len(ledger_file)
        for a in ("a1", "a2", "a3"):
            log_file = set(_log_ids(store.layout.log_file(a)))
            assert all_acked.get(f"log:{a}", set()) <= set(_log_and_archive_ids(store, a))
            assert _index_count(store, "layer = 'log' AND owner = ?", a) == len(log_file)
            mem = store.agent(a, create=True)  # a writer killed before its first write
            keys = {f.key for f in mem.facts.list()}
            assert all_acked.get(f"fact:{a}", set()) <= keys
            said = (
                {m.content.rsplit(" ", 1)[-1] for m in mem.sessions.messages("s")}
                if (store.layout.session(a, "s").exists())
                else set()
            )
            assert all_acked.get(f"session:{a}", set()) <= said
        store.close()
    # every writer acknowledged >= 4 writes per round, one in four a ledger entry
    assert len(all_acked.get("ledger", set())) >= 3 * CRASH_ROUNDS
    # and a full rebuild from the files agrees with the incrementally kept index
    store = Store(home, role="admin")
    with store.db.read() as conn:
        before = conn.execute("SELECT uid FROM docs ORDER BY uid").fetchall()
    store.reindex()
    with store.db.read() as conn:
        after = conn.execute("SELECT uid FROM docs ORDER BY uid").fetchall()
    assert before == after
    store.close()


AMNESIA = """
import os, sys
from memstrata import MemoryManager
m = MemoryManager("finn", sys.argv[1])
m.update_now("Outline the blog post", ["Write intro", "List decorator examples"])
m.append_log("TOOL_USE", "research on Python decorators complete", {"sources": 3})
m.save_fact("api_key", "12345", "config")
print("ready", flush=True)
import time
time.sleep(60)
"""


def test_amnesia_process_killed_then_restarted(home: Path) -> None:
    p = subprocess.Popen(
        [sys.executable, "-c", AMNESIA, str(home)], stdout=subprocess.PIPE, text=True
    )
    assert p.stdout is not None
    assert p.stdout.readline().strip() == "ready"
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=10)
    from memstrata import MemoryManager

    m = MemoryManager("finn", home)
    state = m.memory.now.state()
    assert state.objective == "Outline the blog post"
    assert state.next_steps == ("Write intro", "List decorator examples")
    tail = m.read_log(5)
    assert tail[-1]["content"] == "research on Python decorators complete"
    assert tail[-1]["metadata"] == {"sources": 3}
    assert m.get_fact("api_key") == "12345"
    assert "Outline the blog post" in m.format_context_for_prompt()
    m.close()


def test_torn_tail_is_repaired_and_reported(home: Path) -> None:
    store = Store(home, agent="finn")
    store.ledger.publish("decision", "first")
    with open(store.layout.ledger, "ab") as fh:
        fh.write(b'{"id":"mem-deadbeef","ts":"2026-01-01T00:00:00Z","kind":"deci')  # killed writer
    second = store.ledger.publish("decision", "second")
    lines = store.layout.ledger.read_bytes().split(b"\n")
    assert all(line.startswith(b"{") or line == b"" for line in lines)
    dec = read_records(store.layout.ledger)
    assert len(dec.bad) == 1 and "invalid JSON" in dec.bad[0].reason
    assert [e.summary for e in store.ledger.query()] == ["second", "first"]
    store.close()
    reopened = Store(home, agent="finn")
    assert reopened.ledger.get(second.id).summary == "second"
    with reopened.db.read() as conn:
        assert conn.execute("SELECT count(*) FROM bad_lines").fetchone()[0] == 1
    reopened.close()


def test_index_catches_up_with_hand_edits_and_other_writers(home: Path) -> None:
    store = Store(home, agent="finn")
    store.agent().log.append("THOUGHT", "written through the API")
    log = store.layout.log_file("finn")
    with open(log, "a", encoding="utf-8") as fh:
        fh.write("### 2026-11-01T09:00:00Z · USER_FEEDBACK\nadded by hand in an editor\n\n")
    entry = {
        "id": "mem-0badc0de",
        "ts": "2026-11-01T09:00:00Z",
        "kind": "convention",
        "room_id": None,
        "author_role": "human",
        "ref": None,
        "tags": ["style"],
        "summary": "All endpoints use /api/v1",
        "detail": None,
        "supersedes": None,
    }
    with open(store.layout.ledger, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry) + "\n")
    store.close()
    again = Store(home, agent="finn")
    contents = [e.content for e in again.agent().log.tail(10)]
    assert contents == ["written through the API", "added by hand in an editor"]
    assert again.ledger.get("mem-0badc0de").summary == "All endpoints use /api/v1"
    again.close()


def test_a_failed_index_update_never_fails_the_write_and_is_caught_up(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3

    import memstrata.store.deferred as store_mod  # where an append is indexed

    store = Store(home, agent="finn")
    real = store_mod.catch_up_append

    def broken(*args: object, **kwargs: object) -> None:
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(store_mod, "catch_up_append", broken)
    entry = store.ledger.publish("decision", "written while the index was failing")
    assert entry.id in _file_ids(store.layout.ledger)  # acknowledged = on disk
    store.engine.settle()  # the queued index work runs (and fails) now
    assert store.engine._stale
    monkeypatch.setattr(store_mod, "catch_up_append", real)
    assert [h.meta["id"] for h in store.search("failing index")] == [entry.id]
    store.close()
