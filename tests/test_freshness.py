"""Every running process sees every write: index generations swapped under open stores,
a deleted or damaged index, and a watched store seeing other writers and hand edits."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from memstrata import SearchQuery, Store
from memstrata.index.generations import live_database

DEADLINE_S = 30.0  # a condition waited for, never a fixed sleep


def _other_process(home: Path, code: str) -> None:
    """Run `code` with `store` opened in a separate Python process."""
    script = f"from memstrata import Store\nstore = Store({str(home)!r}, agent='finn')\n{code}\nstore.close()\n"
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def _found(store: Store, word: str) -> bool:
    return any(word in f"{h.title} {h.text}" for h in store.search(SearchQuery(text=word, k=20)))


def _within(deadline_s: float, check: Callable[[], bool]) -> bool:
    start = time.monotonic()
    while not check():
        if time.monotonic() - start > deadline_s:
            return False
        time.sleep(0.02)
    return True


def test_an_open_store_follows_a_reindex_by_another_process(home: Path) -> None:
    store = Store(home, agent="finn", watch=False)
    store.ledger.publish("decision", "before the rebuild: aardvark")
    first = live_database(home / "index")
    _other_process(home, "store.reindex()\nstore.ledger.publish('decision', 'after it: badger')")
    second = live_database(home / "index")
    assert first is not None and second is not None and first != second
    assert not first.exists()  # the old generation is collected, never renamed over
    # no watcher: the generation check alone moves the store and catches it up
    assert _found(store, "badger") and _found(store, "aardvark")
    assert store.db.path == second
    entry = store.ledger.publish("decision", "written after moving: capybara")
    assert store.ledger.get(entry.id).summary.endswith("capybara")
    store.close()
    reopened = Store(home, agent="finn")
    assert _found(reopened, "capybara")
    reopened.close()


def test_a_deleted_index_is_rebuilt_under_an_open_store(home: Path) -> None:
    store = Store(home, agent="finn", watch=False)
    store.agent().log.append("THOUGHT", "dingo sighting")
    store.drain()  # the LOG's compaction check reads the index after the ack: done first
    shutil.rmtree(home / "index")
    assert _found(store, "dingo")  # a new generation, filled from the files
    store.agent().log.append("THOUGHT", "echidna sighting")
    assert _found(store, "echidna")
    assert live_database(home / "index") == store.db.path
    store.close()


def test_a_damaged_index_is_replaced_on_open(home: Path) -> None:
    store = Store(home, agent="finn")
    store.agent().facts.set("animal", "ferret")
    path = store.db.path
    store.close()
    path.write_bytes(b"this is not a database" * 100)
    again = Store(home, agent="finn")
    assert again.agent().facts.get("animal").value == "ferret"
    assert any("damaged" in n for n in again.notices)
    assert again.db.path != path
    again.close()


def test_a_watched_store_sees_other_writers_and_hand_edits(home: Path) -> None:
    store = Store(home, agent="finn", watch=True)
    memory = home / "agents" / "finn" / "memory"
    _other_process(home, "store.ledger.publish('decision', 'gecko from another process')")
    assert _within(DEADLINE_S, lambda: _found(store, "gecko"))
    memory.mkdir(parents=True, exist_ok=True)
    (memory / "zoo.md").write_text("# Zoo\nhedgehog enclosure\n")
    assert _within(DEADLINE_S, lambda: _found(store, "hedgehog"))
    (memory / "zoo.md").write_text("# Zoo\nibis enclosure\n")
    assert _within(DEADLINE_S, lambda: _found(store, "ibis") and not _found(store, "hedgehog"))
    (memory / "zoo.md").unlink()
    assert _within(DEADLINE_S, lambda: not _found(store, "ibis"))
    nested = memory / "trips" / "2026"
    nested.mkdir(parents=True)
    (nested / "plan.md").write_text("jackal safari\n")  # files in a folder made just now
    assert _within(DEADLINE_S, lambda: _found(store, "jackal"))
    store.close()


def test_an_unwatched_store_only_catches_up_on_open(home: Path) -> None:
    # Other processes' API writes land in the shared index; hand edits reach it only
    # through a catch-up: without the watcher, only the next open sees them.
    store = Store(home, agent="finn", watch=False)
    store.agent().log.append("THOUGHT", "warm up")
    (home / "agents/finn/memory/koala.md").write_text("koala written by hand\n")
    assert not _found(store, "koala")
    store.close()
    again = Store(home, agent="finn", watch=False)
    assert _found(again, "koala")
    again.close()


def test_every_read_path_honours_the_stale_flag(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3

    import memstrata.store.deferred as store_mod  # where an append is indexed

    store = Store(home, agent="finn", watch=False)
    real = store_mod.catch_up_append

    def broken(*args: object, **kwargs: object) -> None:
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(store_mod, "catch_up_append", broken)
    entry = store.ledger.publish(
        "decision", "lemur acknowledged while the index failed", tags=["stale"]
    )
    fact = store.agent().facts.set("mood", "lemur")
    store.engine.settle()  # the queued index work runs (and fails) now
    assert store.engine._stale
    monkeypatch.setattr(store_mod, "catch_up_append", real)
    assert [e.id for e in store.ledger.query(tags=["stale"])] == [entry.id]
    assert store.ledger.get(entry.id).summary.startswith("lemur")
    assert store.agent().facts.get("mood").value == fact.value
    store.close()


def test_one_based_line_numbers_survive_incremental_parsing(home: Path) -> None:
    store = Store(home, agent="finn", watch=False)
    ids = [store.ledger.publish("decision", f"entry {i} mongoose").id for i in range(3)]
    # another writer appends two lines, then this store appends one of its own: the gap
    # is parsed from the stored offset, and line numbers continue from the stored count
    extra = [
        {
            "id": f"mem-0000000{i}",
            "ts": "2026-01-01T00:00:00Z",
            "kind": "decision",
            "room_id": None,
            "author_role": None,
            "ref": None,
            "tags": [],
            "summary": f"hand entry {i} mongoose",
            "detail": None,
            "supersedes": None,
        }
        for i in range(2)
    ]
    with open(home / "ledger.jsonl", "a", encoding="utf-8") as fh:
        fh.writelines(json.dumps(e) + "\n" for e in extra)
    ids += [e["id"] for e in extra]
    ids.append(store.ledger.publish("decision", "entry 5 mongoose").id)
    hits = store.search(SearchQuery(text="mongoose", layers=("ledger",), k=10))
    lines = {h.meta["id"]: h.line for h in hits}
    assert lines == {i: n for n, i in enumerate(ids, start=1)}
    log = store.agent().log
    log.append("THOUGHT", "nightjar one")
    log.append("THOUGHT", "nightjar two\nsecond line")
    text = (home / "agents/finn/memory/LOG.md").read_text().splitlines()
    by_line = {h.text: h.line for h in store.search(SearchQuery(text="nightjar", layers=("log",)))}
    for content, line in by_line.items():
        assert line is not None and text[line - 1].startswith("### ")  # the entry's header
        assert text[line].startswith(content.splitlines()[0])
    store.close()


def _edit_in_place(path: Path, old: str, new: str) -> None:
    """What an editor that saves over the file does: same inode, same length."""
    assert len(old) == len(new)
    data = path.read_bytes()
    assert data.count(old.encode()) == 1
    before = path.stat()
    with open(path, "r+b") as fh:
        fh.write(data.replace(old.encode(), new.encode()))
    after = path.stat()
    assert (after.st_ino, after.st_size) == (before.st_ino, before.st_size)


def test_a_same_length_edit_in_place_of_an_old_record_is_indexed(home: Path) -> None:
    store = Store(home, agent="finn", watch=True)
    log = store.agent().log
    log.append("THOUGHT", "alpha entry one")
    log.append("THOUGHT", "bravo entry two")
    log.append("THOUGHT", "the newest entry")
    store.ledger.publish("decision", "use the bravo ledger")
    store.ledger.publish("decision", "a later decision")
    assert _found(store, "bravo")
    _edit_in_place(log.path, "bravo entry two", "delta entry two")
    _edit_in_place(home / "ledger.jsonl", "use the bravo ledger", "use the delta ledger")
    # the watching store: the new text found, the old one gone, `log tail` shows the edit
    assert _within(DEADLINE_S, lambda: _found(store, "delta") and not _found(store, "bravo"))
    assert {h.layer for h in store.search(SearchQuery(text="delta", k=20))} == {"log", "ledger"}
    assert "delta entry two" in [e.content for e in log.tail(10)]
    assert "bravo entry two" not in [e.content for e in log.tail(10)]
    store.close()
    # a new process (the index was already caught up above: edit again for it to see)
    _edit_in_place(log.path, "delta entry two", "gamma entry two")
    _edit_in_place(home / "ledger.jsonl", "use the delta ledger", "use the gamma ledger")
    exe = Path(sys.executable).parent / "memstrata"
    run = [str(exe), "--home", str(home), "--agent", "finn"]
    out = subprocess.run(
        [*run, "--json", "search", "gamma", "--layer", "log", "--layer", "ledger"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "gamma entry two" in out.stdout and "use the gamma ledger" in out.stdout
    assert "delta" not in out.stdout
    tail = subprocess.run([*run, "log", "tail"], capture_output=True, text=True, timeout=120)
    assert tail.returncode == 0, tail.stderr
    assert "gamma entry two" in tail.stdout and "delta entry two" not in tail.stdout


def test_touching_an_append_source_costs_no_reparse(home: Path) -> None:
    import os

    from memstrata.index.reconcile import SyncReport, catch_up_append
    from memstrata.layers.catalog import source_for

    store = Store(home, agent="finn", watch=False)
    store.ledger.publish("decision", "one record")
    path = home / "ledger.jsonl"
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000))  # a new version, same bytes
    spec = source_for(store.engine, "ledger.jsonl")
    assert spec is not None
    report = SyncReport()
    catch_up_append(store.db, store.engine.origin, spec, report, False)
    assert report.reparsed == [] and report.docs_written == 0  # the CRC matched
    _edit_in_place(path, "one record", "two record")
    catch_up_append(store.db, store.engine.origin, spec, report, False)
    assert report.reparsed == [str(spec.path)] and report.docs_written == 1
    store.close()


def test_a_long_lived_store_in_auto_mode_sees_hand_edits(home: Path) -> None:
    with Store(home, agent="finn", watch=False) as first:
        first.agent().log.append("THOUGHT", "the agent's folders exist")
    store = Store(home, agent="finn")  # [index] watch = "auto", the default
    assert store.config.index_watch == "auto"
    memory = home / "agents" / "finn" / "memory"
    assert not _found(store, "kiwi")  # a read right after opening: no watcher yet
    (memory / "early.md").write_text("kiwi written by hand right after opening\n")
    assert _within(DEADLINE_S, lambda: _found(store, "kiwi"))
    time.sleep(1.5)  # idle past the auto threshold (not a barrier: nothing runs meanwhile)
    (memory / "later.md").write_text("lynx written by hand later\n")
    assert _within(DEADLINE_S, lambda: _found(store, "lynx"))
    (memory / "later.md").write_text("marten written over it\n")
    assert _within(DEADLINE_S, lambda: _found(store, "marten") and not _found(store, "lynx"))
    store.close()


def test_an_append_is_found_by_every_process_before_it_is_indexed(home: Path) -> None:
    # A writer in another process appends and dies: a long-lived store that does not
    # watch the folder finds the entry in its next search (the note the writer left in
    # `index/appended` before acknowledging), and its own appends at once.
    store = Store(home, agent="finn", watch=False)
    store.agent().log.append("THOUGHT", "warm up")
    assert not _found(store, "wombat")
    code = (
        "import os\n"
        "store.engine.after_ack = lambda key, job: False  # killed right after the ack\n"
        "store.agent().log.append('THOUGHT', 'the wombat digs at night')\n"
        "os._exit(0)\n"
    )
    _other_process(home, code)
    assert _found(store, "wombat")  # no watcher, no reopen: the note
    store.engine.after_ack = lambda key, job: False  # type: ignore[method-assign]
    store.agent().log.append("THOUGHT", "the numbat eats termites")
    assert _found(store, "numbat")  # the writer's own next read indexes it first
    store.close()


def test_a_search_catches_the_index_up_once_and_still_sees_every_acknowledged_write(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A search's reads (plan, short forms, the pool) run the freshness hooks once, first
    (`Database.fresh`; they ran before each read, three `stat` calls each): an append left
    by another process in `index/appended`, this process's own deferred index work and a
    new generation published by a reindex are each seen by the next search."""
    from memstrata.index.db import Database

    monkeypatch.setenv("MEMSTRATA_EMBEDDER", "fake")  # hybrid too, cheaply
    store = Store(home, agent="finn", watch=False)
    store.agent().log.append("THOUGHT", "warm up")
    runs: list[int] = []
    real = Database._hooks

    def counted(self: Database, *, reading: bool) -> None:
        # the searching thread's runs (not background jobs', not reads inside a hook)
        if threading.get_ident() == searching and not (self._in_hook or self._depth):
            runs.append(reading)
        real(self, reading=reading)

    searching = threading.get_ident()

    monkeypatch.setattr(Database, "_hooks", counted)
    for mode in ("lexical", "hybrid"):
        runs.clear()
        store.search(SearchQuery(text="warm up", k=5, mode=mode))
        assert runs.count(True) == 1, (mode, runs)
    code = (
        "import os\n"
        "store.engine.after_ack = lambda key, job: False  # killed right after the ack\n"
        "store.agent().log.append('THOUGHT', 'the quokka smiles')\n"
        "os._exit(0)\n"
    )
    _other_process(home, code)
    assert _found(store, "quokka")  # the other process's note, read by the one hook run
    store.engine.after_ack = lambda key, job: False  # type: ignore[method-assign]
    store.agent().log.append("THOUGHT", "the bilby burrows")
    assert _found(store, "bilby")  # this process's deferred index work, run first
    _other_process(home, "store.reindex()\nstore.ledger.publish('decision', 'then: dingo')")
    assert _found(store, "dingo")  # the new generation, followed by the one hook run
    store.close()
