"""`export_store`: every source of a store, as plain Markdown/JSON/JSONL, with a manifest.

The export is the store's sources with their store-relative paths, read through
the store's truth (so a store kept in PostgreSQL exports the same plain files as
one kept in a folder), plus this host's settings and audit trail for the record,
plus `memstrata-export.json` (path, size, sha256 of every member), written last.
The derived index and what is private to running processes (`.locks/`,
`.imports/`, temp files) are never exported, nor a file whose name memstrata refuses
(made by hand; the report names it). No lock is taken: each source is
read whole, as one state (a rewrite is copied old or new; an append caught
mid-write leaves at most a torn last line, which the importing store reports and
repairs like any torn tail). Purged content is gone from the truth, so it is in
no later export.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from memstrata.errors import AlreadyExists, ScopeDenied
from memstrata.files.local import LocalTruth
from memstrata.operations.transfer.members import MANIFEST, is_tarball
from memstrata.values import value_type

if TYPE_CHECKING:
    from memstrata.files.truth import Content
    from memstrata.store.view import Store

CHUNK = 1024 * 1024


@value_type(frozen=True)
class ExportReport:
    home: str
    target: str
    files: int
    bytes: int
    skipped: tuple[tuple[str, str], ...] = ()  # (path, why): files whose names are refused

    def to_dict(self) -> dict[str, Any]:
        return {
            "home": self.home,
            "target": self.target,
            "files": self.files,
            "bytes": self.bytes,
            "skipped": [{"path": p, "reason": r} for p, r in self.skipped],
        }


class Readable(Protocol):
    def read(self, path: str) -> Content | None: ...


Source = tuple[str, Readable]  # (store-relative path, where to read it)


def store_files(store: Store) -> list[Source]:
    """(store-relative path, where to read it) of every file to export, sorted: the
    truth's sources (through the engine, whatever the backend), and this host's settings
    and audit trail from its folder."""
    engine = store.engine
    out: list[Source] = [(e.path, engine) for e in engine.listing("") if not e.is_dir]
    host = LocalTruth(store.home, engine.locks)  # (reads only)
    out += [(rel, host) for rel in host.host_files()]
    return sorted(out, key=lambda s: s[0])


def export_store(
    store: Store,
    target: str | os.PathLike[str],
    *,
    progress: Callable[[int, int], None] | None = None,
) -> ExportReport:
    """Write every file of `store` to `target` (a new or empty folder, or a path ending
    in `.tar.gz` / `.tgz` / `.tar`). Reads every agent's memory: admins only.

    Example:
        >>> export_store(Store(role="admin"), "backup.tar.gz")  # doctest: +SKIP
    """
    if store.principal.role != "admin":
        raise ScopeDenied(
            "an export reads every agent's memory: open the store as an admin "
            "(no --agent, or an agent listed in [roles] admin)"
        )
    home = store.home
    dest = Path(target).expanduser().absolute()
    if dest == home or home in dest.parents:
        raise AlreadyExists(f"the export target {dest} is inside the store {home}")
    tarball = is_tarball(dest.name)
    if dest.exists() and (tarball or not dest.is_dir() or any(dest.iterdir())):
        raise AlreadyExists(f"{dest} already exists; choose a new path or an empty folder")
    dest.parent.mkdir(parents=True, exist_ok=True)
    files = store_files(store)
    manifest: list[dict[str, Any]] = []
    # Built beside the target and renamed into place: a failed export leaves no half target.
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    try:
        if tarball:
            _write_tar(
                tmp,
                "w:gz" if dest.name.endswith("gz") else "w",
                str(home),
                files,
                manifest,
                progress,
            )
        else:
            _write_folder(tmp, str(home), files, manifest, progress)
    except BaseException:
        if tmp.is_dir():
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            tmp.unlink(missing_ok=True)
        raise
    if dest.exists():
        dest.rmdir()  # an empty folder, checked above
    os.replace(tmp, dest)
    return ExportReport(
        str(home),
        str(dest),
        len(manifest),
        sum(m["size"] for m in manifest),
        tuple(sorted(store.engine.misnamed.found.items())),  # no import would take them
    )


class _Hashing:
    """The bytes of one source as read once, hashed, and when it was last modified (an
    import keeps content written after a purge: `transfer.tombstones`)."""

    def __init__(self, data: bytes, mtime: float) -> None:
        self.data, self.pos, self.sha = data, 0, hashlib.sha256(data)
        self.mtime = mtime

    def read(self, n: int = -1) -> bytes:
        end = len(self.data) if n < 0 else min(len(self.data), self.pos + n)
        out, self.pos = self.data[self.pos : end], end
        return out


def _opened(files: list[Source]) -> Iterator[tuple[str, int, _Hashing]]:
    for rel, source in files:
        found = source.read(rel)
        if found is None:
            continue  # deleted or moved since the listing
        yield rel, len(found.data), _Hashing(found.data, found.entry.mtime)


def _row(rel: str, size: int, reader: _Hashing) -> dict[str, Any]:
    """A manifest row; `mtime` to the full precision a tar header lacks (an import keeps
    what was written after a purge, and a second is long)."""
    return {"path": rel, "size": size, "sha256": reader.sha.hexdigest(), "mtime": reader.mtime}


def _manifest(home: str, manifest: list[dict[str, Any]]) -> bytes:
    return json.dumps(
        {"format": "memstrata-export", "version": 1, "source": home, "files": manifest}, indent=1
    ).encode()


def _write_tar(
    tmp: Path,
    mode: str,
    home: str,
    files: list[Source],
    manifest: list[dict[str, Any]],
    progress: Callable[[int, int], None] | None,
) -> None:
    import io
    import tarfile
    import time

    def info(name: str, size: int, mtime: float) -> tarfile.TarInfo:
        ti = tarfile.TarInfo(name)
        ti.size, ti.mtime, ti.mode = size, int(mtime), 0o644
        return ti

    with tarfile.open(tmp, mode) as tar:  # type: ignore[call-overload]
        for n, (rel, size, reader) in enumerate(_opened(files), start=1):
            tar.addfile(info(rel, size, reader.mtime), reader)
            manifest.append(_row(rel, size, reader))
            if progress:
                progress(n, len(files))
        data = _manifest(home, manifest)
        tar.addfile(info(MANIFEST, len(data), time.time()), io.BytesIO(data))


def _write_folder(
    tmp: Path,
    home: str,
    files: list[Source],
    manifest: list[dict[str, Any]],
    progress: Callable[[int, int], None] | None,
) -> None:
    tmp.mkdir()
    for n, (rel, size, reader) in enumerate(_opened(files), start=1):
        out = tmp.joinpath(*rel.split("/"))
        out.parent.mkdir(parents=True, exist_ok=True)
        with open(out, "wb") as fh:
            while chunk := reader.read(CHUNK):
                fh.write(chunk)
        os.utime(out, (reader.mtime, reader.mtime))
        manifest.append(_row(rel, size, reader))
        if progress:
            progress(n, len(files))
    (tmp / MANIFEST).write_bytes(_manifest(home, manifest))
