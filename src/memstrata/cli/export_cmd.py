"""`memstrata export TARGET`: every layer's files, as plain Markdown/JSON/JSONL.

TARGET is a new (or empty) folder, or a `.tar.gz`/`.tgz` file. The export is
the store's own files with their store-relative paths, minus what is derived or
private to running processes (`index/`, `.locks/`, temp files), plus a small
manifest (`memstrata-export.json`: path, size, sha256) that `memstrata import`
checks. No lock is taken: whole files are replaced atomically, so each is
copied old or new; an append caught mid-write leaves at most a torn last line,
which the importing store reports and repairs like any torn tail.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

MANIFEST = "memstrata-export.json"
DERIVED = frozenset({"index.db", "index.db-wal", "index.db-shm", "index.db-journal"})


def register(sub: Any) -> None:
    p = sub.add_parser("export", help="copy every layer's files to a folder or .tar.gz")
    p.add_argument("target", help="a new or empty folder, or a path ending in .tar.gz / .tgz")
    p.set_defaults(func=run_export)


def is_tarball(name: str) -> bool:
    return name.endswith((".tar.gz", ".tgz", ".tar"))


def store_files(home: Path) -> list[tuple[str, Path]]:
    """(store-relative posix path, absolute path) of every file that is memory, sorted."""
    import os
    from pathlib import Path

    out: list[tuple[str, Path]] = []
    for dirpath, dirnames, filenames in os.walk(home):
        here = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in filenames:
            rel = (here / name).relative_to(home).as_posix()
            if rel in DERIVED or rel.startswith("index/") or rel == MANIFEST or (name.startswith(".") and name.endswith(".tmp")):
                continue
            if (here / name).is_file() and not (here / name).is_symlink():
                out.append((rel, here / name))
    return sorted(out)


def run_export(args: argparse.Namespace) -> int:
    import os
    import shutil
    import tarfile
    from pathlib import Path

    from memstrata.cli.main import emit
    from memstrata.errors import AlreadyExists, NotFound
    from memstrata.files.layout import resolve_home

    home = resolve_home(args.home).resolve()
    if not home.is_dir():
        raise NotFound(f"no store at {home}")
    target = Path(args.target).expanduser().absolute()
    if target == home or home in target.parents:
        raise AlreadyExists(f"the export target {target} is inside the store {home}")
    tarball = is_tarball(target.name)
    if target.exists() and (tarball or not target.is_dir() or any(target.iterdir())):
        raise AlreadyExists(f"{target} already exists; choose a new path or an empty folder")
    target.parent.mkdir(parents=True, exist_ok=True)
    manifest: list[dict[str, Any]] = []
    # Built beside the target and renamed into place: a failed export leaves no half target.
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        if tarball:
            with tarfile.open(tmp, "w:gz" if target.name.endswith("gz") else "w") as tar:
                for rel, data in _entries(home, manifest):
                    _add(tar, rel, data)
        else:
            for rel, data in _entries(home, manifest):
                dest = tmp.joinpath(*rel.split("/"))
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(data)
    except BaseException:
        if tmp.is_dir():
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            tmp.unlink(missing_ok=True)
        raise
    if target.exists():
        target.rmdir()  # an empty folder, checked above
    os.replace(tmp, target)
    size = sum(m["size"] for m in manifest)
    emit(args, {"home": str(home), "target": str(target), "files": len(manifest), "bytes": size},
         f"exported {len(manifest)} files ({size} bytes) from {home} to {target}")
    return 0


def _entries(home: Path, manifest: list[dict[str, Any]]) -> Iterator[tuple[str, bytes]]:
    """Each store file's bytes (read once, so hash and copy agree), then the manifest."""
    import hashlib
    import json

    for rel, path in store_files(home):
        data = path.read_bytes()
        manifest.append({"path": rel, "size": len(data),
                         "sha256": hashlib.sha256(data).hexdigest()})
        yield rel, data
    yield MANIFEST, json.dumps({"format": "memstrata-export", "version": 1, "source": str(home),
                                "files": manifest}, indent=1).encode()


def _add(tar: Any, rel: str, data: bytes) -> None:
    import io
    import tarfile
    import time

    info = tarfile.TarInfo(rel)
    info.size = len(data)
    info.mtime = int(time.time())
    info.mode = 0o644
    tar.addfile(info, io.BytesIO(data))
