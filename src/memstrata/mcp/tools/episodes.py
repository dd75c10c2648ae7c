"""Task-episodic memory, phases, promotion and hygiene, one tool each.

The memory policy names operations, not tools; these give each one a tool so an agent reaches
them over MCP as it reaches the skills and file tools:

    task_folder_create / task_folder_write / task_folder_read   plans/artifacts/<task-slug>/
    task_verified                                                verified items per iteration
    gate_event                                                   observability/<task-id>.ndjson
    task_phase / scratch_promote                                 phase events, promotion
    memory_promote                                               Checklist C, then a durable fact
    memory_audit / memory_verify                                 Checklist D, verify before use

Like every tool they translate and never decide: scope, bounds and the checklists are
the library's (`layers.episodes`, `lifecycle.phases`, `lifecycle.promotion`,
`lifecycle.hygiene`, `lifecycle.verify`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memstrata.errors import MalformedInput
from memstrata.lifecycle.hygiene import audit
from memstrata.lifecycle.phases import phase_end, phase_start, task_complete
from memstrata.lifecycle.promotion import checklist_c, promote_fact, promote_scratch
from memstrata.lifecycle.verify import verify_citations
from memstrata.mcp import shapes
from memstrata.mcp.shapes import Reply
from memstrata.mcp.tools.spec import Caller, ToolSpec, p, req
from memstrata.model import DURABLE_CATEGORIES

if TYPE_CHECKING:
    from memstrata.config import Config


def task_folder_create(caller: Caller, title: str) -> Reply:
    slug = caller.agent.episodes.create(title)
    return Reply(f"task folder {slug}", {"task": slug, "files": caller.agent.episodes.files(slug)})


def task_folder_write(caller: Caller, task: str, path: str, content: str, append: bool) -> Reply:
    eps = caller.agent.episodes
    where = eps.append(task, path, content) if append else eps.write(task, path, content)
    return Reply(
        f"{'appended to' if append else 'wrote'} {where}",
        {"task": task, "path": path, "where": where},
    )


def task_folder_read(caller: Caller, task: str | None, path: str | None) -> Reply:
    if not task:
        tasks = caller.agent.episodes.list()
        return Reply("\n".join(tasks) or "(no task folders)", {"tasks": tasks})
    if not path:
        files = caller.agent.episodes.files(task)
        return Reply("\n".join(files) or "(empty task folder)", {"task": task, "files": files})
    text = caller.agent.episodes.read(task, path)
    return Reply(text, {"task": task, "path": path, "content": text})


def task_verified(
    caller: Caller, task: str, items: list[str] | None, iteration: int | None
) -> Reply:
    if items:
        caller.agent.episodes.add_verified(task, items, iteration=iteration)
    got = [
        {"iteration": i, "item": text} if i is not None else {"item": text}
        for i, text in caller.agent.episodes.verified(task)
    ]
    return Reply(
        "\n".join(f"[{v.get('iteration', '-')}] {v['item']}" for v in got) or "(no verified items)",
        {"task": task, "verified": got},
    )


def gate_event(caller: Caller, task: str, task_id: str, event: dict[str, Any]) -> Reply:
    rec = caller.agent.episodes.log_gate_event(task, task_id, event)
    return Reply(
        f"gate event recorded for {task_id}", {"task": task, "task_id": task_id, "event": rec}
    )


def task_phase(
    caller: Caller,
    event: str,
    task: str,
    phase: str | None,
    note: str | None,
    report: str | None,
    next_phase: str | None,
    blockers: list[str] | None,
    next_steps: list[str] | None,
    facts: list[dict[str, Any]] | None,
) -> Reply:

    who = caller.agent.name
    if event in ("start", "end") and not phase:
        raise MalformedInput(f"task_phase {event} needs a phase")
    if event == "start":
        got = phase_start(caller.store, who, task, phase or "", note=note or "", facts=facts or [])
        data = {
            "event": event,
            "task": task,
            "phase": phase,
            "task_files": list(got.task_files),
            "verified": [v for _, v in got.verified],
            "session_note": got.session_note,
            "promoted": [f.key for f in got.promoted],
            "refused": [v.to_dict() for v in got.refused],
        }
        return Reply(
            f"phase {phase} of {task} started: {len(got.task_files)} task file(s), "
            f"{len(got.promoted)} fact(s) promoted, {len(got.refused)} refused",
            data,
        )
    if event == "end":
        if not report:
            raise MalformedInput("task_phase end needs the phase completion report")
        where = phase_end(
            caller.store,
            who,
            task,
            phase or "",
            report,
            next_phase=next_phase,
            blockers=blockers or [],
            next_steps=next_steps or [],
        )
        return Reply(
            f"phase {phase} of {task} ended; report at {where}",
            {"event": event, "task": task, "phase": phase, "report": where},
        )
    promoted, refused = task_complete(caller.store, who, task, facts or [])
    return Reply(
        f"task {task} complete: {len(promoted)} durable fact(s) promoted, {len(refused)} refused",
        {
            "event": event,
            "task": task,
            "promoted": [f.key for f in promoted],
            "refused": [v.to_dict() for v in refused],
        },
    )


def scratch_promote(caller: Caller, name: str, task: str, dest: str) -> Reply:

    where = promote_scratch(caller.store, caller.agent.name, name, task, dest)
    return Reply(f"session/{name} promoted to {where}", {"task": task, "where": where})


def memory_promote(
    caller: Caller,
    text: str,
    citations: list[str],
    category: str | None,
    key: str | None,
    dry_run: bool,
) -> Reply:

    who = caller.agent.name
    verdict = checklist_c(caller.store, who, text, citations, category)
    data: dict[str, Any] = {"checklist": verdict.to_dict()}
    if not verdict.passed or dry_run:
        why = verdict.failed.why if verdict.failed else "passes Checklist C (dry run)"
        return Reply(why, data)
    fact = promote_fact(caller.store, who, verdict.text, verdict.category, citations, key=key)
    data["fact"] = shapes.compact(
        {
            "key": fact.key,
            "value": fact.value,
            "category": fact.category,
            "citations": list(fact.citations),
        }
    )
    return Reply(f"promoted {fact.key} ({fact.category})", data)


def memory_audit(caller: Caller) -> Reply:

    report = audit(caller.store, caller.agent.name)
    found = [
        shapes.compact(
            {
                "kind": f.kind,
                "target": f.target,
                "detail": f.detail,
                "action": f.action,
                "keep": f.keep,
            }
        )
        for f in report.findings
    ]
    return Reply(
        "\n".join(f"{f['kind']}: {f['target']} ({f['detail']})" for f in found)
        or "no pollution found",
        {"findings": found},
    )


def memory_verify(caller: Caller, root: str) -> Reply:

    found = [
        shapes.compact({"source": f.source, "ref": f.ref, "problem": f.problem, "detail": f.detail})
        for f in verify_citations(caller.store, caller.agent.name, root)
    ]
    return Reply(
        "\n".join(f"{f['source']}: {f['ref']} {f['problem']}" for f in found)
        or "every claim still holds",
        {"findings": found},
    )


def tools(config: Config) -> list[ToolSpec]:
    """The declarations, in catalogue order."""
    S, obj = shapes.S, shapes._obj
    task = req("task", "string", "the task's slug, as task_folder_create returned it")
    findings = obj({"findings": {"type": "array", "items": {"type": "object"}}}, ["findings"])
    return [
        ToolSpec(
            "task_folder_create",
            task_folder_create,
            "Create (or reuse) the task-episodic folder for a task; its slug is the title "
            "in kebab-case. Returns the slug and the files already in it.",
            (req("title", "string", 'the task\'s title, e.g. "Add OAuth login"'),),
            obj({"task": S, "files": shapes.STRS}, ["task", "files"]),
            read_only=False,
            idempotent=True,
            group="episodes",
        ),
        ToolSpec(
            "task_folder_write",
            task_folder_write,
            "Write (or append to) a file in a task folder: plan, notes, completion report.",
            (
                task,
                req("path", "string", "file inside the task folder, e.g. plan.md"),
                req("content", "string", "the text"),
                p("append", "boolean", "append instead of replacing", False),
            ),
            obj({"task": S, "path": S, "where": S}, ["task", "path", "where"]),
            read_only=False,
            destructive=True,
            group="episodes",
        ),
        ToolSpec(
            "task_folder_read",
            task_folder_read,
            "Read task-episodic memory: no task = the task folders; a task = its files; "
            "a task and path = that file's content.",
            (p("task", "string", "a task slug"), p("path", "string", "a file in it")),
            obj({"tasks": shapes.STRS, "files": shapes.STRS, "content": S}),
            idempotent=True,
            group="episodes",
        ),
        ToolSpec(
            "task_verified",
            task_verified,
            "Record items verified in one iteration of a task (regression tracking); "
            "returns every verified item so far. Without items: only lists them.",
            (
                task,
                p("items", "array", "what was verified", items="string"),
                p("iteration", "integer", "the iteration number", minimum=1),
            ),
            obj(
                {"task": S, "verified": {"type": "array", "items": {"type": "object"}}},
                ["task", "verified"],
            ),
            read_only=False,
            group="episodes",
        ),
        ToolSpec(
            "gate_event",
            gate_event,
            "Append a gate event (review verdict, phase end, ...) to the task's "
            "observability/<task-id>.ndjson; searchable as layer gate.",
            (
                task,
                req("task_id", "string", "the task id, e.g. TASK-7"),
                req(
                    "event",
                    "object",
                    'the event\'s fields, e.g. {"event": "review", "verdict": "rejected"}',
                ),
            ),
            obj(
                {"task": S, "task_id": S, "event": {"type": "object"}}, ["task", "task_id", "event"]
            ),
            read_only=False,
            group="episodes",
        ),
        ToolSpec(
            "task_phase",
            task_phase,
            "Phase events of a task: start (read the task folder, write a session note, "
            "promote facts through Checklist C), end (completion report, NOTES.md to the "
            "phase boundary), complete (durable facts to repo memory).",
            (
                req("event", "string", "the event", enum=("start", "end", "complete")),
                task,
                p("phase", "string", "start/end: the phase, e.g. 2"),
                p("note", "string", "start: the session note"),
                p("report", "string", "end: the phase completion report"),
                p("next_phase", "string", "end: the phase that follows"),
                p("blockers", "array", "end: unresolved blockers", items="string"),
                p("next_steps", "array", "end: next steps", items="string"),
                p(
                    "facts",
                    "array",
                    "start/complete: candidate durable facts, each "
                    '{"text", "citations": [...], "category"?}',
                    items="object",
                ),
            ),
            obj({"event": S, "task": S}, ["event", "task"]),
            read_only=False,
            group="episodes",
        ),
        ToolSpec(
            "scratch_promote",
            scratch_promote,
            "Promote a session scratch file into a task folder (session -> "
            "task-episodic at a phase boundary); the scratch stays until the conversation "
            "ends.",
            (
                req("name", "string", "the scratch file, e.g. notes.md"),
                task,
                p("dest", "string", "file in the task folder it is appended to", "notes.md"),
            ),
            obj({"task": S, "where": S}, ["task", "where"]),
            read_only=False,
            group="episodes",
        ),
        ToolSpec(
            "memory_promote",
            memory_promote,
            "Promote a durable fact to repo-persistent memory through Checklist C (cited, "
            "classified, 1-2 sentences, not excluded, standalone, new). Create-only. "
            "Returns every check; dry_run only checks.",
            (
                req("text", "string", "the fact, 1-2 sentences"),
                req("citations", "array", "where it comes from (file, doc, task)", items="string"),
                p(
                    "category",
                    "string",
                    "taxonomy category (default: by rule)",
                    enum=DURABLE_CATEGORIES,
                ),
                p("key", "string", "the fact's key (default: made from the text)"),
                p("dry_run", "boolean", "only run Checklist C", False),
            ),
            obj({"checklist": {"type": "object"}, "fact": {"type": "object"}}, ["checklist"]),
            read_only=False,
            group="episodes",
        ),
        ToolSpec(
            "memory_audit",
            memory_audit,
            "Checklist D: find memory pollution (near-duplicate facts, stale or excluded "
            "entries, an oversized LOG); changes nothing.",
            (),
            findings,
            idempotent=True,
            group="episodes",
        ),
        ToolSpec(
            "memory_verify",
            memory_verify,
            "Verify before use: check the file, line and symbol claims in your facts and "
            "memory files against a codebase folder on this host.",
            (req("root", "string", "the codebase folder"),),
            findings,
            idempotent=True,
            group="episodes",
        ),
    ]
