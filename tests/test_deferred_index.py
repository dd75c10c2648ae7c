"""An acknowledged write is indexed after its acknowledgement (`store.deferred`), and
still never invisible: any later read of the process (any thread) indexes it first,
the worker thread indexes it without a read, another process catches it up from the
file, and the index ends up as a rebuild from the files would make it."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

from memstrata import Store
from memstrata.index.generations import live_database

DEADLINE_S = 30.0  # a condition waited for, never a fixed sleep


def _raw_bodies(home: Path) -> set[str]:
    """The texts the index file holds, read past the store (no catch-up, no queue)."""
    path = live_database(home / "index")
    assert path is not None
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return {r[0] for r in conn.execute("SELECT body FROM docs")}
    finally:
        conn.close()


def _rows(home: Path) -> list[tuple[object, ...]]:
    path = live_database(home / "index")
    assert path is not None
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        cols = "uid, layer, owner, room, kind, tags, ts, title, body, context, source, line"
        cols += ", thread, pos, supersedes, superseded, meta"
        return conn.execute(f"SELECT {cols} FROM docs ORDER BY uid").fetchall()
    finally:
        conn.close()


def test_an_append_returns_before_it_is_indexed_and_the_next_read_indexes_it(
    home: Path,
) -> None:
    store = Store(home, agent="finn", watch=False)
    store.engine.deferred.close()  # no worker: only a read (or drain) does the work
    entry = store.agent().log.append("THOUGHT", "quokka counted at dawn")
    assert "quokka counted at dawn" not in _raw_bodies(home)  # acknowledged, not indexed
    assert [e.id for e in store.agent().log.tail(1)] == [entry.id]
    assert "quokka counted at dawn" in _raw_bodies(home)
    store.close()


def test_a_read_in_another_thread_sees_a_write_acknowledged_before_it(home: Path) -> None:
    store = Store(home, agent="finn", watch=False)
    store.engine.deferred.close()
    acked = threading.Event()
    found: list[list[str]] = []

    def reader() -> None:
        acked.wait()
        found.append([h.meta["id"] for h in store.search("wombat burrow")])

    t = threading.Thread(target=reader)
    t.start()
    entry = store.ledger.publish("decision", "the wombat burrow stays")
    acked.set()
    t.join()
    assert found == [[entry.id]]
    store.close()


def test_the_worker_indexes_an_append_without_any_read(home: Path) -> None:
    store = Store(home, agent="finn", watch=False)
    store.agent().log.append("THOUGHT", "numbat under the log")
    start = time.monotonic()
    while "numbat under the log" not in _raw_bodies(home):
        assert time.monotonic() - start < DEADLINE_S, "the queued work never ran"
        time.sleep(0.02)
    store.close()


def test_the_deferred_index_equals_a_rebuild_from_the_files(home: Path) -> None:
    store = Store(home, agent="finn", watch=False)
    mem = store.agent()
    for i in range(30):
        mem.log.append("TOOL_USE" if i % 2 else "THOUGHT", f"step {i}: ran the suite", {"i": i})
        if i % 5 == 0:
            mem.now.update(f"Working on step {i}", ["measure", f"report {i}"])
            mem.facts.set(f"key{i}", f"value {i}")
            store.ledger.publish("decision", f"decided at step {i}")
    store.drain()
    deferred = _rows(home)
    store.reindex()
    assert deferred == _rows(home)
    store.close()


def test_a_process_killed_with_index_work_queued_loses_nothing(home: Path) -> None:
    store = Store(home, agent="finn", watch=False)
    store.agent().log.append("THOUGHT", "opened first")
    code = (
        "import os, signal, sys\n"
        "from memstrata import Store\n"
        f"store = Store({str(home)!r}, agent='finn', watch=False)\n"
        "store.engine.deferred.close()\n"  # the index work stays queued
        "store.agent().log.append('THOUGHT', 'bilby seen before the crash')\n"
        "sys.stdout.write('acked\\n'); sys.stdout.flush()\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert r.returncode == -signal.SIGKILL and r.stdout == "acked\n", r.stderr
    assert "bilby seen before the crash" not in _raw_bodies(home)  # killed before indexing
    texts = [e.content for e in store.agent().log.tail(5)]  # the open store: by the note
    assert "bilby seen before the crash" in texts
    store.close()
    again = Store(home, agent="finn", watch=False)  # a new process: by its opening catch-up
    assert "bilby seen before the crash" in [e.content for e in again.agent().log.tail(5)]
    again.close()


def test_a_process_that_ends_without_closing_its_store_indexes_what_it_wrote(
    home: Path,
) -> None:
    """A CLI command never closes its store: the queued work is done as the interpreter
    exits (the worker is not a daemon thread), as it was when done inside the write."""
    Store(home, agent="finn", watch=False).close()
    code = (
        "from memstrata import Store\n"
        f"store = Store({str(home)!r}, agent='finn', watch=False)\n"
        "store.agent().log.append('THOUGHT', 'potoroo noted on the way out')\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert "potoroo noted on the way out" in _raw_bodies(home)
