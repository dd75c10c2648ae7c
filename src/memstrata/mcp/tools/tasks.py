"""The task list: add, update (status, priority), list, highest priority first."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memstrata.mcp import shapes
from memstrata.mcp.shapes import Reply
from memstrata.mcp.tools.spec import Caller, ToolSpec, p, req
from memstrata.model import TASK_STATUSES

if TYPE_CHECKING:
    from memstrata.config import Config


def task_add(
    caller: Caller,
    description: str,
    milestone: str | None,
    priority: int,
    acceptance_criteria: list[str] | None,
) -> Reply:
    t = caller.agent.tasks.add(
        description, milestone=milestone, priority=priority, acceptance_criteria=acceptance_criteria
    )
    return Reply(f"added {shapes.task_line(t)}", {"task": shapes.task(t)})


def task_update(caller: Caller, task_id: str, status: str | None, priority: int | None) -> Reply:
    t = caller.agent.tasks.update(task_id, status=status, priority=priority)
    return Reply(f"updated {shapes.task_line(t)}", {"task": shapes.task(t)})


def task_list(caller: Caller, status: str | None) -> Reply:
    tasks = caller.agent.tasks.list(status=status)
    return Reply(
        "\n".join(shapes.task_line(t) for t in tasks) or "no tasks",
        {"tasks": [shapes.task(t) for t in tasks]},
    )


def tools(config: Config) -> list[ToolSpec]:
    """The declarations, in catalogue order."""
    obj = shapes._obj
    return [
        ToolSpec(
            "task_add",
            task_add,
            "Add a task to your task list; returns it with its id.",
            (
                req("description", "string", "what to do"),
                p("milestone", "string", "milestone name"),
                p("priority", "integer", "1 = highest", 3, minimum=0),
                p("acceptance_criteria", "array", "when it is done", items="string"),
            ),
            obj({"task": shapes.TASK}, ["task"]),
            read_only=False,
            group="tasks",
        ),
        ToolSpec(
            "task_update",
            task_update,
            "Change a task's status or priority.",
            (
                req("task_id", "string", "e.g. TASK-001"),
                p("status", "string", "new status", enum=TASK_STATUSES),
                p("priority", "integer", "new priority (1 = highest)", minimum=0),
            ),
            obj({"task": shapes.TASK}, ["task"]),
            read_only=False,
            idempotent=True,
            group="tasks",
        ),
        ToolSpec(
            "task_list",
            task_list,
            "Your tasks, highest priority (1) first.",
            (p("status", "string", "only tasks in this status", enum=TASK_STATUSES),),
            obj({"tasks": {"type": "array", "items": shapes.TASK}}, ["tasks"]),
            idempotent=True,
            group="tasks",
        ),
    ]
