"""Cross-process exclusive locks on lock files (`fcntl.flock`), re-entrant per thread.

Every durable append and every read-modify-write of a source file happens under
its lock. Lock files live in `<home>/.locks/` so the data files themselves are
never opened for locking (a reader with `cat` is never blocked). flock locks are
released by the kernel when a holder dies, so a SIGKILLed writer never leaves a
stale lock behind.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from memstrata.errors import LockTimeout
from memstrata.files.diskerrors import disk_errors

DEFAULT_TIMEOUT_S = 30.0


class LockTable:
    """Per-process cache of open lock-file descriptors, one per locked resource."""

    def __init__(self, lock_dir: Path) -> None:
        self._dir = lock_dir
        self._fds: dict[str, int] = {}
        self._thread_locks: dict[str, threading.RLock] = {}
        self._depth: dict[str, int] = {}
        self._guard = threading.Lock()

    def _fd(self, name: str) -> tuple[int, threading.RLock]:
        with self._guard:
            fd = self._fds.get(name)
            if fd is None:
                with disk_errors(self._dir):
                    self._dir.mkdir(parents=True, exist_ok=True)
                    fd = os.open(self._dir / name, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
                self._fds[name] = fd
                self._thread_locks[name] = threading.RLock()
                self._depth[name] = 0
            return fd, self._thread_locks[name]

    @contextlib.contextmanager
    def hold(self, resource: str, timeout: float = DEFAULT_TIMEOUT_S) -> Iterator[None]:
        """Hold the exclusive lock for `resource` (any string, usually a path)."""
        name = _lock_name(resource)
        fd, tlock = self._fd(name)
        if not tlock.acquire(timeout=timeout):
            raise LockTimeout(f"timed out after {timeout}s waiting for lock on {resource}")
        try:
            if self._depth[name] == 0:
                _flock(fd, timeout, resource)
            self._depth[name] += 1
            try:
                yield
            finally:
                self._depth[name] -= 1
                if self._depth[name] == 0:
                    fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            tlock.release()

    def close(self) -> None:
        with self._guard:
            for fd in self._fds.values():
                with contextlib.suppress(OSError):
                    os.close(fd)
            self._fds.clear()


def _flock(fd: int, timeout: float, resource: str) -> None:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return
    except BlockingIOError:
        pass
    deadline = time.monotonic() + timeout
    delay = 0.0005
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise LockTimeout(
                    f"timed out after {timeout}s waiting for lock on {resource}"
                ) from None
            time.sleep(delay)
            delay = min(delay * 2, 0.01)


@functools.lru_cache(maxsize=4096)  # every append/rewrite/event names its lock again
def _lock_name(resource: str) -> str:
    digest = hashlib.sha1(resource.encode("utf-8", "surrogatepass")).hexdigest()[:20]
    tail = "".join(c if c.isalnum() or c in "-_." else "_" for c in resource[-40:])
    return f"{tail}.{digest}.lock"
