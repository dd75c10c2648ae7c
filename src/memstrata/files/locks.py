"""Cross-process exclusive locks on lock files (`fcntl.flock`), re-entrant per thread.

Every durable append and every read-modify-write of a source file happens under
its lock. Lock files live in `<home>/.locks/` so the data files themselves are
never opened for locking (a reader with `cat` is never blocked). flock locks are
released by the kernel when a holder dies, so a SIGKILLed writer never leaves a
stale lock behind. A lock file is open only while its lock is held (plus a small
cache of recently released ones), so a server that writes to 100,000 files keeps
a bounded number of descriptors.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path

from memstrata.errors import LockTimeout
from memstrata.files.diskerrors import disk_errors

DEFAULT_TIMEOUT_S = 30.0


class _Slot:
    """One resource while some thread holds or waits for it."""

    __slots__ = ("depth", "fd", "thread_lock", "users")

    def __init__(self) -> None:
        self.thread_lock = threading.RLock()
        self.depth = 0  # re-entrant holds by the owning thread
        self.fd: int | None = None  # open (and flocked) while depth > 0
        self.users = 0  # threads holding or waiting: the slot goes when none is left


class LockTable:
    """The locks of one process on the lock files of one folder.

    A lock file is opened when its lock is taken and given back when the last
    (re-entrant) hold ends, so a long-lived process holds no descriptor per file it
    ever wrote: only the locks held right now, plus at most `IDLE_FDS` descriptors
    of recently released locks kept open for the next hold of the same file (the
    audit trail and a busy LOG are locked on every write). Bookkeeping of a resource
    lasts as long as some thread holds or waits for it.
    """

    IDLE_FDS = 32

    def __init__(self, lock_dir: Path) -> None:
        self._dir = lock_dir
        self._slots: dict[str, _Slot] = {}
        self._idle: OrderedDict[str, int] = OrderedDict()  # released locks' open files, LRU
        self._guard = threading.Lock()

    @contextlib.contextmanager
    def hold(self, resource: str, timeout: float = DEFAULT_TIMEOUT_S) -> Iterator[None]:
        """Hold the exclusive lock for `resource` (any string, usually a path)."""
        name = _lock_name(resource)
        with self._guard:
            slot = self._slots.get(name)
            if slot is None:
                slot = self._slots[name] = _Slot()
            slot.users += 1
        try:
            if not slot.thread_lock.acquire(timeout=timeout):
                raise LockTimeout(f"timed out after {timeout}s waiting for lock on {resource}")
            try:
                if slot.depth == 0:
                    fd = self._open(name)
                    try:
                        _flock(fd, timeout, resource)
                    except BaseException:
                        self._park(name, fd)
                        raise
                    slot.fd = fd
                slot.depth += 1
                try:
                    yield
                finally:
                    slot.depth -= 1
                    if slot.depth == 0 and slot.fd is not None:
                        fd, slot.fd = slot.fd, None
                        try:
                            fcntl.flock(fd, fcntl.LOCK_UN)
                        finally:
                            self._park(name, fd)
            finally:
                slot.thread_lock.release()
        finally:
            with self._guard:
                slot.users -= 1
                if slot.users == 0:
                    del self._slots[name]

    def _open(self, name: str) -> int:
        with self._guard:
            fd = self._idle.pop(name, None)
        if fd is not None:
            return fd
        with disk_errors(self._dir):
            self._dir.mkdir(parents=True, exist_ok=True)
            return os.open(self._dir / name, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)

    def _park(self, name: str, fd: int) -> None:
        """Keep a released lock's file open for its next hold, closing the least recent
        beyond IDLE_FDS."""
        with self._guard:
            self._idle[name] = fd
            surplus = [
                self._idle.popitem(last=False)[1] for _ in range(len(self._idle) - self.IDLE_FDS)
            ]
        for old in surplus:
            with contextlib.suppress(OSError):
                os.close(old)

    def open_descriptors(self) -> int:
        """Lock files this table has open now (held, or idle and kept for reuse)."""
        with self._guard:
            return len(self._idle) + sum(1 for s in self._slots.values() if s.fd is not None)

    def close(self) -> None:
        """Close the idle lock files (a lock still held closes its file on release)."""
        with self._guard:
            idle = list(self._idle.values())
            self._idle.clear()
        for fd in idle:
            with contextlib.suppress(OSError):
                os.close(fd)


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
