"""Where memory is in the layout: the sources below a folder, the layer of a memory file.

Both answer by place alone, through the engine's listing (the same walk serves a
folder of files and PostgreSQL), so a deleted file is recognised too.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memstrata.store.engine import Engine

MAX_WALK_FILES = 1_000_000


def memory_layer_of(rel: str) -> str:
    """The layer of a file inside an agent's memory dir, by its relative path."""
    if rel in ("NOW.md", "NOTES.md"):
        return "now"
    if rel in ("CONTEXT.md", "MEMORY.md"):
        return "context"
    if rel.startswith("session/"):
        return "scratch"
    return "file"


def walk(engine: Engine, root: Path) -> list[Path]:
    """Every source (no folders) below the folder `root`, sorted, as paths below the home."""
    try:
        rel = root.relative_to(engine.home).as_posix()
    except ValueError:
        return []
    entries = engine.listing(rel)
    return [engine.home / e.path for e in entries[:MAX_WALK_FILES] if not e.is_dir]
