"""Which files on disk are index sources, and which layer each belongs to.

The store calls `all_sources` on open and on `sync`/`reindex`; each layer module
owns the parser for its files, this module only walks the folder tree.
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
    return specs
