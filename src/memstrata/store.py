"""The store: one folder of files that are the truth, and the index derived from them.

Every write goes through two doors only:

* `append(spec, data)`: a durable append (lock, one write, fdatasync) to an
  append-only source, then the new record is indexed. The write is acknowledged
  once it is on disk; if indexing fails the file still has it and the next open
  (or `sync`) catches the index up.
* `rewrite(spec, text)`: an atomic replace of a whole-file source under its lock,
  optionally checked against the content the caller last saw, then re-indexed.

Reads of whole files go to the files; keyed and ranked reads go to the index,
after a cheap freshness check against the file size. Opening a store catches the
index up with anything written by other processes or by hand; `reindex()` throws
the index away and rebuilds it from the files.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from memstrata.config import Config, load_config
from memstrata.errors import IndexError_, MalformedInput, NotFound, StaleWrite
from memstrata.events import EventBus
from memstrata.files.appendlog import Appended, durable_append
from memstrata.files.atomic import atomic_write_bytes
from memstrata.files.layout import Layout, resolve_home
from memstrata.files.locks import LockTable
from memstrata.index.db import Database
from memstrata.index.reconcile import (
    SourceSpec,
    SyncReport,
    catch_up_append,
    index_append,
    index_whole,
    sync_sources,
)
from memstrata.model import Principal, check_name
from memstrata.scope import Gate, resolve_role
from memstrata.search.terms import DocFrequencies

if TYPE_CHECKING:
    from memstrata.embed.base import Embedder
    from memstrata.index.vectors import VectorIndex
    from memstrata.layers.agent import AgentMemory
    from memstrata.layers.items import Items
    from memstrata.layers.ledger import Ledger
    from memstrata.layers.rooms import Room
    from memstrata.search.query import Hit, SearchQuery


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Store:
    """An opened memstrata store, acting as one principal (agent, role, room).

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
        if os.path.isdir(self.home / ".imports"):  # an importer died: finish or discard it
            from memstrata.transfer.importer import recover_imports

            recover_imports(self.home, self.locks)
        self.events = EventBus(self.layout.events if audit else None, self.locks, agent,
                               max_bytes=self.config.events_max_bytes,
                               keep=self.config.events_keep,
                               record_queries=self.config.events_record_queries)
        self._db: Database | None = None
        self._stale = False
        self.df_cache = DocFrequencies()
        self._embedder: Embedder | None = None
        self._vector_indexes: dict[str, VectorIndex] = {}
        # Where `warn`-policy secret notices go (adapters set it; None: Python warnings).
        self.notice_sink: Callable[[str], None] | None = None
        self._jobs: dict[str, threading.Thread] = {}
        self._jobs_guard = threading.Lock()
        self._rerun: set[str] = set()
        self.background_errors: list[tuple[str, BaseException]] = []
        if sync:
            self.sync()

    @classmethod
    def open(cls, home: str | os.PathLike[str] | None = None, **kw: Any) -> Store:
        return cls(home, **kw)

    # -- lifecycle ---------------------------------------------------------
    @property
    def db(self) -> Database:
        if self._db is None:
            self._db = Database(self.layout.index_db)
        return self._db

    def close(self) -> None:
        self.drain()
        if self._db is not None:
            self._db.close()
            self._db = None
        self.events.close()
        self.locks.close()

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
        app = durable_append(self.locks, spec.path, data, blank_line=blank_line)
        try:
            own = spec.parse(data, app.start)
            index_append(self.db, spec, app.start, app.end, own, app.ino)
        except (sqlite3.Error, IndexError_):
            # The bytes are on disk: the write stands. The index catches up later.
            self._stale = True
        return app

    @contextlib.contextmanager
    def editing(self, spec: SourceSpec) -> Iterator[Callable[[str], None]]:
        """Hold a whole-file source's lock across a read-modify-write.

        Yields `commit(text)`, which atomically replaces the file and re-indexes it.
        """
        with self.locks.hold(str(spec.path)):

            def commit(text: str) -> None:
                atomic_write_bytes(spec.path, text.encode("utf-8"))
                self.index_file(spec)

            yield commit

    def rewrite(self, spec: SourceSpec, text: str, *, expected_sha: str | None = None) -> None:
        """Atomically replace a whole file; refuse if it changed since `expected_sha`."""
        with self.editing(spec) as commit:
            if expected_sha is not None:
                try:
                    current = spec.path.read_text(encoding="utf-8")
                except FileNotFoundError:
                    current = ""
                if sha256_text(current) != expected_sha:
                    raise StaleWrite(
                        f"{spec.path.name} changed since it was read; read it again and retry"
                    )
            commit(text)

    def index_file(self, spec: SourceSpec) -> None:
        try:
            index_whole(self.db, spec, force=True)
        except (sqlite3.Error, IndexError_):
            self._stale = True

    def fresh(self, spec: SourceSpec) -> None:
        """Catch the index up with an append source another process may have grown."""
        try:
            size = os.stat(spec.path).st_size
        except FileNotFoundError:
            size = 0
        with self.db.read() as conn:
            row = conn.execute("SELECT offset FROM sources WHERE path = ?", (str(spec.path),))
            got = row.fetchone()
        if (got[0] if got else 0) != size:
            catch_up_append(self.db, spec, SyncReport(), False)

    # -- index maintenance ---------------------------------------------------
    def sources(self) -> list[SourceSpec]:
        """Every source file of every layer currently on disk."""
        from memstrata.layers.catalog import all_sources

        return all_sources(self)

    def sync(self, *, force: bool = False) -> SyncReport:
        """Catch the index up with the files (other writers, hand edits, deletions)."""
        report = sync_sources(self.db, self.sources(), root=self.home, force=force)
        self._stale = False
        return report

    def reindex(self) -> SyncReport:
        """Delete the derived index and rebuild it from the files."""
        if self._db is not None:
            self._db.close()
            self._db = None
        with self.locks.hold("index.db"):
            for suffix in ("", "-wal", "-shm"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(str(self.layout.index_db) + suffix)
            return self.sync(force=True)

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
            raise NotFound(f"no agent {who!r} in {self.home}{self.suggest_agent(who)}; "
                           "an agent is created by `memstrata init NAME` or by its own first write")
        return AgentMemory(self, who)

    def has_agent(self, name: str) -> bool:
        """True if `name` has memory on disk or is named in the config's `[roles]`."""
        return self.layout.agent(name).is_dir() or name in self.config.configured_agents

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
        if self._stale:
            self.sync()  # an earlier write reached the files but not the index
        return search(self, q)

    def embedder(self) -> Embedder:
        """The configured embedder (`[search] embedder = "local" | "fake" | "openai:..."`)."""
        if self._embedder is None:
            spec = self.config.embedder
            if not spec:
                raise MalformedInput(
                    "semantic and hybrid search need an embedder: set [search] embedder in "
                    "config.toml (e.g. \"local\" for all-MiniLM-L6-v2) or pass one"
                )
            from memstrata.embed import make_embedder

            self._embedder = make_embedder(spec)
        return self._embedder

    def use_embedder(self, embedder: Embedder) -> None:
        self._embedder = embedder

    def vectors(self, embedder: Embedder) -> VectorIndex:
        from memstrata.index.vectors import VectorIndex

        key = embedder.model_id
        if key not in self._vector_indexes:
            self._vector_indexes[key] = VectorIndex(self.db, embedder)
        return self._vector_indexes[key]

    def agents(self) -> list[str]:
        return self.layout.agents()

    def rooms(self) -> list[str]:
        return self.layout.rooms()

    def rel(self, path: Path) -> str:
        try:
            return path.relative_to(self.home).as_posix()
        except ValueError:
            return str(path)
