"""`memstrata ledger publish|query|search|get|context`: the shared ledger.

`publish` appends one entry and returns once it is on disk; `--supersedes ID`
hides an older entry from every default read (it stays in the file). Who may
supersede what, and who may set `--author`, is decided by `policy.scope.Gate`.
`context` is the predecessor context: what other rooms learned, for the
room given with --room.
"""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser("ledger", help="the shared cross-agent ledger")
    lsub = p.add_subparsers(dest="ledger_action", metavar="ACTION", required=True)
    pub = lsub.add_parser("publish", help="append an entry (room from --room)")
    pub.add_argument("kind", help="artifact, decision, interface, convention, warning, code, ...")
    pub.add_argument("summary", help="one-paragraph summary, at most 4 KB ('-' reads stdin)")
    pub.add_argument("--tag", action="append", default=[], help="a tag (repeatable)")
    pub.add_argument("--detail", help="longer detail, at most 16 KB")
    pub.add_argument("--ref", help="a reference: file, commit, URL")
    pub.add_argument(
        "--author", help="author role (default: --agent; only an admin may set another)"
    )
    pub.add_argument(
        "--supersedes",
        help="id of the entry this one replaces: an entry of your "
        "own room (admins: any), and its current head",
    )
    pub.set_defaults(func=run_publish)
    q = lsub.add_parser("query", help="structured filters, newest first")
    _filters(q)
    q.add_argument("-n", "--last", type=int, help="at most N entries (max 50)")
    q.add_argument("--in-room", dest="in_room", help="entries of this room only")
    q.add_argument("--only-room", dest="in_room", help=argparse.SUPPRESS)  # the old name
    q.set_defaults(func=run_query)
    s = lsub.add_parser("search", help="BM25 x time-decay search of the ledger")
    s.add_argument("text", help="words to look for")
    _filters(s)
    s.add_argument("-k", type=int, default=10, help="results (1-50, default 10)")
    s.set_defaults(func=run_search)
    g = lsub.add_parser("get", help="one entry by id (superseded ones too)")
    g.add_argument("id", help="entry id, e.g. mem-1a2b3c4d")
    g.set_defaults(func=run_get)
    c = lsub.add_parser("context", help="predecessor context for --room (Markdown)")
    c.add_argument("keywords", nargs="*", help="what the new room is about")
    c.add_argument("--max-entries", type=int, help="at most N entries (max 15)")
    c.set_defaults(func=run_context)


def _filters(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tag", action="append", default=[], help="a tag (repeatable)")
    p.add_argument("--all-tags", action="store_true", help="require every tag (default: any)")
    p.add_argument("--kind", help="a ledger kind (see `memstrata config`: kinds.*)")
    p.add_argument("--exclude-room", help="leave out this room's entries")
    p.add_argument(
        "--include-superseded", action="store_true", help="also entries a newer one superseded"
    )


def _rows(entries: list[Any]) -> str:
    from memstrata.cli.common import table

    rows = [(e.id, e.ts[:16], e.kind, e.room_id, e.tags, e.summary) for e in entries]
    return table(rows, ("id", "ts", "kind", "room", "tags", "summary"))


def run_publish(args: argparse.Namespace) -> int:
    from memstrata.cli.common import open_store, text_arg
    from memstrata.cli.main import emit

    summary = text_arg(args.summary)
    with open_store(args, as_agent=False) as store:
        entry = store.ledger.publish(
            args.kind,
            summary,
            tags=args.tag,
            detail=args.detail,
            ref=args.ref,
            author_role=args.author,
            supersedes=args.supersedes,
        )
    emit(args, entry.to_dict(), f"published {entry.id} ({entry.kind})")
    return 0


def run_query(args: argparse.Namespace) -> int:
    from memstrata.cli.common import open_store
    from memstrata.cli.main import emit

    with open_store(args, as_agent=False) as store:
        entries = store.ledger.query(
            tags=args.tag,
            kind=args.kind,
            last_n=args.last,
            in_room=args.in_room,
            exclude_room=args.exclude_room,
            match="all" if args.all_tags else "any",
            include_superseded=args.include_superseded,
        )
    emit(args, [e.to_dict() for e in entries], _rows(entries))
    return 0


def run_search(args: argparse.Namespace) -> int:
    from memstrata.cli.common import open_store, table
    from memstrata.cli.main import emit
    from memstrata.search.query import SearchQuery

    query = SearchQuery(
        text=args.text,
        layers=("ledger",),
        kind=args.kind,
        tags=tuple(args.tag),
        tags_match="all" if args.all_tags else "any",
        exclude_room=args.exclude_room,
        include_superseded=args.include_superseded,
        k=args.k,
    )
    with open_store(args, as_agent=False) as store:
        hits = store.search(query)
    rows = [(f"{h.score:.3f}", h.meta.get("id"), h.kind, h.room, h.tags, h.title) for h in hits]
    emit(
        args,
        [{**h.meta, "score": round(h.score, 6)} for h in hits],
        table(rows, ("score", "id", "kind", "room", "tags", "summary")),
    )
    return 0


def run_get(args: argparse.Namespace) -> int:
    from memstrata.cli.common import open_store
    from memstrata.cli.main import emit

    with open_store(args, as_agent=False) as store:
        entry = store.ledger.get(args.id)
        hidden = store.ledger.is_superseded(args.id)
    data = {**entry.to_dict(), "superseded": hidden}
    lines = [
        f"{k}: {', '.join(v) if isinstance(v, list) else v}"
        for k, v in data.items()
        if v not in (None, [], "")
    ]
    emit(args, data, "\n".join(lines))
    return 0


def run_context(args: argparse.Namespace) -> int:
    from memstrata.assembly.predecessor import predecessor_context
    from memstrata.cli.common import open_store
    from memstrata.cli.main import emit

    with open_store(args, as_agent=False) as store:
        text = predecessor_context(
            store, room=args.room, keywords=args.keywords, max_entries=args.max_entries
        )
    emit(args, {"room": args.room, "text": text}, text)
    return 0
