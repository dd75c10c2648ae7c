"""`memstrata audit [--prune [--apply]]`: the memory pollution audit (Checklist D).

Wraps `memstrata.lifecycle.hygiene`: the audit only reads and lists duplicate
or volatile facts, a stale or oversized NOW.md, oversized memory files, a LOG
over its limits and old or unused scratch files, each with the action that
would fix it. `--prune` shows what pruning would do; `--prune --apply` does it
(facts are forgotten in the journal, files move to the archive, the LOG is
compacted; nothing is destroyed; "review" findings are left to a person).
"""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser("audit", help="find memory pollution (and optionally prune it)")
    p.add_argument("--prune", action="store_true", help="show what pruning would do")
    p.add_argument("--apply", action="store_true", help="with --prune: really prune")
    p.set_defaults(func=run_audit)


def run_audit(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from memstrata.cli.common import open_store
    from memstrata.cli.main import emit
    from memstrata.errors import MalformedInput
    from memstrata.lifecycle.hygiene import audit, prune

    if args.apply and not args.prune:
        raise MalformedInput("--apply only makes sense with --prune")
    with open_store(args) as store:
        agent = store.principal.agent or ""
        report = audit(store, agent)
        data: dict[str, Any] = {
            "agent": agent,
            "clean": report.clean,
            "findings": [asdict(f) for f in report.findings],
        }
        text = report.to_markdown()
        if args.prune:
            pruned = prune(store, agent, report, dry_run=not args.apply)
            data["prune"] = {
                "dry_run": pruned.dry_run,
                "actions": [
                    {
                        "target": a.finding.target,
                        "action": a.finding.action,
                        "applied": a.applied,
                        "result": a.result,
                    }
                    for a in pruned.actions
                ],
            }
            head = "## Prune (dry run: add --apply to do it)" if pruned.dry_run else "## Pruned"
            lines = [f"- {'done' if a.applied else 'not done'}: {a.result}" for a in pruned.actions]
            text += "\n" + head + "\n" + ("\n".join(lines) or "- nothing to do")
    emit(args, data, text)
    return 0
