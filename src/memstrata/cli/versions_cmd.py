"""`memstrata history [PATH] [--diff A [B]] [--show ID]` and `memstrata restore PATH VERSION`.

Every replace of NOW.md, CONTEXT.md / MEMORY.md, AGENT.md and the memory files
keeps the content it replaced (`layers.versions`). `history PATH` lists a file's
versions, newest first: id, time, author, size and the first line that changed;
without PATH it lists the files that have versions. `restore PATH VERSION` makes
an earlier version the file's content again; it is itself a new version, so the
content it replaces is kept too. `--expect-sha` (the sha256 of the content you
saw, e.g. the current version's from `history --json`) refuses with exit code 4 if
the file changed meanwhile.
"""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any) -> None:
    h = sub.add_parser("history", help="a memory file's earlier versions, newest first")
    h.add_argument("path", nargs="?", help="e.g. CONTEXT.md, NOW.md, AGENT.md, notes/a.md")
    h.add_argument("--limit", type=int, help="show at most this many versions")
    h.add_argument(
        "--diff", nargs="+", metavar="VERSION", help="unified diff from A to B (default: current)"
    )
    h.add_argument("--show", metavar="VERSION", help="print one version's content")
    h.set_defaults(func=run_history)
    r = sub.add_parser("restore", help="make an earlier version a memory file's content again")
    r.add_argument("path", help="e.g. CONTEXT.md, NOW.md, AGENT.md, notes/a.md")
    r.add_argument("version", help="the version's id from `memstrata history` (4+ hex digits)")
    r.add_argument(
        "--expect-sha",
        dest="expected_sha",
        help="sha256 of the content you saw: refuse if the file changed since",
    )
    r.set_defaults(func=run_restore)


def run_history(args: argparse.Namespace) -> int:
    from memstrata.cli.common import agent_memory, table
    from memstrata.cli.main import emit
    from memstrata.errors import MalformedInput

    store, mem = agent_memory(args)
    with store:
        versions = mem.versions
        if args.path is None:
            if args.diff or args.show:
                raise MalformedInput("name the file: memstrata history PATH --diff A B")
            files = versions.files()
            listed = [(f["path"], f["versions"], f["latest"]) for f in files]
            emit(args, files, table(listed, ("path", "versions", "latest")))
            return 0
        if args.diff:
            if len(args.diff) > 2:
                raise MalformedInput("--diff takes one or two versions: A [B]")
            a, b = args.diff[0], args.diff[1] if len(args.diff) > 1 else "current"
            text = versions.diff(args.path, a, b)
            emit(args, {"path": args.path, "a": a, "b": b, "diff": text}, text or "(no change)")
            return 0
        if args.show:
            text = versions.read(args.path, args.show)
            emit(args, {"path": args.path, "version": args.show, "text": text}, text)
            return 0
        hist = versions.history(args.path, limit=args.limit)
    rows = [
        (
            v.id + (" *" if v.current else ""),
            v.ts[:19].replace("T", " "),
            v.by or ("(admin)" if v.role == "admin" else "(unknown)"),
            v.size,
            v.changed or "",
        )
        for v in hist.versions
    ]
    head = f"{hist.file} ({len(hist.versions)} version(s), * = current)"
    emit(
        args, hist.to_dict(), head + "\n" + table(rows, ("id", "time", "author", "size", "changed"))
    )
    return 0


def run_restore(args: argparse.Namespace) -> int:
    from memstrata.cli.common import agent_memory
    from memstrata.cli.main import emit

    store, mem = agent_memory(args)
    with store:
        hist = mem.versions.restore(args.path, args.version, expected_sha=args.expected_sha)
    now = hist.versions[0]
    emit(args, hist.to_dict(), f"restored {hist.file} to {args.version} (now version {now.id})")
    return 0
