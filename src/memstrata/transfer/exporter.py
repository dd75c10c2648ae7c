"""`export_store`: every file of a store, as plain Markdown/JSON/JSONL, with a manifest.

The export is the store's own files with their store-relative paths, minus what is
derived or private to running processes (`index.db*`, hidden folders such as
`.locks/` and `.imports/`, temp files), plus `memstrata-export.json` (path, size,
sha256 of every member), written last. No lock is taken: each file is streamed up
to the size it had when opened, so a whole-file rewrite (atomic rename) is copied
old or new and an append caught mid-write leaves at most a torn last line, which
the importing store reports and repairs like any torn tail. Purged content is gone
from the files, so it is in no later export.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from memstrata.errors import AlreadyExists, ScopeDenied
from memstrata.transfer.members import DERIVED, DERIVED_FOLDER, MANIFEST, is_tarball

if TYPE_CHECKING:
    from memstrata.store import Store

CHUNK = 1024 * 1024


@dataclass(frozen=True)
class ExportReport:
    home: str
    target: str
    files: int
    bytes: int

    def to_dict(self) -> dict[str, Any]:
        return {"home": self.home, "target": self.target, "files": self.files,
                "bytes": self.bytes}


def store_files(home: Path) -> list[tuple[str, Path]]:
    """(store-relative posix path, absolute path) of every file to export, sorted."""
    out: list[tuple[str, Path]] = []
    for dirpath, dirnames, filenames in os.walk(home):
        here = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in filenames:
            rel = (here / name).relative_to(home).as_posix()
            if rel in DERIVED or rel.startswith(f"{DERIVED_FOLDER}/") or rel == MANIFEST or name.startswith("."):
                continue
            if (here / name).is_file() and not (here / name).is_symlink():
                out.append((rel, here / name))
    return sorted(out)


def export_store(store: Store, target: str | os.PathLike[str],
                 *, progress: Callable[[int, int], None] | None = None) -> ExportReport:
    """Write every file of `store` to `target` (a new or empty folder, or a path ending
    in `.tar.gz` / `.tgz` / `.tar`). Reads every agent's memory: admins only.

    Example:
        >>> export_store(Store(role="admin"), "backup.tar.gz")  # doctest: +SKIP
    """
    if store.principal.role != "admin":
        raise ScopeDenied("an export reads every agent's memory: open the store as an admin "
                          "(no --agent, or an agent listed in [roles] admin)")
    home = store.home
    dest = Path(target).expanduser().absolute()
    if dest == home or home in dest.parents:
        raise AlreadyExists(f"the export target {dest} is inside the store {home}")
    tarball = is_tarball(dest.name)
    if dest.exists() and (tarball or not dest.is_dir() or any(dest.iterdir())):
        raise AlreadyExists(f"{dest} already exists; choose a new path or an empty folder")
    dest.parent.mkdir(parents=True, exist_ok=True)
    files = store_files(home)
    manifest: list[dict[str, Any]] = []
    # Built beside the target and renamed into place: a failed export leaves no half target.
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    try:
        if tarball:
            _write_tar(tmp, "w:gz" if dest.name.endswith("gz") else "w", str(home), files,
                       manifest, progress)
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
    return ExportReport(str(home), str(dest), len(manifest), sum(m["size"] for m in manifest))


class _Hashing:
    """A read-only view of at most `size` bytes of a file that hashes what it yields."""

    def __init__(self, fh: IO[bytes], size: int) -> None:
        self.fh, self.left, self.sha = fh, size, hashlib.sha256()

    def read(self, n: int = -1) -> bytes:
        n = self.left if n < 0 else min(n, self.left)
        data = self.fh.read(n)
        self.left -= len(data)
        self.sha.update(data)
        return data


def _opened(files: list[tuple[str, Path]]) -> Iterator[tuple[str, int, _Hashing]]:
    for rel, path in files:
        try:
            fh = open(path, "rb")  # noqa: SIM115 - closed below
        except FileNotFoundError:
            continue  # deleted or moved since the walk
        with fh:
            size = os.fstat(fh.fileno()).st_size
            yield rel, size, _Hashing(fh, size)


def _manifest(home: str, manifest: list[dict[str, Any]]) -> bytes:
    return json.dumps({"format": "memstrata-export", "version": 1, "source": home,
                       "files": manifest}, indent=1).encode()


def _write_tar(tmp: Path, mode: str, home: str, files: list[tuple[str, Path]],
               manifest: list[dict[str, Any]], progress: Callable[[int, int], None] | None,
               ) -> None:
    import io
    import tarfile
    import time

    def info(name: str, size: int) -> tarfile.TarInfo:
        ti = tarfile.TarInfo(name)
        ti.size, ti.mtime, ti.mode = size, int(time.time()), 0o644
        return ti

    with tarfile.open(tmp, mode) as tar:  # type: ignore[call-overload]
        for n, (rel, size, reader) in enumerate(_opened(files), start=1):
            tar.addfile(info(rel, size), reader)
            manifest.append({"path": rel, "size": size, "sha256": reader.sha.hexdigest()})
            if progress:
                progress(n, len(files))
        data = _manifest(home, manifest)
        tar.addfile(info(MANIFEST, len(data)), io.BytesIO(data))


def _write_folder(tmp: Path, home: str, files: list[tuple[str, Path]],
                  manifest: list[dict[str, Any]],
                  progress: Callable[[int, int], None] | None) -> None:
    tmp.mkdir()
    for n, (rel, size, reader) in enumerate(_opened(files), start=1):
        out = tmp.joinpath(*rel.split("/"))
        out.parent.mkdir(parents=True, exist_ok=True)
        with open(out, "wb") as fh:
            while chunk := reader.read(CHUNK):
                fh.write(chunk)
        manifest.append({"path": rel, "size": size, "sha256": reader.sha.hexdigest()})
        if progress:
            progress(n, len(files))
    (tmp / MANIFEST).write_bytes(_manifest(home, manifest))
