"""`memstrata purge fact|file|log|ledger|session|version ... --reason R --yes`: make content gone.

Unlike `facts forget` and `files delete` (soft: history and archive copies stay),
a purge removes the content from every file, archive, index row, vector and audit
record, and leaves a tombstone in `purged.jsonl` (id, who, when, why; no content).
Ledger entries need an admin. Without --yes nothing happens. `purge list` shows the
tombstones.
"""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser("purge", help="remove content from every place it lives (irreversible)")
    psub = p.add_subparsers(dest="purge_action", metavar="WHAT", required=True)
    f = psub.add_parser("fact", help="a fact: every value it ever had")
    f.add_argument("key", help="the fact's key")
    m = psub.add_parser("file", help="a memory file and its archived copies")
    m.add_argument("path", help="path relative to the agent's memory folder")
    lg = psub.add_parser("log", help="one LOG.md entry (and its compaction archive copy)")
    lg.add_argument("entry_id", help="LOG entry id, e.g. log-1a2b3c4d")
    led = psub.add_parser("ledger", help="a ledger entry's content (admins only)")
    led.add_argument("id", help="ledger entry id, e.g. mem-1a2b3c4d")
    s = psub.add_parser("session", help="a whole session, or one message with --message")
    s.add_argument("session_id", help="session id")
    s.add_argument("--message", help="purge only this message id")
    v = psub.add_parser("version", help="one earlier version of a file (`memstrata history`)")
    v.add_argument("path", help="the file, e.g. CONTEXT.md, NOW.md, AGENT.md or notes/a.md")
    v.add_argument("version", help="the version's id (or a prefix of 4+ hex digits)")
    for child in (f, m, lg, led, s, v):
        child.add_argument("--reason", required=True, help="why (kept in the tombstone)")
        child.add_argument("--yes", action="store_true", help="confirm: this cannot be undone")
        child.set_defaults(func=run_purge)
    ls = psub.add_parser("list", help="the tombstones of past purges")
    ls.set_defaults(func=run_list)


def run_purge(args: argparse.Namespace) -> int:
    from memstrata.cli.common import open_store
    from memstrata.cli.main import emit
    from memstrata.errors import MalformedInput
    from memstrata.operations import purge

    what = args.purge_action
    if not args.yes:
        raise MalformedInput(
            f"purge removes the {what} from every file, archive, index and "
            "export for good; nothing was purged: add --yes to confirm"
        )
    with open_store(args, as_agent=what != "ledger") as store:
        if what == "fact":
            report = purge.purge_fact(store, args.key, reason=args.reason)
        elif what == "file":
            report = purge.purge_file(store, args.path, reason=args.reason)
        elif what == "log":
            report = purge.purge_log_entry(store, args.entry_id, reason=args.reason)
        elif what == "ledger":
            report = purge.purge_ledger_entry(store, args.id, reason=args.reason)
        elif what == "version":
            report = purge.purge_version(store, args.path, args.version, reason=args.reason)
        else:
            report = purge.purge_session(
                store, args.session_id, message_id=args.message, reason=args.reason
            )
    lines = [
        f"purged {report.tombstone.id}: {len(report.rewritten)} file(s) rewritten, "
        f"{len(report.removed)} removed, {len(report.versions)} version(s) changed or "
        f"dropped, {report.events} audit record(s) dropped or hashed; "
        "tombstone in purged.jsonl",
        *report.notes,
    ]
    emit(args, report.to_dict(), "\n".join(lines))
    return 0


def run_list(args: argparse.Namespace) -> int:
    from memstrata.cli.common import open_store, table
    from memstrata.cli.main import emit
    from memstrata.operations.purge import tombstones

    with open_store(args, as_agent=False, sync=False) as store:
        rows = tombstones(store)
    emit(
        args,
        rows,
        table(
            [(r.get("ts", "")[:19], r.get("id"), r.get("by"), r.get("reason")) for r in rows],
            ("ts", "id", "by", "reason"),
        ),
    )
    return 0
