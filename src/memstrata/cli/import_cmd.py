"""`memstrata import SOURCE [--force] [--unverified]`: load an export into this store.

SOURCE is a folder or `.tar.gz`/`.tgz`/`.tar` written by `memstrata export`. The
work is `memstrata.operations.transfer.import_archive`, all or nothing: the manifest must list
every member with its sha256 (`--unverified` accepts an archive without one, every
other check still applies); names that would land outside the store, duplicates,
file/folder collisions and archives over the `[import]` caps are refused; settings
(`config.toml`, roles included) are never imported. Files identical to the store's
are left as they are; files that differ refuse the import unless --force, which
replaces them. What a purge removed (`purged.jsonl`, the store's or the archive's)
is kept out, and reported. The derived index is never imported: the store catches up
afterwards.
"""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser("import", help="load an export (folder or .tar.gz) into the store")
    p.add_argument("source", help="an export folder or tarball")
    p.add_argument("--force", action="store_true", help="replace files that already exist")
    p.add_argument(
        "--unverified",
        action="store_true",
        help="accept an archive without a manifest (every other check still holds)",
    )
    p.set_defaults(func=run_import)


def run_import(args: argparse.Namespace) -> int:

    from memstrata.cli.common import Progress, open_store, say
    from memstrata.cli.main import emit
    from memstrata.operations.transfer import import_archive

    bar: Progress | None = None

    def progress(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            bar = Progress("import", total, enabled=not args.json)
        bar(done)

    with open_store(args, as_agent=False) as store:
        report = import_archive(
            store, args.source, force=args.force, unverified=args.unverified, progress=progress
        )
    for path, reason in report.skipped:
        say("warning", f"skipped {path}: {reason}")
    for path, tombstone in report.purged:
        say("notice", f"purged content kept out of {path}: {tombstone}")
    text = (
        f"imported {report.files} files into {report.home} ({report.written} written, "
        f"{report.identical} already identical, {report.replaced} replaced"
        f"{'' if report.verified else ', UNVERIFIED: no manifest'}); "
        f"index: {report.docs} docs"
    )
    emit(args, report.to_dict(), text)
    return 0
