"""`Store`: a principal acting on an engine (who is acting, and what that one may do).

An engine (`store.engine`) is one per home folder: config, truth, index, locks,
jobs and the write doors. A `Store` is who acts on it: the principal (agent, role,
room), its gate, its face of the audit bus, the layer handles it hands out and the
search it runs. `Store(home, agent=...)` opens an engine and owns it (closing the
store closes it); `acting_as` returns another principal over the same engine, at
the cost of a few objects: what a server needs per request.

Opening is where the parts are wired, downward: the engine is handed the layers'
catalog of index sources, the lifecycle registers for what layers announce
(`lifecycle.triggers`), and an import a dead process left half done is finished.

    with Store("/tmp/mem", agent="finn") as store:
        store.agent().log.append("THOUGHT", "started")
        finn_in_042 = store.acting_as("finn", "room-042")
"""

from __future__ import annotations

import os
from functools import cached_property
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from memstrata.config import Config
from memstrata.errors import MalformedInput, NotFound
from memstrata.files.layout import Layout
from memstrata.index import queries
from memstrata.index.reconcile import SyncReport
from memstrata.layers.agent import AgentMemory
from memstrata.layers.base import Acting
from memstrata.layers.catalog import LayerCatalog
from memstrata.layers.ledger import Ledger
from memstrata.lifecycle import triggers
from memstrata.model import Principal, check_name
from memstrata.policy.scope import Gate, resolve_role
from memstrata.store.engine import Engine

if TYPE_CHECKING:
    from collections.abc import Callable

    from memstrata.embed.base import Embedder
    from memstrata.index.db import Database
    from memstrata.index.frequencies import DocFrequencies
    from memstrata.index.vectors import VectorIndex
    from memstrata.layers.items import Items
    from memstrata.layers.rooms import Room
    from memstrata.layers.sources import Sources
    from memstrata.search.query import Hit, SearchQuery
    from memstrata.store.events import EventBus
    from memstrata.store.semantic import Semantic


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

    engine: Engine
    principal: Principal
    gate: Gate
    events: EventBus

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
        _check_names(agent, room)
        engine = Engine(
            home, LayerCatalog(), sync=sync, audit=audit, watch=watch, recover=_finish_imports
        )
        try:
            # Roles come from [roles] in the config; `role` may only lower the configured one.
            self._act(engine, agent, room, resolve_role(engine.config, agent, role), owns=True)
        except BaseException:
            engine.close()
            raise
        triggers.register(engine, self._view_of)

    @classmethod
    def open(cls, home: str | os.PathLike[str] | None = None, **kw: Any) -> Store:
        return cls(home, **kw)

    def _act(
        self, engine: Engine, agent: str | None, room: str | None, role: str, *, owns: bool
    ) -> None:
        self.engine = engine
        self.principal = Principal(agent=agent, role=role, room=room)  # type: ignore[arg-type]
        self.gate = Gate(self.principal, engine.config)
        self.events = engine.events.as_agent(agent)
        self._owns = owns

    @classmethod
    def over(cls, engine: Engine, principal: Principal) -> Store:
        """A principal (already resolved against the config) acting on `engine`."""
        view = cls.__new__(cls)
        view._act(engine, principal.agent, principal.room, principal.role, owns=False)
        return view

    def _view_of(self, principal: Principal) -> Store:
        return Store.over(self.engine, principal)

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
        _check_names(agent, room)
        view = Store.__new__(Store)
        view._act(
            self.engine, agent, room, resolve_role(self.engine.config, agent, role), owns=False
        )
        return view

    @cached_property
    def _acting(self) -> Acting:
        return Acting(self.engine, self.gate, self.events)

    # -- the engine it acts on -------------------------------------------------
    @property
    def home(self) -> Path:
        return self.engine.home

    @property
    def config(self) -> Config:
        return self.engine.config

    @config.setter
    def config(self, config: Config) -> None:
        """Settings changed in place (tests, an embedding host): the engine's, for all."""
        self.engine.config = config

    @property
    def layout(self) -> Layout:
        return self.engine.layout

    @property
    def notices(self) -> list[str]:
        """What a user should know (a read-only copy, an index lagging the files)."""
        return self.engine.notices

    @property
    def read_only(self) -> bool:
        return self.engine.read_only

    @property
    def background_errors(self) -> list[tuple[str, BaseException]]:
        return self.engine.background_errors

    @property
    def notice_sink(self) -> Callable[[str], None] | None:
        return self.engine.notice_sink

    @notice_sink.setter
    def notice_sink(self, sink: Callable[[str], None] | None) -> None:
        """Where `warn`-policy secret notices go (adapters set it; None: Python warnings)."""
        self.engine.notice_sink = sink

    def rel(self, path: Path) -> str:
        return self.engine.rel(path)

    def sync(self, *, force: bool = False) -> SyncReport:
        """Catch the index up with the files (other writers, hand edits, deletions)."""
        return self.engine.sync(force=force)

    def reindex(self, progress: Callable[[int, int], None] | None = None) -> SyncReport:
        """Build a new index generation from the files and swap it in (`Engine.reindex`)."""
        return self.engine.reindex(progress)

    def watch(self) -> bool:
        """Keep the index fresh while this store stays open (`Engine.watch`)."""
        return self.engine.watch()

    def drain(self, timeout: float | None = None) -> None:
        """Wait for the background work started after acknowledged writes."""
        self.engine.drain(timeout)

    # -- what a search reads through (`search.query.Searchable`) ---------------
    @property
    def db(self) -> Database:
        """The index (every read catches it up with the files first)."""
        return self.engine.db

    @property
    def df_cache(self) -> DocFrequencies:
        return self.engine.df_cache

    def vectors(self, embedder: Embedder) -> VectorIndex:
        return self.engine.vectors(embedder)

    @property
    def semantic(self) -> Semantic:
        """The engine's embedder, vector indexes and builds after writes."""
        return self.engine.semantic

    def build_vectors_later(self) -> None:
        """Build the vectors of what changed in the background (`store.semantic`)."""
        self.engine.build_vectors_later()

    def doc_count(self) -> int:
        """How many memories (index rows) the store holds, whoever may read them."""
        return queries.doc_count(self.engine.db)

    def embedder(self) -> Embedder:
        """The embedder of `[search] embedder` (`Engine.embedder`)."""
        return self.engine.embedder()

    def semantic_embedder(self) -> Embedder | None:
        """The embedder if semantic recall works here without a download (else None)."""
        return self.engine.semantic_embedder()

    def use_embedder(self, embedder: Embedder) -> None:
        self.engine.use_embedder(embedder)

    def close(self) -> None:
        """Close the engine, if this store opened it (an `acting_as` view does nothing)."""
        if self._owns:
            self.engine.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- layer handles -------------------------------------------------------
    def agent(self, name: str | None = None, *, create: bool = False) -> AgentMemory:
        """The memory of one agent (default: the principal's own).

        Another agent's name must exist (a folder under `agents/` or a name in
        `[roles]`): a typo such as `store.agent("fnn")` raises `NotFound` with a
        suggestion instead of handing back an empty agent. An agent comes into being
        with its own first write, with `memstrata init NAME`, or here with `create=True`.
        """
        who = name or self.principal.agent
        if who is None:
            raise MalformedInput("no agent given and the store was opened without one")
        check_name(who, "agent")
        if not create and who != self.principal.agent and not self.has_agent(who):
            raise NotFound(
                f"no agent {who!r} in {self.home}{self.suggest_agent(who)}; "
                "an agent is created by `memstrata init NAME` or by its own first write"
            )
        return AgentMemory(self._acting, who)

    def has_agent(self, name: str) -> bool:
        """True if `name` has memory on disk or is named in the config's `[roles]`."""
        entry = self.engine.stat(f"agents/{name}")
        return (entry is not None and entry.is_dir) or name in self.config.configured_agents

    def suggest_agent(self, name: str) -> str:
        known = sorted(set(self.agents()) | set(self.config.configured_agents))
        import difflib  # only to suggest a name (start-up)

        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        return f" (did you mean {close[0]!r}?)" if close else ""

    def agents(self) -> list[str]:
        return self.engine.agents()

    def rooms(self) -> list[str]:
        return self.engine.rooms()

    @property
    def ledger(self) -> Ledger:
        return Ledger(self._acting, search=self.search)

    @property
    def items(self) -> Items:
        from memstrata.layers.items import Items  # (start-up: a context reads no items)

        return Items(self._acting, search=self.search)

    @property
    def sources(self) -> Sources:
        """Project folders indexed as the `sources` search scope."""
        from memstrata.layers.sources import Sources  # (start-up, as `items`)

        return Sources(self._acting)

    def room(self, name: str | None = None) -> Room:
        who = name or self.principal.room
        if who is None:
            raise MalformedInput("no room given and the store was opened without one")
        from memstrata.layers.rooms import Room  # (start-up, as `items`)

        return Room(self._acting, check_name(who, "room"))

    # -- search ----------------------------------------------------------------
    def search(self, query: SearchQuery | str, **kw: Any) -> list[Hit]:
        """One search over every layer the principal may read (see `memstrata.search`)."""
        from memstrata.search import recall  # (start-up: test_architecture allow-list)
        from memstrata.search.query import SearchQuery

        q = query if isinstance(query, SearchQuery) else SearchQuery(text=query, **kw)
        return recall.search(self, q)  # its index reads catch up first

    def get(self, uid: str) -> Hit:
        """One memory by the uid a search hit carries: full text and metadata, scope-checked."""
        from memstrata.search import engine as search_engine  # (start-up, as `search`)

        return search_engine.fetch(self, uid)


def _check_names(agent: str | None, room: str | None) -> None:
    if agent is not None:
        check_name(agent, "agent")
    if room is not None:
        check_name(room, "room")


def _finish_imports(engine: Engine) -> None:
    """An importer died: finish (after its commit) or discard its staged import."""
    if os.path.isdir(engine.home / ".imports"):
        from memstrata.operations.transfer.importer import recover_imports  # rare: only then

        recover_imports(engine)
