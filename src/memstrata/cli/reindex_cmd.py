"""`memstrata reindex`: throw the derived index away and rebuild it from the files.

Nothing is lost: the files are the truth. Progress goes to stderr (a counter of
source files parsed), the summary to stdout.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memstrata.index.reconcile import SourceSpec


def register(sub: Any) -> None:
    p = sub.add_parser("reindex", help="rebuild the SQLite index from the files")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.add_argument("--vectors", action="store_true",
                   help="also embed every memory with the configured [search] embedder")
    p.set_defaults(func=run_reindex)


class _Progress:
    """Counts parsed sources and redraws one stderr line (or prints milestones off a TTY)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.tty = sys.stderr.isatty()
        self.done = 0
        self.total = 0
        self.last = -1

    def wrap(self, specs: list[SourceSpec]) -> list[SourceSpec]:
        from memstrata.index.reconcile import SourceSpec

        self.total = len(specs)
        self.tick(0)

        def counted(spec: SourceSpec) -> SourceSpec:
            def parse(data: bytes, base: int) -> Any:
                out = spec.parse(data, base)
                self.tick(1)
                return out

            return SourceSpec(spec.path, spec.mode, parse)

        return [counted(s) for s in specs]

    def tick(self, n: int) -> None:
        self.done += n
        if not self.enabled:
            return
        pct = 100 * self.done // self.total if self.total else 100
        if self.tty:
            sys.stderr.write(f"\rreindex: {self.done}/{self.total} sources ({pct}%)")
        elif pct // 10 != self.last // 10 or self.done == self.total:
            sys.stderr.write(f"reindex: {self.done}/{self.total} sources ({pct}%)\n")
        self.last = pct
        sys.stderr.flush()

    def finish(self) -> None:
        if self.enabled and self.tty:
            sys.stderr.write("\n")


def run_reindex(args: argparse.Namespace) -> int:
    from memstrata.cli.main import emit
    from memstrata.store import Store

    bar = _Progress(not args.quiet)

    class ProgressStore(Store):
        def sources(self) -> list[SourceSpec]:
            return bar.wrap(super().sources())

    started = time.perf_counter()
    with ProgressStore(args.home, agent=args.agent, room=args.room, role=args.role,
                       sync=False) as store:
        report = store.reindex()
        bar.finish()
        with store.db.read() as conn:
            docs = int(conn.execute("SELECT count(*) FROM docs").fetchone()[0])
        home = str(store.home)
        embedded = None
        if args.vectors:
            emb = store.embedder()
            if not args.quiet:
                sys.stderr.write(f"embedding {docs} memories with {emb.model_id}...\n")
            embedded = store.vectors(emb).sync_all()
    seconds = round(time.perf_counter() - started, 3)
    data = {"home": home, "sources": report.scanned, "docs": docs,
            "bad_lines": report.bad_lines, "seconds": seconds, "embedded": embedded}
    text = f"reindexed {home}: {report.scanned} sources, {docs} docs in {seconds} s"
    if report.bad_lines:
        text += f"; {report.bad_lines} unreadable lines skipped (see `memstrata doctor`)"
    if embedded is not None:
        text += f"; {embedded} embedded"
    emit(args, data, text)
    return 0
