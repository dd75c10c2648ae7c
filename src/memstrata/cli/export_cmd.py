"""`memstrata export TARGET`: every layer's files, as plain Markdown/JSON/JSONL.

TARGET is a new (or empty) folder, or a `.tar.gz`/`.tgz`/`.tar` file. The work is
`memstrata.operations.transfer.export_store`: the store's own files with their store-relative
paths, minus the derived index and what is private to running processes, plus a
manifest (`memstrata-export.json`: path, size, sha256) that `memstrata import`
requires. Run it without --agent (or as an admin agent): it reads every agent.
"""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser("export", help="copy every layer's files to a folder or .tar.gz")
    p.add_argument("target", help="a new or empty folder, or a path ending in .tar.gz / .tgz")
    p.set_defaults(func=run_export)


def run_export(args: argparse.Namespace) -> int:
    from memstrata.cli.common import open_store, say
    from memstrata.cli.main import emit
    from memstrata.errors import NotFound
    from memstrata.files.layout import resolve_home
    from memstrata.operations.transfer import export_store

    home = resolve_home(args.home).resolve()
    if not home.is_dir():
        raise NotFound(f"no store at {home}")
    with open_store(args, as_agent=False, sync=False) as store:
        report = export_store(store, args.target)
    for path, why in report.skipped:
        say("warning", f"not exported: {path}: its name {why}; rename it and export again")
    emit(
        args,
        report.to_dict(),
        f"exported {report.files} files ({report.bytes} bytes) from "
        f"{report.home} to {report.target}",
    )
    return 0
