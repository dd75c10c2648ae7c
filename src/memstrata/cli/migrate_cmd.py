"""`memstrata migrate SOURCE DEST`: move a store's truth between a folder and PostgreSQL.

SOURCE and DEST are each a store folder or a `postgresql://` URL:

    memstrata migrate ./.memstrata postgresql://memstrata@db/team   # into PostgreSQL
    memstrata migrate postgresql://memstrata@db/team ./restored     # and back

Every source is copied with its bytes, then both sides' sha256 manifests are
compared (`memstrata.operations.transfer.migrate`); a destination source that differs is
refused unless --force. Afterwards point the hosts at the database with
`[backend] url = "postgresql://..."` in their config.toml (or
`MEMSTRATA_DATABASE_URL`); each keeps its index, settings and audit trail in its
own folder.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser("migrate", help="copy a store's truth between a folder and PostgreSQL")
    p.add_argument("source", help="a store folder or a postgresql:// URL")
    p.add_argument("dest", help="a store folder or a postgresql:// URL")
    p.add_argument("--force", action="store_true", help="replace sources that differ")
    p.set_defaults(func=run_migrate)


def _truth(where: str, *, create: bool) -> Any:
    from memstrata.errors import NotFound
    from memstrata.files.local import LocalTruth
    from memstrata.files.locks import LockTable

    if where.startswith(("postgresql://", "postgres://")):
        from memstrata.files.postgres.truth import PostgresTruth

        return PostgresTruth(where)
    folder = Path(where).expanduser().absolute()
    if not folder.is_dir():
        if not create:
            raise NotFound(f"no store at {folder}")
        folder.mkdir(parents=True)
    return LocalTruth(folder, LockTable(folder / ".locks"))


def run_migrate(args: argparse.Namespace) -> int:
    from memstrata.cli.main import emit
    from memstrata.operations.transfer.migrate import migrate

    source = _truth(args.source, create=False)
    dest = _truth(args.dest, create=True)
    try:
        report = migrate(source, dest, force=args.force)
    finally:
        source.close()
        dest.close()
    emit(
        args,
        report.to_dict(),
        f"migrated {report.files} files and {report.folders} folders ({report.bytes} bytes) "
        f"from {report.source} to {report.dest}: {report.written} written, {report.skipped} "
        f"already identical; manifests equal (sha256 {report.manifest_sha256[:16]})",
    )
    return 0
