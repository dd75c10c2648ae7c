"""Watching the truth for changes: which source files changed, as they change.

A `ChangeWatcher` yields batches of changed paths (store-relative POSIX
paths, as the `files.truth` protocol names sources) until told to stop. Its first
yield (possibly an empty batch) means it is watching, so nothing written after
that is missed; `None` instead of a batch means it lost track (an overflow, a
folder it could not follow) and every source must be looked at again. The
store's freshness keeper (`index.freshness`) consumes it; the truth kept in
PostgreSQL implements the same protocol with LISTEN/NOTIFY.

`FolderWatcher` uses watchfiles (inotify on Linux, via Rust's `notify`): the
kernel reports changes, so a read costs nothing when nothing changed, whatever
the store's size. `PeriodicRescan` is the fallback when watchfiles is missing
or the kernel refuses more watches: it asks for a full rescan every interval.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

DEBOUNCE_MS = 30  # changes within this window come as one batch
STEP_MS = 20
IDLE_MS = 200  # an idle watcher yields an empty batch this often (readiness, stop checks)


class ChangeWatcher(Protocol):
    def changes(self, stop: threading.Event) -> Iterator[set[str] | None]:
        """Batches of changed paths (None: rescan everything) until `stop` is set."""
        ...


class FolderWatcher:
    """Every change below `root`, through the operating system's file notifications.

    Example:
        >>> stop = threading.Event()  # doctest: +SKIP
        >>> for batch in FolderWatcher(Path("/tmp/mem")).changes(stop):  # doctest: +SKIP
        ...     print(batch)
    """

    def __init__(self, root: Path) -> None:
        self.root = root

    def changes(self, stop: threading.Event) -> Iterator[set[str] | None]:
        import watchfiles

        for raw in watchfiles.watch(
            self.root,
            watch_filter=None,
            debounce=DEBOUNCE_MS,
            step=STEP_MS,
            stop_event=stop,
            rust_timeout=IDLE_MS,
            yield_on_timeout=True,
            raise_interrupt=False,
            ignore_permission_denied=True,
        ):
            yield {rel for _, p in raw if (rel := self._rel(p)) is not None}

    def _rel(self, path: str) -> str | None:
        try:
            return Path(path).relative_to(self.root).as_posix()
        except ValueError:
            return None


class PeriodicRescan:
    """No notifications: ask for a full rescan every `interval` seconds."""

    def __init__(self, interval: float = 1.0) -> None:
        self.interval = interval

    def changes(self, stop: threading.Event) -> Iterator[set[str] | None]:
        yield set()
        while not stop.wait(self.interval):
            yield None


def default_watcher(root: Path) -> ChangeWatcher:
    """watchfiles when installed, else the periodic rescan."""
    try:
        import watchfiles  # noqa: F401
    except ImportError:
        return PeriodicRescan()
    return FolderWatcher(root)
