"""`memstrata import SOURCE [--force] [--unverified] [--merge-tombstones [--yes]]`.

SOURCE is a folder or `.tar.gz`/`.tgz`/`.tar` written by `memstrata export`. The
work is `memstrata.operations.transfer.import_archive`, all or nothing: the manifest must list
every member with its sha256 (`--unverified` accepts an archive without one, every
other check still applies); names that would land outside the store, duplicates,
file/folder collisions and archives over the `[import]` caps are refused; settings
(`config.toml`, roles included) are never imported. Files identical to the store's
are left as they are; files that differ refuse the import unless --force, which
replaces them. What a purge removed (`purged.jsonl`, the store's or the archive's)
is kept out of what is imported, and reported; the archive's tombstones are never the
store's (their author is whoever made the archive): `--merge-tombstones` lists those
the store lacks and what adopting them would purge from the store, and with `--yes`
adopts them (each purge runs now, as you). The derived index is never imported: the
store catches up afterwards.
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
    p.add_argument(
        "--merge-tombstones",
        action="store_true",
        help="show the archive's tombstones and what they would purge; with --yes, adopt them",
    )
    p.add_argument("--yes", action="store_true", help="confirm --merge-tombstones")
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

    preview = args.merge_tombstones and not args.yes
    with open_store(args, as_agent=False) as store:
        report = import_archive(
            store,
            args.source,
            force=args.force,
            unverified=args.unverified,
            adopt_tombstones=args.merge_tombstones and args.yes,
            dry_run=preview,
            progress=progress,
        )
    for path, reason in report.skipped:
        say("warning", f"skipped {path}: {reason}")
    for path, tombstone in report.purged:
        say("notice", f"purged content kept out of {path}: {tombstone}")
    for uid in report.doubted:
        say(
            "warning",
            f"the store's tombstone {uid} was not applied: the store still holds what it says "
            "was purged (check purged.jsonl: was it planted?)",
        )
    for t in report.tombstones:
        if t.adopted:
            say("notice", f"adopted the archive's tombstone {t.id}, as you")
        else:
            say("warning", f"the archive's tombstone {t.line()}: not adopted")
    if preview:
        from memstrata.errors import MalformedInput

        raise MalformedInput(
            f"nothing was imported: --merge-tombstones would adopt the {len(report.tombstones)} "
            "tombstone(s) listed above as yours (those the store holds content of purge it "
            "now); add --yes to import and adopt them"
        )
    text = (
        f"imported {report.files} files into {report.home} ({report.written} written, "
        f"{report.identical} already identical, {report.replaced} replaced"
        f"{'' if report.verified else ', UNVERIFIED: no manifest'}); "
        f"index: {report.docs} docs"
    )
    emit(args, report.to_dict(), text)
    return 0
