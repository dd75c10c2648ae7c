"""`memstrata compact [--force] [--summary TEXT] | --session ID [--keep N] | --history`.

LOG.md compaction and session transcript compaction, wrapped
(`memstrata.lifecycle`): the entries go verbatim to the agent's archive (still
searchable as cold memory) and one summary takes their place. Without --force
LOG.md is compacted only when over `log.compact_bytes` / `log.compact_entries`.
The summary comes from --summary, else the configured summariser (`[llm]` in
config.toml), else the deterministic extractive one.
"""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser("compact", help="compact LOG.md (or a session transcript) into the archive")
    p.add_argument("--force", action="store_true", help="compact LOG.md even under the limits")
    p.add_argument("--summary", help="use this summary instead of a summariser ('-' reads stdin)")
    p.add_argument("--session", help="compact this session's transcript instead of LOG.md")
    p.add_argument(
        "--keep", type=int, help="--session: messages kept verbatim (default from config)"
    )
    p.add_argument("--history", action="store_true", help="list past LOG.md compactions")
    p.set_defaults(func=run_compact)


def run_compact(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from memstrata.cli.common import open_store, table, text_arg
    from memstrata.cli.main import emit
    from memstrata.lifecycle.compaction import compact_log, compaction_history
    from memstrata.lifecycle.session_compaction import compact_session

    summary = text_arg(args.summary) if args.summary is not None else None
    with open_store(args) as store:
        agent = store.principal.agent or ""
        if args.history:
            rows = compaction_history(store, agent)
            emit(
                args,
                rows,
                table(
                    [
                        (
                            r.get("compacted_at"),
                            r.get("entries_count"),
                            r.get("archive_path"),
                            r.get("summarizer"),
                        )
                        for r in rows
                    ],
                    ("when", "entries", "archive", "summariser"),
                ),
            )
            return 0
        if args.session:
            result: Any = compact_session(
                store, agent, args.session, keep_recent=args.keep, summary=summary
            )
            what = f"session {args.session}: {result.before} -> {result.after} messages"
        else:
            result = compact_log(store, agent, summary=summary, force=args.force)
            what = f"LOG.md: {result.entries_count} entries archived"
    data = asdict(result)
    if not result.compacted:
        emit(args, data, f"nothing compacted: {result.reason}")
        return 0
    emit(args, data, f"compacted {what} to {result.archive_path}\n\n{result.summary}")
    return 0
