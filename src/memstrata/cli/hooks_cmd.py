"""`memstrata hook session-start | pre-compact | stop`: session hooks for coding agents.

Install (Claude Code, `.claude/settings.json`):

    {"hooks": {
      "SessionStart": [{"hooks": [{"type": "command", "command": "memstrata --agent me hook session-start"}]}],
      "PreCompact":   [{"hooks": [{"type": "command", "command": "memstrata --agent me hook pre-compact"}]}],
      "Stop":         [{"hooks": [{"type": "command", "command": "memstrata --agent me hook stop"}]}]
    }}

The hook input JSON arrives on stdin (session_id, transcript_path).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser("hook", help="session hooks for coding agents (reads hook JSON on stdin)")
    p.add_argument("event", choices=("session-start", "pre-compact", "stop"))
    p.add_argument("--budget", type=int, default=12000, help="context budget (characters)")
    p.set_defaults(func=run_hook)


def run_hook(args: argparse.Namespace) -> int:
    from memstrata.hooks import capture_transcript, parse_hook_input, session_start
    from memstrata.store import Store

    agent = args.agent or "agent"
    store = Store(args.home, agent=agent, room=args.room, role=args.role)
    try:
        if args.event == "session-start":
            sys.stdout.write(json.dumps(session_start(store, agent, budget_chars=args.budget)) + "\n")
            return 0
        hook = parse_hook_input(sys.stdin.read() if not sys.stdin.isatty() else "")
        got = capture_transcript(store, agent, hook, event=args.event)
        if args.json:
            sys.stdout.write(json.dumps(got.__dict__) + "\n")
        return 0
    finally:
        store.close()
