"""`memstrata tasks add|list|update|get`: task memory (`tasks.json`).

Status changes are explicit (`update --status done` stamps `completed`);
statuses are pending, in_progress, blocked, done and cancelled.
"""

from __future__ import annotations

import argparse
from typing import Any

from memstrata.model import TASK_STATUSES


def register(sub: Any) -> None:
    p = sub.add_parser("tasks", help="the agent's prioritised tasks")
    tsub = p.add_subparsers(dest="tasks_action", metavar="ACTION", required=True)
    a = tsub.add_parser("add", help="add a pending task")
    a.add_argument("description", help="what to do ('-' reads stdin)")
    a.add_argument("--milestone", help="milestone name")
    a.add_argument("--priority", type=int, default=3, help="1 = highest (default 3)")
    a.add_argument(
        "--criterion", action="append", default=[], help="acceptance criterion (repeatable)"
    )
    a.add_argument("--blocked-by", action="append", default=[], help="a task id (repeatable)")
    a.set_defaults(func=run_add)
    ls = tsub.add_parser("list", help="tasks by priority")
    ls.add_argument("--status", choices=TASK_STATUSES, help="only tasks in this status")
    ls.add_argument("--milestone", help="only tasks of this milestone")
    ls.set_defaults(func=run_list)
    u = tsub.add_parser("update", help="change a task")
    u.add_argument("id", help="task id, e.g. TASK-001")
    u.add_argument("--status", choices=TASK_STATUSES, help="new status")
    u.add_argument("--priority", type=int, help="new priority (1 = highest)")
    u.add_argument("--milestone", help="new milestone")
    u.add_argument("--description", help="new description")
    u.add_argument("--criterion", action="append", help="replaces the criteria (repeatable)")
    u.add_argument("--blocked-by", action="append", help="replaces the blockers (repeatable)")
    u.set_defaults(func=run_update)
    g = tsub.add_parser("get", help="one task")
    g.add_argument("id", help="task id, e.g. TASK-001")
    g.set_defaults(func=run_get)


def _show(t: Any) -> str:
    lines = [
        f"{t.id} [{t.status}] P{t.priority}" + (f" ({t.milestone})" if t.milestone else ""),
        f"  {t.description}",
    ]
    lines += [f"  - [{'x' if t.status == 'done' else ' '}] {c}" for c in t.acceptance_criteria]
    if t.blocked_by:
        lines.append(f"  blocked by: {', '.join(t.blocked_by)}")
    lines.append(f"  created {t.created}" + (f", completed {t.completed}" if t.completed else ""))
    return "\n".join(lines)


def run_add(args: argparse.Namespace) -> int:
    from memstrata.cli.common import agent_memory, text_arg
    from memstrata.cli.main import emit

    description = text_arg(args.description)
    store, mem = agent_memory(args)
    with store:
        task = mem.tasks.add(
            description,
            milestone=args.milestone,
            priority=args.priority,
            acceptance_criteria=args.criterion,
            blocked_by=args.blocked_by,
        )
        _warn_kept(mem)
    emit(args, task.to_dict(), f"added {task.id}")
    return 0


def run_list(args: argparse.Namespace) -> int:
    from memstrata.cli.common import agent_memory, table
    from memstrata.cli.main import emit

    store, mem = agent_memory(args)
    with store:
        tasks = mem.tasks.list(args.status, args.milestone)
        _warn_kept(mem)
    rows = [(t.id, t.status, t.priority, t.milestone, t.description) for t in tasks]
    emit(
        args,
        [t.to_dict() for t in tasks],
        table(rows, ("id", "status", "priority", "milestone", "description")),
    )
    return 0


def _warn_kept(mem: Any) -> None:
    """Entries of tasks.json kept (and written back) unchanged but not understood: say so."""
    from memstrata.cli.common import say

    for problem in mem.tasks.problems():
        say("warning", problem)


def run_update(args: argparse.Namespace) -> int:
    from memstrata.cli.common import agent_memory
    from memstrata.cli.main import emit

    changes = {
        "status": args.status,
        "priority": args.priority,
        "milestone": args.milestone,
        "description": args.description,
        "acceptance_criteria": args.criterion,
        "blocked_by": args.blocked_by,
    }
    store, mem = agent_memory(args)
    with store:
        task = mem.tasks.update(args.id, **{k: v for k, v in changes.items() if v is not None})
        _warn_kept(mem)
    emit(args, task.to_dict(), _show(task))
    return 0


def run_get(args: argparse.Namespace) -> int:
    from memstrata.cli.common import agent_memory
    from memstrata.cli.main import emit

    store, mem = agent_memory(args)
    with store:
        task = mem.tasks.get(args.id)
    emit(args, task.to_dict(), _show(task))
    return 0
