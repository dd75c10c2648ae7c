"""Full and read-only disks, for real: a small tmpfs that fills up, a store mounted
read-only. An acknowledged write is never reported as failed, a failed one is never
stored, the CLI says one line (no traceback), and the store reopens once space returns.
The mounts need root (the suite runs as root on CI); elsewhere these tests skip."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memstrata import SearchQuery, StorageFull, Store
from memstrata.errors import ReadOnlyStore
from memstrata.files.jsonl import read_records
from memstrata.index.notes import NOTES

EXE = shutil.which("memstrata", path=str(Path(sys.executable).parent)) or "memstrata"


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [EXE, "--home", str(home), "--agent", "finn", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def _mount(target: Path, options: str) -> None:
    r = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(target)],
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")


def _fill(disk: Path, leave: int) -> Path:
    """Fill the disk but for about `leave` bytes; returns the filler file."""
    filler = disk / "filler.bin"
    free = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize
    with open(filler, "wb") as fh:
        fh.write(b"\0" * max(0, free - leave))
    return filler


def test_a_full_disk_never_reports_a_stored_write_as_failed(disk: Path) -> None:
    home = disk / "home"
    store = Store(home, agent="finn", watch=False)
    store.ledger.publish("decision", "written while there was space")
    store.drain()  # its indexing (after the ack) writes to this disk too: done before filling it
    filler = _fill(disk, 48 * 1024)
    acked: list[str] = []
    refused: list[str] = []
    for i in range(200):
        summary = f"entry {i} " + "x" * 3000
        try:
            store.ledger.publish("decision", summary)
        except StorageFull:
            refused.append(summary)
        else:
            acked.append(summary)
        with contextlib.suppress(StorageFull):
            store.agent().log.append("THOUGHT", f"log {i} " + "y" * 2000)
    assert acked and len(refused) > 10  # the disk really filled up
    stored = [r["summary"] for _, r in read_records(store.layout.ledger).records]
    assert set(acked) <= set(stored)  # acknowledged: stored
    assert not set(refused) & set(stored)  # reported failed: not stored
    assert read_records(store.layout.ledger).bad == []  # and nothing half-written
    # the CLI on the full disk: one clear line, no traceback, reads still work
    r = _cli(home, "ledger", "publish", "decision", "z" * 4000)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert [
        line.split(" on the disk")[0]
        for line in r.stderr.splitlines()
        if line.startswith("memstrata: error:")
    ] == ["memstrata: error: no space left"]
    found = _cli(home, "--json", "search", "written while there was space")
    assert found.returncode == 0 and "Traceback" not in found.stderr
    store.close()
    filler.unlink()  # space returns
    again = Store(home, agent="finn", watch=False)
    hits = again.search(SearchQuery(text="entry", layers=("ledger",), k=50))
    assert {h.title for h in hits} == set(acked)
    again.ledger.publish("decision", "written after space returned")
    again.close()


def test_a_read_only_store_can_be_read_and_searched(disk: Path) -> None:
    home = disk / "home"
    store = Store(home, agent="finn")
    store.ledger.publish("decision", "the backup keeps the ocelot decision")
    store.agent().facts.set("animal", "ocelot")
    store.agent().now.update("Catalogue the ocelot photos", ["sort", "tag"])
    store.agent().log.append("THOUGHT", "ocelots are nocturnal")
    store.close()
    (home / "agents/finn/memory/hand.md").write_text("ocelot notes added by hand\n")
    r = subprocess.run(["mount", "-o", "remount,ro", str(disk)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    found = _cli(home, "--json", "search", "ocelot")
    assert found.returncode == 0, found.stderr
    assert "read-only" in found.stderr and "Traceback" not in found.stderr
    layers = {h["layer"] for h in json.loads(found.stdout)}
    assert {"ledger", "fact", "now", "log", "file"} <= layers  # the hand edit too
    fact = _cli(home, "facts", "get", "animal")
    assert fact.returncode == 0 and fact.stdout.strip() == "ocelot"
    context = _cli(home, "context")
    assert context.returncode == 0 and "Catalogue the ocelot photos" in context.stdout
    assert "ocelots are nocturnal" in context.stdout
    refused = _cli(home, "log", "append", "THOUGHT", "cannot be written")
    assert refused.returncode == 1 and "read-only" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert len([x for x in refused.stderr.splitlines() if x.startswith("memstrata: error:")]) == 1
    with Store(home, agent="finn") as ro, pytest.raises(ReadOnlyStore):
        ro.ledger.publish("decision", "refused")


def test_a_refused_append_stores_nothing_and_a_failing_audit_fails_no_write(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memstrata.files.appendlog as appendlog

    store = Store(home, agent="finn", watch=False)
    first = store.ledger.publish("decision", "first")
    size = store.layout.ledger.stat().st_size
    real_write = os.write

    def half_then_full(fd: int, data: bytes) -> int:  # a write cut short by a full disk
        if len(data) > 1 and b"second" in bytes(data):
            real_write(fd, bytes(data)[: len(data) // 2])
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(appendlog.os, "write", half_then_full)
    with pytest.raises(StorageFull):
        store.ledger.publish("decision", "second")
    monkeypatch.undo()
    assert store.layout.ledger.stat().st_size == size  # cut back: nothing half-written

    monkeypatch.setattr(store.engine.events, "_fd", 999_999)  # an fd whose writes fail
    third = store.ledger.publish("decision", "third")  # acknowledged despite the audit
    assert store.engine.events.dropped >= 1
    assert [e.id for e in store.ledger.query()] == [third.id, first.id]
    store.close()


def _fill_completely(disk: Path) -> Path:
    """Fill the disk to its last byte (page by page once the big write is refused)."""
    filler = _fill(disk, 0)
    with open(filler, "ab", buffering=0) as fh:
        for size in (65536, 4096, 512, 1):
            with contextlib.suppress(OSError):
                while True:
                    fh.write(b"\0" * size)
    assert os.statvfs(disk).f_bavail == 0
    return filler


def test_a_full_disk_store_nobody_holds_open_can_still_be_read(disk: Path) -> None:
    home = disk / "home"
    store = Store(home, agent="finn")
    store.ledger.publish("decision", "the panda decision")
    store.agent().facts.set("animal", "panda")
    store.agent().now.update("Feed the pandas", ["bamboo"])
    store.agent().log.append("THOUGHT", "pandas sleep a lot")
    store.close()  # nobody holds the index open: its -wal and -shm files are gone
    index = home / "index"
    before = sorted(os.listdir(index))
    filler = _fill_completely(disk)
    for _ in range(2):  # each a fresh process; the second finds nothing left by the first
        found = _cli(home, "--json", "search", "panda")
        assert found.returncode == 0, found.stderr
        assert "no space left" in found.stderr and "Traceback" not in found.stderr
        assert "damaged" not in found.stderr
        assert {h["layer"] for h in json.loads(found.stdout)} >= {"ledger", "fact", "log"}
        fact = _cli(home, "facts", "get", "animal")
        assert fact.returncode == 0 and fact.stdout.strip() == "panda", fact.stderr
        context = _cli(home, "context")
        assert context.returncode == 0, context.stderr
        assert "Feed the pandas" in context.stdout and "pandas sleep a lot" in context.stdout
        assert "animal" in context.stdout and "could not be read" not in context.stdout
        assert sorted(os.listdir(index)) == before  # no new generation, no -wal or -shm
    filler.unlink()  # space returns: the shared index is used again
    r = _cli(home, "log", "append", "THOUGHT", "written once space returned")
    assert r.returncode == 0, r.stderr
    again = _cli(home, "--json", "search", "space returned")
    assert again.returncode == 0 and "no space" not in again.stderr
    assert json.loads(again.stdout)


def test_empty_generations_left_by_an_earlier_full_disk_are_collected(home: Path) -> None:
    store = Store(home, agent="finn")
    store.ledger.publish("decision", "kept")
    store.close()
    index = home / "index"
    live = (index / "CURRENT").read_text().strip()
    for name in ("g18eb4823313042564672c3", "g18eb48233af59c10776a3e"):
        (index / f"{name}.db").write_bytes(b"")  # what a failed ensure() used to leave
    again = Store(home, agent="finn")
    assert [h.title for h in again.search("kept")] == ["kept"]
    assert sorted(os.listdir(index)) == sorted(
        n for n in os.listdir(index) if n in ("CURRENT", NOTES) or n.startswith(live)
    )
    assert not (index / "g18eb4823313042564672c3.db").exists()
    again.close()


def test_a_long_lived_store_opened_on_a_full_disk_returns_to_the_shared_index(
    disk: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memstrata.index.access as access

    monkeypatch.setattr(access, "RETRY_SHARED_S", 0.0)
    home = disk / "home"
    Store(home, agent="finn").close()
    filler = _fill_completely(disk)
    store = Store(home, agent="finn", watch=False)
    assert any("no space left" in n for n in store.notices)
    assert store.engine.index_access.private is not None
    assert store.db.path.is_relative_to(store.engine.index_access.private)
    filler.unlink()
    store.ledger.publish("decision", "the koala decision")
    assert store.db.path.parent == home / "index"  # back on the shared index
    assert not any("no space left" in n for n in store.notices)
    assert [h.title for h in store.search("koala")] == ["the koala decision"]
    store.close()
    other = Store(home, agent="finn", watch=False)  # and it holds the write
    assert [h.title for h in other.search("koala")] == ["the koala decision"]
    other.close()


def test_a_read_only_store_is_diagnosed_but_never_claimed_fixed(disk: Path) -> None:
    home = disk / "home"
    store = Store(home, agent="finn")
    store.ledger.publish("decision", "the backup keeps the lynx decision")
    store.agent().log.append("THOUGHT", "warm up")
    store.close()
    (home / "agents/finn/memory/hand.md").write_text("lynx notes added by hand\n")  # not indexed
    r = subprocess.run(["mount", "-o", "remount,ro", str(disk)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    live = sorted(os.listdir(home / "index"))
    doctor = _cli(home, "doctor")
    assert doctor.returncode == 1, doctor.stdout  # the index on disk is behind its files
    assert "read-only" in doctor.stdout and "cannot be rebuilt" in doctor.stdout
    assert "run `memstrata reindex`" not in doctor.stdout
    for args in (("reindex",), ("doctor", "--fix")):
        refused = _cli(home, "--json", *args)
        assert refused.returncode == 1, refused.stdout
        assert json.loads(refused.stderr.splitlines()[-1])["error"]["code"] == "read_only_store"
        assert "rebuilt" not in refused.stdout and "reindexed" not in refused.stdout
    with Store(home, agent="finn") as ro, pytest.raises(ReadOnlyStore):
        ro.reindex()
    assert sorted(os.listdir(home / "index")) == live
    found = _cli(home, "--json", "search", "lynx")  # the reads still miss nothing
    assert {h["layer"] for h in json.loads(found.stdout)} == {"ledger", "file"}
