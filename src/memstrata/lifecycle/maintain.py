"""Scheduled upkeep: session retention, task archival, LOG over its limits.

    memstrata maintain            # once, by hand or from cron
    memstrata mcp                 # the server runs it in the background when it starts

For each agent the principal may write (all of them for an admin):

* sessions idle longer than `[sessions] retention_days` move to the archive
  (`lifecycle.retention`);
* a milestone whose tasks are all done or cancelled (at least one done) is
  archived: its tasks move from tasks.json to `archive/tasks-<milestone>-<stamp>.json`
  (written durably first, so a crash leaves a duplicate, never a loss) - task memory's
  "Tasks ... Archived: After milestone completion";
* LOG.md is compacted if it is over its limits (normally the append trigger did it);
* file versions past `[versions]` retention are dropped (normally the next write of
  the file does it; a file no one writes again keeps them until this runs).

One agent's failure is reported in its row and does not stop the others.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from memstrata.errors import MemstrataError
from memstrata.layers.tasks import load_tasks
from memstrata.lifecycle.compaction import compact_log, stamp
from memstrata.lifecycle.retention import archive_old_sessions
from memstrata.lifecycle.splice import durable_copy
from memstrata.model import iso, now_ts
from memstrata.values import field, value_type

if TYPE_CHECKING:
    from memstrata.store.view import Store

CLOSED = ("done", "cancelled")


@value_type
class AgentUpkeep:
    agent: str
    sessions_archived: list[str] = field(default_factory=list)
    milestones_archived: list[str] = field(default_factory=list)
    log_compacted: bool = False
    versions_dropped: int = 0  # file versions past `[versions]` retention
    problems: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")[:40] or "milestone"


def completed_milestones(tasks: list[dict[str, Any]]) -> list[str]:
    """Milestones whose every task is closed and at least one is done."""
    by: dict[str, list[str]] = {}
    for t in tasks:
        if t.get("milestone"):
            by.setdefault(str(t["milestone"]), []).append(str(t.get("status")))
    return [
        m for m, statuses in by.items() if all(s in CLOSED for s in statuses) and "done" in statuses
    ]


def archive_completed_milestones(store: Store, agent: str) -> list[str]:
    """Move the tasks of completed milestones out of tasks.json into the archive."""
    tasks = store.agent(agent).tasks
    store.gate.check("write", "task", agent)
    done: list[str] = []
    with store.engine.editing(tasks._spec()) as commit:
        if not commit.exists:
            return []
        doc = load_tasks(commit.data, str(tasks.path))  # every entry kept, unknown ones too
        milestones = completed_milestones(doc.records())
        if not milestones:
            return []
        when = now_ts()
        for milestone in milestones:
            moving = [t for t in doc.records() if str(t.get("milestone")) == milestone]
            dest = store.layout.archive_dir(agent) / f"tasks-{_slug(milestone)}-{stamp(when)}.json"
            body = {"milestone": milestone, "archived_at": iso(when), "tasks": moving}
            durable_copy(
                store, (json.dumps(body, indent=2, ensure_ascii=False) + "\n").encode(), dest
            )
            done.append(milestone)
        doc.remove(lambda t: str(t.get("milestone")) in milestones)
        commit(doc.dumps())
    for milestone in done:
        store.events.emit(
            "memory:write",
            {
                "type": "task",
                "path": store.rel(tasks.path),
                "delta": 0,
                "archived_milestone": milestone,
            },
        )
    return done


def maintain_agent(store: Store, agent: str) -> AgentUpkeep:
    row = AgentUpkeep(agent)

    def sessions() -> None:
        row.sessions_archived.extend(s.id for s in archive_old_sessions(store, agent))

    def tasks() -> None:
        row.milestones_archived.extend(archive_completed_milestones(store, agent))

    def log() -> None:
        row.log_compacted = compact_log(store, agent, wait=0).compacted

    def versions() -> None:
        row.versions_dropped = store.agent(agent).versions.prune()

    steps = (("sessions", sessions), ("tasks", tasks), ("log", log), ("versions", versions))
    for name, step in steps:
        try:
            step()
        except (MemstrataError, OSError) as exc:
            row.problems.append(f"{name}: {exc}")
    return row


def maintain(store: Store, agents: list[str] | None = None) -> list[AgentUpkeep]:
    """Run the upkeep for `agents` (default: the store's own agent, or every agent for an admin)."""
    if agents is None:
        own = store.principal.agent
        agents = store.agents() if store.principal.role == "admin" else [own] if own else []
        if own and own not in agents and store.engine.stat(f"agents/{own}") is not None:
            agents.append(own)
    return [maintain_agent(store, a) for a in agents if store.gate.allows("write", "log", a)]


def start_maintenance(
    store: Store, report: Callable[[list[AgentUpkeep]], object] | None = None
) -> bool:
    """Run `maintain` in the background (server start), then `report` the rows.

    Nothing runs in agent-controlled mode.
    """
    if not store.config.automatic_writes:
        return False

    def job() -> None:
        rows = maintain(store)
        if report is not None:
            report(rows)

    return store.engine.after_ack("maintain", job)
