"""`memstrata hook EVENT`: Claude Code hooks (the hook's JSON input arrives on stdin).

Install: `memstrata setup claude-code` writes these into `.claude/settings.json` with the
program's and the store's absolute paths (`agentconfig.clients`), or by hand as below. The
store is the project's: `$MEMSTRATA_HOME`, else the
`.memstrata` found upward from `$CLAUDE_PROJECT_DIR` (or the working directory) like git
finds its repository (`files.layout.find_home`); `--home DIR` names one. The agent is the
default one every surface uses (`agent`), unless `--agent NAME` / `$MEMSTRATA_AGENT`:

    {"hooks": {
      "SessionStart":     [{"hooks": [{"type": "command", "command": "memstrata hook session-start"}]}],
      "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "memstrata hook user-prompt-submit"}]}],
      "PostToolUse":      [{"matcher": "*", "hooks": [{"type": "command", "command": "memstrata hook post-tool-use"}]}],
      "PostToolUseFailure": [{"matcher": "*", "hooks": [{"type": "command", "command": "memstrata hook post-tool-use-failure"}]}],
      "PreCompact":       [{"hooks": [{"type": "command", "command": "memstrata hook pre-compact"}]}],
      "Stop":             [{"hooks": [{"type": "command", "command": "memstrata hook stop"}]}],
      "SessionEnd":       [{"hooks": [{"type": "command", "command": "memstrata hook session-end"}]}]
    }}

A memory hook must never get in the agent's way. In Claude Code exit code 2 is
a deliberate block (it stops Stop and PreCompact and feeds stderr to the model),
and none of these hooks means to block: every hook exits 0, and an internal
error (bad input, an unreadable store, a full disk) becomes one line on stderr,
which Claude Code shows to the user, not to the model. Context for the model
goes to stdout as `hookSpecificOutput.additionalContext`.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

EVENTS = (
    "session-start",
    "user-prompt-submit",
    "post-tool-use",
    "post-tool-use-failure",
    "pre-compact",
    "stop",
    "session-end",
)


def register(sub: Any) -> None:
    p = sub.add_parser(
        "hook", help="Claude Code hooks (read the hook's JSON on stdin; never block)"
    )
    p.add_argument("event", choices=EVENTS, help="the agent's lifecycle event")
    p.add_argument(
        "--budget", type=int, default=12000, help="session-start context budget (characters)"
    )
    p.add_argument(
        "--max-capture",
        type=int,
        default=None,
        help="pre-compact/stop: most messages captured per call, oldest first",
    )
    p.set_defaults(func=run_hook)


def run_hook(args: argparse.Namespace) -> int:
    try:
        out = _run(args)
    except Exception as exc:  # the adapter's edge: report, never block the agent
        from memstrata.errors import MemstrataError

        kind = "" if isinstance(exc, MemstrataError) else f"{type(exc).__name__}: "
        sys.stderr.write(f"memstrata hook {args.event}: {kind}{exc} (the agent was not blocked)\n")
        return 0
    if out is not None:
        sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
    return 0


def _run(args: argparse.Namespace) -> dict[str, Any] | None:
    from memstrata.cli.common import DEFAULT_AGENT, build_via_daemon, warn_config
    from memstrata.operations import hooks
    from memstrata.store.view import Store

    raw = sys.stdin.read() if sys.stdin is not None and not sys.stdin.isatty() else ""
    hook = hooks.parse_hook_input(raw)
    agent = args.agent or DEFAULT_AGENT
    with Store(args.home, agent=agent, room=args.room, role=args.role) as store:
        warn_config(store, named=bool(args.agent))
        build_via_daemon(store)  # vectors of what the hook wrote: after it returns, not in it
        if args.event == "session-start":
            return hooks.session_start(store, agent, hook, budget_chars=args.budget)
        if args.event == "user-prompt-submit":
            return hooks.user_prompt_submit(store, agent, hook)
        if args.event == "post-tool-use":
            hooks.post_tool_use(store, agent, hook)
            return None
        if args.event == "post-tool-use-failure":
            hooks.post_tool_use_failure(store, agent, hook)
            return None
        if args.event == "session-end":
            ended = hooks.session_end(store, agent, hook)
            return ended if args.json else None
        run = hooks.pre_compact if args.event == "pre-compact" else hooks.stop
        got = run(store, agent, hook, max_capture=args.max_capture)
        return got if args.json else None
