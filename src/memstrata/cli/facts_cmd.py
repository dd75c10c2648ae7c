"""`memstrata facts set|get|list|forget`: key/value facts (user facts, durable taxonomy).

Categories: general, preference, personal, config (user facts) and user, feedback,
project, reference (durable). `forget` appends a tombstone; history stays in
`facts.jsonl`.
"""

from __future__ import annotations

import argparse
from typing import Any

from memstrata.model import FACT_CATEGORIES


def register(sub: Any) -> None:
    p = sub.add_parser("facts", help="save, read and forget key/value facts")
    fsub = p.add_subparsers(dest="facts_action", metavar="ACTION", required=True)
    s = fsub.add_parser("set", help="save or update a fact")
    s.add_argument("key", help="a short identifier, e.g. db_engine")
    s.add_argument("value", help="the value ('-' reads stdin)")
    s.add_argument(
        "--category",
        default="general",
        choices=FACT_CATEGORIES,
        help="kind of fact (default general)",
    )
    s.add_argument("--cite", action="append", default=[], help="a citation (repeatable)")
    s.set_defaults(func=run_set)
    g = fsub.add_parser("get", help="print one fact's value")
    g.add_argument("key", help="the fact's key")
    g.set_defaults(func=run_get)
    ls = fsub.add_parser("list", help="every live fact")
    ls.add_argument("--category", choices=FACT_CATEGORIES, help="only facts of this category")
    ls.set_defaults(func=run_list)
    f = fsub.add_parser(
        "forget",
        help="forget a fact (soft: its history stays in facts.jsonl; "
        "`memstrata purge fact` removes it everywhere)",
    )
    f.add_argument("key", help="the fact's key")
    f.set_defaults(func=run_forget)


def run_set(args: argparse.Namespace) -> int:
    from memstrata.cli.common import agent_memory, fields, text_arg
    from memstrata.cli.main import emit

    value = text_arg(args.value)
    store, mem = agent_memory(args)
    with store:
        fact = mem.facts.set(args.key, value, args.category, citations=args.cite)
    emit(args, fields(fact), f"saved {fact.key} ({fact.category})")
    return 0


def run_get(args: argparse.Namespace) -> int:
    from memstrata.cli.common import agent_memory, fields
    from memstrata.cli.main import emit

    store, mem = agent_memory(args)
    with store:
        fact = mem.facts.get(args.key)
    emit(args, fields(fact), fact.value)
    return 0


def run_list(args: argparse.Namespace) -> int:
    from memstrata.cli.common import agent_memory, fields, say, table
    from memstrata.cli.main import emit

    store, mem = agent_memory(args)
    with store:
        facts = mem.facts.list(args.category)
        for problem in mem.facts.problems():  # unreadable lines are skipped, not fatal
            say("warning", problem)
    rows = [(f.key, f.category, f.value, f.updated_at[:19]) for f in facts]
    emit(args, [fields(f) for f in facts], table(rows, ("key", "category", "value", "updated")))
    return 0


def run_forget(args: argparse.Namespace) -> int:
    from memstrata.cli.common import agent_memory
    from memstrata.cli.main import emit

    store, mem = agent_memory(args)
    with store:
        mem.facts.forget(args.key)
    emit(args, {"key": args.key, "forgotten": True}, f"forgot {args.key}")
    return 0
