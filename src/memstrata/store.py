"""The store: the truth (files in a folder, or PostgreSQL) and the index derived from it.

The truth sits behind the narrow `files.truth.Truth` protocol (`self.truth`):
`files.local.LocalTruth` for a folder of plain files (the default), or
`backends.postgres.PostgresTruth` when `[backend] url` names a PostgreSQL
database; then the home folder keeps only this host's index, settings, locks
and audit trail. Every write goes through two doors only:

* `append(spec, data)`: a durable append (lock, one write, fdatasync; or one
  committed transaction) to an append-only source, then the new record is
  indexed. The write is acknowledged once it is durable; nothing after that
  (indexing, the audit event) can make it fail: if indexing fails the truth
  still has it, the store is marked stale and the next read catches the index up.
* `rewrite(spec, text)` / `editing(spec)`: an atomic replace of a whole source
  under its lock, checked against the version read (and optionally against the
  content the caller last saw), then re-indexed.

Reads of whole sources go to the truth; keyed and ranked reads go to the index.
Every index read first catches up (one place, `_before_read`): after a failed
index write (stale), with the sources a folder watcher saw change (a
long-running process, see `index.freshness`), and with a new generation when
another process rebuilt the index or someone deleted it (`index.generations`).
Opening a store catches the index up with anything written since (on PostgreSQL
from the change feed position the index recorded: `catchup`); `reindex()`
builds a new generation from the files and swaps it in.

A store on a read-only disk (a mounted backup) is read and searched through a
private copy of its index in a temporary folder, caught up with the files
there; `notices` says so, and writes raise ReadOnlyStore.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from memstrata.catchup import FEED_KEY, catch_up_by_feed, catch_up_paths, feed_position, remember
from memstrata.config import Config, load_config
from memstrata.editing import Edit
from memstrata.errors import MalformedInput, MemstrataError, NotFound, StaleWrite
from memstrata.events import EventBus
from memstrata.files.diskerrors import is_read_only
from memstrata.files.layout import Layout, resolve_home
from memstrata.files.locks import LockTable
from memstrata.files.truth import Appended, Content, Truth
from memstrata.index.access import IndexAccess
from memstrata.index.db import Database
from memstrata.index.freshness import Freshness
from memstrata.index.generations import IndexFiles
from memstrata.index.reconcile import (
    Origin,
    SourceSpec,
    SyncReport,
    catch_up_append,
    counted_sources,
    index_append,
    index_whole,
    sync_sources,
)
from memstrata.model import Principal, check_name
from memstrata.scope import Gate, resolve_role
from memstrata.search.terms import DocFrequencies
from memstrata.semantic import Semantic

if TYPE_CHECKING:
    from memstrata.embed.base import Embedder
    from memstrata.index.vectors import VectorIndex
    from memstrata.layers.agent import AgentMemory
    from memstrata.layers.items import Items
    from memstrata.layers.ledger import Ledger
    from memstrata.layers.rooms import Room
    from memstrata.search.query import Hit, SearchQuery

# Failures after an acknowledged write, or of a catch-up before a read: the files
# hold the truth, the index only lags; the store is marked stale instead.
INDEX_LAG = (sqlite3.Error, OSError, MemstrataError)
# watch="auto": a store read this long after it finished opening starts watching (its
# first catch-up after that is a full one, so nothing written before is missed). Short
# CLI commands never watch; a long-lived store sees edits within about this long.
AUTO_WATCH_AFTER_S = 1.0
RETRY_CATCH_UP_S = 1.0  # after a failed catch-up (disk full), reads retry at most this often
MANY_CHANGES = 500  # more changed paths than this: one full catch-up instead


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Store:
    """An opened memstrata store, acting as one principal (agent, role, room).

    Args:
        watch: keep the index fresh while the store stays open by watching its
            folder (True), never (False: catch up on open only), or once the store
            is still being read a second after opening (None: `[index] watch`,
            "auto" by default).

    Example:
        >>> with Store.open("/tmp/mem", agent="finn") as store:  # doctest: +SKIP
        ...     store.agent().log.append("THOUGHT", "started")
    """

    def __init__(
        self,
        home: str | os.PathLike[str] | None = None,
        *,
        agent: str | None = None,
        role: str | None = None,
        room: str | None = None,
        sync: bool = True,
        audit: bool = True,
        watch: bool | None = None,
    ) -> None:
        self.home = resolve_home(home).resolve()
        self.layout = Layout(self.home)
        self.home.mkdir(parents=True, exist_ok=True)
        self.config: Config = load_config(self.home)
        if agent is not None:
            check_name(agent, "agent")
        if room is not None:
            check_name(room, "room")
        # Roles come from [roles] in the config; `role` may only lower the configured one.
        chosen = resolve_role(self.config, agent, role)
        self.principal = Principal(agent=agent, role=chosen, room=room)
        self.gate = Gate(self.principal, self.config)
        self.locks = LockTable(self.layout.locks)
        from memstrata.backends import open_truth

        self.truth: Truth = open_truth(self.home, self.locks, self.config)
        self.layout = Layout(self.home, self.config.memory_path, self.truth)  # seed 004 memoryPath
        self.origin = Origin(self.truth, self.home)
        self.read_only = is_read_only(self.home)
        if not self.read_only and os.path.isdir(self.home / ".imports"):
            # an importer died: finish or discard its staged import
            from memstrata.transfer.importer import recover_imports

            recover_imports(self.home, self.locks, self.truth)
        self.events = EventBus(
            self.layout.events if audit else None,
            self.locks,
            agent,
            max_bytes=self.config.events_max_bytes,
            keep=self.config.events_keep,
            record_queries=self.config.events_record_queries,
        )
        self.notices: list[str] = []  # what a user should know (read-only copy, lagging index)
        if not self.read_only:
            for suffix in ("", "-wal", "-shm"):  # the single-file index of earlier versions
                with contextlib.suppress(OSError):
                    os.unlink(f"{self.home / 'index.db'}{suffix}")
        self.index_access = IndexAccess(
            self.home, self.locks, read_only=self.read_only, notices=self.notices
        )
        self._db: Database | None = None
        self._retired: list[Database] = []  # left behind when a full disk had room again
        self._stale = False
        self._retry_at = 0.0  # monotonic time before which a failed catch-up is not retried
        self._syncing = False
        self._opened = time.monotonic()
        self._watch_mode = self.config.index_watch if watch is None else ("on" if watch else "off")
        self._keeper: Freshness | None = None
        self.df_cache = DocFrequencies()
        self.semantic = Semantic(self)
        # Where `warn`-policy secret notices go (adapters set it; None: Python warnings).
        self.notice_sink: Callable[[str], None] | None = None
        self._jobs: dict[str, threading.Thread] = {}
        self._jobs_guard = threading.Lock()
        self._rerun: set[str] = set()
        self.background_errors: list[tuple[str, BaseException]] = []
        if sync:
            self._catch_up_all()
        self._opened = time.monotonic()  # (after the catch-up, however long that took)
        if self._watch_mode == "on":
            self.watch()

    @classmethod
    def open(cls, home: str | os.PathLike[str] | None = None, **kw: Any) -> Store:
        return cls(home, **kw)

    # -- lifecycle ---------------------------------------------------------
    @property
    def index_files(self) -> IndexFiles:
        """The index generations in use (the shared ones, or a private copy)."""
        return self.index_access.files

    @property
    def db(self) -> Database:
        if self._db is not None and self.index_access.refusal is not None:
            shared = self.index_access.retry_shared()  # a full disk has room again?
            if shared is not None:
                self._retired.append(self._db)  # another thread may still be reading it
                self._db = None
                self._wire(shared)
                self._stale = True
        if self._db is None:
            db, fill = self.index_access.connect()
            self._stale = self._stale or fill
            self._wire(db)
        assert self._db is not None
        return self._db

    def _wire(self, db: Database) -> None:
        db.on_reopen = self._after_swap
        db.before_read = self._before_read
        self._db = db

    def _after_swap(self) -> None:
        """Another process published a new generation (or the index was deleted)."""
        self.df_cache = DocFrequencies()
        self._catch_up_all()

    def _before_read(self) -> None:
        if self._syncing:
            return
        if (
            self._keeper is None
            and self._watch_mode == "auto"
            and (time.monotonic() - self._opened >= AUTO_WATCH_AFTER_S)
        ):
            self.watch()
        keeper = self._keeper
        if keeper is not None and keeper.failure and keeper.failure not in self.notices:
            self.notices.append(keeper.failure)
        if self._stale and time.monotonic() < self._retry_at:
            return  # the last catch-up failed (a full disk?): serve what the index has
        rescan, paths = keeper.drain() if keeper is not None else (False, set())
        if self._stale or rescan or len(paths) > MANY_CHANGES:
            self._catch_up_all()
        elif paths:
            self._catch_up(paths)

    def _catch_up_all(self) -> None:
        """Catch up with everything written since the index last did (by the truth's
        change feed where it has one, else every source: see `catchup`)."""
        try:
            self._stale = False  # a write failing from here on marks it again
            if not catch_up_by_feed(self):
                self.sync()
        except INDEX_LAG as exc:
            self._stale = True
            self._retry_at = time.monotonic() + RETRY_CATCH_UP_S
            self._notice(f"the index could not catch up with the files: {exc}")
        except BaseException:
            self._stale = True
            raise

    def _catch_up(self, paths: set[str]) -> None:
        """Catch up the sources at `paths` (store-relative; a folder: every source below
        it); anything surprising means one full catch-up instead."""
        try:
            catch_up_paths(self, paths)
        except INDEX_LAG:
            self._catch_up_all()

    def _notice(self, text: str) -> None:
        if text not in self.notices:
            self.notices.append(text)

    def watch(self) -> bool:
        """Keep the index fresh while this store stays open (idempotent).

        A background thread watches the store folder; each read then catches up
        only the sources that changed. Returns True once watching has started.
        """
        if self._keeper is not None:
            return True
        self._keeper = Freshness(self.truth.watch())
        return self._keeper.start()

    def close(self) -> None:
        self.semantic.stop()
        self.drain()
        if self._keeper is not None:
            self._keeper.close()
            self._keeper = None
        for db in [*self._retired, *([self._db] if self._db is not None else [])]:
            db.close()
        self._db, self._retired = None, []
        self.events.close()
        self.truth.close()
        self.locks.close()
        self.index_access.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- work after the acknowledgement ---------------------------------------
    def after_ack(self, key: str, job: Callable[[], object]) -> bool:
        """Run `job` in a background thread, after the write that asked for it returned.

        Triggered maintenance (LOG compaction, transcript flush) must never slow
        down or fail the acknowledged write that crossed a limit. At most one job
        per `key` runs at a time: a request while it runs makes it run once more
        when it ends (the files may have grown past the limit again meanwhile).
        A job's exception is logged and kept in `background_errors`, never raised
        to a writer. `close()` waits for every job.

        Returns:
            True if a job was started, False if the running one will run again.
        """
        with self._jobs_guard:
            running = self._jobs.get(key)
            if running is not None and running.is_alive():
                self._rerun.add(key)
                return False

            def run() -> None:
                while True:
                    try:
                        job()
                    except Exception as exc:  # reported, never raised to the writer
                        self.background_errors.append((key, exc))
                        logging.getLogger("memstrata").warning("memstrata: %s failed: %s", key, exc)
                    with self._jobs_guard:
                        if key not in self._rerun:
                            return
                        self._rerun.discard(key)

            thread = threading.Thread(target=run, name=f"memstrata {key}")
            self._jobs[key] = thread
            thread.start()
            return True

    def drain(self, timeout: float | None = None) -> None:
        """Wait for the background jobs started by `after_ack` (and any they started)."""
        while True:
            with self._jobs_guard:
                pending = [t for t in self._jobs.values() if t.is_alive()]
                if not pending:
                    self._jobs.clear()
                    return
            for t in pending:
                if t is threading.current_thread():
                    return
                t.join(timeout)
                if timeout is not None and t.is_alive():
                    return

    # -- the two write doors -------------------------------------------------
    def append(self, spec: SourceSpec, data: bytes, *, blank_line: bool = False) -> Appended:
        """Durably append `data` to an append-mode source and index it."""
        app = self.truth.append(
            self.rel(spec.path), data, blank_line=blank_line, record_id=os.urandom(12).hex()
        )
        try:
            index_append(self.db, self.origin, spec, app.start, data, app.generation, app.version)
        except INDEX_LAG:
            # The bytes are durable: the write stands. The next read catches the index up.
            self._stale = True
        self.semantic.later()
        return app

    @contextlib.contextmanager
    def editing(self, spec: SourceSpec) -> Iterator[Edit]:
        """Hold a whole source's lock across a read-modify-write.

        Yields an `Edit`: its `text` is the source as read under the lock ('' if it
        does not exist), and calling it with new text atomically replaces the source
        (only if it is still the version read) and re-indexes it.
        """
        rel = self.rel(spec.path)
        with self.truth.lock(rel):
            yield Edit(self, spec, rel)

    def rewrite(self, spec: SourceSpec, text: str, *, expected_sha: str | None = None) -> None:
        """Atomically replace a whole source; refuse if it changed since `expected_sha`."""
        with self.editing(spec) as edit:
            if expected_sha is not None and sha256_text(edit.text) != expected_sha:
                raise StaleWrite(
                    f"{spec.path.name} changed since it was read; read it again and retry"
                )
            edit(text)

    def index_file(self, spec: SourceSpec) -> None:
        try:
            index_whole(self.db, self.origin, spec, force=True)
        except INDEX_LAG:
            self._stale = True
        self.semantic.later()

    def fresh(self, spec: SourceSpec) -> None:
        """Catch the index up with an append source another process may have grown."""
        try:
            catch_up_append(self.db, self.origin, spec, SyncReport(), False)
        except INDEX_LAG:
            self._stale = True

    def read(self, path: Path) -> Content | None:
        """A whole source (by its path below the home) and its version, or None."""
        return self.truth.read(self.rel(path))

    def exists(self, path: Path) -> bool:
        """True if the truth holds a source or folder at `path` (below the home)."""
        return self.truth.stat(self.rel(path)) is not None

    # -- index maintenance ---------------------------------------------------
    def _sources(self) -> list[SourceSpec]:
        """Every source file of every layer currently on disk (every agent's: index
        plumbing, not a read path; the gate applies to what is read from the index)."""
        from memstrata.layers.catalog import all_sources

        return all_sources(self)

    def sync(self, *, force: bool = False) -> SyncReport:
        """Catch the index up with the files (other writers, hand edits, deletions)."""
        db = self.db
        self._syncing = True
        try:
            self._stale = False  # a write failing from here on marks it again
            position = feed_position(self)  # before: what is written meanwhile comes again
            report = sync_sources(db, self.origin, self._sources(), force=force)
            remember(self, position)
        except BaseException:
            self._stale = True
            raise
        finally:
            self._syncing = False
        if report.docs_written > 100 or len(report.reparsed) > 100:
            db.checkpoint()
        return report

    def reindex(self, progress: Callable[[int, int], None] | None = None) -> SyncReport:
        """Build a new index generation from the files and swap it in.

        Readers keep using the old generation until the new one is published; every
        open store moves to it on its next access. Stored vectors are carried over
        (keyed by content hash, so only changed text is embedded again).

        Raises:
            ReadOnlyStore: the store is on a read-only disk (nothing is rebuilt).
            StorageFull: no space left for a new generation (nothing is left behind).

        `progress(done, total)` is called as each source is parsed (done 0 first).
        """
        position = feed_position(self)

        def fill(build: Database) -> SyncReport:
            specs = self._sources()
            if progress is not None:
                specs = counted_sources(specs, progress)
            report = sync_sources(build, self.origin, specs, force=True)
            if position is not None:
                build.set_meta(FEED_KEY, position)
            return report

        report = self.index_access.rebuild(fill)
        self.df_cache = DocFrequencies()
        if self._db is not None:
            self._db.follow()
        from memstrata.layers.catalog import all_sources

        self._syncing = True
        try:  # what other processes wrote during the build
            sync_sources(self.db, self.origin, all_sources(self))
        except INDEX_LAG:
            self._stale = True
        finally:
            self._syncing = False
        return report

    def doc_count(self) -> int:
        """How many memories (index rows) the store holds, whoever may read them."""
        with self.db.read() as conn:
            return int(conn.execute("SELECT count(*) FROM docs").fetchone()[0])

    # -- layer handles -------------------------------------------------------
    def agent(self, name: str | None = None, *, create: bool = False) -> AgentMemory:
        """The memory of one agent (default: the principal's own).

        Another agent's name must exist (a folder under `agents/` or a name in
        `[roles]`): a typo such as `store.agent("fnn")` raises `NotFound` with a
        suggestion instead of handing back an empty agent. An agent comes into being
        with its own first write, with `memstrata init NAME`, or here with `create=True`.
        """
        from memstrata.layers.agent import AgentMemory

        who = name or self.principal.agent
        if who is None:
            raise MalformedInput("no agent given and the store was opened without one")
        check_name(who, "agent")
        if not create and who != self.principal.agent and not self.has_agent(who):
            raise NotFound(
                f"no agent {who!r} in {self.home}{self.suggest_agent(who)}; "
                "an agent is created by `memstrata init NAME` or by its own first write"
            )
        return AgentMemory(self, who)

    def has_agent(self, name: str) -> bool:
        """True if `name` has memory on disk or is named in the config's `[roles]`."""
        entry = self.truth.stat(f"agents/{name}")
        return (entry is not None and entry.is_dir) or name in self.config.configured_agents

    def suggest_agent(self, name: str) -> str:
        import difflib

        known = sorted(set(self.agents()) | set(self.config.configured_agents))
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        return f" (did you mean {close[0]!r}?)" if close else ""

    @property
    def ledger(self) -> Ledger:
        from memstrata.layers.ledger import Ledger

        return Ledger(self)

    @property
    def items(self) -> Items:
        from memstrata.layers.items import Items

        return Items(self)

    def room(self, name: str | None = None) -> Room:
        from memstrata.layers.rooms import Room

        who = name or self.principal.room
        if who is None:
            raise MalformedInput("no room given and the store was opened without one")
        return Room(self, check_name(who, "room"))

    def search(self, query: SearchQuery | str, **kw: Any) -> list[Hit]:
        """One search over every layer the principal may read (see `memstrata.search`)."""
        from memstrata.search.engine import search
        from memstrata.search.query import SearchQuery

        q = query if isinstance(query, SearchQuery) else SearchQuery(text=query, **kw)
        return search(self, q)  # its index reads catch up first (`_before_read`)

    def get(self, uid: str) -> Hit:
        """One memory by the uid a search hit carries: full text and metadata, scope-checked."""
        from memstrata.search.engine import fetch

        return fetch(self, uid)

    def embedder(self) -> Embedder:
        """The embedder of `[search] embedder`; unset: all-MiniLM-L6-v2 in NumPy (see
        `memstrata.embed.select`). Raises MalformedInput ("none") or ProviderError."""
        return self.semantic.embedder()

    def semantic_embedder(self) -> Embedder | None:
        """The embedder if semantic recall works here without a download (else None)."""
        return self.semantic.available()

    def use_embedder(self, embedder: Embedder) -> None:
        self.semantic.use(embedder)

    def vectors(self, embedder: Embedder) -> VectorIndex:
        return self.semantic.index(embedder)

    def build_vectors_later(self) -> None:
        """Build the vectors of what changed in the background (`memstrata.semantic`)."""
        self.semantic.later()

    def agents(self) -> list[str]:
        return self.layout.agents()

    def rooms(self) -> list[str]:
        return self.layout.rooms()

    def acting_as(
        self, agent: str | None, room: str | None = None, *, role: str | None = None
    ) -> Store:
        """This store, acting as another principal: the same files, index, locks and events.

        What a server needs per request: opening a `Store` catches the index up with
        the files, so a server opens one and hands each request a principal over it.
        The role comes from the config (`role` may only lower it), exactly as for
        `Store(agent=...)`. Closing the returned store does nothing: the store it came
        from owns the resources.

        Example:
            >>> finn = store.acting_as("finn", "room-042")  # doctest: +SKIP
            >>> finn.agent("wilco").now.read()  # ScopeDenied unless wilco is an admin
        """
        from memstrata.acting import ActingStore

        return ActingStore(self, agent, room, role)

    def rel(self, path: Path) -> str:
        try:
            return path.relative_to(self.home).as_posix()
        except ValueError:
            return str(path)
