"""Resolve user-supplied relative paths inside a root, refusing every way out.

A path is accepted only if, after resolving symlinks, it is the root itself or
lies strictly below it. Checked on the resolved path, so a symlink inside the
store that leads out is refused as well as `..`, absolute paths, NUL bytes and
sibling-prefix tricks (`/store-evil` is not inside `/store`). A path must also be a
valid name (`model.name_problem`: valid UTF-8, no control or bidirectional formatting
character, NFC), so every memory file name stays printable, encodable and unambiguous.
"""

from __future__ import annotations

import os
from pathlib import Path

from memstrata import limits
from memstrata.errors import PathOutsideStore
from memstrata.model import check_unicode_name

MAX_PATH_CHARS = limits.PATH_CHARS


def safe_join(root: Path, rel: str, *, allow_root: bool = False) -> Path:
    """Return `root/rel` resolved, or raise `PathOutsideStore`.

    Example:
        >>> safe_join(Path("/tmp/s"), "notes/a.md")  # doctest: +SKIP
        PosixPath('/tmp/s/notes/a.md')
    """
    if not isinstance(rel, str):
        raise PathOutsideStore(f"path must be a string, got {type(rel).__name__}")
    if len(rel) > MAX_PATH_CHARS:
        raise PathOutsideStore(f"path longer than {MAX_PATH_CHARS} characters")
    if "\x00" in rel:
        raise PathOutsideStore("path contains a NUL byte")
    check_unicode_name(rel, "memory path")
    cleaned = rel.strip().replace("\\", "/")
    if cleaned.startswith("/memories/"):
        # Anthropic memory-tool and repo-memory style paths are rooted at /memories.
        cleaned = cleaned[len("/memories/") :]
    if cleaned.startswith("/") or (len(cleaned) > 1 and cleaned[1] == ":"):
        raise PathOutsideStore(f"absolute paths are not allowed: {rel!r}")
    parts = [p for p in cleaned.split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise PathOutsideStore(f"'..' is not allowed in a memory path: {rel!r}")
    if not parts and not allow_root:
        raise PathOutsideStore("empty path")
    root_resolved = root.resolve()
    candidate = root_resolved.joinpath(*parts)
    resolved = Path(os.path.realpath(candidate))
    if resolved != root_resolved and root_resolved not in resolved.parents:
        raise PathOutsideStore(f"path leads outside the memory directory: {rel!r}")
    if resolved == root_resolved and not allow_root:
        raise PathOutsideStore("path names the memory directory itself")
    return resolved
