"""The truth behind a narrow protocol: what every layer may do to a store's sources.

A store's memory is a tree of sources named by store-relative POSIX paths
(`ledger.jsonl`, `agents/finn/memory/LOG.md`). Everything above this boundary
(layers, lifecycle, transfer, purge, the index's catch-up) reads and writes
them through a `Truth`, never through the filesystem, so the same code runs on
two implementations:

* `files.local.LocalTruth`: the plain files of a folder (the default; the bytes
  on disk are exactly what they always were);
* `files.postgres.truth.PostgresTruth`: PostgreSQL, shared by many hosts.

Nine operations, each one a complete story:

    append      durable append of whole records; acknowledged once durable
    read_from   bytes from a position (the index catches up by position)
    read        a whole source with its version, read as one consistent state
    rewrite     atomic replace, optionally only if the version is still `expected`
    stat        one source's `Entry` (size, time, generation, version), or None
    list        every source (and folder) below a folder
    move        archive (move) or delete (`dest=None`) a source or a folder
    lock        a named cross-process (cross-host) lock for a read-modify-write;
                appends and rewrites of a path wait while another process holds
                lock(path) (the holder's own thread goes on)
    watch       a `ChangeWatcher` that reports changed paths as they change

`generation` changes when a source is replaced whole (an inode for files), so
an index that remembers (generation, offset) knows whether it may read on from
`offset`; `version` changes on every write. A folder is made to exist by
rewriting its path with a trailing slash (`rewrite("agents/finn/", b"")`).

Why `lock` belongs here: two rules need mutual exclusion across a check and a
write that no version can express alone, the ledger's one live successor (the
check reads the index, the write appends) and a JSON document's
read-modify-write that keeps what it does not understand. And compaction and
purge rewrite an append source under `lock(path)` counting on no append landing
in between (both backends make appends wait for it). Rewrites made under
the lock still pass the version they read, so a lock lost with a connection
turns into a `StaleWrite`, never into a lost update.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Protocol, runtime_checkable

from memstrata.files.watch import ChangeWatcher
from memstrata.model import name_problem, shown
from memstrata.values import value_type

MISSING = ""  # `rewrite(expected=MISSING)`: only if the source does not exist yet

# Store-relative names that are no memory: the derived index, this host's settings,
# audit trail, locks and staging (kept in the local folder whatever the backend).
SETTINGS = frozenset({"config.toml", "config.yaml", "config.yml"})
LOCAL_TOP = SETTINGS | {"index", "index.db", "index.db-wal", "index.db-shm", "index.db-journal"}
EVENTS = re.compile(r"^events(\.\d+)?\.jsonl$")


def is_local_only(rel: str) -> bool:
    """True for paths that are private to one host, never part of the truth."""
    parts = rel.split("/")
    if not parts or not parts[0]:
        return True
    if parts[0] in LOCAL_TOP or (len(parts) == 1 and EVENTS.match(parts[0])):
        return True
    return any(p.startswith(".") or p.endswith((".tmp", "-journal")) for p in parts if p)


class Misnamed:
    """Sources left out of listings because their names are no valid names (a file made
    by hand as `n\\xff.md`: `model.name_problem`). Nothing memstrata writes has such a
    name, and one such file must not make every command fail: listings skip it, the
    store says so in a notice and `doctor` names it, until someone renames it."""

    def __init__(self) -> None:
        self.found: dict[str, str] = {}  # path, shown escaped -> why it is no valid name
        self._said: str | None = None

    def skips(self, rel: str, name: str | None = None) -> bool:
        """True (and noted) if `rel` must be left out: its last part `name` (default:
        every part) is no valid name."""
        problem = name_problem(rel if name is None else name)
        if problem is None:
            return False
        self.found[shown(rel)[1:-1]] = problem
        return True

    def tell(self, notices: list[str]) -> None:
        """Put one notice naming what the last listing skipped in `notices` (in place of
        the one said before)."""
        if self._said in notices:
            notices.remove(self._said)
        self._said = None
        if self.found:
            path, why = min(self.found.items())
            more = f" (and {len(self.found) - 1} more)" if len(self.found) > 1 else ""
            self._said = (
                f"skipped {len(self.found)} file(s) whose names memstrata refuses: {path} "
                f"{why}{more}; rename or remove them (`memstrata doctor` lists them)"
            )
            notices.append(self._said)


@value_type(frozen=True)
class Entry:
    """One source (or folder) as the truth holds it now."""

    path: str
    size: int
    mtime: float
    generation: int  # changes when the source is replaced whole
    version: str  # changes on every write
    is_dir: bool = False


@value_type(frozen=True)
class Appended:
    """Where an append landed: bytes [start, end) of `path`, and the source after it."""

    path: str
    start: int
    end: int
    repaired: bool  # a torn tail left by a killed writer was terminated first
    generation: int
    version: str


@value_type(frozen=True)
class Content:
    """A source's bytes as read, with the entry (size, version) they were read at."""

    data: bytes
    entry: Entry

    @property
    def text(self) -> str:
        return self.data.decode("utf-8", "replace")


class Truth(Protocol):
    """The operations a store's sources support (module docstring)."""

    location: str  # for messages: a folder, or the database (without credentials)
    misnamed: Misnamed  # sources the listings left out (names no valid names)

    def append(
        self, path: str, data: bytes, *, blank_line: bool = False, record_id: str | None = None
    ) -> Appended:
        """Append `data` (whole records ending in a newline); return once durable.

        `blank_line` makes the source end in an empty line first (block formats).
        `record_id`, made by the caller, makes a retried append idempotent.
        """
        ...

    def read_from(self, path: str, offset: int = 0, length: int | None = None) -> bytes:
        """Bytes of `path` from `offset` (to the end, or `length` of them); b'' if missing."""
        ...

    def read(self, path: str) -> Content | None:
        """The whole source and the version it had, or None if it does not exist
        (MalformedInput if `path` is a folder)."""
        ...

    def rewrite(
        self, path: str, data: bytes, *, expected: str | None = None, sync_folder: bool = True
    ) -> Entry:
        """Atomically replace `path` with `data` (StaleWrite unless its version is
        `expected`, when given; `MISSING`: only if it does not exist).

        The new content is durable on return. `sync_folder=False` (files in a folder only)
        leaves the rename's own durability to the caller's next sync: the caller keeps
        the content durable elsewhere first (a hot file's history record carries it,
        `files.versions`)."""
        ...

    def stat(self, path: str) -> Entry | None: ...

    def list(
        self,
        folder: str = "",
        *,
        recursive: bool = True,
        skip: Callable[[str], bool] | None = None,
    ) -> list[Entry]:
        """Every source and folder below `folder` (or only those directly in it), sorted;
        a folder whose path `skip` accepts is left out with everything below it."""
        ...

    def move(self, src: str, dest: str | None) -> None:
        """Move a source or folder to `dest` (which must not exist), or delete it."""
        ...

    def lock(self, name: str, timeout: float = 30.0) -> AbstractContextManager[None]: ...

    def watch(self) -> ChangeWatcher:
        """Changed paths (store-relative) as they change; see `files.watch`."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class ChangeFeed(Protocol):
    """A truth that numbers its writes (PostgreSQL; not a folder of files): a host
    catches its index up from the changes after the position it last saw, instead of
    looking at every source."""

    def feed_position(self) -> str:
        """An opaque token: every write before it is visible now."""
        ...

    def changes_since(self, position: str) -> tuple[str, set[str]] | None:
        """(the position now, the paths written after `position`; a folder's path for a
        folder made, moved or deleted), or None when the feed cannot tell (a position of
        another feed, or one pruned away): then look at every source."""
        ...


def parent_folders(path: str) -> Iterator[str]:
    """'a/b/c.md' -> 'a', 'a/b'."""
    parts = path.split("/")
    for i in range(1, len(parts)):
        yield "/".join(parts[:i])
