"""`memstrata demo` writes into a store of its own, never into the one `make run` serves."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

EXE = shutil.which("memstrata", path=str(Path(sys.executable).parent)) or "memstrata"


def _demo(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [EXE, "--home", str(home), "demo", *args], capture_output=True, text=True, timeout=120
    )


def test_demo_uses_a_fresh_store_each_run_and_leaves_home_alone(home: Path, tmp_path: Path) -> None:
    first, second = _demo(home), _demo(home)
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    stores = [Path(re.search(r"demo store: (\S+)", r.stdout).group(1)) for r in (first, second)]  # type: ignore[union-attr]
    try:
        assert stores[0] != stores[1]
        assert not home.exists()  # the served store was never created or written
        for store in stores:  # one ledger entry each: nothing duplicated
            assert len((store / "ledger.jsonl").read_text().splitlines()) == 1
        hint = first.stdout.strip().splitlines()[-1]
        assert hint.startswith("inspect it: ") and f"--home {stores[0]}" in hint
        exe = hint.split()[2]  # the printed command runs as printed
        shown = subprocess.run(
            [*hint.split(": ", 1)[1].split()], capture_output=True, text=True, timeout=60
        )
        assert shown.returncode == 0 and "Python decorators" in shown.stdout, (exe, shown.stderr)
    finally:
        for store in stores:
            shutil.rmtree(store, ignore_errors=True)


def test_demo_refuses_a_folder_that_is_not_empty(tmp_path: Path, home: Path) -> None:
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "keep.txt").write_text("mine")
    r = _demo(home, str(busy))
    assert r.returncode != 0 and "not an empty folder" in r.stderr
    assert [p.name for p in busy.iterdir()] == ["keep.txt"]
