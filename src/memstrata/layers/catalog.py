"""Which sources of the truth are index sources, and which layer each belongs to.

The engine asks its `LayerCatalog` on open and on `sync`/`reindex`; each layer
module owns the parser for its files, this module only walks the tree (through
the engine, so the same walk serves files and PostgreSQL). `source_for` answers
the same question for one store-relative path (a watcher reported it changed),
by its place in the layout alone, so a deleted source is recognised too. The
handles it builds act as the files' owner (`Acting.plumbing`): index plumbing,
not a read path; the gate applies to what is read from the index.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstrata.errors import InvalidInput
from memstrata.files.versions import history_folder
from memstrata.index.reconcile import SourceSpec
from memstrata.layers.agent import AgentMemory
from memstrata.layers.base import Acting
from memstrata.layers.ledger import Ledger
from memstrata.layers.sources import Sources
from memstrata.layers.walk import MAX_WALK_FILES

if TYPE_CHECKING:
    from memstrata.store.engine import Engine

TOP_SOURCES = frozenset({"ledger.jsonl", "items.json"})


def source_for(
    engine: Engine, rel: str | Path, handles: dict[tuple[str, str], Any] | None = None
) -> SourceSpec | None:
    """The source a store-relative path is (existing or not), or None if it is no
    index source. `handles` caches agent and room handles across calls (a walk)."""
    if isinstance(rel, Path):
        try:
            rel = rel.relative_to(engine.home).as_posix()
        except ValueError:
            return None
    parts = tuple(p for p in rel.split("/") if p)
    if not parts or any(p.startswith(".") or p.endswith(".tmp") for p in parts):
        return None
    if engine.misnamed.skips(rel):  # made by hand: never a key, never a crash
        return None
    path = Path(f"{engine.home}/{'/'.join(parts)}")
    cache = handles if handles is not None else {}
    acting = cache.get(("acting", ""))
    if acting is None:
        acting = cache[("acting", "")] = Acting.plumbing(engine)
    try:
        if parts == ("ledger.jsonl",):
            return Ledger(acting)._spec()
        if parts == ("items.json",):
            from memstrata.layers.items import Items  # (start-up: only a store with items)

            return Items(acting)._spec()
        if len(parts) > 2 and parts[0] == "agents":
            agent = cache.get(("agents", parts[1]))
            if agent is None:
                agent = cache[("agents", parts[1])] = AgentMemory(acting, parts[1])
            return agent._source_for(path, parts[2:])
        if len(parts) > 2 and parts[0] == "rooms":
            room = cache.get(("rooms", parts[1]))
            if room is None:
                from memstrata.layers.rooms import Room  # (start-up: only a store with rooms)

                room = cache[("rooms", parts[1])] = Room(acting, parts[1])
            return room._source_for(path, parts[2:])
    except InvalidInput:  # a folder name that is no agent or room name
        return None
    return None


def all_sources(engine: Engine) -> list[SourceSpec]:
    """Every index source the truth holds: one walk (one query for PostgreSQL), each
    path classified by `source_for`."""
    specs: dict[str, SourceSpec] = {}
    handles: dict[tuple[str, str], Any] = {}
    for entry in engine.listing("", skip=history_folder):  # file versions: no index source
        if entry.is_dir or (entry.path.count("/") == 0 and entry.path not in TOP_SOURCES):
            continue
        spec = source_for(engine, entry.path, handles)
        if spec is not None:
            specs.setdefault(str(spec.path), spec)
        if len(specs) > MAX_WALK_FILES:
            break
    engine.misnamed.tell(engine.notices)  # files skipped for their names, if any
    out = list(specs.values())
    out.extend(project_sources(engine))  # indexed project folders (search scope `sources`)
    return out


def project_sources(engine: Engine) -> list[SourceSpec]:
    """The files of the project folders indexed as the `sources` scope."""
    return Sources(Acting.plumbing(engine)).specs()


class LayerCatalog:
    """The engine's `SourceCatalog`: what the layers above say are index sources."""

    def all_sources(self, engine: Engine) -> list[SourceSpec]:
        return all_sources(engine)

    def source_for(
        self, engine: Engine, rel: str, handles: dict[tuple[str, str], Any]
    ) -> SourceSpec | None:
        return source_for(engine, rel, handles)

    def project_sources(self, engine: Engine) -> list[SourceSpec]:
        return project_sources(engine)
