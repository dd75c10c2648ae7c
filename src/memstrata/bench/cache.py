"""Built benchmark stores kept between runs, so a query-side change is measured in seconds.

`bench locomo` and `bench paraphrase` spend almost all their time writing the
records and embedding them (thousands of texts with all-MiniLM-L6-v2 on the CPU);
the searches that the rows measure take seconds. A store built once for a dataset,
an embedder and the code that writes and embeds (`code_version`: every module of the
package except the search, settings, presentation and adapter ones) is kept under

    $MEMSTRATA_BENCH_CACHE (default: <temp dir>/memstrata-bench-cache)/<key>/

and each later run searches a fresh copy of it. Changing how records are written,
indexed, cut into units or embedded changes the key, so the store is built again;
changing how they are searched does not. MEMSTRATA_BENCH_CACHE=off (or `--no-cache`)
builds every time. At most `KEEP` stores are kept (the least recently used go).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ENV = "MEMSTRATA_BENCH_CACHE"
KEEP = 24
# packages whose code decides how records are searched or shown, not how they are stored
# (and settings: a default that changes how records are written needs `--no-cache`)
_QUERY_SIDE = frozenset(
    {"search", "cli", "web", "mcp", "assembly", "reading", "bench", "skills", "config"}
)
_PACKAGE = Path(__file__).resolve().parent.parent
_version: str | None = None


def cache_dir(enabled: bool = True) -> Path | None:
    """Where built stores are kept; None when caching is off."""
    value = os.environ.get(ENV, "")
    if not enabled or value.lower() in ("0", "off", "no", "false"):
        return None
    return Path(value) if value else Path(tempfile.gettempdir()) / "memstrata-bench-cache"


def code_version() -> str:
    """sha256 of the store-side source: every .py file of the package outside `_QUERY_SIDE`."""
    global _version
    if _version is None:
        h = hashlib.sha256()
        for path in sorted(_PACKAGE.rglob("*.py")):
            rel = path.relative_to(_PACKAGE)
            if rel.parts[0] in _QUERY_SIDE:
                continue
            h.update(str(rel).encode())
            h.update(path.read_bytes())
        _version = h.hexdigest()
    return _version


def key(*parts: Any) -> str:
    """A cache key for `parts` (dataset bytes or id, embedder, options) and the code."""
    h = hashlib.sha256(code_version().encode())
    for p in parts:
        h.update(p if isinstance(p, bytes) else json.dumps(p, sort_keys=True, default=str).encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


def built_home(
    name: str, parts: tuple[Any, ...], build: Callable[[Path], dict[str, Any]], folder: Path | None
) -> tuple[Path, dict[str, Any], bool]:
    """A fresh store folder for `parts`: a copy of the cached one (True), or one that
    `build(home)` writes (it must close the store) and returns `info` for (False).

    Returns (home, the info `build` returned when it was built, whether it came from
    the cache). The caller removes `home` when done."""
    home = Path(tempfile.mkdtemp(prefix=f"memstrata-{name}-"))
    if folder is None:
        return home, build(home), False
    entry = folder / key(name, *parts)
    done = entry / "info.json"
    if done.is_file():
        shutil.copytree(entry / "store", home, dirs_exist_ok=True)
        with contextlib.suppress(OSError):
            os.utime(entry)
        return home, json.loads(done.read_text()), True
    info = build(home)
    folder.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{entry.name}-", dir=folder))
    shutil.copytree(home, tmp / "store", ignore=shutil.ignore_patterns("*.lock"))
    (tmp / "info.json").write_text(json.dumps(info))
    try:
        os.replace(tmp, entry)
    except OSError:  # another run stored it meanwhile
        shutil.rmtree(tmp, ignore_errors=True)
    _evict(folder)
    return home, info, False


def _evict(folder: Path) -> None:
    entries = sorted(
        (p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")),
        key=lambda p: p.stat().st_mtime,
    )
    for old in entries[:-KEEP]:
        shutil.rmtree(old, ignore_errors=True)


__all__ = ["ENV", "built_home", "cache_dir", "code_version", "key"]
