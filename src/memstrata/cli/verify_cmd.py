"""`memstrata verify [ROOT] [--recall QUERY]`: "verify before use".

Wraps `memstrata.lifecycle.verify`: every claim about code in the agent's facts
and memory files (a path, `file.py:123`, `symbol()`, `Cls.method`) is checked
against the codebase at ROOT (default: the current folder). Exit 0 when every
claim still holds, 1 when some went stale, so scripts can gate on it. With
--recall, searches memory instead and marks the hits whose claims failed.
"""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser("verify", help="check memory's code claims against a codebase")
    p.add_argument("root", nargs="?", default=".", help="codebase root (default: current folder)")
    p.add_argument("--recall", metavar="QUERY", help="search memory and flag stale hits")
    p.add_argument("-k", type=int, default=10, help="--recall: results (default 10)")
    p.set_defaults(func=run_verify)


def run_verify(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from memstrata.cli.common import open_store, table
    from memstrata.cli.main import emit
    from memstrata.lifecycle.verify import recall_verified, verify_citations

    with open_store(args) as store:
        agent = store.principal.agent or ""
        if args.recall is not None:
            hits = recall_verified(store, agent, args.recall, args.root, k=args.k)
            data = [h.to_dict(full=False) for h in hits]
            lines = [
                f"{'STALE ' if h.explain.get('stale') else ''}[{h.layer}] {h.title}: "
                f"{' '.join(h.snippet.split())}"
                + "".join(f"\n    ! {w}" for w in h.explain.get("stale", []))
                for h in hits
            ]
            emit(args, data, "\n".join(lines) or "(no matches)")
            return 0
        findings = verify_citations(store, agent, args.root)
    rows = [(f.source, f.ref, f.problem, f.detail) for f in findings]
    text = (
        table(rows, ("memory", "claim", "problem", "detail"))
        if findings
        else "every code claim in memory still holds"
    )
    emit(args, [asdict(f) for f in findings], text)
    return 1 if findings else 0
