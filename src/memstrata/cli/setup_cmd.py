"""`memstrata setup CLIENT`: wire memstrata into a coding agent in one command.

    memstrata setup claude-code            # hooks in .claude/settings.json, MCP in .mcp.json
    memstrata setup claude-code --dry-run  # the diff, nothing written
    memstrata setup claude-code --check    # run what the files say, as Claude Code will
    memstrata setup claude-code --remove   # take exactly memstrata's entries away again
    memstrata setup cursor                 # .cursor/mcp.json;  vscode: .vscode/mcp.json

What each client gets and why it is anchored (absolute program, absolute store, one
agent) is `agentconfig.clients`; merging into existing files is `agentconfig.jsonedit`.
This module translates options into a `Target` and prints what happened.
"""

from __future__ import annotations

import argparse
import os
import shlex
from pathlib import Path
from typing import Any

from memstrata.agentconfig.clients import CLIENTS


def register(sub: Any) -> None:
    p = sub.add_parser(
        "setup",
        help="wire memstrata into a coding agent: " + ", ".join(CLIENTS),
        description="Write memstrata's hooks and MCP server into a coding agent's project "
        "files, merged with what they hold (other hooks, other servers, unknown keys and "
        "their formatting are kept). Every entry runs this program by its absolute path, "
        "on the project's store (--home, absolute; default: the one the CLI finds from the "
        "project, PROJECT/.memstrata for Claude Code) as one "
        "agent (--agent; default 'agent'). Running it again changes nothing.",
    )
    p.add_argument("client", choices=list(CLIENTS), help="the coding agent")
    p.add_argument(
        "--project",
        default=None,
        metavar="DIR",
        help="the project folder the client opens (default: the working directory)",
    )
    p.add_argument(
        "--command",
        dest="program",
        default=None,
        metavar="CMD",
        help="the memstrata command the client runs (default: this program's absolute path; "
        "'memstrata' relies on the client's PATH)",
    )
    p.add_argument("--dry-run", action="store_true", help="show the diff; write nothing")
    p.add_argument(
        "--remove", action="store_true", help="remove memstrata's entries (the store stays)"
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="run the MCP server (and Claude Code's SessionStart hook) as the files say",
    )
    p.set_defaults(func=run_setup)


def run_setup(args: argparse.Namespace) -> int:
    from memstrata.agentconfig.check import all_ok, check
    from memstrata.agentconfig.clients import Target, store_for
    from memstrata.agentconfig.plan import plan, this_program
    from memstrata.cli.common import DEFAULT_AGENT
    from memstrata.cli.main import emit
    from memstrata.errors import MalformedInput

    if args.check and (args.remove or args.dry_run):
        raise MalformedInput("--check runs what is set up; use it without --remove or --dry-run")
    client = CLIENTS[args.client]
    project = Path(args.project or os.getcwd()).expanduser().absolute()
    where = f"memstrata setup {client.name}: project {project}"
    if args.check:
        findings = check(client, project)
        ok = all_ok(findings)
        verdict = (
            f"all set: {client.next_step}"
            if ok
            else f"not set up as it should be: run `memstrata setup {client.name}`"
        )
        lines = [f"  {'ok  ' if f.ok else 'FAIL'} {f.text}" for f in findings]
        emit(
            args,
            {"project": str(project), "ok": ok, "findings": [f.__dict__ for f in findings]},
            "\n".join([where, *lines, verdict]),
        )
        return 0 if ok else 1
    home = Path(args.home).expanduser().absolute() if args.home else store_for(client, project)
    agent = args.agent or DEFAULT_AGENT
    program = tuple(shlex.split(args.program)) if args.program else this_program()
    target = Target(program, home, agent)
    changes = plan(client, project, target, remove=args.remove)
    if not args.dry_run:
        for change in changes:
            change.apply(project)
    emit(
        args,
        {
            "client": client.name,
            "project": str(project),
            "store": str(home),
            "agent": agent,
            "program": list(program),
            "dry_run": args.dry_run,
            "removed": args.remove,
            "files": [
                {
                    "path": c.rel,
                    "action": c.action,
                    "changes": c.changes,
                    **({"diff": c.diff()} if args.dry_run else {}),
                }
                for c in changes
            ],
        },
        _report(args, client.name, client.next_step, where, target, changes),
    )
    return 0


def _report(
    args: argparse.Namespace, name: str, next_step: str, where: str, target: Any, changes: list[Any]
) -> str:
    files = " and ".join(c.rel for c in changes)
    lines = [where]
    if args.dry_run:
        lines += [c.diff().rstrip("\n") for c in changes if c.changed]
    for c in changes:
        if c.changed:
            verb = c.action + (" (it held nothing else)" if c.after is None else "")
            lines.append(f"  {c.rel}: {'would be ' if args.dry_run else ''}{verb}")
            lines += [f"    {what}" for what in c.changes]
    changed = any(c.changed for c in changes)
    if args.remove:
        if not changed:
            lines.append(f"nothing to remove: no memstrata entries in {files}")
        lines.append(f"the store {target.home} is kept (its memory is yours to delete)")
    elif not changed:
        lines.append(f"nothing to change: {files} already set up")
    if not args.remove:
        program = shlex.join(target.program)
        lines += [
            f"  store  {target.home}" + ("" if args.home else " (--home DIR for another)"),
            f"  agent  {target.agent}"
            + ("" if args.agent else " (the default every surface uses; --agent NAME for another)"),
            f"  runs   {program}"
            + (
                " (an absolute path: works whatever PATH the client starts it with)"
                if os.path.isabs(target.program[0])
                else " (found on the PATH the client starts it with: make sure it is there)"
            ),
        ]
    if args.dry_run:
        lines.append("(dry run: nothing written)")
    elif not args.remove:
        lines.append(f"next: {next_step}; check it with `memstrata setup {name} --check`")
    return "\n".join(lines)
