"""Indexed project source files (search scope `sources`).

A project folder is indexed on request (`memstrata sources add PATH`, or
`[sources] paths` in the config), into the same index and search as memory,
as layer `source`: readable by every agent but skills (like extracted items),
registered only by admins (the store's owner at the terminal). Files are
walked as extraction walks them (no VCS, dependency or cache folders, no
binaries, text and code up to 1 MB) and split into chunks with their 1-based
line numbers: Markdown at its headings, code and other text every
`CODE_CHUNK_LINES` lines.

The registry `sources.json` is store data (read and written through the
store's truth); the files stay where they are, read-only to memstrata, each
read through a `LocalTruth` of its folder (`index.reconcile.Origin`: a project
folder is this host's, not the store's, whatever the store's backend). They are caught up whenever a store opens, on `sync()`
(`memstrata sources sync`) and on reindex; the folder watcher of a long-running
process covers the store's own folder, so a source edited while a server runs is
seen at its next open or sync.
"""

from __future__ import annotations

import builtins
import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstrata.errors import MalformedInput, NotFound
from memstrata.files.jsondoc import RecordList
from memstrata.files.markdown import chunk_markdown
from memstrata.index import queries
from memstrata.index.docs import Doc, Parsed
from memstrata.index.reconcile import SourceSpec, SyncReport, sync_sources
from memstrata.layers.base import Acting, Layer
from memstrata.layers.mdparse import TEXT_SUFFIXES
from memstrata.model import iso, name_problem, now_ts
from memstrata.values import replace

if TYPE_CHECKING:
    pass

SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".memstrata",
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        "dist",
        "build",
        "target",
        ".next",
        ".cache",
    }
)
MAX_FILE_BYTES = 1024 * 1024
MAX_FILES = 20_000  # per source folder
CODE_CHUNK_LINES = 60
MARKDOWN = frozenset({".md", ".markdown", ".rst", ".txt"})


def _root_id(root: Path) -> str:
    return "src-" + hashlib.sha256(str(root).encode()).hexdigest()[:8]


def parse_source_file(data: bytes, path: Path, root: Path) -> Parsed:
    """One indexed project file -> docs of layer `source`, one per chunk."""
    if b"\x00" in data[:8192]:
        return Parsed(consumed=len(data))
    text = data.decode("utf-8", "replace")
    rel = path.relative_to(root).as_posix()
    label = f"{root.name}/{rel}"
    if path.suffix.lower() in MARKDOWN:
        chunks = [(c.title or label, c.text, c.line) for c in chunk_markdown(text)]
    else:
        lines = text.splitlines()
        chunks = [
            (label, "\n".join(lines[i : i + CODE_CHUNK_LINES]), i + 1)
            for i in range(0, len(lines), CODE_CHUNK_LINES)
            if "\n".join(lines[i : i + CODE_CHUNK_LINES]).strip()
        ]
    try:
        mtime = os.stat(path).st_mtime  # a project file (not store data)
    except FileNotFoundError:
        mtime = 0.0
    rid = _root_id(root)
    docs = [
        Doc(
            uid=f"source:{rid}:{rel}#{n}",
            layer="source",
            ts=mtime,
            title=title,
            body=body,
            context=label,
            source=str(path),
            kind=path.suffix.lstrip(".").lower() or None,
            line=line,
            thread=label,
            pos=n,
            meta={"path": rel, "root": str(root), "line": line},
        )
        for n, (title, body, line) in enumerate(chunks)
    ]
    return Parsed(docs=docs, consumed=len(data))


def source_spec(path: Path, root: Path) -> SourceSpec:
    return SourceSpec(path, "whole", lambda data, base: parse_source_file(data, path, root))


def walk_source(root: Path) -> list[Path]:
    """The files of a project folder that are indexed, sorted."""
    out: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(
            d
            for d in dirnames
            if d not in SKIP_DIRS and not d.startswith(".") and name_problem(d) is None
        )
        for name in sorted(filenames):
            p = Path(dirpath) / name
            if (
                name.startswith(".")
                or p.suffix.lower() not in TEXT_SUFFIXES
                or name_problem(name) is not None  # (an undecodable name is never a key)
            ):
                continue
            try:
                if p.is_symlink() or p.stat().st_size > MAX_FILE_BYTES:
                    continue
            except OSError:
                continue
            out.append(p)
            if len(out) >= MAX_FILES:
                return out
    return out


class Sources(Layer):
    """The project folders indexed for search (`sources.json` + `[sources] paths`)."""

    layer = "source"

    def __init__(self, acting: Acting) -> None:
        super().__init__(acting, None)
        self.path = acting.engine.home / "sources.json"

    def _registry_spec(self) -> SourceSpec:
        return SourceSpec(self.path, "whole", lambda d, b: Parsed(consumed=len(d)))

    def roots(self) -> list[Path]:
        """Every registered folder that exists (the registry's, then the config's)."""
        out: list[Path] = []
        for raw in [*self._registered(), *self.engine.config.source_paths]:
            p = Path(raw).expanduser()
            p = (p if p.is_absolute() else self.engine.home / p).resolve()
            if p not in out and p.is_dir() and p != self.engine.home:
                out.append(p)
        return out

    def _registered(self) -> list[str]:
        try:
            doc = self._document(self.path, "sources")
        except MalformedInput:
            return []
        return [str(r.get("path")) for r in doc.records() if isinstance(r.get("path"), str)]

    def list(self) -> list[dict[str, Any]]:
        """The registered folders with how many files each holds in the index."""
        self._check("read")
        db = self.engine.db
        return [
            {"path": str(root), "files": len(queries.sources_below(db, f"{root}{os.sep}"))}
            for root in self.roots()
        ]

    def specs(self) -> builtins.list[SourceSpec]:
        """Every indexed file of every registered folder (for `Store.sources`)."""
        return [source_spec(p, root) for root in self.roots() for p in walk_source(root)]

    def add(self, folder: str | os.PathLike[str]) -> dict[str, Any]:
        """Register a project folder and index it now (admins: the store's owner)."""
        self._check("write")
        root = Path(folder).expanduser().resolve()
        if not root.is_dir():
            raise NotFound(f"{folder} is not a folder")
        if root == self.engine.home or self.engine.home in root.parents:
            raise MalformedInput(f"{root} is the store itself; its memory is indexed already")
        with self.engine.editing(self._registry_spec()) as edit:
            doc = RecordList.parse(edit.data, str(self.path), key="sources")
            if not any(r.get("path") == str(root) for r in doc.records()):
                doc.append(
                    {
                        "id": _root_id(root),
                        "path": str(root),
                        "added": iso(now_ts()),
                        "added_by": self.gate.principal.agent,
                    }
                )
                edit(doc.dumps())
        report = self.sync()
        self._write_event(self.path, len(report.reparsed), "source")
        return {"path": str(root), "files": report.scanned}

    def remove(self, folder: str | os.PathLike[str]) -> int:
        """Unregister a folder and drop its files from the index; returns how many."""
        self._check("write")
        root = str(Path(folder).expanduser().resolve())
        with self.engine.editing(self._registry_spec()) as edit:
            doc = RecordList.parse(edit.data, str(self.path), key="sources")
            before = len(doc.records())
            doc.remove(lambda r: r.get("path") == root)
            if len(doc.records()) == before:
                raise NotFound(f"{folder} is not a registered source folder")
            edit(doc.dumps())
        dropped = self._drop_under(root)
        self._write_event(self.path, -dropped, "source")
        return dropped

    def _drop_under(self, root: str) -> int:
        """Forget the index rows of every file below `root`; returns how many files."""
        return queries.drop_sources_below(self.engine.db, f"{root}{os.sep}")

    def sync(self) -> SyncReport:
        """Catch the index up with the registered folders (new, changed, deleted files)."""
        self._check("read")
        return sync_sources(
            self.engine.db, replace(self.engine.origin, with_home=False), self.specs()
        )
