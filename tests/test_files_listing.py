"""Listing and deleting memory files are robust (issue 9 item 7): files vanishing while
another process lists them, dangling symlinks, symlinks out of the store (not even a
size leaks), and any path that can be written can be deleted."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memstrata import Store
from memstrata.mcp.claude_memory import ClaudeMemoryHandler

CHURN = """
import os, sys
folder, stop = sys.argv[1], sys.argv[2]
os.makedirs(folder, exist_ok=True)
names = [os.path.join(folder, f"f{i:03d}.md") for i in range(100)]
first = True
while not os.path.exists(stop):
    for n in names:
        with open(n, "w") as fh:
            fh.write("x" * 10)
    for n in names:
        os.unlink(n)
    if first:
        print("ready", flush=True)
        first = False
"""


def test_listing_while_another_process_deletes_files(store: Store, tmp_path: Path) -> None:
    files = store.agent().files
    files.write("keep.md", "stays\n")
    stop = tmp_path / "stop"
    churn = subprocess.Popen(
        [sys.executable, "-c", CHURN, str(files.root / "churn"), str(stop)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert churn.stdout is not None and churn.stdout.readline().strip() == "ready"
        sizes = set()
        # 200 listings, and more until they have seen the folder change (a loaded machine
        # may run the churning process rarely); a minute at most
        deadline, listings = time.monotonic() + 60, 0
        while listings < 200 or len(sizes) <= 3:
            listed = files.list()  # never raises, whatever vanishes meanwhile
            assert "keep.md" in {f.path for f in listed}
            sizes.add(len(listed))
            listings += 1
            if time.monotonic() > deadline:
                break
        assert len(sizes) > 3  # the folder changed under the listings: they did race the deletions
    finally:
        stop.touch()
        churn.wait(timeout=30)
    assert churn.returncode == 0


def test_dangling_symlink_is_left_out(store: Store) -> None:
    files = store.agent().files
    files.write("notes/real.md", "real\n")
    os.symlink(files.root / "notes/gone.md", files.root / "notes/dangling.md")
    os.symlink(files.root / "notes/loop-b.md", files.root / "notes/loop-a.md")
    os.symlink(files.root / "notes/loop-a.md", files.root / "notes/loop-b.md")
    assert [f.path for f in files.list()] == ["notes", "notes/real.md"]
    assert [f.path for f in files.list("notes")] == ["notes/real.md"]
    h = ClaudeMemoryHandler(files)  # the memory tool's `view` lists through the same call
    text, err = h.handle_result({"command": "view", "path": "/memories"})
    assert not err and "real.md" in text and "dangling" not in text


def test_symlink_out_of_the_store_is_never_followed(store: Store, tmp_path: Path) -> None:
    files = store.agent().files
    files.write("notes/inside.md", "inside\n")
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_bytes(b"s" * 12345)
    os.symlink(secret, files.root / "notes/secret.md")
    os.symlink(secret.parent, files.root / "outdir")
    os.symlink(files.root / "notes/inside.md", files.root / "alias.md")  # inside: fine
    listed = {f.path: f for f in files.list()}
    assert set(listed) == {"alias.md", "notes", "notes/inside.md"}
    assert all(f.size != 12345 for f in listed.values())
    assert listed["alias.md"].size == len("inside\n")


@pytest.mark.parametrize(
    "rel",
    [
        "/".join(["d" * 60] * 7) + "/note.md",  # deep: its flattened name would be 430 bytes
        "/".join(["é" * 40] * 5) + ".md",  # 205 characters, but its flattened name is 420 bytes
    ],
)
def test_any_path_that_can_be_written_can_be_deleted(store: Store, rel: str) -> None:
    files = store.agent().files
    files.write(rel, "remember the deep note\n")
    archived = files.delete(rel)
    assert not files.exists(rel)
    assert (store.home / archived).read_text() == "remember the deep note\n"
    assert archived.endswith(rel)
    assert [h.layer for h in store.search("deep note")] == ["archive"]
