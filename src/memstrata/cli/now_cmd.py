"""`memstrata now [show] | now set STATUS [--step S]... [--blocker B]... [--phase P]`.

Hot memory (NOW.md, also known as NOTES.md): `set` overwrites the file
atomically with a new objective and next steps; `show` prints it.
"""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser("now", help="show or set the agent's hot state (NOW.md)")
    p.set_defaults(func=run_show)
    nsub = p.add_subparsers(dest="now_action", metavar="ACTION")
    nsub.add_parser("show", help="print NOW.md (the default)").set_defaults(func=run_show)
    s = nsub.add_parser("set", help="overwrite NOW.md with a new objective")
    s.add_argument("status", help="the current objective ('-' reads stdin)")
    s.add_argument("--step", action="append", default=[], help="a next step (repeatable)")
    s.add_argument("--blocker", action="append", default=[], help="a blocker (repeatable)")
    s.add_argument("--phase", help="phase boundary, e.g. 'implementation'")
    s.set_defaults(func=run_set)


def run_show(args: argparse.Namespace) -> int:
    from memstrata.cli.common import agent_memory, fields
    from memstrata.cli.main import emit
    from memstrata.layers.hot import parse_now

    store, mem = agent_memory(args)
    with store:
        text = mem.now.read()
        data = {"path": store.rel(mem.now.path), "text": text, **fields(parse_now(text))}
    emit(args, data, text or "(NOW.md is empty: `memstrata now set STATUS` writes it)")
    return 0


def run_set(args: argparse.Namespace) -> int:
    from memstrata.cli.common import agent_memory, fields, text_arg
    from memstrata.cli.main import emit

    store, mem = agent_memory(args)
    with store:
        state = mem.now.update(
            text_arg(args.status), args.step, blockers=args.blocker, phase=args.phase
        )
        path = store.rel(mem.now.path)
    emit(args, {"path": path, **fields(state)}, f"updated {path}")
    return 0
