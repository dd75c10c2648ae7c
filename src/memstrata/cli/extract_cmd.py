"""`memstrata extract ROOT [PATH...]`: extracted knowledge into `items.json`.

Wraps `memstrata.lifecycle.extraction`: the Markdown and text files under ROOT
(or only the given PATHs, relative to it) are turned into typed items (entity,
claim, task, decision, note) with their source file and line; re-extracting a
file replaces its items. The extractor is rule-based unless `[llm] extractor`
is configured. Exit 1 when the extractor failed for some file (those files keep
their previous items).
"""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser("extract", help="extract knowledge items from a folder's text files")
    p.add_argument("root", help="the folder to read (e.g. docs/)")
    p.add_argument("paths", nargs="*", help="only these files, relative to ROOT")
    p.add_argument(
        "--project",
        default=None,
        help="the project the items belong to (default: ROOT's folder name)",
    )
    p.set_defaults(func=run_extract)


def run_extract(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from memstrata.cli.common import open_store, table
    from memstrata.cli.main import emit
    from memstrata.lifecycle.extraction import extract_items

    with open_store(args, as_agent=False) as store:
        from memstrata.cli.common import Progress

        bar: Progress | None = None

        def tick(done: int, total: int) -> None:
            nonlocal bar
            if bar is None:
                bar = Progress("extract", total, enabled=not args.json)
            bar(done)

        report = extract_items(
            store, args.root, args.paths or None, progress=tick, project=args.project
        )
    rows = [(rel, n, "") for rel, n in report.extracted.items()]
    rows += [(rel, 0, f"skipped: {why}") for rel, why in report.skipped.items()]
    rows += [(rel, 0, f"FAILED: {err}") for rel, err in report.errors.items()]
    text = (
        f"{report.items_written} items from {len(report.extracted)} of "
        f"{report.files_scanned} files\n" + table(rows, ("file", "items", "note"))
    )
    emit(args, asdict(report), text)
    return 1 if report.errors else 0
