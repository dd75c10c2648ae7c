"""Which files on disk are index sources, and which layer each belongs to.

The store calls `all_sources` on open and on `sync`/`reindex`; each layer module
owns the parser for its files, this module only walks the folder tree.
`source_for` answers the same question for one path (a watcher reported it
changed), by its place in the layout alone, so a deleted file is recognised too.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from memstrata.index.reconcile import SourceSpec

if TYPE_CHECKING:
    from memstrata.store import Store

MAX_WALK_FILES = 100_000


def memory_layer_of(rel: str) -> str:
    """The layer of a file inside an agent's memory dir, by its relative path."""
    if rel in ("NOW.md", "NOTES.md"):
        return "now"
    if rel in ("CONTEXT.md", "MEMORY.md"):
        return "context"
    if rel.startswith("session/"):
        return "scratch"
    return "file"


def _walk(root: Path) -> list[Path]:
    out: list[Path] = []
    if not root.is_dir():
        return out
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            if not name.startswith(".") and not name.endswith(".tmp"):
                out.append(Path(dirpath) / name)
        if len(out) > MAX_WALK_FILES:
            break
    return sorted(out)


def source_for(store: Store, path: Path) -> SourceSpec | None:
    """The source a path is (existing or not), or None if it is no index source."""
    from memstrata.errors import InvalidInput
    from memstrata.layers.agent import AgentMemory
    from memstrata.layers.items import Items
    from memstrata.layers.ledger import Ledger
    from memstrata.layers.rooms import Room

    try:
        parts = path.relative_to(store.home).parts
    except ValueError:
        return None
    if not parts or any(p.startswith(".") or p.endswith(".tmp") for p in parts):
        return None
    try:
        if parts == ("ledger.jsonl",):
            return Ledger(store).spec()
        if parts == ("items.json",):
            return Items(store).spec()
        if len(parts) > 2 and parts[0] == "agents":
            return AgentMemory(store, parts[1]).source_for(path, parts[2:])
        if len(parts) > 2 and parts[0] == "rooms":
            return Room(store, parts[1]).source_for(path, parts[2:])
    except InvalidInput:  # a folder name that is no agent or room name
        return None
    return None


def all_sources(store: Store) -> list[SourceSpec]:
    from memstrata.layers.agent import AgentMemory
    from memstrata.layers.items import Items
    from memstrata.layers.ledger import Ledger
    from memstrata.layers.rooms import Room

    specs: list[SourceSpec] = []
    lay = store.layout
    if lay.ledger.exists():
        specs.append(Ledger(store).spec())
    if lay.items.exists():
        specs.append(Items(store).spec())
    for agent in lay.agents():
        specs.extend(AgentMemory(store, agent).sources())
    for room in lay.rooms():
        specs.extend(Room(store, room).sources())
    from memstrata.layers.sources import Sources

    specs.extend(Sources(store).specs())  # indexed project folders (seed 004 `sources`)
    return specs
