"""The embedding daemon: the CLI asks a long-running process that keeps the model."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memstrata.embed import daemon
from memstrata.embed.base import FakeEmbedder

# These stores name their embedder in config.toml: no MEMSTRATA_EMBEDDER over it.
pytestmark = pytest.mark.usefixtures("semantic_default")


EXE = shutil.which("memstrata", path=str(Path(sys.executable).parent)) or "memstrata"


@pytest.fixture
def runtime(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    # A short private folder of its own (pytest's tmp_path can be too deep for a socket).
    rt = Path(tempfile.mkdtemp(prefix="ms-rt-", dir="/tmp"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(rt))
    monkeypatch.setenv("MEMSTRATA_EMBED_IDLE", "60")
    yield rt
    shutil.rmtree(rt, ignore_errors=True)


def test_a_deep_runtime_folder_still_gives_a_socket_path_that_fits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(deep))
    monkeypatch.setenv("TMPDIR", str(deep))
    monkeypatch.setattr(tempfile, "tempdir", None)
    path = daemon.socket_path("fake:16")
    assert len(str(path)) <= daemon.SUN_PATH_MAX and not str(path).startswith(str(deep))
    assert path.parent.stat().st_mode & 0o777 == 0o700


def _stop(path: Path) -> None:
    """Stop the daemon the test started, by the pid it reports."""
    if path.exists():
        os.kill(daemon._ask(path, {"texts": []}, 10)["pid"], 15)


def test_daemon_embeds_like_the_embedder_and_is_started_once(runtime: Path) -> None:
    a, b = daemon.DaemonEmbedder("fake:16"), daemon.DaemonEmbedder("fake:16")
    try:
        assert a.embed(["red apple"]) == FakeEmbedder(16).embed(["red apple"])
        assert (a.model_id, a.dim) == ("fake-hash-16", 16)
        pid_files = list(runtime.glob("memstrata-*/embed-*.sock"))
        assert len(pid_files) == 1
        ino = pid_files[0].stat().st_ino
        assert b.embed(["x", "y"]) == FakeEmbedder(16).embed(["x", "y"])  # reused, not restarted
        assert pid_files[0].stat().st_ino == ino
    finally:
        _stop(a.path)


def test_a_stale_socket_is_replaced(runtime: Path) -> None:
    e = daemon.DaemonEmbedder("fake:8")
    e.path.parent.mkdir(parents=True, exist_ok=True)
    e.path.write_text("")  # a daemon that died and left its socket path behind
    try:
        assert e.embed(["z"]) == FakeEmbedder(8).embed(["z"])
    finally:
        _stop(e.path)


@pytest.mark.model
@pytest.mark.skipif(
    importlib.util.find_spec("sentence_transformers") is None,
    reason="the `local` embedder needs the dev extras (sentence-transformers)",
)
@pytest.mark.timeout(900)  # a hang guard: the daemon loads torch, minutes on a loaded machine
def test_cli_semantic_search_keeps_the_model_in_the_daemon(runtime: Path, home: Path) -> None:
    # (found, not imported: importing torch in the test process alone took over the
    # suite's 120 s beside a load average of 30, and the test never uses it here)
    home.mkdir(parents=True)
    (home / "config.toml").write_text('[search]\nembedder = "local"\n')
    for text in ("we chose PostgreSQL for the database", "the editor is Neovim"):
        subprocess.run(
            [EXE, "--home", str(home), "--agent", "a", "log", "append", "THOUGHT", text],
            check=True,
            capture_output=True,
            timeout=60,
        )
    probe = (
        "import sys\nfrom memstrata.cli.main import main\n"
        "main(['--home', sys.argv[1], '--json', 'search', 'which text editor', '--mode',"
        " 'semantic', '-k', '1'])\n"
        "print('torch' in sys.modules, 'sentence_transformers' in sys.modules,"
        " file=sys.stderr)\n"
    )
    sock = daemon.socket_path("local")
    outs, daemons = [], []
    try:
        for _ in range(2):
            r = subprocess.run(
                [sys.executable, "-c", probe, str(home)],
                capture_output=True,
                text=True,
                timeout=400,
            )
            assert r.returncode == 0, r.stderr
            assert r.stderr.strip().splitlines()[-1] == "False False"  # no model in the CLI
            outs.append(json.loads(r.stdout))
            # the daemon that answered: its pid, and the socket it listens on
            daemons.append((daemon._ask(sock, {"texts": []}, 60)["pid"], sock.stat().st_ino))
        assert [h["uid"] for h in outs[0]] == [h["uid"] for h in outs[1]]
        assert "Neovim" in outs[0][0]["snippet"]
        # the second search asked the daemon the first one started: the model stayed loaded
        # (was `second call faster than the first`, a wall-clock comparison)
        assert daemons[0] == daemons[1]
    finally:
        _stop(sock)


def test_a_build_request_returns_at_once_and_the_daemon_builds_the_store(
    runtime: Path, home: Path
) -> None:
    """What a CLI write does (`cli.common.build_via_daemon`): ask and exit; the daemon
    (started by the request) builds the store's vectors after the write."""
    import sqlite3

    from memstrata.index.generations import live_database
    from memstrata.store.view import Store

    home.mkdir(parents=True)
    (home / "config.toml").write_text('[search]\nembedder = "fake:16"\n')
    with Store(home, agent="a") as store:
        store.semantic.builds = "off"
        for i in range(5):
            store.agent().log.append("THOUGHT", f"note number {i}")
    t = time.perf_counter()
    daemon.request_build("fake:16", home)
    assert time.perf_counter() - t < 5  # never waits for the model or the build
    path = daemon.socket_path("fake:16")
    try:
        deadline = time.monotonic() + 120
        count = 0
        while time.monotonic() < deadline:
            db = live_database(home / "index")
            if db is not None:
                with sqlite3.connect(db) as conn:
                    count = conn.execute("SELECT count(*) FROM vectors").fetchone()[0]
            if count == 5:
                break
            time.sleep(0.1)  # polling for the daemon's result, bounded by the deadline
        assert count == 5
    finally:
        deadline = time.monotonic() + 60
        while not path.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        _stop(path)


def test_a_hook_leaves_the_vectors_of_its_writes_to_the_daemon(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hook process with the default settings (hybrid: the model's files are installed)
    asks the daemon for the build and returns: it never loads the model to embed what it
    logged (before: every hook process embedded on close, a second or more per tool call)."""
    import io

    from memstrata.cli.main import main
    from memstrata.embed import model_files
    from memstrata.store.semantic import Semantic

    if not model_files.runtime_installed() or model_files.find() is None:
        pytest.skip("numpy, tokenizers or the all-MiniLM-L6-v2 files are not installed")
    asked: list[tuple[str, Path]] = []
    monkeypatch.setattr(daemon, "request_build", lambda spec, h: asked.append((spec, h)))

    def no_model(self: Semantic) -> None:
        raise AssertionError("the hook process loaded the embedder")

    monkeypatch.setattr(Semantic, "embedder", no_model)
    payload = {
        "session_id": "s1",
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "pytest -q"},
        "tool_response": {"stdout": "3 passed", "exit_code": 0},
        "tool_use_id": "toolu_1",
    }
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(payload)))
    assert main(["--home", str(home), "--agent", "me", "hook", "post-tool-use"]) == 0
    assert asked and asked[0][1] == home
