"""`memstrata reindex`: throw the derived index away and rebuild it from the files.

Nothing is lost: the files are the truth. Progress goes to stderr (a counter of
source files parsed), the summary to stdout.
"""

from __future__ import annotations

import argparse
import time
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser("reindex", help="rebuild the SQLite index from the files")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.add_argument(
        "--vectors",
        action="store_true",
        help="also build the vectors of every memory with the configured [search] embedder "
        "(only text not embedded before; a killed run resumes where it stopped)",
    )
    p.set_defaults(func=run_reindex)


def run_reindex(args: argparse.Namespace) -> int:
    from memstrata.cli.common import Progress
    from memstrata.cli.main import emit
    from memstrata.store.view import Store

    started = time.perf_counter()
    with Store(args.home, agent=args.agent, room=args.room, role=args.role, sync=False) as store:
        if args.vectors:  # fail before the rebuild, not after it (no embedder configured)
            from memstrata.cli.common import embed_via_daemon

            embed_via_daemon(store)  # the local model stays in the daemon
            store.embedder()
        bar: Progress | None = None

        def tick(done: int, total: int) -> None:
            nonlocal bar
            if bar is None:
                bar = Progress("reindex", total, unit="sources", enabled=not args.quiet)
            bar(done)

        report = store.reindex(progress=tick)
        skipped = store.engine.misnamed.found
        docs = store.doc_count()
        home = str(store.home)
        embedded = None
        if args.vectors:
            emb = store.embedder()
            vbar: Progress | None = None

            def vtick(done: int, total: int) -> None:
                nonlocal vbar
                if vbar is None:
                    label = f"vectors ({emb.model_id})"
                    vbar = Progress(label, total, unit="memories", enabled=not args.quiet)
                vbar(done)

            # resumable: a killed run left its finished steps stored, and the vectors of
            # unchanged text are carried into the new index, so only the rest is embedded
            embedded = store.vectors(emb).sync_all(progress=vtick)
    seconds = round(time.perf_counter() - started, 3)
    data = {
        "home": home,
        "sources": report.scanned,
        "docs": docs,
        "bad_lines": report.bad_lines,
        "seconds": seconds,
        "embedded": embedded,
    }
    text = f"reindexed {home}: {report.scanned} sources, {docs} docs in {seconds} s"
    if report.bad_lines:
        text += f"; {report.bad_lines} unreadable lines skipped (see `memstrata doctor`)"
    if skipped:
        text += (
            f"; skipped {len(skipped)} file(s) whose names memstrata refuses "
            "(see `memstrata doctor`)"
        )
    if embedded is not None:
        text += f"; {embedded} embedded"
    emit(args, data, text)
    return 0
