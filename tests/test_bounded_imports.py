"""Imports of any size, and processes that write to many files, keep a bounded number of
descriptors (issue 20 item 2): a lock file is open only while its lock is held, plus a
small cache. The import runs as a real `memstrata import` process with RLIMIT_NOFILE 256
(importing a real 1,200-file export used to fail at 80% under `ulimit -n 1024`)."""

from __future__ import annotations

import hashlib
import io
import json
import os
import resource
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from memstrata import Store
from memstrata.files.locks import LockTable
from memstrata.operations.transfer import MANIFEST

EXE = str(Path(sys.executable).parent / "memstrata")
FILES = 5000


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_a_lock_file_is_open_only_while_held_plus_a_small_cache(tmp_path: Path) -> None:
    locks = LockTable(tmp_path / ".locks")
    before = _open_fds()
    for i in range(1000):
        with locks.hold(f"/store/agents/finn/sessions/s{i}.jsonl"), locks.hold(f"/store/x{i}"):
            pass
    assert locks.open_descriptors() <= LockTable.IDLE_FDS
    assert _open_fds() - before <= LockTable.IDLE_FDS
    locks.close()
    assert locks.open_descriptors() == 0
    assert _open_fds() == before


def test_a_released_lock_still_excludes_other_holders(tmp_path: Path) -> None:
    """Closing a lock file gives its flock back, never the reverse: a second table (another
    open file description, as another process has) waits while the first holds it."""
    a, b = LockTable(tmp_path / ".locks"), LockTable(tmp_path / ".locks")
    for i in range(LockTable.IDLE_FDS + 5):  # push the first lock out of the cache
        with a.hold(f"r{i}"):
            pass
    entered = threading.Event()
    with a.hold("r0"), a.hold("r0"):  # re-entrant
        t = threading.Thread(target=lambda: (b.hold("r0").__enter__(), entered.set()))
        t.start()
        assert not entered.wait(0.2)  # b is blocked while a holds r0
    assert entered.wait(30)
    t.join()
    a.close()
    b.close()


@pytest.fixture
def ram(tmp_path: Path) -> Iterator[Path]:
    """A folder in memory (/dev/shm) where there is one: this test is about descriptors,
    and 15,000 fsyncs on a shared disk would make it about the disk (`memstrata bench
    import` measures that)."""
    if not os.path.isdir("/dev/shm"):
        yield tmp_path
        return
    folder = Path(tempfile.mkdtemp(dir="/dev/shm", prefix="memstrata-test-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _archive(path: Path, n: int) -> Path:
    members = [
        (
            f"agents/a{i % 50}/memory/notes/n{i}.md",
            f"# note {i}\n\nimport note number {i}\n".encode(),
        )
        for i in range(n)
    ]
    files = [
        {"path": p, "size": len(d), "sha256": hashlib.sha256(d).hexdigest()} for p, d in members
    ]
    members.append((MANIFEST, json.dumps({"format": "memstrata-export", "files": files}).encode()))
    with tarfile.open(path, "w") as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_a_5000_file_import_runs_under_a_low_descriptor_limit(ram: Path) -> None:
    src = _archive(ram / "big.tar", FILES)
    home = ram / "store"
    r = subprocess.run(
        [EXE, "--home", str(home), "--json", "import", str(src)],
        capture_output=True,
        text=True,
        env={**os.environ, "MEMSTRATA_HOME": str(home)},
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256)),
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    report = json.loads(r.stdout)
    assert report["files"] == report["written"] == FILES
    assert (home / "agents/a7/memory/notes/n4957.md").read_text() == (
        "# note 4957\n\nimport note number 4957\n"
    )
    with Store(home) as s:
        hits = s.search("number 4957")
        assert any(h.source.endswith("n4957.md") for h in hits)
