"""Task memory: `tasks.json`, `{"tasks": [...]}` with the task memory's fields.

Every change is a read-modify-write under the file's lock followed by an atomic
replace, so two processes updating tasks never lose each other's change. Status
changes are explicit calls (a write rule of task memory). The file is also edited by
hand: what the code does not understand (other top-level keys, entries without
an id) is kept and written back unchanged (`files.jsondoc`), and a task with an
unusable field is reported by name instead of breaking the rest.
"""

from __future__ import annotations

import builtins
import re
from pathlib import Path
from typing import Any

from memstrata import limits
from memstrata.errors import MalformedInput, NotFound
from memstrata.files.jsondoc import Fields, RecordList, whole_file_problems
from memstrata.files.jsonl import BadLine
from memstrata.index.docs import Doc, Parsed
from memstrata.index.reconcile import SourceSpec
from memstrata.layers.base import Acting, Layer, check_count, check_text
from memstrata.model import TASK_STATUSES, Task, check_plain, iso, now_ts, parse_ts

_ID = re.compile(r"^TASK-(\d+)$")


def load_tasks(data: bytes, path: str) -> RecordList:
    """tasks.json as a document that keeps what it does not understand (MalformedInput if not JSON)."""
    return RecordList.parse(data, path, key="tasks")


def to_task(d: dict[str, Any], path: str = "tasks.json") -> Task:
    """A task from its JSON object; MalformedInput naming the file, task and field if one is unusable."""
    f = Fields(d, f"{path}: task {d.get('id')!r}")
    return Task(
        id=f.text("id"),
        milestone=f.optional_text("milestone"),
        priority=f.integer("priority", 3),
        status=f.choice("status", TASK_STATUSES, "pending"),
        description=f.text("description"),
        acceptance_criteria=f.texts("acceptance_criteria"),
        created=f.text("created"),
        completed=f.optional_text("completed"),
        blocked_by=f.texts("blocked_by"),
    )


def read_tasks(doc: RecordList) -> tuple[builtins.list[Task], builtins.list[str]]:
    """Every usable task, and one line per entry kept but not usable (the rest still reads)."""
    tasks: builtins.list[Task] = []
    problems = doc.problems()
    for rec in doc.records():
        try:
            tasks.append(to_task(rec, doc.path))
        except MalformedInput as exc:
            problems.append(str(exc))
    return tasks, problems


def parse_tasks(data: bytes, path: str, owner: str) -> Parsed:
    try:
        doc = load_tasks(data, path)
    except MalformedInput as exc:
        return Parsed(bad=[BadLine(path, 0, str(exc), data[:200].decode("utf-8", "replace"))])
    _, problems = read_tasks(doc)
    docs = []
    for t in doc.records():
        try:
            ts = parse_ts(t.get("created") or 0)
        except MalformedInput:
            ts = 0.0
        criteria = t.get("acceptance_criteria")
        criteria_text = " ".join(str(c) for c in criteria) if isinstance(criteria, list) else ""
        docs.append(
            Doc(
                uid=f"task:{owner}:{t['id']}",
                layer="task",
                ts=ts,
                title=str(t["id"]),
                body=f"{t.get('description', '')}\n{criteria_text}".strip(),
                source=path,
                owner=owner,
                kind=str(t.get("status")),
                meta=t,
            )
        )
    return Parsed(docs=docs, bad=whole_file_problems(path, problems), consumed=len(data))


class Tasks(Layer):
    layer = "task"

    def __init__(self, acting: Acting, owner: str) -> None:
        super().__init__(acting, owner)
        self.path: Path = acting.engine.layout.tasks(owner)

    def _spec(self) -> SourceSpec:
        path, owner = str(self.path), self.owner or ""
        return SourceSpec(self.path, "whole", lambda d, b: parse_tasks(d, path, owner))

    def _load(self) -> RecordList:
        return self._document(self.path, key="tasks")

    def _save(self, commit: Any, doc: RecordList, changed: dict[str, Any]) -> Task:
        task = to_task(changed, str(self.path))  # refuse before writing a task we could not read
        commit(doc.dumps())
        self._write_event(self.path, len(doc.entries))
        return task

    def list(self, status: str | None = None, milestone: str | None = None) -> builtins.list[Task]:
        """Tasks ordered by priority then id (prioritized).

        A task with an unusable field is left out (and named by `problems()`).
        """
        self._check("read")
        tasks, _ = read_tasks(self._load())
        self._read_event(self.path, len(tasks))
        if status is not None:
            tasks = [t for t in tasks if t.status == status]
        if milestone is not None:
            tasks = [t for t in tasks if t.milestone == milestone]
        return sorted(tasks, key=lambda t: (t.priority, _num(t.id), t.id))

    def problems(self) -> builtins.list[str]:
        """One line per entry of tasks.json kept but not usable (unknown shape, bad field)."""
        self._check("read")
        return read_tasks(self._load())[1]

    def get(self, task_id: str) -> Task:
        """One task; MalformedInput naming the file and field if a hand edit broke it."""
        self._check("read")
        rec = self._load().find(task_id)
        if rec is None:
            raise NotFound(f"no task {task_id!r}")
        return to_task(rec, str(self.path))

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
        fields = check_task_fields(
            {
                "description": description,
                "milestone": milestone,
                "priority": priority,
                "acceptance_criteria": acceptance_criteria or [],
                "blocked_by": blocked_by or [],
            }
        )
        fields = {
            k: self._screen_json(v, f"task {k}") if k != "blocked_by" else v
            for k, v in fields.items()
        }
        with self.engine.editing(self._spec()) as commit:
            doc = self._load()
            ids = {t["id"] for t in doc.records()}
            _check_blockers(fields["blocked_by"], ids, None)
            n = max((_num(i) for i in ids), default=0) + 1
            task = {
                "id": f"TASK-{n:03d}",
                "milestone": fields["milestone"],
                "priority": fields["priority"],
                "status": "pending",
                "description": fields["description"],
                "acceptance_criteria": fields["acceptance_criteria"],
                "created": iso(now_ts())[:10],
                "completed": None,
                "blocked_by": fields["blocked_by"],
            }
            doc.append(task)
            return self._save(commit, doc, task)

    def update(self, task_id: str, **changes: Any) -> Task:
        """Change status, priority, milestone, description, criteria or blockers.

        Each field is validated exactly as `add` validates it; `None` leaves a field as is.
        """
        self._check("write")
        allowed = {
            "status",
            "priority",
            "milestone",
            "description",
            "acceptance_criteria",
            "blocked_by",
        }
        unknown = set(changes) - allowed
        if unknown:
            raise MalformedInput(f"cannot change {', '.join(sorted(unknown))}")
        if not isinstance(task_id, str) or len(task_id) > limits.NAME_CHARS:
            raise NotFound("no task with that id (task ids look like TASK-001)")
        status = changes.get("status")
        if status is not None and status not in TASK_STATUSES:
            raise MalformedInput(f"unknown status {status!r}; use {', '.join(TASK_STATUSES)}")
        checked = check_task_fields(
            {k: v for k, v in changes.items() if v is not None and k != "status"}
        )
        checked = {
            k: self._screen_json(v, f"task {k}") if k != "blocked_by" else v
            for k, v in checked.items()
        }
        with self.engine.editing(self._spec()) as commit:
            doc = self._load()
            t = doc.find(task_id)
            if t is None:
                raise NotFound(f"no task {task_id!r}")
            if "blocked_by" in checked:
                _check_blockers(checked["blocked_by"], {r["id"] for r in doc.records()}, task_id)
            t.update(checked)
            if status is not None:
                t["status"] = status
            if status == "done":
                t["completed"] = iso(now_ts())[:10]
            elif status is not None:
                t["completed"] = None
            return self._save(commit, doc, t)


def check_task_fields(fields: dict[str, Any]) -> dict[str, Any]:
    """Validate the task fields present in `fields` (one rule for `add` and `update`).

    Counts are checked before items and lengths before encoding (limits.TASK_*).
    """
    out: dict[str, Any] = {}
    if "description" in fields:
        out["description"] = check_text(
            fields["description"], "description", limits.TASK_DESCRIPTION_BYTES
        )
    if "milestone" in fields:
        m = fields["milestone"]
        out["milestone"] = (
            None if m is None else check_plain(m, "milestone", limits.TASK_MILESTONE_CHARS)
        )
    if "priority" in fields:
        p = fields["priority"]
        if not isinstance(p, int) or isinstance(p, bool) or not 0 <= p <= limits.TASK_PRIORITY_MAX:
            raise MalformedInput(
                f"priority must be an integer from 0 to {limits.TASK_PRIORITY_MAX} "
                f"(1 = highest), got {p!r}"
            )
        out["priority"] = p
    if "acceptance_criteria" in fields:
        criteria = check_count(
            fields["acceptance_criteria"], "acceptance criteria", limits.TASK_CRITERIA
        )
        out["acceptance_criteria"] = [
            check_text(c, "acceptance criterion", limits.TASK_CRITERION_BYTES) for c in criteria
        ]
    if "blocked_by" in fields:
        blockers = check_count(fields["blocked_by"], "blocked_by tasks", limits.TASK_BLOCKERS)
        out["blocked_by"] = [
            check_plain(b, "blocked_by task id", limits.NAME_CHARS) for b in blockers
        ]
    return out


def _check_blockers(blockers: builtins.list[str], ids: set[str], task_id: str | None) -> None:
    for b in blockers:
        if b == task_id:
            raise MalformedInput(f"task {task_id} cannot block itself")
        if b not in ids:
            raise NotFound(f"blocked_by names an unknown task {b!r}")


def _num(task_id: str) -> int:
    m = _ID.match(task_id)
    return int(m.group(1)) if m else 0
