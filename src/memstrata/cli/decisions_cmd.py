"""`memstrata decisions record|list`: decisions, constraints and preferences in one call.

    memstrata decisions record "Use ReportLab for PDFs" --replaces WeasyPrint
    memstrata decisions record "Never deploy on Fridays" --kind constraint
    memstrata decisions list            # what is in force; --all: the replaced ones too

They are ledger entries (`layers.decisions` says why): `--replaces` names the earlier one
by id or by words of its text, and supersedes it, so it is never presented as current
again; `memstrata ledger get ID` still shows it.
"""

from __future__ import annotations

import argparse
from typing import Any

from memstrata.model import RECORD_KINDS


def register(sub: Any) -> None:
    p = sub.add_parser("decisions", help="record and list decisions, constraints, preferences")
    dsub = p.add_subparsers(dest="decisions_action", metavar="ACTION", required=True)
    r = dsub.add_parser("record", help="record one (optionally replacing an earlier one)")
    r.add_argument("text", help="what was decided ('-' reads stdin)")
    r.add_argument("--kind", default="decision", choices=RECORD_KINDS, help="default decision")
    r.add_argument("--replaces", help="the record it replaces: its id, or words of its text")
    r.add_argument("--tag", action="append", default=[], help="a tag (repeatable)")
    r.add_argument("--detail", help="why; the alternatives weighed")
    r.set_defaults(func=run_record)
    ls = dsub.add_parser("list", help="the records in force, newest first")
    ls.add_argument("--kind", choices=RECORD_KINDS, help="only this kind")
    ls.add_argument("--all", action="store_true", help="the replaced ones too (history)")
    ls.set_defaults(func=run_list)


def run_record(args: argparse.Namespace) -> int:
    from memstrata.cli.common import agent_memory, text_arg
    from memstrata.cli.main import emit

    text = text_arg(args.text)
    store, mem = agent_memory(args)
    with store:
        old = mem.decisions.resolve(args.replaces, args.kind) if args.replaces else None
        e = mem.decisions.record(
            text,
            args.kind,
            replaces=old.id if old is not None else None,
            tags=args.tag,
            detail=args.detail,
        )
    said = f"recorded {e.id} ({e.kind})" + (f"; replaces {old.id}" if old is not None else "")
    data = {"entry": e.to_dict(), "replaced": old.id if old is not None else None}
    emit(args, data, said)
    return 0


def run_list(args: argparse.Namespace) -> int:
    from memstrata.cli.common import agent_memory, table
    from memstrata.cli.main import emit

    kinds = (args.kind,) if args.kind else RECORD_KINDS
    store, mem = agent_memory(args)
    with store:
        rows = (
            mem.decisions.history(kinds)
            if args.all
            else [(e, None) for e in mem.decisions.in_force(kinds)]
        )
    data = [{**e.to_dict(), "replaced_by": by} for e, by in rows]
    shown = [
        (e.id, e.ts[:10], e.kind, f"replaced by {by}" if by else "in force", e.summary)
        for e, by in rows
    ]
    emit(args, data, table(shown, ("id", "date", "kind", "status", "summary")))
    return 0
