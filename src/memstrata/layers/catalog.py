"""Which sources of the truth are index sources, and which layer each belongs to.

The store calls `all_sources` on open and on `sync`/`reindex`; each layer module
owns the parser for its files, this module only walks the tree (through the
store's truth, so the same walk serves files and PostgreSQL). `source_for`
answers the same question for one store-relative path (a watcher reported it
changed), by its place in the layout alone, so a deleted source is recognised too.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstrata.index.reconcile import SourceSpec

if TYPE_CHECKING:
    from memstrata.store import Store

MAX_WALK_FILES = 1_000_000
TOP_SOURCES = frozenset({"ledger.jsonl", "items.json"})


def memory_layer_of(rel: str) -> str:
    """The layer of a file inside an agent's memory dir, by its relative path."""
    if rel in ("NOW.md", "NOTES.md"):
        return "now"
    if rel in ("CONTEXT.md", "MEMORY.md"):
        return "context"
    if rel.startswith("session/"):
        return "scratch"
    return "file"


def walk(store: Store, root: Path) -> list[Path]:
    """Every source (no folders) below the folder `root`, sorted, as paths below the home."""
    try:
        rel = root.relative_to(store.home).as_posix()
    except ValueError:
        return []
    entries = store.truth.list(rel)
    return [store.home / e.path for e in entries[:MAX_WALK_FILES] if not e.is_dir]


_walk = walk  # the name other modules imported


def source_for(
    store: Store, rel: str | Path, handles: dict[tuple[str, str], Any] | None = None
) -> SourceSpec | None:
    """The source a store-relative path is (existing or not), or None if it is no
    index source. `handles` caches agent and room handles across calls (a walk)."""
    from memstrata.errors import InvalidInput
    from memstrata.layers.agent import AgentMemory
    from memstrata.layers.items import Items
    from memstrata.layers.ledger import Ledger
    from memstrata.layers.rooms import Room

    if isinstance(rel, Path):
        try:
            rel = rel.relative_to(store.home).as_posix()
        except ValueError:
            return None
    parts = tuple(p for p in rel.split("/") if p)
    if not parts or any(p.startswith(".") or p.endswith(".tmp") for p in parts):
        return None
    if store.truth.misnamed.skips(rel):  # made by hand: never a key, never a crash
        return None
    path = Path(f"{store.home}/{'/'.join(parts)}")
    cache = handles if handles is not None else {}
    try:
        if parts == ("ledger.jsonl",):
            return Ledger(store)._spec()
        if parts == ("items.json",):
            return Items(store)._spec()
        if len(parts) > 2 and parts[0] == "agents":
            agent = cache.get(("agents", parts[1]))
            if agent is None:
                agent = cache[("agents", parts[1])] = AgentMemory(store, parts[1])
            return agent._source_for(path, parts[2:])
        if len(parts) > 2 and parts[0] == "rooms":
            room = cache.get(("rooms", parts[1]))
            if room is None:
                room = cache[("rooms", parts[1])] = Room(store, parts[1])
            return room._source_for(path, parts[2:])
    except InvalidInput:  # a folder name that is no agent or room name
        return None
    return None


def all_sources(store: Store) -> list[SourceSpec]:
    """Every index source the truth holds: one walk (one query for PostgreSQL), each
    path classified by `source_for`."""
    specs: dict[str, SourceSpec] = {}
    handles: dict[tuple[str, str], Any] = {}
    from memstrata.files.versions import history_folder

    for entry in store.truth.list("", skip=history_folder):  # file versions: no index source
        if entry.is_dir or (entry.path.count("/") == 0 and entry.path not in TOP_SOURCES):
            continue
        spec = source_for(store, entry.path, handles)
        if spec is not None:
            specs.setdefault(str(spec.path), spec)
        if len(specs) > MAX_WALK_FILES:
            break
    store.truth.misnamed.tell(store.notices)  # files skipped for their names, if any
    from memstrata.layers.sources import Sources

    out = list(specs.values())
    out.extend(Sources(store).specs())  # indexed project folders (seed 004 `sources`)
    return out
