"""Imports at their edges (issue 20 item 8), with real processes and real archives on disk:
the staging race with a process opening the store, a truncated archive, and members
that differ only by case.

Before: an import failed with a raw `No such file or directory: .../.imports/<id>` while
other processes opened the store (the staging folder was created before its lock was
taken, so an opener's recovery removed it); a `.tar` cut off inside a member gave
`ReadError ... (an internal error)`; `Notes.md` and `notes.md` both imported.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from memstrata.operations.transfer import MANIFEST

EXE = shutil.which("memstrata", path=str(Path(sys.executable).parent)) or "memstrata"


def archive(path: Path, members: list[tuple[str, bytes]], fmt: str = "w") -> Path:
    rows = [
        {"path": n, "size": len(d), "sha256": hashlib.sha256(d).hexdigest()} for n, d in members
    ]
    with tarfile.open(path, fmt) as tar:  # type: ignore[call-overload]
        for name, data in [*members, (MANIFEST, json.dumps({"files": rows}).encode())]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [EXE, "--home", str(home), *args],
        capture_output=True,
        text=True,
        env={**os.environ, "MEMSTRATA_HOME": str(home)},
        timeout=120,
    )


# The importer, paused after `.imports/` exists and before its own staging folder in it
# does (the two `mkdir`s of `Path.mkdir(parents=True)`), until the test says go. An
# opener meanwhile finds `.imports/` empty and tidies it away.
PAUSED_IMPORTER = """
import pathlib, sys, time

ready, go = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
mkdir = pathlib.Path.mkdir

def paused(self, mode=0o777, parents=False, exist_ok=False):
    if self.parent.name == ".imports" and not parents and not ready.exists():
        ready.touch()
        while not go.exists():
            time.sleep(0.01)
    return mkdir(self, mode, parents, exist_ok)

pathlib.Path.mkdir = paused
from memstrata.cli.main import main
sys.exit(main(sys.argv[3:]))
"""


def test_a_process_opening_the_store_never_breaks_a_running_import(
    home: Path, tmp_path: Path
) -> None:
    src = archive(tmp_path / "a.tar", [("agents/finn/memory/notes.md", b"# notes\n")])
    assert cli(home, "--agent", "finn", "facts", "set", "k", "v").returncode == 0
    ready, go = tmp_path / "ready", tmp_path / "go"
    importer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            PAUSED_IMPORTER,
            str(ready),
            str(go),
            "--home",
            str(home),
            "import",
            str(src),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not ready.exists():  # the importer made .imports/ and is about to stage in it
            assert importer.poll() is None, importer.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.01)
        opener = cli(home, "--agent", "finn", "facts", "get", "k")  # opens the store
        assert opener.returncode == 0, opener.stderr
    finally:
        go.touch()
    out, err = importer.communicate(timeout=120)
    assert importer.returncode == 0, err
    assert "imported 1 files" in out
    assert (home / "agents/finn/memory/notes.md").read_text() == "# notes\n"
    assert not (home / ".imports").exists()


@pytest.mark.parametrize("cut", [512, 1500, 40_000])
def test_a_truncated_tar_is_not_a_readable_archive(home: Path, tmp_path: Path, cut: int) -> None:
    whole = archive(
        tmp_path / "whole.tar",
        [("agents/finn/memory/big.md", b"x" * 100_000), ("agents/finn/memory/b.md", b"b\n")],
    )
    cut_off = tmp_path / "cut.tar"
    cut_off.write_bytes(whole.read_bytes()[:cut])
    r = cli(home, "import", str(cut_off))
    assert r.returncode == 2, r.stderr
    assert "not a readable archive" in r.stderr and "internal error" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert not (home / "agents").exists() and not (home / ".imports").exists()


def test_members_that_differ_only_by_case_are_refused(home: Path, tmp_path: Path) -> None:
    for members, said in [
        (
            [("agents/finn/memory/Notes.md", b"a\n"), ("agents/finn/memory/notes.md", b"b\n")],
            "'agents/finn/memory/Notes.md' and 'agents/finn/memory/notes.md' differ only by case",
        ),
        (
            [("agents/finn/memory/Plans/a.md", b"a\n"), ("agents/finn/memory/plans/b.md", b"b")],
            "'agents/finn/memory/Plans' and 'agents/finn/memory/plans' differ only by case",
        ),
    ]:
        r = cli(home, "import", str(archive(tmp_path / "case.tar", members)))
        assert r.returncode == 2, r.stderr
        assert said in r.stderr and "internal error" not in r.stderr, r.stderr
        assert not (home / "agents").exists()
        (tmp_path / "case.tar").unlink()
    # Names that only look alike in other ways import side by side.
    fine = [("agents/finn/memory/notes.md", b"a\n"), ("agents/finn/memory/notes-2.md", b"b\n")]
    assert cli(home, "import", str(archive(tmp_path / "fine.tar", fine))).returncode == 0


def test_an_archive_member_with_a_bad_name_is_refused(home: Path, tmp_path: Path) -> None:
    for name, said in [
        ("agents/finn/memory/invoice\u202egpj.md", "U+202E"),
        ("agents/finn/memory/cafe\u0301.md", "NFC"),
    ]:
        r = cli(home, "import", str(archive(tmp_path / "bad.tar", [(name, b"x\n")])))
        assert r.returncode == 2 and said in r.stderr, r.stderr
        assert not (home / "agents").exists()
        (tmp_path / "bad.tar").unlink()
