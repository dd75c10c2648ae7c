"""`update_now` makes two syncs, as a bare atomic replace does, and still keeps every
acknowledged NOW.md content: its history record carries the content and is synced
after the rename (`files.versions`, step 3), so the rename needs no folder sync."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import memstrata.files.atomic as atomic
from memstrata import Store


def _syncs(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Record every sync and rename the code makes, in order, with the file's name."""
    seen: list[tuple[str, str]] = []
    real = {"fsync": os.fsync, "fdatasync": os.fdatasync, "replace": os.replace}

    def named(fd: int) -> str:
        return os.readlink(f"/proc/self/fd/{fd}")

    def fsync(fd: int) -> None:
        seen.append(("fsync", named(fd)))
        real["fsync"](fd)

    def fdatasync(fd: int) -> None:
        seen.append(("fdatasync", named(fd)))
        real["fdatasync"](fd)

    def replace(src: str, dst: str) -> None:
        seen.append(("rename", str(dst)))
        real["replace"](src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "fdatasync", fdatasync)
    monkeypatch.setattr(atomic.os, "replace", replace)
    return seen


def test_update_now_syncs_twice_and_its_record_after_the_rename(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Store(home, agent="finn") as store:
        now = store.agent().now
        now.update("first", ["a"])
        seen = _syncs(monkeypatch)
        now.update("second", ["b"])
        monkeypatch.undo()
        syncs = [(op, Path(p).name) for op, p in seen if op != "rename"]
        renames = [Path(p).name for op, p in seen if op == "rename"]
        assert renames == ["NOW.md"], seen
        # the temporary file's content, then the record that carries it: two syncs
        assert [op for op, _ in syncs] == ["fsync", "fdatasync"], seen
        assert syncs[0][1].endswith(".tmp") and syncs[1][1] == "log.jsonl", seen
        assert seen.index(("rename", str(store.layout.now_file("finn")))) < len(seen) - 1
        assert "second" in now.read()


def test_a_blob_kept_file_still_syncs_its_folder(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CONTEXT.md keeps its versions as blobs, so its record does not carry the content:
    its replace stays durable on its own (the folder synced after the rename)."""
    with Store(home, agent="finn") as store:
        ctx = store.agent().context
        ctx.write("old\n")
        seen = _syncs(monkeypatch)
        ctx.write("new\n")
        monkeypatch.undo()
        folder = str(store.layout.context_file("finn").parent)
        after = seen[seen.index(("rename", str(store.layout.context_file("finn")))) + 1 :]
        assert after and after[0] == ("fsync", folder), seen


KILLED_WRITER = textwrap.dedent(
    """
    import sys
    from memstrata import Store

    home, tag = sys.argv[1], sys.argv[2]
    now = Store(home, agent="finn").agent().now
    i = 0
    while True:
        goal = f"goal {tag}-{i}"
        now.update(goal, ["measure", "report"])
        print(goal, flush=True)  # acknowledged: update_now returned
        i += 1
    """
)


def test_every_acknowledged_now_content_survives_writers_killed_at_random_points(
    home: Path, tmp_path: Path
) -> None:
    """Real processes looping on `update_now`, SIGKILLed after a random number of
    acknowledgements (so at a random point of the next update): every acknowledged
    content is NOW.md's or one of its versions."""
    script = tmp_path / "writer.py"
    script.write_text(KILLED_WRITER)
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text("[versions]\nkeep = 500\n")
    rng = random.Random(7)
    acked: list[str] = []
    for tag in range(3):
        proc = subprocess.Popen(
            [sys.executable, str(script), str(home), str(tag)],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ},
        )
        try:
            assert proc.stdout is not None
            for _ in range(rng.randint(3, 15)):
                line = proc.stdout.readline()
                assert line, "the writer stopped before it was killed"
                acked.append(line.strip())
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=60)
            assert proc.stdout is not None
            acked += [x.strip() for x in proc.stdout.read().splitlines() if x.strip()]
        finally:
            proc.kill()
            proc.wait(timeout=60)
    with Store(home, agent="finn") as store:
        mem = store.agent()
        held = [mem.now.read()]
        held += [mem.versions.read("NOW.md", v.id) for v in mem.versions.history("NOW.md").versions]
    text = "\n".join(held)
    lost = [goal for goal in acked if f"{goal}\n" not in text]
    assert len(acked) >= 9 and not lost, lost


def test_the_first_update_makes_every_new_name_durable(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where a name is made (NOW.md, its history folder and log), its folder is synced:
    the record's own sync does not make a new file's name last on every filesystem."""
    with Store(home, agent="finn") as store:
        now = store.agent().now
        store.agent().log.append("THOUGHT", "the agent's folders exist")
        seen = _syncs(monkeypatch)
        now.update("first", ["a"])
        monkeypatch.undo()
        synced = {p for op, p in seen if op == "fsync"}
        history = next((home / "agents" / "finn" / "versions").iterdir())
        assert str(store.layout.now_file("finn").parent) in synced, seen
        assert str(history) in synced and str(history.parent) in synced, seen
        assert str(history.parent.parent) in synced, seen  # `versions` was made too
