"""`PostgresTruth`: the `files.truth` protocol kept in PostgreSQL, shared by many hosts.

A source is a row of `memstrata_sources` and its bytes are chunks with their byte
start offsets (`pgschema`), so `read_from(path, offset)` returns exactly the bytes
the same file would hold and every parser, the index's catch-up by position
included, is the one the local files use. In detail:

* **append** is one transaction: lock the source row, add a chunk, bump the
  version, add a row to the change feed, NOTIFY. It is acknowledged when the
  transaction commits. The caller's `record_id` is unique: a retry after a lost
  connection whose first attempt did commit finds its chunk and returns the
  original position instead of appending twice.
* **rewrite** replaces every chunk by one, under a new generation, optionally
  only if the version is still `expected` (optimistic concurrency); a retry
  recognises its own committed rewrite by its client-made `write_id`.
* **lock** is a session advisory lock on a connection held for the duration.
  Appends and rewrites of a path take the same key as a shared transaction
  lock, so they wait while another session holds `lock(path)` (the local files'
  flock semantics, which splice and purge rely on); the holder's thread does not.
* **watch** LISTENs for "seq path" notifications; after a dropped connection it
  catches up by sequence number from the change feed (or asks for a full
  rescan when the feed was pruned past its cursor).

Every operation runs on a pooled connection (psycopg_pool) and is retried with
backoff for `[backend] retry_seconds` while the server restarts or fails over;
then it raises `BackendUnavailable`, and further calls fail fast for a moment
(the store keeps serving searches from the host's index, marked stale).
psycopg is imported only when a store names a PostgreSQL URL.

    truth = PostgresTruth("postgresql://memstrata@db/memstrata")
    truth.append("ledger.jsonl", b'{"id": "mem-1", ...}\\n', record_id="6f1c...")
"""

from __future__ import annotations

import collections
import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from memstrata.errors import (
    AlreadyExists,
    BackendUnavailable,
    LockTimeout,
    MalformedInput,
    NotFound,
    StaleWrite,
)
from memstrata.files.postgres import rows as pg
from memstrata.files.postgres import schema as pgschema
from memstrata.files.postgres.rows import redact
from memstrata.files.postgres.watch import changes_since, feed_position, prune_feed
from memstrata.files.truth import (
    MISSING,
    Appended,
    Content,
    Entry,
    Misnamed,
    is_local_only,
    parent_folders,
)

if TYPE_CHECKING:
    from memstrata.config import Config
    from memstrata.files.watch import ChangeWatcher

T = TypeVar("T")
CONNECT_TIMEOUT_S = 3
APPEND_LOCK_WAIT_S = 30.0  # as long as a local append waits for its file's lock
FAIL_FAST_S = 1.0  # after the retry budget ran out, calls fail at once for this long


class PostgresTruth:
    """A store's sources in the PostgreSQL database at `url` (see the module docstring)."""

    def __init__(
        self,
        url: str,
        config: Config | None = None,
        *,
        retry_seconds: float | None = None,
        pool_size: int | None = None,
    ) -> None:
        self.url = url
        self.location = redact(url)
        self.misnamed = Misnamed()
        self.retry_s = (
            retry_seconds
            if retry_seconds is not None
            else config.backend_retry_seconds
            if config is not None
            else 10.0
        )
        self.pool_size = (
            pool_size
            if pool_size is not None
            else config.backend_pool_size
            if config is not None
            else 8
        )
        self._pool: Any = None
        self._ready = False
        self._guard = threading.Lock()
        self._held = threading.local()
        self._down_until = 0.0
        self._down_why = ""
        # Operations run, by name, and "retries": attempts that failed on a connection
        # error and were tried again (or gave up): what a test or `doctor` can check.
        self.stats: collections.Counter[str] = collections.Counter()
        self._stats_guard = threading.Lock()

    def _count(self, what: str) -> None:
        with self._stats_guard:
            self.stats[what] += 1

    # -- connections ----------------------------------------------------------
    def _ensure_pool(self) -> Any:
        if self._pool is None:
            pg.driver()
            from psycopg_pool import ConnectionPool

            with self._guard:
                if self._pool is None:
                    self._pool = ConnectionPool(
                        self.url,
                        min_size=1,
                        max_size=self.pool_size,
                        open=False,
                        kwargs={"autocommit": True, "connect_timeout": CONNECT_TIMEOUT_S},
                        num_workers=1,
                        name="memstrata",
                    )
                    self._pool.open(wait=False)
        return self._pool

    def _run(self, op: Callable[[Any], T], what: str) -> T:
        """Run `op(connection)` on a pooled connection, retrying while the server is
        unreachable; counted in `stats[what]`."""
        self._count(what)

        def attempt() -> T:
            wait = max(0.2, min(self.retry_s, CONNECT_TIMEOUT_S))
            with self._ensure_pool().connection(timeout=wait) as conn:
                if not self._ready:
                    self._migrate(conn)
                return op(conn)

        return self._retrying(attempt)

    def _retrying(self, attempt: Callable[[], T]) -> T:
        """`attempt()`, again with backoff on connection errors for `retry_s`, then
        BackendUnavailable (and fail fast for a moment)."""
        psycopg = pg.driver()
        from psycopg_pool import PoolTimeout

        if time.monotonic() < self._down_until:
            raise BackendUnavailable(self._down_why)
        deadline = time.monotonic() + self.retry_s
        delay = 0.05
        while True:
            try:
                return attempt()
            except (psycopg.OperationalError, PoolTimeout) as exc:
                self._count("retries")
                if time.monotonic() >= deadline:
                    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
                    self._down_why = (
                        f"PostgreSQL at {self.location} is unreachable ({type(exc).__name__}: "
                        f"{first}); retried for {self.retry_s:g}s; nothing was stored"
                    )
                    self._down_until = time.monotonic() + FAIL_FAST_S
                    raise BackendUnavailable(self._down_why) from exc
                time.sleep(delay)
                delay = min(delay * 2, 0.5)

    def _migrate(self, conn: Any) -> None:
        """Apply the named migrations this database lacks (once, whichever host is first)."""
        conn.execute("SELECT pg_advisory_lock(%s)", (pgschema.MIGRATION_LOCK,))
        try:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS memstrata_migrations "
                "(name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
            )
            done = {r[0] for r in conn.execute("SELECT name FROM memstrata_migrations")}
            for name, sql in pgschema.MIGRATIONS:
                if name in done:
                    continue
                with conn.transaction():
                    conn.execute(sql)
                    conn.execute("INSERT INTO memstrata_migrations (name) VALUES (%s)", (name,))
            prune_feed(conn)
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (pgschema.MIGRATION_LOCK,))
        self._ready = True

    def migrations(self) -> list[str]:
        """The names of the migrations applied to this database, in order."""
        return self._run(
            lambda c: [
                r[0] for r in c.execute("SELECT name FROM memstrata_migrations ORDER BY name")
            ],
            "migrations",
        )

    # -- writes ---------------------------------------------------------------
    def append(
        self, path: str, data: bytes, *, blank_line: bool = False, record_id: str | None = None
    ) -> Appended:
        if not data.endswith(b"\n"):
            raise ValueError("appended data must end with a newline")
        rid = record_id or os.urandom(12).hex()

        def op(conn: Any) -> Appended:
            with conn.transaction():
                self._wait_for_lock(conn, path)
                sid, generation, size, tail = self._source_for_update(conn, path)
                fix = b""
                if size > 0:
                    if not tail.endswith(b"\n"):
                        fix = b"\n\n" if blank_line else b"\n"
                    elif blank_line and tail != b"\n\n" and size > 1:
                        fix = b"\n"
                chunk = fix + data
                inserted = conn.execute(
                    "INSERT INTO memstrata_chunks (source_id, start, stop, data, record_id) "
                    "VALUES (%s, %s, %s, %s, %s) "
                    "ON CONFLICT (record_id) WHERE record_id IS NOT NULL DO NOTHING",
                    (sid, size, size + len(chunk), chunk, rid),
                ).rowcount
                if not inserted:  # a retry: the first attempt committed
                    return self._appended_before(conn, path, rid, len(data))
                version = conn.execute(
                    "UPDATE memstrata_sources SET version = version + 1, size = %s, tail = %s, "
                    "mtime = extract(epoch from clock_timestamp()) WHERE id = %s "
                    "RETURNING version",
                    (size + len(chunk), (tail + chunk)[-2:], sid),
                ).fetchone()[0]
                self._announce(conn, path)
            return Appended(
                path,
                size + len(fix),
                size + len(chunk),
                bool(fix),
                generation,
                f"{generation}-{version}",
            )

        return self._run(op, "append")

    def _wait_for_lock(self, conn: Any, path: str) -> None:
        """Wait while another session holds `lock(path)`, as a local append waits for the
        file's flock: a shared transaction-level advisory lock on the same key, taken
        before any row lock (so a holder's own rewrite never waits on a waiting append),
        released at commit. The thread holding `lock(path)` goes straight on."""
        if path in self._held.__dict__.get("locks", {}):
            return
        try:
            # The sub-select runs first (a volatile function keeps it from being flattened):
            # lock_timeout is set for this transaction before the lock is waited for.
            conn.execute(
                "SELECT pg_advisory_xact_lock_shared(%s) "
                "FROM (SELECT set_config('lock_timeout', %s, true)) AS t",
                (pg.lock_key(path), f"{int(APPEND_LOCK_WAIT_S * 1000)}ms"),
            )
        except pg.driver().errors.LockNotAvailable as exc:
            raise LockTimeout(
                f"timed out after {APPEND_LOCK_WAIT_S:g}s waiting for lock on {path}"
            ) from exc

    def _source_for_update(self, conn: Any, path: str) -> tuple[int, int, int, bytes]:
        """(id, generation, size, tail) of a file source, locked; created if missing."""
        sql = (
            "SELECT id, generation, size, tail, is_dir FROM memstrata_sources "
            "WHERE path = %s FOR UPDATE"
        )
        row = conn.execute(sql, (path,)).fetchone()
        if row is None:
            self._ensure_parents(conn, path)
            conn.execute(
                "INSERT INTO memstrata_sources (path, parent) VALUES (%s, %s) "
                "ON CONFLICT (path) DO NOTHING",
                (path, pg.parent_of(path)),
            )
            row = conn.execute(sql, (path,)).fetchone()
        if row[4]:
            raise MalformedInput(f"{path} is a folder, not a file")
        return int(row[0]), int(row[1]), int(row[2]), bytes(row[3])

    def _appended_before(self, conn: Any, path: str, rid: str, length: int) -> Appended:
        row = conn.execute(
            "SELECT c.stop, s.generation, s.version FROM memstrata_chunks c "
            "JOIN memstrata_sources s ON s.id = c.source_id WHERE c.record_id = %s",
            (rid,),
        ).fetchone()
        stop, generation, version = int(row[0]), int(row[1]), int(row[2])
        return Appended(path, stop - length, stop, False, generation, f"{generation}-{version}")

    def _ensure_parents(self, conn: Any, path: str) -> None:
        folders = list(parent_folders(path))
        if not folders:
            return
        if conn.execute(
            "SELECT is_dir FROM memstrata_sources WHERE path = %s", (folders[-1],)
        ).fetchone() == (True,):
            return  # the common case: the folder is there already
        rows = conn.execute(
            "SELECT path FROM memstrata_sources WHERE path = ANY(%s) AND NOT is_dir", (folders,)
        ).fetchall()
        if rows:
            raise MalformedInput(f"{rows[0][0]} is a file, so {path} cannot be below it")
        conn.execute(
            "INSERT INTO memstrata_sources (path, parent, is_dir) "
            "SELECT p, q, true FROM unnest(%s::text[], %s::text[]) AS t(p, q) "
            "ON CONFLICT (path) DO NOTHING",
            (folders, [pg.parent_of(f) for f in folders]),
        )

    def _announce(self, conn: Any, path: str) -> None:
        """One row of the change feed, in commit order (FEED_LOCK is held to the commit),
        and its NOTIFY (delivered at commit)."""
        conn.execute(
            "WITH l AS (SELECT pg_advisory_xact_lock(%s)), "
            "c AS (INSERT INTO memstrata_changes (path) SELECT %s FROM l RETURNING seq) "
            "SELECT pg_notify(%s, c.seq::text || ' ' || %s) FROM c",
            (pgschema.FEED_LOCK, path, pgschema.CHANNEL, path),
        )

    def rewrite(
        self, path: str, data: bytes, *, expected: str | None = None, sync_folder: bool = True
    ) -> Entry:
        del sync_folder  # a committed transaction is durable whole
        if path.endswith("/"):
            return self._make_folder(path.rstrip("/"))
        wid = os.urandom(12).hex()

        def op(conn: Any) -> Entry:
            with conn.transaction():
                self._wait_for_lock(conn, path)
                row = conn.execute(
                    "SELECT id, generation, version, is_dir, write_id FROM memstrata_sources "
                    "WHERE path = %s FOR UPDATE",
                    (path,),
                ).fetchone()
                if row is not None and row[4] == wid:  # a retry: the first attempt committed
                    return self._stat(conn, path) or Entry(path, 0, 0.0, 0, MISSING)
                if row is not None and row[3]:
                    raise MalformedInput(f"{path} is a folder, not a file")
                if expected is not None:
                    current = MISSING if row is None else f"{row[1]}-{row[2]}"
                    if current != expected:
                        raise StaleWrite(
                            f"{path} changed since it was read; read it again and retry"
                        )
                if row is None:
                    self._ensure_parents(conn, path)
                    sid = conn.execute(
                        "INSERT INTO memstrata_sources (path, parent, version, size, tail, "
                        "write_id) VALUES (%s, %s, 1, %s, %s, %s) RETURNING id",
                        (path, pg.parent_of(path), len(data), data[-2:], wid),
                    ).fetchone()[0]
                else:
                    sid = row[0]
                    conn.execute("DELETE FROM memstrata_chunks WHERE source_id = %s", (sid,))
                    conn.execute(
                        "UPDATE memstrata_sources SET generation = nextval('memstrata_generation'), "
                        "version = version + 1, size = %s, tail = %s, write_id = %s, "
                        "mtime = extract(epoch from clock_timestamp()) WHERE id = %s",
                        (len(data), data[-2:], wid, sid),
                    )
                if data:
                    conn.execute(
                        "INSERT INTO memstrata_chunks (source_id, start, stop, data) "
                        "VALUES (%s, 0, %s, %s)",
                        (sid, len(data), data),
                    )
                self._announce(conn, path)
                entry = self._stat(conn, path)
            assert entry is not None
            return entry

        return self._run(op, "rewrite")

    def _make_folder(self, path: str) -> Entry:
        def op(conn: Any) -> Entry:
            with conn.transaction():
                self._ensure_parents(conn, path)
                made = conn.execute(
                    "INSERT INTO memstrata_sources (path, parent, is_dir) VALUES (%s, %s, true) "
                    "ON CONFLICT (path) DO NOTHING",
                    (path, pg.parent_of(path)),
                ).rowcount
                if made:
                    self._announce(conn, path)
                entry = self._stat(conn, path)
            assert entry is not None
            return entry

        return self._run(op, "rewrite")

    def move(self, src: str, dest: str | None) -> None:
        wid = os.urandom(12).hex()

        def op(conn: Any) -> None:
            with conn.transaction():
                below = pg.like_prefix(src)
                if dest is None:
                    gone = conn.execute(
                        "DELETE FROM memstrata_sources WHERE path = %s OR path LIKE %s "
                        "RETURNING path",
                        (src, below),
                    ).fetchall()
                    if gone:
                        self._announce(conn, src)
                    return
                target = conn.execute(
                    "SELECT write_id FROM memstrata_sources WHERE path = %s", (dest,)
                ).fetchone()
                if target is not None:
                    if target[0] == wid:
                        return  # a retry: the first attempt committed
                    raise AlreadyExists(f"{dest!r} already exists")
                if (
                    conn.execute(
                        "SELECT 1 FROM memstrata_sources WHERE path = %s FOR UPDATE", (src,)
                    ).fetchone()
                    is None
                ):
                    raise NotFound(f"no {src!r} in the store")
                self._ensure_parents(conn, dest)
                n = len(src) + 1
                conn.execute(
                    "UPDATE memstrata_sources SET "
                    "path = %(dest)s || substr(path, %(n)s), "
                    "parent = CASE WHEN path = %(src)s THEN %(parent)s "
                    "ELSE %(dest)s || substr(parent, %(n)s) END, write_id = %(wid)s "
                    "WHERE path = %(src)s OR path LIKE %(below)s",
                    {
                        "dest": dest,
                        "n": n,
                        "src": src,
                        "parent": pg.parent_of(dest),
                        "wid": wid,
                        "below": below,
                    },
                )
                self._announce(conn, src)
                self._announce(conn, dest)

        self._run(op, "move")

    # -- reads ----------------------------------------------------------------
    def read_from(self, path: str, offset: int = 0, length: int | None = None) -> bytes:
        if length is not None and length <= 0:
            return b""
        stop = None if length is None else offset + length

        def op(conn: Any) -> bytes:
            rows = conn.execute(
                "SELECT c.start, c.data FROM memstrata_chunks c "
                "JOIN memstrata_sources s ON s.id = c.source_id "
                "WHERE s.path = %s AND c.stop > %s AND (%s::bigint IS NULL OR c.start < %s) "
                "ORDER BY c.start",
                (path, offset, stop, stop),
            ).fetchall()
            if not rows:
                return b""
            data = b"".join(bytes(r[1]) for r in rows)
            cut = offset - int(rows[0][0])
            return data[cut:] if stop is None else data[cut : cut + (stop - offset)]

        return self._run(op, "read_from")

    def read(self, path: str) -> Content | None:
        def op(conn: Any) -> Content | None:
            rows = conn.execute(
                "SELECT s.path, s.is_dir, s.size, s.mtime, s.generation, s.version, c.data "
                "FROM memstrata_sources s LEFT JOIN memstrata_chunks c ON c.source_id = s.id "
                "WHERE s.path = %s ORDER BY c.start",
                (path,),
            ).fetchall()
            if not rows:
                return None
            if rows[0][1]:
                raise MalformedInput(f"{path} is a folder, not a file")
            return Content(
                b"".join(bytes(r[6]) for r in rows if r[6] is not None), pg.entry_of(rows[0][:6])
            )

        return self._run(op, "read")

    def stat(self, path: str) -> Entry | None:
        path = path.rstrip("/")
        if not path:
            return Entry("", 0, 0.0, 0, "root", True)
        return self._run(lambda conn: self._stat(conn, path), "stat")

    def _stat(self, conn: Any, path: str) -> Entry | None:
        row = conn.execute(f"{pg.SOURCE_ROW} WHERE path = %s", (path,)).fetchone()
        return pg.entry_of(row) if row is not None else None

    def list(
        self, folder: str = "", *, recursive: bool = True, skip: Callable[[str], bool] | None = None
    ) -> list[Entry]:
        folder = folder.strip("/")

        def op(conn: Any) -> list[Entry]:
            if not recursive:
                rows = conn.execute(f"{pg.SOURCE_ROW} WHERE parent = %s ORDER BY path", (folder,))
            elif folder:
                rows = conn.execute(
                    f"{pg.SOURCE_ROW} WHERE path LIKE %s ORDER BY path", (pg.like_prefix(folder),)
                )
            else:
                rows = conn.execute(f"{pg.SOURCE_ROW} ORDER BY path")
            if not folder and recursive:
                self.misnamed.found.clear()  # a full listing finds them all again
            entries = list(map(pg.entry_of, rows))
            if skip is not None:
                gone = tuple(f"{e.path}/" for e in entries if e.is_dir and skip(e.path))
                entries = [e for e in entries if not f"{e.path}/".startswith(gone)]
            return [
                e for e in entries if not is_local_only(e.path) and not self.misnamed.skips(e.path)
            ]

        return self._run(op, "list")

    # -- coordination ---------------------------------------------------------
    @contextlib.contextmanager
    def lock(self, name: str, timeout: float = 30.0) -> Iterator[None]:
        """A session advisory lock, re-entrant per thread, held on its own connection."""
        held: dict[str, list[Any]] = self._held.__dict__.setdefault("locks", {})
        if name in held:
            held[name][1] += 1
            try:
                yield
            finally:
                held[name][1] -= 1
            return
        key = pg.lock_key(name)
        self._count("lock")
        if not self._ready:
            self._run(lambda c: None, "migrate")  # migrated before anything is locked
        conn = self._retrying(lambda: self._acquire(key, name, timeout))
        held[name] = [conn, 1]
        try:
            yield
        finally:
            del held[name]
            self._release(conn, key)

    def _acquire(self, key: int, name: str, timeout: float) -> Any:
        pool = self._ensure_pool()
        conn = pool.getconn(timeout=max(0.2, min(self.retry_s, CONNECT_TIMEOUT_S)))
        try:
            deadline = time.monotonic() + timeout
            delay = 0.001
            while not conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()[0]:
                if time.monotonic() >= deadline:
                    raise LockTimeout(f"timed out after {timeout}s waiting for lock on {name}")
                time.sleep(delay)
                delay = min(delay * 2, 0.02)
        except BaseException:
            pool.putconn(conn)
            raise
        return conn

    def _release(self, conn: Any, key: int) -> None:
        psycopg = pg.driver()
        try:
            conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
        except psycopg.Error:
            pass  # the session is gone, and its locks with it
        finally:
            with contextlib.suppress(Exception):
                self._ensure_pool().putconn(conn)

    # -- the change feed (files.truth.ChangeFeed) ---------------------------
    def feed_position(self) -> str:
        """Where the change feed is now (a token for `changes_since`)."""
        return self._run(feed_position, "feed")

    def changes_since(self, position: str) -> tuple[str, set[str]] | None:
        """(the feed's position now, the paths written after `position`), or None if
        the feed cannot tell (another database's token, or pruned past it)."""
        return self._run(lambda conn: changes_since(conn, position), "feed")

    def watch(self) -> ChangeWatcher:
        from memstrata.files.postgres.watch import NotifyWatcher

        return NotifyWatcher(self.url)

    def close(self) -> None:
        if self._pool is not None:
            with contextlib.suppress(Exception):
                self._pool.close(timeout=2.0)
            self._pool = None
