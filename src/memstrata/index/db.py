"""The SQLite connection: WAL, busy timeout, `BEGIN IMMEDIATE` writes, savepoint nesting.

One connection per `Store`, guarded by a lock so threads can share it. Writers
take the database write lock up front (`BEGIN IMMEDIATE`) so two processes never
deadlock upgrading a read lock; the busy timeout plus a retry loop means callers
never see "database is locked". The index is derived, so `synchronous=NORMAL`
(no fsync per commit) is enough: the files are the durable copy.

The write-ahead log is bounded: SQLite checkpoints it every `WAL_AUTOCHECKPOINT`
pages and truncates it to `WAL_SIZE_LIMIT` bytes when it restarts
(`journal_size_limit`), and `checkpoint()` empties it after bulk work (a catch-up
or a rebuild), so the log never holds more than about a megabyte beyond the
database itself (before, 23 records could leave a 2 MB log on a small disk).

Opened on an `IndexFiles` folder, the connection follows the live generation
(see `generations`): before each top-level read or write it checks, with two
`stat` calls, that its generation is still the live one and reopens if not,
calling `on_reopen` so the store can catch the new generation up. `before_read`
runs before each top-level read: the store's catch-up of changed sources. `pending`
runs before each top-level read and write, and in `settle()`: the index work of this
process's acknowledged writes, queued after their acknowledgement (`store.deferred`);
it runs under the connection's lock, so whoever reads next finds it done.

Opening needs a little space (SQLite sets up a 32 KiB shared-memory file beside
the database). On a full disk an index nobody has open is not opened at all
(StorageFull, and no file is created): the store then reads a private copy. A
failed open on a full or read-only disk is said as such (StorageFull,
ReadOnlyStore), never taken for a damaged index that a rebuild would replace.
"""

from __future__ import annotations

import contextlib
import errno
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar
from urllib.parse import quote

from memstrata.errors import IndexDamaged, IndexError_, MemstrataError
from memstrata.files.diskerrors import is_read_only, translate
from memstrata.index.generations import Identity, IndexFiles, identity, inode, low_space
from memstrata.index.schema import MIGRATIONS

BUSY_TIMEOUT_MS = 30000
WAL_AUTOCHECKPOINT = 256  # pages (1 MiB at 4 KiB pages); SQLite's default is 1000
WAL_SIZE_LIMIT = 1 << 20  # bytes the log is truncated to when it restarts
OPEN_ATTEMPTS = 20
T = TypeVar("T")
Hook = Callable[[], None]
# Failures after an acknowledged write, or of a catch-up before a read: the files
# hold the truth, the index only lags; the engine is marked stale instead.
INDEX_LAG = (sqlite3.Error, OSError, MemstrataError)


class Database:
    """One SQLite connection to a database file, or to the live generation of `files`."""

    def __init__(self, path: Path | None = None, *, files: IndexFiles | None = None) -> None:
        if (path is None) == (files is None):
            raise ValueError("give a database path or an IndexFiles folder")
        self.files = files
        self._ident: tuple[Identity | None, int | None] = (None, None)
        self._lock = threading.RLock()
        self._depth = 0
        self._in_hook = False
        self._fresh = threading.local()  # `fresh`: this thread's reads skip the hooks
        self.on_reopen: Hook | None = None
        self.before_read: Hook | None = None
        self.pending: Hook | None = None
        if path is not None:
            self.path = path
            self.conn = self._connect(path, create=True)
        else:
            self._open_live()

    def _connect(self, path: Path, *, create: bool) -> sqlite3.Connection:
        uri = f"file:{quote(str(path))}?mode={'rwc' if create else 'rw'}"
        try:
            conn = sqlite3.connect(
                uri,
                uri=True,
                timeout=BUSY_TIMEOUT_MS / 1000,
                isolation_level=None,
                check_same_thread=False,
            )
        except sqlite3.OperationalError:
            if not create:
                raise  # the generation vanished: the caller looks again
            raise IndexError_(f"cannot open index {path}") from None
        try:
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            self._retry(lambda: conn.execute("PRAGMA journal_mode=WAL"))
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA temp_store=MEMORY")
            conn.execute("PRAGMA cache_size=-32000")
            conn.execute(f"PRAGMA wal_autocheckpoint={WAL_AUTOCHECKPOINT}")
            conn.execute(f"PRAGMA journal_size_limit={WAL_SIZE_LIMIT}")
            self.conn = conn
            self._migrate()
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise _index_error(path, exc) from exc
        return conn

    def _open_live(self) -> None:
        """Connect to the generation CURRENT names (making one if there is none)."""
        assert self.files is not None
        for _ in range(OPEN_ATTEMPTS):
            name = self.files.ensure()
            path = self.files.path(name)
            if not self.files.ready(name) and low_space(self.files.folder):
                raise _full(path)  # before SQLite leaves empty -wal/-shm files behind
            try:
                conn = self._connect(path, create=False)
            except sqlite3.OperationalError:
                continue  # collected between ensure() and connect: look again
            ident = (identity(self.files.pointer), inode(path))
            if self.files.current() != name or ident[1] is None:
                conn.close()
                continue  # a newer generation was published meanwhile
            self.path, self.conn, self._ident = path, conn, ident
            return
        raise IndexError_(f"the index in {self.files.folder} keeps changing; try again")

    def moved(self) -> bool:
        """True when this connection's generation is no longer the live one."""
        if self.files is None:
            return False
        return (identity(self.files.pointer), inode(self.path)) != self._ident

    def follow(self) -> bool:
        """Reopen on the live generation if it changed; True if it did."""
        with self._lock:
            if not self.moved():
                return False
            with contextlib.suppress(sqlite3.Error):
                self.conn.close()
            self._open_live()
            return True

    def _hooks(self, *, reading: bool) -> None:
        if self._depth or self._in_hook:
            return
        self._in_hook = True
        try:
            if self.follow() and self.on_reopen is not None:
                self.on_reopen()
            if self.pending is not None:
                self.pending()
            if reading and self.before_read is not None:
                self.before_read()
        finally:
            self._in_hook = False

    def settle(self) -> None:
        """Run the `pending` hook now, under the connection's lock (not inside a
        transaction of this thread: that one's end, or the next access, runs it)."""
        with self._lock:
            self._hooks(reading=False)

    def checkpoint(self) -> None:
        """Move the write-ahead log into the database and truncate it (after bulk work)."""
        with self._lock, contextlib.suppress(sqlite3.Error):
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def _retry(self, fn: Callable[[], T]) -> T:
        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        while True:
            try:
                return fn()
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc):
                    raise
                if time.monotonic() > deadline:
                    raise IndexError_(f"index busy for too long: {exc}") from exc
                time.sleep(0.005)

    def _migrate(self) -> None:
        self._in_hook = True  # no generation check while the connection is being set up
        try:
            self._migrate_now()
        finally:
            self._in_hook = False

    def _migrate_now(self) -> None:
        with self.write():
            self.conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
            done = {
                r[0] for r in self.conn.execute("SELECT key FROM meta WHERE key LIKE 'migration:%'")
            }
            for name, sql in MIGRATIONS:
                if f"migration:{name}" in done:
                    continue
                for stmt in _split_sql(sql):
                    self.conn.execute(stmt)
                self.conn.execute(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                    (f"migration:{name}", "applied"),
                )

    @contextlib.contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction (`BEGIN IMMEDIATE`); nested calls become savepoints."""
        with self._lock:
            if self._depth:
                name = f"sp{self._depth}"
                self.conn.execute(f"SAVEPOINT {name}")
                self._depth += 1
                try:
                    yield self.conn
                except BaseException:
                    self.conn.execute(f"ROLLBACK TO {name}")
                    self.conn.execute(f"RELEASE {name}")
                    raise
                else:
                    self.conn.execute(f"RELEASE {name}")
                finally:
                    self._depth -= 1
                return
            self._hooks(reading=False)
            self._retry(lambda: self.conn.execute("BEGIN IMMEDIATE"))
            self._depth = 1
            try:
                yield self.conn
                self._retry(lambda: self.conn.execute("COMMIT"))
            except BaseException:
                # A failed COMMIT (disk full) can leave the transaction open: end it.
                if self.conn.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        self.conn.execute("ROLLBACK")
                raise
            finally:
                self._depth = 0

    def meta(self, key: str) -> str | None:
        """A value this index keeps about itself (`meta` table), or None."""
        with self.read() as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        with self.write() as conn:
            conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    @contextlib.contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            if not getattr(self._fresh, "on", False):
                self._hooks(reading=True)
            yield self.conn

    @contextlib.contextmanager
    def fresh(self) -> Iterator[None]:
        """The reads inside, on this thread, see the index caught up once, here: the
        hooks (a new generation, this process's deferred index work, other processes'
        appends, hand edits seen by the watcher) run first and not again for each read
        inside. What was acknowledged before the block is seen by every read in it; a
        search made three reads, each paying the hooks' three `stat` calls."""
        with self._lock:
            self._hooks(reading=True)
        was = getattr(self._fresh, "on", False)
        self._fresh.on = True
        try:
            yield
        finally:
            self._fresh.on = was

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[sqlite3.Connection]:
        """Several reads that see one state of the index (a page merged from several
        walks: each record once, where it was then). The hooks run once, first; then one
        read transaction holds that state for every read inside, whatever other threads
        (they wait) and processes write meanwhile. Reads only: no write inside."""
        with self._lock:
            self._hooks(reading=True)
            if self._depth or self._in_hook:  # inside a transaction: that one is the state
                yield self.conn
                return
            self._in_hook = True  # the reads inside run no hook of their own
            try:
                self.conn.execute("BEGIN")
                try:
                    yield self.conn
                finally:
                    with contextlib.suppress(sqlite3.Error):
                        self.conn.execute("COMMIT")
            finally:
                self._in_hook = False

    def close(self) -> None:
        with self._lock, contextlib.suppress(sqlite3.Error):
            self.conn.close()


def _full(path: Path) -> MemstrataError:
    return translate(OSError(errno.ENOSPC, "No space left on device"), path) or IndexError_(
        f"no space left for the index {path}"
    )


def _index_error(path: Path, exc: sqlite3.DatabaseError) -> MemstrataError:
    """A full or read-only disk says so; anything else is a damaged index.

    SQLite reports a disk that cannot hold its shared-memory file as a "disk I/O
    error", so the disk itself is asked before an error counts as damage.
    """
    text = str(exc).lower()
    if "disk is full" in text or low_space(path.parent):
        return _full(path)
    if "readonly" in text or "read-only" in text or is_read_only(path.parent):
        return translate(OSError(errno.EROFS, "Read-only file system"), path) or IndexError_(
            str(exc)
        )
    return IndexDamaged(f"cannot open index {path}: {exc}; run `memstrata reindex`")


def _split_sql(script: str) -> list[str]:
    """Split a migration into statements, keeping trigger bodies whole."""
    out: list[str] = []
    buf: list[str] = []
    for line in script.splitlines():
        buf.append(line)
        joined = "\n".join(buf).strip()
        if joined.endswith(";") and sqlite3.complete_statement(joined):
            out.append(joined)
            buf = []
    rest = "\n".join(buf).strip()
    if rest:
        out.append(rest)
    return out
