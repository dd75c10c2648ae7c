"""`memstrata import SOURCE [--force]`: load an export into this store, then index it.

SOURCE is a folder or `.tar.gz`/`.tgz`/`.tar` written by `memstrata export` (or
any copy of a store folder). Every path is checked to stay inside the store;
tar members must be plain files. When the export has a manifest, each file's
sha256 is verified first. If any file already exists in the store the import
is refused and nothing is written, unless --force, which replaces those files
atomically. The derived index is never imported: the store catches up with the
new files afterwards.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

SHOW = 5


def register(sub: Any) -> None:
    p = sub.add_parser("import", help="load an export (folder or .tar.gz) into the store")
    p.add_argument("source", help="an export folder or tarball")
    p.add_argument("--force", action="store_true", help="replace files that already exist")
    p.set_defaults(func=run_import)


def read_export(source: Path) -> dict[str, bytes]:
    """Every file of an export by store-relative path (the manifest left out)."""
    import tarfile

    from memstrata.cli.export_cmd import DERIVED, MANIFEST, is_tarball, store_files
    from memstrata.errors import MalformedInput, NotFound

    if not source.exists():
        raise NotFound(f"no export at {source}")
    files: dict[str, bytes] = {}
    if source.is_dir():
        for rel, path in store_files(source):
            files[rel] = path.read_bytes()
        manifest = (source / MANIFEST).read_bytes() if (source / MANIFEST).is_file() else None
    elif is_tarball(source.name):
        manifest = None
        try:
            with tarfile.open(source) as tar:
                for m in tar.getmembers():
                    if m.isdir():
                        continue
                    if not m.isfile():
                        raise MalformedInput(f"{source}: {m.name!r} is not a plain file")
                    fh = tar.extractfile(m)
                    assert fh is not None
                    name = m.name.removeprefix("./")
                    if name == MANIFEST:
                        manifest = fh.read()
                    elif name not in DERIVED:
                        files[name] = fh.read()
        except (tarfile.TarError, EOFError, OSError) as exc:
            raise MalformedInput(f"{source}: not a readable tar archive: {exc}") from None
    else:
        raise MalformedInput(f"{source}: expected a folder or a .tar.gz / .tgz / .tar file")
    if manifest is not None:
        _verify(source, manifest, files)
    return files


def _verify(source: Path, manifest: bytes, files: dict[str, bytes]) -> None:
    import hashlib
    import json

    from memstrata.errors import MalformedInput

    try:
        listed = {f["path"]: f["sha256"] for f in json.loads(manifest)["files"]}
    except (ValueError, KeyError, TypeError):
        raise MalformedInput(f"{source}: the export manifest is unreadable") from None
    missing = sorted(set(listed) - set(files))
    if missing:
        raise MalformedInput(f"{source}: {len(missing)} file(s) listed but absent, e.g. {missing[0]}")
    for rel, digest in listed.items():
        if hashlib.sha256(files[rel]).hexdigest() != digest:
            raise MalformedInput(f"{source}: {rel} does not match its sha256 in the manifest")


def run_import(args: argparse.Namespace) -> int:
    from pathlib import Path

    from memstrata.cli.main import emit
    from memstrata.errors import AlreadyExists, PathOutsideStore
    from memstrata.files.atomic import atomic_write_bytes
    from memstrata.files.layout import resolve_home
    from memstrata.files.paths import safe_join
    from memstrata.store import Store

    files = read_export(Path(args.source).expanduser().absolute())
    home = resolve_home(args.home)
    home.mkdir(parents=True, exist_ok=True)
    # Check every path and every clash before writing anything.
    targets: dict[str, Path] = {}
    for rel in files:
        try:
            targets[rel] = safe_join(home, rel)
        except PathOutsideStore as exc:
            raise PathOutsideStore(f"{args.source}: refusing {rel!r}, it would land outside the "
                                   f"store ({exc}); nothing was imported") from None
    clashes = sorted(rel for rel, path in targets.items() if path.exists())
    if clashes and not args.force:
        raise AlreadyExists(
            f"{len(clashes)} file(s) already exist in {home.resolve()} (e.g. "
            f"{', '.join(clashes[:SHOW])}); nothing was imported; use --force to replace them"
        )
    from memstrata.cli.common import Progress

    bar = Progress("import", len(targets), enabled=not args.json)
    with Store(home, agent=args.agent, room=args.room, role=args.role, sync=False) as store:
        for n, (rel, path) in enumerate(targets.items(), start=1):
            with store.locks.hold(str(path)):
                atomic_write_bytes(path, files[rel])
            bar(n)
        report = store.sync()
        with store.db.read() as conn:
            docs = int(conn.execute("SELECT count(*) FROM docs").fetchone()[0])
        where = str(store.home)
    data = {"home": where, "files": len(files), "replaced": len(clashes), "docs": docs,
            "bad_lines": report.bad_lines}
    text = f"imported {len(files)} files into {where} ({len(clashes)} replaced); index: {docs} docs"
    emit(args, data, text)
    return 0
