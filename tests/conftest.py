"""Shared fixtures: every test gets its own store home under tmp_path.

`backend` runs a test against both truths: the local files, and a real PostgreSQL
server (one per session, a fresh database per test; see `pgserver`). A test that
takes it opens its stores as usual: `MEMSTRATA_DATABASE_URL` names the database.
"""

from __future__ import annotations

import os
import subprocess
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

import freshvenv
import minilm_reference
from daemons import stop_embedding_daemons
from memstrata import Store
from pgserver import PgServer, unavailable_reason

# The suite's slowest files, slowest first (`--durations`, on 2 cores). `make test` runs
# `--dist loadfile`: each worker takes whole files from one queue. xdist orders that queue
# by the number of tests in a file, which queued these few-test, long files last, where
# one worker could be left running the last of them alone while the other idled. Queued
# first instead, the short files fill in around them at the end. (Re-measure when a file
# becomes slow.)
SLOWEST_FILES = (  # measured 2026-11-27 23:47-00:21 UTC, the suite beside a load average of ~25
    "tests/test_bench_agent.py",
    "tests/test_durability.py",
    "tests/test_pg_hosts.py",
    "tests/test_transfer.py",
    "tests/cli/test_cli.py",
    "tests/test_purge.py",
    "tests/test_recall_surfaces.py",
    "tests/mcp/test_revisions.py",
    "tests/web/test_api_search_archives_stream.py",
    "tests/web/test_browser_webapp.py",
    "tests/test_docs_examples.py",
    "tests/test_versions_e2e.py",
    "tests/web/test_api_property.py",
    "tests/test_archive_authority.py",
    # Its reference is computed in the background from the run's start when not cached
    # (`minilm_reference`): queued after the slowest files, so that it has had the time.
    "tests/embed/test_minilm_equivalence.py",
    # Its venv is built in the background from the run's start (`freshvenv`): queued after
    # the slowest files, so that build has ended when a worker comes to it.
    "tests/test_default_install.py",
)


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config.option, "loadscopereorder"):  # pytest-xdist: keep the order below
        config.option.loadscopereorder = False
    if _builds_default_install_in_background(config):
        proc, venv = freshvenv.start_background()
        os.environ[freshvenv.BACKGROUND_VAR] = str(venv)  # the workers, started next, see it
        config.add_cleanup(lambda: freshvenv.stop_background(proc, venv))
    reference = _minilm_reference_to_compute(config)
    if reference is not None:
        ref_proc = minilm_reference.start_background(reference)
        os.environ[minilm_reference.BACKGROUND_VAR] = f"{ref_proc.pid}:{reference}"
        config.add_cleanup(lambda: minilm_reference.stop_background(ref_proc, reference))


def _builds_default_install_in_background(config: pytest.Config) -> bool:
    """In the xdist controller of a run that includes tests/test_default_install.py (the
    whole suite, or that file): its venv is built while the other tests run."""
    if "venv" in (config.option.markexpr or ""):  # -m "not venv" (or only venv: no gain)
        return False
    return _xdist_controller_running(config, "test_default_install.py")


def _minilm_reference_to_compute(config: pytest.Config) -> Path | None:
    """In the xdist controller of a run that includes the MiniLM equivalence test, where
    the reference is installed but not in the pytest cache: the file to compute it into
    (see `minilm_reference`)."""
    if "model" in (config.option.markexpr or ""):  # -m "not model"
        return None
    if not _xdist_controller_running(config, "embed/test_minilm_equivalence.py"):
        return None
    if not minilm_reference.installed():
        return None
    name = f"{minilm_reference.key(minilm_reference.texts())}.npz"
    cache = getattr(config, "cache", None)
    if cache is None:  # -p no:cacheprovider: for this run only
        import tempfile

        return Path(tempfile.mkdtemp(prefix=minilm_reference.TEMP_PREFIX)) / name
    kept = cache.mkdir(minilm_reference.CACHE_DIR) / name
    return None if kept.exists() else kept


def _xdist_controller_running(config: pytest.Config, test_file: str) -> bool:
    """Is this the xdist controller of a run that includes tests/<test_file> (the whole
    suite, a folder above it, or that file)?"""
    if hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None):
        return False
    target = Path(__file__).parent.joinpath(test_file).resolve()
    args = [Path(a.split("::", 1)[0]).resolve() for a in config.args] or [Path.cwd()]
    return any(target == a or a in target.parents for a in args)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The slowest files first, then the others by their number of tests (xdist's own
    order), each file's tests in their order."""
    rank = {name: i for i, name in enumerate(SLOWEST_FILES)}
    counts = Counter(item.nodeid.split("::", 1)[0] for item in items)

    def key(item: pytest.Item) -> tuple[int, int]:
        path = item.nodeid.split("::", 1)[0]
        return (rank.get(path, len(rank)), -counts[path] if path not in rank else 0)

    items.sort(key=key)


@pytest.fixture(scope="session")
def _runtime_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This run's own folder for the per-user embedding daemon's socket (`embed.daemon`):
    without it, the suite's CLI processes asked the daemon of /tmp/memstrata-<uid>, which
    another run (another checkout's code, on a shared machine) may have started."""
    return tmp_path_factory.mktemp("run")


@pytest.fixture(scope="session", autouse=True)
def _no_daemon_left(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """No embedding daemon this run started outlives it (see `stop_embedding_daemons`)."""
    yield
    stop_embedding_daemons(tmp_path_factory.getbasetemp())


@pytest.fixture(scope="session", autouse=True)
def _isolated_run(_runtime_dir: Path) -> Iterator[None]:
    """`_isolated_home`'s isolation for what runs before it: module- and session-scoped
    fixtures (a module's server, a store built once) are set up before any test's own
    environment, and their CLI processes and stores asked the daemon of
    /tmp/memstrata-<uid> (another run's, another checkout's code) to embed what they
    wrote. The embedder itself is left to each such fixture (some build hybrid stores)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_RUNTIME_DIR", str(_runtime_dir))
        mp.setenv("MEMSTRATA_EMBED_IDLE", "120")
        mp.setenv("HF_HUB_OFFLINE", "1")
        yield


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, _runtime_dir: Path) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("MEMSTRATA_HOME", str(home))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(_runtime_dir))
    monkeypatch.setenv("MEMSTRATA_EMBED_IDLE", "120")  # a daemon the run started ends soon after
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # no test downloads a model (embed/model_files)
    # A fresh store is hybrid when all-MiniLM-L6-v2 is installed (it is here), and every
    # write would start embedding in the background: ordinary tests search lexically.
    # Tests about semantic recall take the `semantic_default` fixture (or hand a store an
    # embedder: `Store.use_embedder` wins over this).
    monkeypatch.setenv("MEMSTRATA_EMBEDDER", "none")
    for var in (
        "MEMSTRATA_AGENT",
        "MEMSTRATA_ROOM",
        "MEMSTRATA_LLM_BASE_URL",
        "OPENAI_API_KEY",
        "MEMSTRATA_DATABASE_URL",
    ):
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture
def semantic_default(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stores with the default install's settings: no `MEMSTRATA_EMBEDDER`, so a store's
    own `[search] embedder` (or, unset, all-MiniLM-L6-v2 when its files are found) applies."""
    monkeypatch.delenv("MEMSTRATA_EMBEDDER", raising=False)


@pytest.fixture
def home(_isolated_home: Path) -> Path:
    return _isolated_home


@pytest.fixture
def store(home: Path) -> Iterator[Store]:
    s = Store(home, agent="finn", room="room-1")
    yield s
    s.close()


@pytest.fixture
def admin(home: Path) -> Iterator[Store]:
    s = Store(home, role="admin")
    yield s
    s.close()


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """One real PostgreSQL server for the session (skipped, with the reason, if impossible)."""
    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(reason)
    server = PgServer.start_new()
    yield server
    server.destroy()


@pytest.fixture
def pg_url(pg_server: PgServer) -> str:
    """An empty database on the session's server (one database, emptied before each test:
    far cheaper than CREATE DATABASE per test)."""
    return pg_server.empty_database()


@pytest.fixture(params=["local", "postgres"])
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """ "local" or "postgres": where the stores this test opens keep their truth."""
    if request.param == "postgres":
        url = request.getfixturevalue("pg_url")
        monkeypatch.setenv("MEMSTRATA_DATABASE_URL", url)
    return str(request.param)


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    """A real 2 MiB tmpfs (a disk that fills up), unmounted afterwards; skipped with a
    reason where mounting is not allowed (CI runs the suite as root)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root (CI runs the suite as root)")
    mnt = tmp_path / "disk"
    mnt.mkdir()
    r = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mnt)], capture_output=True, text=True
    )
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["mount", "-o", "remount,rw", str(mnt)], capture_output=True)
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)
