"""The engine: one per home folder, shared by every principal acting on it.

It holds what does not depend on who is acting: the config, the truth (files in
a folder, or PostgreSQL) behind the narrow `files.truth.Truth` protocol, the
locks, the index derived from the truth and its freshness, the caches and
vectors, the background jobs, the audit bus, the signals layers announce, and
the only doors through which memory is written. `store.view.Store` is a
principal acting on an engine; layers are handed the engine's doors, never its
truth. Every write goes through a door:

* `append(spec, data)`: a durable append (lock, one write, fdatasync; or one
  committed transaction) to an append-only source. The write is acknowledged once
  it is durable; its indexing is queued and done before any later read of this
  process (`store.deferred`); nothing after the acknowledgement can make it fail:
  if indexing fails the truth still has it, the engine is marked stale and the
  next read catches the index up.
* `rewrite(spec, text)` / `editing(spec)`: an atomic replace of a whole source
  under its lock, checked against the version read (and optionally against the
  content the caller last saw), then re-indexed.
* the side doors whole operations need: `append_raw` (a journal no index reads),
  `put` (a whole new source, or one only if it is missing), `make_folder`, `move`
  (archive or delete), each through the truth and nowhere else.

Reads of whole sources go to the truth (`read`, `read_from`, `stat`, `listing`);
keyed and ranked reads go to the index. Every index read first catches up (one
place, `_before_read`): after a failed index write (stale), with the sources a
folder watcher saw change (a long-running process, see `index.freshness`), and
with a new generation when another process rebuilt the index or someone deleted
it (`index.generations`). Opening an engine catches the index up with anything
written since (on PostgreSQL from the change feed position the index recorded:
`catchup`); `reindex()` builds a new generation from the files and swaps it in.
Which files are index sources is the layers' knowledge: the engine is handed a
`SourceCatalog` when it opens.

An engine on a read-only disk (a mounted backup) is read and searched through a
private copy of its index in a temporary folder, caught up with the files
there; `notices` says so, and writes raise ReadOnlyStore.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol

from memstrata.config import Config, load_config
from memstrata.errors import StaleWrite
from memstrata.files.backends import open_truth
from memstrata.files.diskerrors import is_read_only
from memstrata.files.layout import Layout, resolve_home
from memstrata.files.locks import LockTable
from memstrata.files.truth import Appended, Content, Entry, Misnamed, Truth
from memstrata.files.versions import (
    Author,
    FileHistory,
    Retention,
    Versioned,
    agent_histories,
)
from memstrata.index.access import IndexAccess
from memstrata.index.db import INDEX_LAG, Database
from memstrata.index.frequencies import DocFrequencies
from memstrata.index.freshness import Freshness
from memstrata.index.notes import AppendNotes
from memstrata.index.reconcile import (
    Origin,
    SourceSpec,
    SyncReport,
    catch_up_append,
    counted_sources,
    sync_sources,
)
from memstrata.store.catchup import (
    FEED_KEY,
    catch_up_by_feed,
    catch_up_paths,
    feed_position,
    remember,
)
from memstrata.store.deferred import Deferred
from memstrata.store.deferred import run as run_deferred
from memstrata.store.editing import NOBODY, Edit, sha256_text
from memstrata.store.events import EventBus
from memstrata.store.jobs import Jobs
from memstrata.store.semantic import Semantic
from memstrata.store.signals import Signals

if TYPE_CHECKING:
    from memstrata.embed.base import Embedder
    from memstrata.index.vectors import VectorIndex
    from memstrata.model import Principal

# watch="auto": an engine read this long after it finished opening starts watching (its
# first catch-up after that is a full one, so nothing written before is missed). Short
# CLI commands never watch; a long-lived store sees edits within about this long.
AUTO_WATCH_AFTER_S = 1.0
RETRY_CATCH_UP_S = 1.0  # after a failed catch-up (disk full), reads retry at most this often
MANY_CHANGES = 500  # more changed paths than this: one full catch-up instead

Where = Path | str  # a path below the home, or a store-relative name


class SourceCatalog(Protocol):
    """Which sources of the truth the index reads (the layers know: `layers.catalog`)."""

    def all_sources(self, engine: Engine) -> list[SourceSpec]: ...

    def source_for(
        self, engine: Engine, rel: str, handles: dict[tuple[str, str], Any]
    ) -> SourceSpec | None: ...

    def project_sources(self, engine: Engine) -> list[SourceSpec]: ...


class Engine:
    """The shared half of an opened store (module docstring).

    Args:
        catalog: which files are index sources (`layers.catalog.LayerCatalog`).
        watch: keep the index fresh while the engine stays open by watching its
            folder (True), never (False: catch up on open only), or once the engine
            is still being read a second after opening (None: `[index] watch`).
        recover: called once the truth is open and before the index is, to finish
            what a dead process left half done (an import).
    """

    def __init__(
        self,
        home: str | os.PathLike[str] | None,
        catalog: SourceCatalog,
        *,
        sync: bool = True,
        audit: bool = True,
        watch: bool | None = None,
        recover: Callable[[Engine], object] | None = None,
    ) -> None:
        self.home = resolve_home(home).resolve()
        self._home_prefix = f"{self.home}/"  # `rel`'s fast path, on every write
        self.catalog = catalog
        self.layout = Layout(self.home)
        self.home.mkdir(parents=True, exist_ok=True)
        self.config: Config = load_config(self.home)
        self.locks = LockTable(self.layout.locks)
        self.truth: Truth = open_truth(self.home, self.locks, self.config)
        self.layout = Layout(self.home, self.config.memory_path, self.truth)  # memoryPath
        self.origin = Origin(self.truth, self.home)
        self.read_only = is_read_only(self.home)
        if recover is not None and not self.read_only:
            recover(self)
        self.events = EventBus(
            self.layout.events if audit else None,
            self.locks,
            None,
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
        self.jobs = Jobs()
        self.deferred = Deferred(self)
        self.background_errors = self.jobs.errors
        self.signals = Signals(self.background_errors)
        self.appended = AppendNotes(self.home / "index")
        self.appended.start()
        if sync:
            self._catch_up_all()
        self._opened = time.monotonic()  # (after the catch-up, however long that took)
        if self._watch_mode == "on":
            self.watch()

    # -- the index and its freshness -------------------------------------------
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
        db.pending = self._pending
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
        everything, noted = self.appended.news()  # other processes' appends
        rescan, paths = rescan or everything, paths | noted
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

    def mark_stale(self) -> None:
        """The index missed a write (it failed after the truth had it): the next read
        catches up."""
        self._stale = True

    def watch(self) -> bool:
        """Keep the index fresh while this engine stays open (idempotent).

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
        self.deferred.close()
        self.settle()
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

    def __enter__(self) -> Engine:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- work after the acknowledgement ---------------------------------------
    def after_ack(self, key: str, job: Callable[[], object]) -> bool:
        """Run `job` in a background thread, after the write that asked for it returned
        (see `store.jobs`); True if a job was started, False if the running one will
        run again. `close()` waits for every job."""
        return self.jobs.start(key, job)

    def drain(self, timeout: float | None = None) -> None:
        """Wait for the background jobs started by `after_ack` (and any they started);
        vector builds meanwhile embed without waiting for a quiet moment."""
        with self.semantic.hurried():
            while True:
                self.settle()
                self.jobs.drain(timeout)
                if not self.deferred or timeout is not None:
                    return

    # -- reads of the truth ----------------------------------------------------
    def rel(self, path: Path) -> str:
        text = str(path)
        if text.startswith(self._home_prefix) and "/." not in text and "//" not in text:
            return text[len(self._home_prefix) :]  # what relative_to gives, without parsing
        try:
            return path.relative_to(self.home).as_posix()
        except ValueError:
            return str(path)

    def _name(self, where: Where) -> str:
        return where if isinstance(where, str) else self.rel(where)

    def read(self, where: Where) -> Content | None:
        """A whole source and its version, or None."""
        return self.truth.read(self._name(where))

    def read_from(self, where: Where, offset: int = 0, length: int | None = None) -> bytes:
        """Bytes of a source from `offset` (to the end, or `length` of them); b'' if missing."""
        return self.truth.read_from(self._name(where), offset, length)

    def stat(self, where: Where) -> Entry | None:
        """The truth's entry for a source or folder (None: it does not exist)."""
        return self.truth.stat(self._name(where))

    def exists(self, where: Where) -> bool:
        """True if the truth holds a source or folder there."""
        return self.truth.stat(self._name(where)) is not None

    def listing(
        self,
        where: Where,
        *,
        recursive: bool = True,
        skip: Callable[[str], bool] | None = None,
    ) -> list[Entry]:
        """Every source and folder below a folder (or only those directly in it), sorted;
        a folder whose path `skip` accepts is left out with everything below it."""
        return self.truth.list(self._name(where), recursive=recursive, skip=skip)

    def history(self, target: Versioned) -> FileHistory:
        """The kept versions of one memory file, with the `[versions]` retention."""
        c = self.config
        return FileHistory(self.truth, target, Retention(c.versions_keep, c.versions_max_age_days))

    def histories(self, agent: str) -> list[str]:
        """The history logs (store-relative) of every file of `agent` that has versions."""
        return agent_histories(self.truth, agent)

    @property
    def location(self) -> str:
        """Where the truth is, for messages: a folder, or the database (no credentials)."""
        return self.truth.location

    @property
    def misnamed(self) -> Misnamed:
        """Sources the truth's listings left out: names no valid name (made by hand)."""
        return self.truth.misnamed

    def lock(self, name: str, timeout: float = 30.0) -> contextlib.AbstractContextManager[None]:
        """A named cross-process lock (a source's name: appends and rewrites of it wait)."""
        return self.truth.lock(name, timeout)

    # -- the write doors ---------------------------------------------------------
    def append(
        self,
        spec: SourceSpec,
        data: bytes,
        *,
        blank_line: bool = False,
        then: Callable[[Appended, int | None], object] | None = None,
    ) -> Appended:
        """Durably append `data` to an append-mode source; other processes on the host
        learn of it from the note left in `index/appended`. Indexed after the
        acknowledgement (`store.deferred`: before any later read); `then` is called
        with the append and the docs the index holds of the source once it is
        indexed (None: the index lags)."""
        rel = self.rel(spec.path)
        app = self.truth.append(rel, data, blank_line=blank_line, record_id=os.urandom(12).hex())
        self.appended.note(rel)
        self.deferred.add(spec, then=None if then is None else lambda docs: then(app, docs))
        return app

    def settle(self) -> None:
        """Do the queued index work of this process's writes now (`store.deferred`)."""
        with contextlib.suppress(*INDEX_LAG):
            self.db.settle()

    def _pending(self) -> None:  # the database's `pending` hook: under its lock
        if self.deferred:
            run_deferred(self, self.deferred.take())

    def append_raw(self, where: Where, data: bytes) -> Appended:
        """Durably append whole records to a journal the index does not read
        (`items.removed.jsonl`, `purged.jsonl`)."""
        return self.truth.append(self._name(where), data, record_id=os.urandom(12).hex())

    @contextlib.contextmanager
    def editing(self, target: SourceSpec | Where, *, by: Principal | None = None) -> Iterator[Edit]:
        """Hold a whole source's lock across a read-modify-write.

        Yields an `Edit`: its `text` is the source as read under the lock ('' if it
        does not exist), and calling it with new text atomically replaces the source
        (only if it is still the version read) and, for an index source (a
        `SourceSpec`), re-indexes it. A journal named by its path is not re-indexed:
        the caller catches the index up (`sync`, `reparse`). A memory file keeps the
        content it replaced as a version, written `by` that principal (`files.versions`).
        """
        spec = target if isinstance(target, SourceSpec) else None
        rel = self._name(target.path if isinstance(target, SourceSpec) else target)
        author = Author(by.agent, by.role) if by is not None else NOBODY
        with self.truth.lock(rel):
            yield Edit(self, spec, rel, author)

    def rewrite(
        self,
        spec: SourceSpec,
        text: str,
        *,
        expected_sha: str | None = None,
        by: Principal | None = None,
    ) -> None:
        """Atomically replace a whole source; refuse if it changed since `expected_sha`."""
        with self.editing(spec, by=by) as edit:
            if expected_sha is not None and sha256_text(edit.text) != expected_sha:
                raise StaleWrite(
                    f"{spec.path.name} changed since it was read; read it again and retry"
                )
            edit(text)

    def put(self, where: Where, data: bytes, *, expected: str | None = None) -> Entry:
        """Write a whole source at once (an archive copy, an imported file, a header):
        atomically, only if its version is still `expected` when given (`MISSING`:
        only if it does not exist yet). Not indexed: the caller indexes what it wrote."""
        return self.truth.rewrite(self._name(where), data, expected=expected)

    def make_folder(self, where: Where) -> bool:
        """Make a folder exist; True if it did not before."""
        rel = self._name(where).rstrip("/")
        made = self.truth.stat(rel) is None
        self.truth.rewrite(rel + "/", b"")
        return made

    def move(self, src: Where, dest: Where | None, *, lock: bool = True) -> None:
        """Move a source or folder to `dest` (which must not exist), or delete it
        (`dest` None): under the lock of both names unless the caller holds them.
        Not indexed: the caller indexes the sources that moved (`index_file`)."""
        old = self._name(src)
        new = self._name(dest) if dest is not None else None
        if not lock:
            self.truth.move(old, new)
            return
        with contextlib.ExitStack() as held:
            held.enter_context(self.truth.lock(old))
            if new is not None:
                held.enter_context(self.truth.lock(new))
            self.truth.move(old, new)

    # -- keeping the index up with a write -------------------------------------
    def index_file(self, spec: SourceSpec) -> None:
        """Re-parse a whole source (or drop it, once gone) after a write: queued, done
        before any later read (`store.deferred`)."""
        self.deferred.add(spec, whole=True)

    def fresh(self, spec: SourceSpec) -> None:
        """Catch the index up with an append source another process may have grown."""
        try:
            catch_up_append(self.db, self.origin, spec, SyncReport(), False)
        except INDEX_LAG:
            self._stale = True

    def reparse(self, spec: SourceSpec) -> None:
        """Re-parse an append source from scratch (its generation changed: a compaction
        replaced its head); a failure leaves the index stale, caught up on the next read."""
        try:
            catch_up_append(self.db, self.origin, spec, SyncReport(), True)
        except INDEX_LAG:
            self._stale = True

    # -- index maintenance ---------------------------------------------------
    def sources(self) -> list[SourceSpec]:
        """Every index source the truth holds (every agent's: index plumbing, not a
        read path; the gate applies to what is read from the index)."""
        return self.catalog.all_sources(self)

    def sync(self, *, force: bool = False) -> SyncReport:
        """Catch the index up with the files (other writers, hand edits, deletions)."""
        db = self.db
        self._syncing = True
        try:
            self._stale = False  # a write failing from here on marks it again
            position = feed_position(self)  # before: what is written meanwhile comes again
            report = sync_sources(db, self.origin, self.sources(), force=force)
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
            specs = self.sources()
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
        self._syncing = True
        try:  # what other processes wrote during the build
            sync_sources(self.db, self.origin, self.sources())
        except INDEX_LAG:
            self._stale = True
        finally:
            self._syncing = False
        return report

    # -- embeddings ------------------------------------------------------------
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

    # -- who has memory here ---------------------------------------------------
    def agents(self) -> list[str]:
        return self.layout.agents()

    def rooms(self) -> list[str]:
        return self.layout.rooms()
