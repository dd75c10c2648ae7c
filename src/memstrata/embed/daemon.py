"""A small per-user embedding daemon, so a CLI query does not load the model every time.

Loading sentence-transformers and its model costs 10-30 s of CPU; a CLI process
that embeds one query would pay it on every call. The CLI instead asks a
long-running process that keeps the model, over a Unix socket:

    client (any CLI call)                     daemon (one per user and model spec)
    connect <runtime>/embed-<hash>.sock  -->  one JSON line in:  {"texts": [...]}
                                         <--  one JSON line out: {"model_id", "dim", "vectors"}

* The first call finds no daemon, starts one (detached, its own session) and
  waits for it: that call pays the model load once. Later calls pay a process
  start, the store and a socket round trip.
* The socket lives in a folder only the user can enter (0700), under
  `$XDG_RUNTIME_DIR` or the temp dir; a stale socket (daemon gone) is replaced.
* The daemon exits after `MEMSTRATA_EMBED_IDLE` seconds without a request
  (default 1200), and on SIGTERM.
* Only the CLI uses it, for the `local` embedder (`[search] embedder`) to embed
  queries, and for any embedder to build a store's vectors after a write; a library
  user or the MCP server is a long-running process already and does both in-process.
  `MEMSTRATA_EMBED_DAEMON=0` turns it off.
* Building: `{"build": "<store folder>"}` queues a build of that store's vectors
  (`VectorIndex.build`) and is answered at once; one builder thread works through the
  queue (a store asked for again while queued is built once). The CLI sends it after
  a write and never waits (`request_build`, which starts the daemon if none runs and
  does not wait for that either). The daemon does not idle out while it builds.

The process is `python -m memstrata.store.vector_daemon SPEC SOCKET [STORE]`: it runs
`serve` with the store builds (which open the store: its part, so that this package
never imports the store).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from memstrata.embed import daemon_enabled
from memstrata.errors import ProviderError

IDLE_SECONDS = 1200.0
START_TIMEOUT = 300.0  # the first start loads torch and the model
ASK_BUILD_TIMEOUT = 5.0  # a build request is answered at once (after a running embed)
MAX_LINE = 64 * 1024 * 1024
PROCESS = "memstrata.store.vector_daemon"  # the daemon's entry point (`python -m`)
Build = Callable[[Path, Any], None]  # build the vectors of the store at a home with an embedder


SUN_PATH_MAX = 100  # a Unix socket's path must fit in sun_path (108 bytes on Linux)


def runtime_dir() -> Path:
    """A folder only this user can enter, short enough for a socket path inside it:
    $XDG_RUNTIME_DIR, else the temp folder, else /tmp (a deep TMPDIR does not fit)."""
    name = f"memstrata-{os.getuid()}"
    bases = [b for b in (os.environ.get("XDG_RUNTIME_DIR"), tempfile.gettempdir(), "/tmp") if b]
    base = next(
        (b for b in bases if len(f"{b}/{name}/embed-0123456789ab.sock") <= SUN_PATH_MAX), "/tmp"
    )
    path = Path(base) / name
    path.mkdir(mode=0o700, exist_ok=True)
    if path.stat().st_uid != os.getuid() or path.stat().st_mode & 0o077:
        raise ProviderError(f"{path} must be a folder only you can enter (mode 0700)")
    return path


def socket_path(spec: str) -> Path:
    return runtime_dir() / f"embed-{hashlib.sha256(spec.encode()).hexdigest()[:12]}.sock"


def enabled() -> bool:
    return daemon_enabled()


def _ask(path: Path, request: dict[str, Any], timeout: float) -> dict[str, Any]:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(str(path))
        s.sendall(json.dumps(request).encode() + b"\n")
        with s.makefile("rb") as f:
            line = f.readline(MAX_LINE)
    if not line:
        raise ProviderError("the embedding daemon closed the connection")
    reply: dict[str, Any] = json.loads(line)
    if "error" in reply:
        raise ProviderError(f"embedding daemon: {reply['error']}")
    return reply


class DaemonEmbedder:
    """An `Embedder` whose model lives in the daemon (started on first use)."""

    def __init__(self, spec: str) -> None:
        self.spec = spec
        self.path = socket_path(spec)
        self._info: dict[str, Any] | None = None

    def _request(self, texts: Sequence[str]) -> dict[str, Any]:
        try:
            return _ask(self.path, {"texts": list(texts)}, START_TIMEOUT)
        except (FileNotFoundError, ConnectionRefusedError):
            self._start()
            return _ask(self.path, {"texts": list(texts)}, START_TIMEOUT)

    def _start(self) -> None:
        """Start the daemon unless another process just did, and wait until it listens."""
        import fcntl

        with open(self.path.with_suffix(".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            with contextlib.suppress(FileNotFoundError, ConnectionRefusedError, OSError):
                _ask(self.path, {"texts": []}, 5.0)
                return  # someone else started it meanwhile
            if _starting(self.path):  # started by `request_build`: wait for it to listen
                deadline = time.monotonic() + START_TIMEOUT
                while _starting(self.path) and not self.path.exists():
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.05)
                if self.path.exists():
                    return
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()  # a stale socket of a daemon that is gone
            _spawn(self.spec, self.path)
            deadline = time.monotonic() + START_TIMEOUT
            while not self.path.exists():
                if time.monotonic() > deadline:
                    raise ProviderError(
                        f"the embedding daemon did not start; see {self.path.with_suffix('.log')}"
                    )
                time.sleep(0.05)

    def _ensure_info(self) -> dict[str, Any]:
        if self._info is None:
            self._info = self._request([])
        return self._info

    @property
    def model_id(self) -> str:
        return str(self._ensure_info()["model_id"])

    @property
    def dim(self) -> int:
        return int(self._ensure_info()["dim"])

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        reply = self._request(texts)
        self._info = {"model_id": reply["model_id"], "dim": reply["dim"]}
        vectors: list[list[float]] = reply["vectors"]
        return vectors


def request_build(spec: str, home: Path) -> None:
    """Ask the daemon of `spec` to build the vectors of the store at `home`; never waits
    for the build, nor for a daemon it has to start (the new daemon builds `home` first)."""
    import fcntl

    path = socket_path(spec)
    with contextlib.suppress(FileNotFoundError, ConnectionRefusedError, OSError, ProviderError):
        _ask(path, {"build": str(home)}, ASK_BUILD_TIMEOUT)
        return
    with open(path.with_suffix(".lock"), "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return  # a daemon is being started: the next write or search asks again
        if _starting(path):
            return  # the same: one daemon loads the model, not one per caller
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # a stale socket of a daemon that is gone
        _spawn(spec, path, home)


def _alive(pid: str) -> bool:
    if not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except OSError:
        return False
    return True


def _starting(path: Path) -> bool:
    """Is a daemon for `path` starting: spawned (`<socket>.starting` names its pid) or
    loading its model (its `<socket>.<pid>.tmp`), its pid alive?

    The `.starting` file covers the seconds before a new daemon binds its `.tmp` socket
    (the interpreter starting, its imports): without it, on a loaded machine, a search
    and a write's build request in that window each started a daemon of their own, each
    loading the model, the later one's socket replacing the earlier's."""
    with contextlib.suppress(OSError):
        if _alive(path.with_suffix(".starting").read_text(encoding="ascii").strip()):
            return True
    for tmp in path.parent.glob(f"{path.stem}.*.tmp"):
        if len(tmp.suffixes) >= 2 and _alive(tmp.suffixes[-2].lstrip(".")):
            return True
    return False


def _spawn(spec: str, path: Path, home: Path | None = None) -> None:
    """Start a daemon for `path` (the caller holds `<socket>.lock`) and note its pid in
    `<socket>.starting` until it listens (`_starting`)."""
    log = open(path.with_suffix(".log"), "ab")  # noqa: SIM115 - handed to the child
    proc = subprocess.Popen(
        [sys.executable, "-m", PROCESS, spec, str(path)]
        + ([str(home)] if home is not None else []),
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
        start_new_session=True,
        close_fds=True,
    )
    log.close()
    path.with_suffix(".starting").write_text(str(proc.pid), encoding="ascii")


class _Builder:
    """Builds the vectors of the stores asked for, one at a time, in a thread."""

    def __init__(self, embedder: Any, lock: threading.Lock, build: Build | None) -> None:
        self.embedder, self.lock, self.build = embedder, lock, build
        self.queue: list[str] = []
        self.cond = threading.Condition()
        self.busy = False
        threading.Thread(target=self._run, name="memstrata vectors", daemon=True).start()

    def ask(self, home: str) -> None:
        with self.cond:
            if home not in self.queue:
                self.queue.append(home)
            self.cond.notify()

    def working(self) -> bool:
        with self.cond:
            return self.busy or bool(self.queue)

    def _run(self) -> None:
        while True:
            with self.cond:
                while not self.queue:
                    self.busy = False
                    self.cond.wait()
                home, self.busy = self.queue.pop(0), True
            try:
                self._build(Path(home))
            except Exception as exc:  # one store's failure must not end the daemon
                sys.stderr.write(f"memstrata: building the vectors of {home} failed: {exc}\n")

    def _build(self, home: Path) -> None:
        if self.build is None:
            raise RuntimeError("this daemon builds no stores (started without a builder)")
        self.build(home, _Locked(self.embedder, self.lock))


class _Locked:
    """The daemon's embedder, one caller at a time (queries wait at most one batch)."""

    def __init__(self, embedder: Any, lock: threading.Lock) -> None:
        self.inner, self.lock = embedder, lock
        self.model_id, self.dim = embedder.model_id, embedder.dim

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        with self.lock:
            out: list[list[float]] = self.inner.embed(texts)
            return out

    def __getattr__(self, name: str) -> Any:
        """`embed_tokens` when the inner embedder has it (builds keep token vectors)."""
        if name != "embed_tokens" or not hasattr(self.inner, name):
            raise AttributeError(name)
        inner = self.inner.embed_tokens

        def embed_tokens(texts: Sequence[str]) -> Any:
            with self.lock:
                return inner(texts)

        return embed_tokens


def serve(
    spec: str,
    path: Path,
    idle: float | None = None,
    home: Path | None = None,
    build: Build | None = None,
) -> None:
    """Bind `path`, load the embedder, answer requests until idle for `idle` seconds
    (and no build is running); build `home`'s vectors first if given, with `build`."""
    import signal

    from memstrata.embed import make_embedder

    idle = idle if idle is not None else float(os.environ.get("MEMSTRATA_EMBED_IDLE", IDLE_SECONDS))
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    server.bind(str(tmp))
    os.chmod(tmp, 0o600)
    server.listen(16)
    embedder = make_embedder(spec)  # loads the model: clients wait in the backlog meanwhile
    embedder.embed(["warm up"])
    lock = threading.Lock()
    builder = _Builder(embedder, lock, build)
    if home is not None:
        builder.ask(str(home))
    os.replace(tmp, path)  # visible only once it can answer
    mine = os.stat(path).st_ino
    with contextlib.suppress(OSError):  # started: no longer `_starting`
        starting = path.with_suffix(".starting")
        if starting.read_text(encoding="ascii").strip() == str(os.getpid()):
            starting.unlink()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    server.settimeout(idle)
    try:
        while True:
            try:
                conn, _ = server.accept()
            except TimeoutError:
                if builder.working():
                    continue
                return
            with conn, conn.makefile("rwb") as f:
                try:
                    req = json.loads(f.readline(MAX_LINE) or b"{}")
                    texts = req.get("texts") or []
                    if isinstance(req.get("build"), str):
                        builder.ask(req["build"])
                    with lock:
                        vectors = embedder.embed(texts) if texts else []
                    reply: dict[str, Any] = {
                        "model_id": embedder.model_id,
                        "dim": embedder.dim,
                        "pid": os.getpid(),
                        "vectors": vectors,
                    }
                except Exception as exc:  # one bad request must not end the daemon
                    reply = {"error": f"{type(exc).__name__}: {exc}"}
                f.write(json.dumps(reply).encode() + b"\n")
                f.flush()
    finally:
        with contextlib.suppress(FileNotFoundError):
            if os.stat(path).st_ino == mine:  # not a successor's socket
                path.unlink()
        server.close()
