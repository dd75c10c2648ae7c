"""events.jsonl: no query text unless configured, rotation by size, no record lost to
rotation when several processes write at once."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from memstrata import Store
from memstrata.store.events import audit_files, read_audit

QUERY = "where did I put the passport of aunt Ottilie"


def records(home: Path) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for p in reversed(audit_files(home / "events.jsonl")):
        out += read_audit(p)
    return out


def test_search_events_carry_a_hash_of_the_query_by_default(store: Store, home: Path) -> None:
    store.agent().log.append("THOUGHT", "the passport is in the blue drawer")
    seen = []
    store.events.subscribe(seen.append)
    hits = store.search(QUERY)
    assert hits
    data = (home / "events.jsonl").read_bytes()
    assert b"Ottilie" not in data and b"passport of" not in data
    search = [r for r in read_audit(home / "events.jsonl") if r["event"] == "memory:search"]
    key = (home / ".events-key").read_bytes()
    assert len(key) == 32 and (home / ".events-key").stat().st_mode & 0o777 == 0o600
    digest = "hmac-sha256:" + hmac.new(key, QUERY.encode(), hashlib.sha256).hexdigest()
    assert search[-1]["payload"] == {"query": digest, "results": [h.uid for h in hits]}
    assert seen[-1].payload["query"] == QUERY  # in-process subscribers get the text
    # Keyed: hashing a guessed query does not confirm it from events.jsonl alone.
    assert hashlib.sha256(QUERY.encode()).hexdigest().encode() not in data
    store.search(QUERY)
    again = [r for r in read_audit(home / "events.jsonl") if r["event"] == "memory:search"]
    assert again[-1]["payload"]["query"] == digest  # stable: repeated searches show


def test_the_audit_key_is_never_exported(store: Store, home: Path, tmp_path: Path) -> None:
    from memstrata.operations.transfer import export_store

    store.search(QUERY)
    key = (home / ".events-key").read_bytes()
    with Store(home) as admin:
        export_store(admin, tmp_path / "out")
    assert not any(key in p.read_bytes() for p in (tmp_path / "out").rglob("*") if p.is_file())


def test_query_text_is_recorded_when_configured(home: Path) -> None:
    home.mkdir(parents=True)
    (home / "config.toml").write_text("[events]\nrecord_queries = true\n")
    with Store(home, agent="finn") as s:
        s.search(QUERY)
    assert QUERY.encode() in (home / "events.jsonl").read_bytes()


def test_events_rotate_by_size_and_keep_the_configured_number(home: Path) -> None:
    home.mkdir(parents=True)
    (home / "config.toml").write_text("[events]\nmax_bytes = 4096\nkeep = 2\n")
    with Store(home, agent="finn") as s:
        for i in range(300):
            s.events.emit("memory:write", {"type": "log", "path": f"x{i}", "delta": i})
    files = audit_files(home / "events.jsonl")
    assert [p.name for p in files] == ["events.jsonl", "events.1.jsonl", "events.2.jsonl"]
    assert all(p.stat().st_size <= 4096 + 200 for p in files)
    paths = [r["payload"]["path"] for r in records(home)]  # type: ignore[index]
    assert paths == [f"x{i}" for i in range(300 - len(paths), 300)]  # newest kept, in order


WRITER = """
import sys
from memstrata import Store
with Store(sys.argv[1], agent=sys.argv[2]) as s:
    print("ready", flush=True)
    sys.stdin.readline()
    for i in range(int(sys.argv[3])):
        s.events.emit("memory:write", {"type": "log", "path": f"{sys.argv[2]}-{i}", "delta": i})
"""


def test_rotation_loses_no_record_of_concurrent_processes(home: Path) -> None:
    home.mkdir(parents=True)
    (home / "config.toml").write_text("[events]\nmax_bytes = 8192\nkeep = 1000\n")
    n = 400
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(home), f"w{k}", str(n)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for k in range(3)
    ]
    for p in procs:
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    for p in procs:
        assert p.wait(timeout=120) == 0
    got = [r["payload"]["path"] for r in records(home)]  # type: ignore[index]
    assert len(audit_files(home / "events.jsonl")) > 5
    assert sorted(got) == sorted(f"w{k}-{i}" for k in range(3) for i in range(n))
    for k in range(3):  # each writer's records stay in its order
        mine = [g for g in got if g.startswith(f"w{k}-")]
        assert mine == [f"w{k}-{i}" for i in range(n)]
    json.dumps(got)


def test_an_audit_write_stats_the_trail_once(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One `stat` of the path per record (was fstat + stat + fstat); the size it gives,
    plus the bytes written under the lock every writer holds, still rotates the file, and
    a file replaced under the writer (a rotation or a purge by another process) is still
    followed: its inode is not the one the descriptor was opened on."""
    import memstrata.store.events as events

    home.mkdir(parents=True)
    (home / "config.toml").write_text("[events]\nmax_bytes = 4096\nkeep = 2\n")
    calls: Counter[str] = Counter()

    class CountingOs:  # the events module's `os`, counting its stat calls
        def __getattr__(self, name: str) -> Any:
            if name in ("stat", "fstat"):
                calls[name] += 1
            return getattr(os, name)

    monkeypatch.setattr(events, "os", CountingOs())
    with Store(home, agent="a", watch=False) as s:
        s.events.emit("memory:write", {"type": "log", "path": "first", "delta": 0})
        calls.clear()
        for i in range(100):
            s.events.emit("memory:write", {"type": "log", "path": f"x{i}", "delta": i})
        # one stat a record; fstat only on opening a new file (two after each rotation)
        assert calls["stat"] <= 100 and calls["fstat"] <= 10, calls
        assert len(audit_files(home / "events.jsonl")) == 3  # rotated by size
        (home / "events.jsonl").rename(home / "moved.jsonl")  # replaced under the writer
        s.events.emit("memory:write", {"type": "log", "path": "after", "delta": 0})
    assert [r["payload"]["path"] for r in read_audit(home / "events.jsonl")] == ["after"]  # type: ignore[index]
