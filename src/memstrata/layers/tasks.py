"""Task memory (seed 004): `tasks.json`, `{"tasks": [...]}` with the seed's fields.

Every change is a read-modify-write under the file's lock followed by an atomic
replace, so two processes updating tasks never lose each other's change. Status
changes are explicit calls (seed 004 write rule 4).
"""

from __future__ import annotations

import builtins
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstrata.errors import MalformedInput, NotFound
from memstrata.index.docs import Doc, Parsed
from memstrata.index.reconcile import SourceSpec
from memstrata.layers.base import Layer, check_text
from memstrata.model import TASK_STATUSES, Task, iso, now_ts, parse_ts

if TYPE_CHECKING:
    from memstrata.store import Store

_ID = re.compile(r"^TASK-(\d+)$")


def load_tasks(data: bytes, path: str) -> builtins.list[dict[str, Any]]:
    if not data.strip():
        return []
    try:
        doc = json.loads(data)
    except json.JSONDecodeError as exc:
        raise MalformedInput(f"{path}: invalid JSON: {exc.msg} at line {exc.lineno}") from None
    tasks = doc.get("tasks") if isinstance(doc, dict) else None
    if not isinstance(tasks, list):
        raise MalformedInput(f'{path}: expected {{"tasks": [...]}}')
    return [t for t in tasks if isinstance(t, dict) and "id" in t]


def to_task(d: dict[str, Any]) -> Task:
    return Task(
        id=str(d["id"]), milestone=d.get("milestone"), priority=int(d.get("priority", 3)),
        status=str(d.get("status", "pending")), description=str(d.get("description", "")),
        acceptance_criteria=tuple(d.get("acceptance_criteria") or ()),
        created=str(d.get("created", "")), completed=d.get("completed"),
        blocked_by=tuple(d.get("blocked_by") or ()),
    )


def parse_tasks(data: bytes, path: str, owner: str) -> Parsed:
    try:
        tasks = load_tasks(data, path)
    except MalformedInput as exc:
        from memstrata.files.jsonl import BadLine

        return Parsed(bad=[BadLine(path, 0, str(exc), data[:200].decode("utf-8", "replace"))])
    docs = []
    for t in tasks:
        try:
            ts = parse_ts(t.get("created") or 0)
        except MalformedInput:
            ts = 0.0
        criteria = " ".join(str(c) for c in t.get("acceptance_criteria") or ())
        docs.append(
            Doc(uid=f"task:{owner}:{t['id']}", layer="task", ts=ts, title=str(t["id"]),
                body=f"{t.get('description', '')}\n{criteria}".strip(), source=path,
                owner=owner, kind=str(t.get("status")), meta=t)
        )
    return Parsed(docs=docs, consumed=len(data))


class Tasks(Layer):
    layer = "task"

    def __init__(self, store: Store, owner: str) -> None:
        super().__init__(store, owner)
        self.path: Path = store.layout.tasks(owner)

    def spec(self) -> SourceSpec:
        path, owner = str(self.path), self.owner or ""
        return SourceSpec(self.path, "whole", lambda d, b: parse_tasks(d, path, owner))

    def _load(self) -> builtins.list[dict[str, Any]]:
        try:
            return load_tasks(self.path.read_bytes(), str(self.path))
        except FileNotFoundError:
            return []

    def _save(self, commit: Any, tasks: builtins.list[dict[str, Any]]) -> None:
        commit(json.dumps({"tasks": tasks}, indent=2, ensure_ascii=False) + "\n")
        self._write_event(self.path, len(tasks))

    def list(self, status: str | None = None, milestone: str | None = None) -> builtins.list[Task]:
        """Tasks ordered by priority then id (seed 004: prioritized)."""
        self._check("read")
        tasks = [to_task(t) for t in self._load()]
        self._read_event(self.path, len(tasks))
        if status is not None:
            tasks = [t for t in tasks if t.status == status]
        if milestone is not None:
            tasks = [t for t in tasks if t.milestone == milestone]
        return sorted(tasks, key=lambda t: (t.priority, _num(t.id), t.id))

    def get(self, task_id: str) -> Task:
        for t in self.list():
            if t.id == task_id:
                return t
        raise NotFound(f"no task {task_id!r}")

    def add(
        self,
        description: str,
        *,
        milestone: str | None = None,
        priority: int = 3,
        acceptance_criteria: builtins.list[str] | None = None,
        blocked_by: builtins.list[str] | None = None,
    ) -> Task:
        self._check("write")
        check_text(description, "description", 16 * 1024)
        if not isinstance(priority, int) or isinstance(priority, bool) or priority < 0:
            raise MalformedInput("priority must be a non-negative integer (1 = highest)")
        criteria = [check_text(c, "acceptance criterion", 4096) for c in acceptance_criteria or []]
        with self.store.editing(self.spec()) as commit:
            tasks = self._load()
            ids = {t["id"] for t in tasks}
            for b in blocked_by or []:
                if b not in ids:
                    raise NotFound(f"blocked_by names an unknown task {b!r}")
            n = max((_num(t["id"]) for t in tasks), default=0) + 1
            task = {"id": f"TASK-{n:03d}", "milestone": milestone, "priority": priority,
                    "status": "pending", "description": description,
                    "acceptance_criteria": criteria, "created": iso(now_ts())[:10],
                    "completed": None, "blocked_by": list(blocked_by or [])}
            tasks.append(task)
            self._save(commit, tasks)
        return to_task(task)

    def update(self, task_id: str, **changes: Any) -> Task:
        """Change status, priority, milestone, description, criteria or blockers."""
        self._check("write")
        allowed = {"status", "priority", "milestone", "description", "acceptance_criteria",
                   "blocked_by"}
        unknown = set(changes) - allowed
        if unknown:
            raise MalformedInput(f"cannot change {', '.join(sorted(unknown))}")
        status = changes.get("status")
        if status is not None and status not in TASK_STATUSES:
            raise MalformedInput(f"unknown status {status!r}; use {', '.join(TASK_STATUSES)}")
        with self.store.editing(self.spec()) as commit:
            tasks = self._load()
            for t in tasks:
                if t["id"] == task_id:
                    t.update({k: v for k, v in changes.items() if v is not None})
                    if status == "done":
                        t["completed"] = iso(now_ts())[:10]
                    elif status is not None:
                        t["completed"] = None
                    self._save(commit, tasks)
                    return to_task(t)
        raise NotFound(f"no task {task_id!r}")


def _num(task_id: str) -> int:
    m = _ID.match(task_id)
    return int(m.group(1)) if m else 0
