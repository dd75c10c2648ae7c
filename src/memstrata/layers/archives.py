"""Cold memory: the LOG archives compaction writes, listed and read back.

Compaction (`lifecycle.compaction`) moves LOG entries verbatim to
`archive/LOG-<stamp>-<archive_id>.md`, in LOG format, and never rewrites that file
afterwards (only a purge does). So "every entry this agent ever logged" is LOG.md
plus these archives; this handle lists the archives, oldest first, and reads one
back as entries, straight from the truth (the index holds them too, as layer
`archive`, for search). Reading an archive is reading the agent's LOG: the same
scope check.

    archives = store.agent("finn").archives
    [a.id for a in archives.list()]            # ['arc-1a2b3c4d', ...]
    archives.entries("arc-1a2b3c4d")[0].content
"""

from __future__ import annotations

import builtins
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstrata.errors import MalformedInput, NotFound
from memstrata.index.reconcile import SourceSpec
from memstrata.layers.base import Acting, Layer
from memstrata.layers.log import parse_log, to_entry
from memstrata.layers.mdparse import markdown_spec
from memstrata.model import LogEntry, iso
from memstrata.values import value_type

if TYPE_CHECKING:
    from memstrata.store.engine import Engine

ARCHIVE_FILE = re.compile(r"^LOG-(\d{8}T\d{6}Z)-(arc-[0-9a-f]{1,32})\.md$")
ARCHIVE_ID = re.compile(r"^arc-[0-9a-f]{1,32}$")


@value_type(frozen=True)
class LogArchive:
    """One compaction archive of an agent's LOG."""

    id: str  # 'arc-1a2b3c4d', as in compactions.jsonl and the summary entry's metadata
    path: str  # store-relative
    stamp: str  # the compaction's time as in the file name, '20261122T103000Z'
    size: int
    modified: str

    def to_dict(self) -> dict[str, Any]:
        from dataclasses import asdict  # only for a listing: not at import

        return asdict(self)


class LogArchives(Layer):
    """The LOG archives of one agent (`archive/LOG-*.md`), oldest first."""

    layer = "log"

    def __init__(self, acting: Acting, owner: str) -> None:
        super().__init__(acting, owner)
        self.folder = acting.engine.layout.archive_dir(owner)

    def list(self) -> builtins.list[LogArchive]:
        """Every LOG archive, oldest compaction first.

        The file name's stamp orders them to the second; within a second, the order of
        `compactions.jsonl` (an archive it does not name yet, after a crash, comes last).
        """
        self._check("read")
        found = []
        for e in self.engine.listing(self.folder, recursive=False):
            m = ARCHIVE_FILE.match(e.path.rsplit("/", 1)[-1])
            if m and not e.is_dir:
                found.append(LogArchive(m.group(2), e.path, m.group(1), e.size, iso(e.mtime)))
        if not found:
            return []
        history = self._records(self.engine.layout.compactions(self.owner or ""))
        order = {str(r.get("archive_id")): n for n, (_, r) in enumerate(history.records)}
        found.sort(key=lambda a: (a.stamp, order.get(a.id, len(order)), a.modified, a.id))
        return found

    def get(self, archive_id: str) -> LogArchive:
        if not isinstance(archive_id, str) or not ARCHIVE_ID.match(archive_id):
            raise MalformedInput(f"invalid archive id {archive_id!r}: ids look like arc-1a2b3c4d")
        for a in self.list():
            if a.id == archive_id:
                return a
        raise NotFound(f"no LOG archive {archive_id!r} for {self.owner}")

    def entries(self, archive_id: str) -> builtins.list[LogEntry]:
        """The entries of one archive, in the order they were logged."""
        return self._entries(self.get(archive_id))

    def all_entries(self) -> builtins.list[LogEntry]:
        """Every archived entry, oldest archive first (LOG.md holds the rest)."""
        return [e for a in self.list() for e in self._entries(a)]

    def _entries(self, archive: LogArchive) -> builtins.list[LogEntry]:
        data = self.engine.read_from(archive.path)
        path = self.engine.home / archive.path
        parsed = parse_log(
            data,
            0,
            str(path),
            owner=self.owner,
            layer="archive",
            final=True,
            mtime=lambda: 0.0,
            name=archive.path,
        )
        self._read_event(path, len(data), "archive")
        return [to_entry(d.meta or {}) for d in parsed.docs]


def archive_spec(engine: Engine, path: Path, owner: str) -> SourceSpec:
    """Cold memory: compacted LOG archives (LOG format) and archived Markdown."""
    if path.name.startswith("LOG-") and path.parent == engine.layout.archive_dir(owner):
        p, rel = str(path), engine.rel(path)

        def when() -> float:
            entry = engine.stat(rel)
            return entry.mtime if entry is not None else 0.0

        return SourceSpec(
            path,
            "whole",
            lambda d, b: parse_log(
                d,
                b,
                p,
                owner=owner,
                layer="archive",
                final=True,
                mtime=when,
                neighbour_radius=engine.config.log_neighbour_context,
                name=rel,
            ),
        )
    return markdown_spec(engine, path, "archive", owner=owner)
