"""`memstrata maintain`: scheduled upkeep, once (cron-friendly).

Archives sessions idle past `[sessions] retention_days`, moves the tasks of
completed milestones to the archive, and compacts LOG.md if it is over its
limits (`memstrata.lifecycle.maintain`). An admin (no --agent) maintains every
agent. `memstrata mcp` runs the same upkeep in the background when it starts.
"""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser(
        "maintain", help="archive old sessions and finished milestones, compact LOG.md"
    )
    p.set_defaults(func=run_maintain)


def run_maintain(args: argparse.Namespace) -> int:
    from memstrata.cli.common import open_store, table
    from memstrata.cli.main import emit
    from memstrata.lifecycle.maintain import maintain

    with open_store(args, as_agent=bool(args.agent)) as store:
        rows = maintain(store)
    emit(
        args,
        [r.to_dict() for r in rows],
        table(
            [
                (
                    r.agent,
                    len(r.sessions_archived),
                    ", ".join(r.milestones_archived) or "-",
                    "yes" if r.log_compacted else "no",
                    "; ".join(r.problems) or "-",
                )
                for r in rows
            ],
            ("agent", "sessions archived", "milestones archived", "log compacted", "problems"),
        ),
    )
    return 1 if any(r.problems for r in rows) else 0
