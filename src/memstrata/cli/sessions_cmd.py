"""`memstrata sessions start|append|show|list|end`: episodic session transcripts.

Each session is `sessions/<id>.jsonl` (append-only messages with ids and
timestamps) plus a row in `sessions/sessions.json`. Roles: user, assistant,
tool_call, tool_result, system, summary.
"""

from __future__ import annotations

import argparse
from typing import Any

from memstrata.model import SESSION_ROLES


def register(sub: Any) -> None:
    p = sub.add_parser("sessions", help="conversation transcripts")
    ssub = p.add_subparsers(dest="sessions_action", metavar="ACTION", required=True)
    s = ssub.add_parser("start", help="register a new session (prints its id)")
    s.add_argument("id", nargs="?", help="session id (default: generated)")
    s.add_argument("--title", help="a title for the session list")
    s.set_defaults(func=run_start)
    a = ssub.add_parser("append", help="append one message")
    a.add_argument("id", help="session id")
    # dest differs from "role": the common --role option (the principal's scope) owns that name.
    a.add_argument("message_role", metavar="role", choices=SESSION_ROLES, help="who speaks")
    a.add_argument("content", help="message text ('-' reads stdin)")
    a.add_argument("--name", help="tool name (tool_call, tool_result)")
    a.add_argument("--input", help="tool input as JSON")
    a.add_argument("--speaker", help="who spoke, when not the role")
    a.add_argument("--call-id", help="message id: a tool_call and its tool_result share one")
    a.add_argument(
        "--is-error",
        action="store_true",
        help="tool_result: the call failed (logged as an ERROR, an open error until resolved)",
    )
    a.set_defaults(func=run_append)
    sh = ssub.add_parser("show", help="print a transcript")
    sh.add_argument("id", help="session id")
    sh.set_defaults(func=run_show)
    ls = ssub.add_parser("list", help="sessions with message counts")
    ls.add_argument("--all", action="store_true", help="include archived sessions")
    ls.set_defaults(func=run_list)
    e = ssub.add_parser("end", help="mark a session ended")
    e.add_argument("id", help="session id")
    e.set_defaults(func=run_end)


def run_start(args: argparse.Namespace) -> int:
    from memstrata.cli.common import agent_memory
    from memstrata.cli.main import emit

    store, mem = agent_memory(args)
    with store:
        info = mem.sessions.start(args.id, title=args.title)
    emit(args, info.to_dict(), info.id)
    return 0


def run_append(args: argparse.Namespace) -> int:
    from memstrata.cli.common import agent_memory, json_value, text_arg
    from memstrata.cli.main import emit

    tool_input = json_value(args.input, "--input")
    content = text_arg(args.content)
    store, mem = agent_memory(args)
    with store:
        msg = mem.sessions.append(
            args.id,
            args.message_role,
            content,
            name=args.name,
            input=tool_input,
            speaker=args.speaker,
            id=args.call_id,
            is_error=args.is_error or None,
        )
        if msg.is_error:
            from memstrata.operations.loop import record_failed_result

            record_failed_result(store, mem.name, args.id, msg)
    emit(args, msg.to_dict(), f"{msg.id} {msg.timestamp} {msg.role}")
    return 0


def run_show(args: argparse.Namespace) -> int:
    import json

    from memstrata.cli.common import agent_memory
    from memstrata.cli.main import emit

    store, mem = agent_memory(args)
    with store:
        msgs = mem.sessions.messages(args.id)
    blocks = []
    for m in msgs:
        who = m.speaker or m.role + (f" {m.name}" if m.name else "")
        body = m.content or ("" if m.input is None else json.dumps(m.input, ensure_ascii=False))
        blocks.append(f"[{m.timestamp}] {who}:\n  " + body.replace("\n", "\n  "))
    emit(args, [m.to_dict() for m in msgs], "\n".join(blocks) or "(no messages)")
    return 0


def run_list(args: argparse.Namespace) -> int:
    from memstrata.cli.common import agent_memory, table
    from memstrata.cli.main import emit

    store, mem = agent_memory(args)
    with store:
        infos = mem.sessions.list(include_archived=args.all)
    rows = [(s.id, s.title, s.created[:19], (s.ended or "")[:19], s.messages) for s in infos]
    emit(
        args,
        [s.to_dict() for s in infos],
        table(rows, ("id", "title", "created", "ended", "messages")),
    )
    return 0


def run_end(args: argparse.Namespace) -> int:
    from memstrata.cli.common import agent_memory
    from memstrata.cli.main import emit

    store, mem = agent_memory(args)
    with store:
        mem.sessions.end(args.id)
    emit(args, {"id": args.id, "ended": True}, f"ended {args.id}")
    return 0
