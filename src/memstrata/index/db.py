"""The SQLite connection: WAL, busy timeout, `BEGIN IMMEDIATE` writes, savepoint nesting.

One connection per `Store`, guarded by a lock so threads can share it. Writers
take the database write lock up front (`BEGIN IMMEDIATE`) so two processes never
deadlock upgrading a read lock; the busy timeout plus a retry loop means callers
never see "database is locked". The index is derived, so `synchronous=NORMAL`
(no fsync per commit) is enough: the files are the durable copy.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from memstrata.errors import IndexError_
from memstrata.index.schema import MIGRATIONS

BUSY_TIMEOUT_MS = 30000
T = TypeVar("T")


class Database:
    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self.conn = sqlite3.connect(
                path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                check_same_thread=False,
            )
            self.conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            self._retry(lambda: self.conn.execute("PRAGMA journal_mode=WAL"))
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self.conn.execute("PRAGMA temp_store=MEMORY")
            self.conn.execute("PRAGMA cache_size=-32000")
        except sqlite3.DatabaseError as exc:
            raise IndexError_(f"cannot open index {path}: {exc}; run `memstrata reindex`") from exc
        self._lock = threading.RLock()
        self._depth = 0
        self._migrate()

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
        with self.write():
            self.conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
            done = {
                r[0]
                for r in self.conn.execute("SELECT key FROM meta WHERE key LIKE 'migration:%'")
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
            self._retry(lambda: self.conn.execute("BEGIN IMMEDIATE"))
            self._depth = 1
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            else:
                self._retry(lambda: self.conn.execute("COMMIT"))
            finally:
                self._depth = 0

    @contextlib.contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            yield self.conn

    def close(self) -> None:
        with self._lock, contextlib.suppress(sqlite3.Error):
            self.conn.close()


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
