"""A store's semantic side: its embedder, its vector indexes, and building them after writes.

Vectors are derived data, like the rest of the index, and never on the write path:
an acknowledged write asks for a build (`later`) and returns. Where the build runs:

    "thread"   a background job of this process (`Store.after_ack`): a library user,
               the MCP and HTTP servers; it stops at a step boundary when the store
               closes (the next build resumes: `VectorIndex.build`)
    "daemon"   the per-user embedding daemon (`embed.daemon`): the CLI, whose process
               ends right after the write, asks it and does not wait
    "off"      no builds after writes (a search asking for hybrid by name still
               catches up first)

Builds happen when semantic recall is on: `[search] provider` is not "fts5" and an
embedder is configured (or was handed to the store). A build embeds only the unit
texts whose hash is new.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from memstrata.errors import MalformedInput

if TYPE_CHECKING:
    from memstrata.embed.base import Embedder
    from memstrata.index.vectors import VectorIndex
    from memstrata.store import Store


class Semantic:
    """The embedder and vector indexes of one store (one per `Store`)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.builds = "thread"
        self._embedder: Embedder | None = None
        self._indexes: dict[str, VectorIndex] = {}
        self._stop = threading.Event()

    def embedder(self) -> Embedder:
        """The configured embedder (`[search] embedder = "local" | "fake" | "openai:..."`)."""
        if self._embedder is None:
            spec = self.store.config.embedder
            if not spec:
                raise MalformedInput(
                    "semantic and hybrid search need an embedder: set [search] embedder in "
                    'config.toml (e.g. "local" for all-MiniLM-L6-v2) or pass one'
                )
            from memstrata.embed import make_embedder

            self._embedder = make_embedder(spec)
        return self._embedder

    def available(self) -> Embedder | None:
        """The embedder if semantic recall is on here (hybrid is then the default mode)."""
        if self.store.config.search_provider == "fts5":
            return None
        if self._embedder is None and not self.store.config.embedder:
            return None
        return self.embedder()

    def use(self, embedder: Embedder) -> None:
        self._embedder = embedder

    def index(self, embedder: Embedder) -> VectorIndex:
        from memstrata.index.vectors import VectorIndex

        key = embedder.model_id
        if key not in self._indexes:
            self._indexes[key] = VectorIndex(self.store.db, embedder)
        return self._indexes[key]

    def later(self) -> None:
        """Build the vectors of what changed, after this write (never during it)."""
        cfg = self.store.config
        if self.builds == "off" or cfg.search_provider == "fts5":
            return
        if self._embedder is None and not cfg.embedder:
            return
        if self.builds == "daemon" and cfg.embedder:  # the CLI: `cli.common.build_via_daemon`
            from memstrata.embed import daemon

            daemon.request_build(cfg.embedder, self.store.home)
            return
        self.store.after_ack("vectors", self._build)

    def _build(self) -> None:
        if not self._stop.is_set():
            self.index(self.embedder()).build(stop=self._stop.is_set)

    def stop(self) -> None:
        """End background builds at their next step (the store is closing)."""
        self._stop.set()
