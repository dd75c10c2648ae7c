"""`migrate`: move a store's truth between backends (folder <-> PostgreSQL), nothing lost.

Every source and folder of the source truth is written to the destination with
the same store-relative path and the same bytes (an append log becomes one chunk
at offset 0, so reading it back by position yields the file's bytes); then a
sha256 manifest (path, size, sha256 of every source) is computed on both sides
and compared, and the migration fails loudly if they differ. Only the truth is
moved: this host's index, settings (`config.toml`) and audit trail
(`events*.jsonl`) stay in its folder (the documented normalisation: an export of
the migrated store has the same memory files, byte for byte, and this host's own
settings and audit trail). A destination that already holds a different version
of a source is refused unless `force` (identical sources are skipped, so running
a migration twice is a no-op).

    report = migrate(LocalTruth(home, locks), PostgresTruth(url))
    report.identical  # True: both manifests are equal
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from memstrata.errors import AlreadyExists, MemstrataError
from memstrata.files.truth import Truth
from memstrata.values import value_type

Manifest = dict[str, tuple[int, str]]  # path -> (size, sha256)


@value_type(frozen=True)
class MigrateReport:
    source: str
    dest: str
    files: int
    folders: int
    bytes: int
    written: int
    skipped: int  # already identical at the destination
    manifest_sha256: str  # of the sorted (path, size, sha256) rows, equal on both sides

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "dest": self.dest,
            "files": self.files,
            "folders": self.folders,
            "bytes": self.bytes,
            "written": self.written,
            "skipped": self.skipped,
            "manifest_sha256": self.manifest_sha256,
        }


class MigrationMismatch(MemstrataError):
    """The destination's manifest differs from the source's after a migration."""

    code = "migration_mismatch"


def manifest(truth: Truth) -> Manifest:
    """(size, sha256) of every source of `truth`, by path."""
    out: Manifest = {}
    for entry in truth.list(""):
        if entry.is_dir:
            continue
        found = truth.read(entry.path)
        if found is not None:
            out[entry.path] = (len(found.data), hashlib.sha256(found.data).hexdigest())
    return out


def digest(rows: Manifest) -> str:
    sha = hashlib.sha256()
    for path in sorted(rows):
        size, h = rows[path]
        sha.update(f"{path}\0{size}\0{h}\n".encode())
    return sha.hexdigest()


def migrate(
    source: Truth,
    dest: Truth,
    *,
    force: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> MigrateReport:
    """Copy every source and folder of `source` into `dest`, then compare manifests.

    Raises AlreadyExists (a destination source differs; nothing was written) unless
    `force`, and MigrationMismatch if the manifests differ afterwards.
    """
    entries = source.list("")
    files = [e for e in entries if not e.is_dir]
    folders = [e for e in entries if e.is_dir]
    clashes = []
    for e in files:
        there = dest.stat(e.path)
        if there is not None and not force:
            a, b = source.read(e.path), dest.read(e.path)
            if a is None or b is None or a.data != b.data:
                clashes.append(e.path)
    if clashes:
        raise AlreadyExists(
            f"{len(clashes)} source(s) already exist in {dest.location} with "
            f"other content (e.g. {', '.join(clashes[:5])}); nothing was "
            "migrated; use --force to replace them"
        )
    written = skipped = total = 0
    for n, e in enumerate(files, start=1):
        found = source.read(e.path)
        if found is None:
            continue  # deleted since the listing
        total += len(found.data)
        held = dest.read(e.path) if dest.stat(e.path) is not None else None
        if held is not None and held.data == found.data:
            skipped += 1
        else:
            dest.rewrite(e.path, found.data)
            written += 1
        if progress:
            progress(n, len(files))
    for e in folders:
        dest.rewrite(f"{e.path}/", b"")
    mine, theirs = manifest(source), manifest(dest)
    if mine != theirs:
        differ = sorted(set(mine.items()) ^ set(theirs.items()))
        raise MigrationMismatch(
            f"after the migration {dest.location} differs from "
            f"{source.location} (e.g. {differ[0][0]}); nothing was deleted "
            "from the source"
        )
    return MigrateReport(
        source.location,
        dest.location,
        len(files),
        len(folders),
        total,
        written,
        skipped,
        digest(mine),
    )
