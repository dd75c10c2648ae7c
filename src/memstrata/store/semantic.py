"""A store's semantic side: its embedder, its vector indexes, and building them after writes.

Vectors are derived data, like the rest of the index, and never on the write path:
an acknowledged write asks for a build (`later`) and returns. Where the build runs:

    "thread"   a background job of this process (`Engine.after_ack`): a library user,
               the MCP and HTTP servers; it stops at a step boundary when the store
               closes (the next build resumes: `VectorIndex.build`)
    "daemon"   the per-user embedding daemon (`embed.daemon`): the CLI, whose process
               ends right after the write, asks it and does not wait
    "off"      no builds after writes (a search asking for hybrid by name still
               catches up first)

A background build lets the writes of a burst go first: before each embedding batch
it waits until no write came for `QUIET_S`, at most `MAX_WAIT_S` (embedding holds the
interpreter in stretches and keeps both cores busy: durable appends made while a build
ran took several times their fsync). `Engine.drain` hurries it (no waiting).

Builds happen when semantic recall is on (`active`): the store was handed an embedder,
or `[search] provider` is not "fts5", `[search] embedder` is not "none" and the
embedder works here without a download (a fresh default store: all-MiniLM-L6-v2 from
the default install). A build embeds only the unit texts whose hash is new.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memstrata.embed.base import Embedder
    from memstrata.index.vectors import VectorIndex
    from memstrata.store.engine import Engine


QUIET_S = 0.25  # a background build waits for this long without a write ...
MAX_WAIT_S = 2.0  # ... but at most this long before each embedding batch


class Semantic:
    """The embedder and vector indexes of one store (one per engine)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.builds = "thread"
        self._embedder: Embedder | None = None
        self._indexes: dict[str, VectorIndex] = {}
        self._stop = threading.Event()
        self._wake = threading.Event()  # set: no waiting for quiet (stopping, hurried)
        self._hurried = 0
        self._guard = threading.Lock()
        self._last_write = float("-inf")
        self._availability: tuple[tuple[object, ...], bool] | None = None

    def embedder(self) -> Embedder:
        """The embedder of `[search] embedder` (unset: all-MiniLM-L6-v2 in NumPy, see
        `memstrata.embed.select`). Raises MalformedInput ("none") or ProviderError."""
        if self._embedder is None:
            from memstrata.embed.select import configured_embedder

            cfg = self.engine.config
            self._embedder = configured_embedder(cfg, notice=self.engine.notice_sink)
        return self._embedder

    def available(self) -> Embedder | None:
        """The embedder if semantic recall works here without a download (else None)."""
        if self._embedder is None and not self._found():
            return None
        return self.embedder()

    def _found(self) -> bool:
        """`embed.select.available` for this store's settings, looked up once per settings
        (it looks for the model's files on disk: every write and search asks)."""
        from memstrata.embed.select import available

        cfg = self.engine.config
        key = (cfg.embedder, cfg.model_path, cfg.search_provider)
        if self._availability is None or self._availability[0] != key:
            self._availability = (key, available(cfg))
        return self._availability[1]

    def active(self) -> bool:
        """Is semantic recall on for this store: hybrid the default mode, vectors built
        after writes? Never with `[search] provider = "fts5"`; else yes when an embedder
        was handed to the store (`use`), no with `[search] embedder = "none"`, and else
        whenever the embedder works here without a download (`embed.select.available`:
        the default install has all-MiniLM-L6-v2's files, so a fresh store is hybrid)."""
        cfg = self.engine.config
        if cfg.search_provider == "fts5":
            return False
        if self._embedder is not None:
            return True
        if (cfg.embedder or "").strip() == "none":
            return False
        if cfg.embedder or cfg.search_provider == "hybrid":
            return True
        return self._found()

    def use(self, embedder: Embedder) -> None:
        self._embedder = embedder

    def index(self, embedder: Embedder) -> VectorIndex:
        from memstrata.index.vectors import VectorIndex

        key = embedder.model_id
        if key not in self._indexes:
            self._indexes[key] = VectorIndex(self.engine.db, embedder)
        return self._indexes[key]

    def later(self) -> None:
        """Build the vectors of what changed, after this write (never during it)."""
        if self.builds == "off" or not self.active():
            return
        if self.builds == "daemon":  # the CLI: `cli.common.build_via_daemon`
            from memstrata.embed import DEFAULT_SPEC, daemon

            daemon.request_build(self.engine.config.embedder or DEFAULT_SPEC, self.engine.home)
            return
        self._last_write = time.monotonic()
        self.engine.after_ack("vectors", self._build)

    def _build(self) -> None:
        if not self._stop.is_set():
            self.index(self.embedder()).build(stop=self._stop.is_set, pause=self._let_writes_go)

    def _let_writes_go(self) -> None:
        """Wait until no write came for QUIET_S, at most MAX_WAIT_S (module docstring)."""
        deadline = time.monotonic() + MAX_WAIT_S
        while not self._wake.is_set():
            now = time.monotonic()
            until = min(self._last_write + QUIET_S, deadline)
            if now >= until:
                return
            self._wake.wait(until - now)

    @contextlib.contextmanager
    def hurried(self) -> Iterator[None]:
        """Background builds embed without waiting for quiet while this is held (a
        caller waits for them: `Engine.drain`)."""
        with self._guard:
            self._hurried += 1
            self._wake.set()
        try:
            yield
        finally:
            with self._guard:
                self._hurried -= 1
                if not self._hurried and not self._stop.is_set():
                    self._wake.clear()

    def stop(self) -> None:
        """End background builds at their next step (the store is closing)."""
        self._stop.set()
        self._wake.set()
