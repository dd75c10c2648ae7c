"""What `PostgresTruth` reads rows with: the source row, its entry, names and keys.

psycopg is imported by `driver()` only, when a store names a PostgreSQL URL.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from memstrata.errors import BackendUnavailable
from memstrata.files.truth import Entry

SOURCE_ROW = "SELECT path, is_dir, size, mtime, generation, version FROM memstrata_sources"


def redact(url: str) -> str:
    """The URL without its password, for messages."""
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", url)


def parent_of(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


def entry_of(row: Any) -> Entry:
    path, is_dir, size, mtime, generation, version = row
    return Entry(
        path, int(size), float(mtime), int(generation), f"{generation}-{version}", bool(is_dir)
    )


def like_prefix(folder: str) -> str:
    escaped = folder.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"{escaped}/%"


def lock_key(name: str) -> int:
    """A signed 64-bit advisory lock key for a lock name."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)


def driver() -> Any:
    try:
        import psycopg
        import psycopg_pool  # noqa: F401
    except ImportError:
        raise BackendUnavailable(
            "[backend] url names PostgreSQL, but psycopg is not installed: "
            "pip install 'memstrata[postgres]'"
        ) from None
    return psycopg
