"""`memstrata context [--budget N] [--brief TEXT] [--ignore-memory]`: the prompt block.

Prints what `assemble_context` builds for --agent: identity, CONTEXT.md, date
and workspace, NOW.md, open tasks, the LOG tail, facts and cross-room ledger
knowledge, within a character budget. This runs before every agent call, so it
must start fast: nothing beyond the store and the assembly is imported. A file
that cannot be read costs its section only (a warning line in its place, and on
stderr); the exit status stays 0.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse


def register(sub: Any) -> None:
    p = sub.add_parser("context", help="print the assembled memory context for a prompt")
    p.add_argument("--budget", type=int, help="character budget (default 24000)")
    p.add_argument("--brief", help="what the next turn is about: picks facts and ledger entries")
    p.add_argument(
        "--ignore-memory",
        action="store_true",
        help="read nothing from memory ('ignore memory')",
    )
    p.add_argument(
        "--log-entries",
        type=int,
        default=None,
        help="newest LOG.md entries the activity summary reads (default 200, as the hooks and "
        "MCP's prompt-context)",
    )
    p.add_argument("--workspace", help="workspace shown in the context (default: cwd)")
    p.set_defaults(func=run_context)


def run_context(args: argparse.Namespace) -> int:
    from memstrata.assembly.context import assemble_context
    from memstrata.cli.common import emit, open_store, say

    # Ignoring memory reads nothing, so the store is not even caught up.
    with open_store(args, sync=not args.ignore_memory) as store:
        ctx = assemble_context(
            store,
            budget_chars=args.budget,
            brief=args.brief,
            room=args.room,
            ignore_memory=args.ignore_memory,
            **({"log_entries": args.log_entries} if args.log_entries is not None else {}),
            workspace=args.workspace,
        )
        shown = set(store.config.problems)  # open_store has printed those already
    for warning in ctx.warnings:
        if warning not in shown:
            say("warning", warning.removeprefix("⚠ "))
    emit(
        args,
        {
            "text": ctx.text,
            "sections": list(ctx.sections),
            "chars": ctx.chars,
            "truncated": ctx.truncated,
            "warnings": list(ctx.warnings),
        },
        ctx.text,
    )
    return 0
