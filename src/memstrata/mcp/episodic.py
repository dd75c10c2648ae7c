"""MCP tools for seed 001's task-episodic memory and promotion, and seed 000's rooms.

Seed 001 names operations, not tools; these give each one a tool so an agent
reaches them over MCP as it reaches the seed 002/003 tools:

    task_folder_create / task_folder_write / task_folder_read   plans/artifacts/<task-slug>/
    task_verified                                                verified items per iteration
    gate_event                                                   observability/<task-id>.ndjson
    memory_promote                                               Checklist C, then a durable fact
    memory_audit / memory_verify                                 Checklist D, verify before use
    room_close / room_upstream                                   seed 000: room end, the DAG
    room_channel / room_artifact                                 seed 000 layers 1 and 2
    task_phase / scratch_promote                                 seed 001 phase events, promotion
    skill_handoff                                                seed 004: admins hand a skill
                                                                 its context (listed for admins)

Like every tool they translate and never decide: scope, bounds and the
checklists are the library's (`layers.episodes`, `lifecycle.phases`,
`lifecycle.hygiene`, `lifecycle.verify`, `layers.rooms`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memstrata.mcp import shapes
from memstrata.mcp.schema import REQUIRED, Param
from memstrata.mcp.shapes import Reply

if TYPE_CHECKING:
    from memstrata.mcp.tools import ToolSpec
    from memstrata.store.view import Store


def _p(name: str, typ: str, description: str, default: Any = None, **kw: Any) -> Param:
    return Param(name, typ, description, default, **kw)


def _req(name: str, typ: str, description: str, **kw: Any) -> Param:
    return Param(name, typ, description, REQUIRED, **kw)


def build_episodic_tools(store: Store, agent: Any) -> list[ToolSpec]:
    """The tools; `agent` is the caller's `AgentMemory` handle (resolved on first use)."""
    from memstrata.layers.rooms import MESSAGE_TYPES
    from memstrata.mcp.tools import ToolSpec
    from memstrata.model import DURABLE_CATEGORIES

    S, obj = shapes.S, shapes._obj
    task = _req("task", "string", "the task's slug, as task_folder_create returned it")

    def task_folder_create(title: str) -> Reply:
        slug = agent.episodes.create(title)
        return Reply(f"task folder {slug}", {"task": slug, "files": agent.episodes.files(slug)})

    def task_folder_write(task: str, path: str, content: str, append: bool) -> Reply:
        eps = agent.episodes
        where = eps.append(task, path, content) if append else eps.write(task, path, content)
        return Reply(
            f"{'appended to' if append else 'wrote'} {where}",
            {"task": task, "path": path, "where": where},
        )

    def task_folder_read(task: str | None, path: str | None) -> Reply:
        if not task:
            tasks = agent.episodes.list()
            return Reply("\n".join(tasks) or "(no task folders)", {"tasks": tasks})
        if not path:
            files = agent.episodes.files(task)
            return Reply("\n".join(files) or "(empty task folder)", {"task": task, "files": files})
        text = agent.episodes.read(task, path)
        return Reply(text, {"task": task, "path": path, "content": text})

    def task_verified(task: str, items: list[str] | None, iteration: int | None) -> Reply:
        if items:
            agent.episodes.add_verified(task, items, iteration=iteration)
        got = [
            {"iteration": i, "item": text} if i is not None else {"item": text}
            for i, text in agent.episodes.verified(task)
        ]
        return Reply(
            "\n".join(f"[{v.get('iteration', '-')}] {v['item']}" for v in got)
            or "(no verified items)",
            {"task": task, "verified": got},
        )

    def gate_event(task: str, task_id: str, event: dict[str, Any]) -> Reply:
        rec = agent.episodes.log_gate_event(task, task_id, event)
        return Reply(
            f"gate event recorded for {task_id}", {"task": task, "task_id": task_id, "event": rec}
        )

    def memory_promote(
        text: str, citations: list[str], category: str | None, key: str | None, dry_run: bool
    ) -> Reply:
        from memstrata.lifecycle.promotion import checklist_c, promote_fact

        who = agent.name
        verdict = checklist_c(store, who, text, citations, category)
        data: dict[str, Any] = {"checklist": verdict.to_dict()}
        if not verdict.passed or dry_run:
            why = verdict.failed.why if verdict.failed else "passes Checklist C (dry run)"
            return Reply(why, data)
        fact = promote_fact(store, who, verdict.text, verdict.category, citations, key=key)
        data["fact"] = shapes.compact(
            {
                "key": fact.key,
                "value": fact.value,
                "category": fact.category,
                "citations": list(fact.citations),
            }
        )
        return Reply(f"promoted {fact.key} ({fact.category})", data)

    def memory_audit() -> Reply:
        from memstrata.lifecycle.hygiene import audit

        report = audit(store, agent.name)
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

    def memory_verify(root: str) -> Reply:
        from memstrata.lifecycle.verify import verify_citations

        found = [
            shapes.compact(
                {"source": f.source, "ref": f.ref, "problem": f.problem, "detail": f.detail}
            )
            for f in verify_citations(store, agent.name, root)
        ]
        return Reply(
            "\n".join(f"{f['source']}: {f['ref']} {f['problem']}" for f in found)
            or "every claim still holds",
            {"findings": found},
        )

    def room_fields(info: Any) -> dict[str, Any]:  # an open room: no "closed", not null
        return {k: v for k, v in info.to_dict().items() if v is not None}

    def room_close(room: str | None) -> Reply:
        info = store.room(room).close()
        return Reply(f"room {info.name} closed at {info.closed}", room_fields(info))

    def room_upstream(room: str | None, upstream: list[str] | None) -> Reply:
        r = store.room(room)
        info = r.set_upstream(upstream) if upstream is not None else r.info()
        return Reply(
            f"room {info.name} follows {', '.join(info.upstream) or 'no room'}",
            {**room_fields(info), "ancestors": r.ancestors()},
        )

    def room_channel(
        action: str,
        room: str | None,
        content: str | None,
        type: str,
        to: str | None,
        ref: str | None,
        tags: list[str] | None,
        last_n: int | None,
    ) -> Reply:
        r = store.room(room)
        if action == "post":
            if content is None:
                from memstrata.errors import MalformedInput

                raise MalformedInput("room_channel post needs content")
            rec = r.post(content, type=type, to=to, ref=ref, tags=tags)
            return Reply(f"posted {rec['id']} to {r.name}", {"room": r.name, "messages": [rec]})
        msgs = r.messages(last_n)
        text = "\n".join(
            f"[{m.get('ts', '')[:16]}] {m.get('from') or '-'} ({m.get('type')}): {m.get('content')}"
            for m in msgs
        )
        return Reply(text or "(no messages)", {"room": r.name, "messages": msgs})

    def room_artifact(
        action: str, room: str | None, path: str | None, content: str | None
    ) -> Reply:
        from memstrata.errors import MalformedInput

        r = store.room(room)
        if action == "list":
            paths = r.artifacts()
            return Reply("\n".join(paths) or "(no artifacts)", {"room": r.name, "artifacts": paths})
        if not path:
            raise MalformedInput(f"room_artifact {action} needs a path")
        if action == "read":
            text = r.read_artifact(path)
            return Reply(text, {"room": r.name, "path": path, "content": text})
        if content is None:
            raise MalformedInput("room_artifact write needs content")
        rel = r.write_artifact(path, content)
        return Reply(f"wrote {rel} in {r.name}/artifacts", {"room": r.name, "path": rel})

    def task_phase(
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
        from memstrata.errors import MalformedInput
        from memstrata.lifecycle.phases import phase_end, phase_start, task_complete

        who = agent.name
        if event in ("start", "end") and not phase:
            raise MalformedInput(f"task_phase {event} needs a phase")
        if event == "start":
            got = phase_start(store, who, task, phase or "", note=note or "", facts=facts or [])
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
                store,
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
        promoted, refused = task_complete(store, who, task, facts or [])
        return Reply(
            f"task {task} complete: {len(promoted)} durable fact(s) promoted, "
            f"{len(refused)} refused",
            {
                "event": event,
                "task": task,
                "promoted": [f.key for f in promoted],
                "refused": [v.to_dict() for v in refused],
            },
        )

    def scratch_promote(name: str, task: str, dest: str) -> Reply:
        from memstrata.lifecycle.promotion import promote_scratch

        where = promote_scratch(store, agent.name, name, task, dest)
        return Reply(f"session/{name} promoted to {where}", {"task": task, "where": where})

    def skill_handoff(
        skill: str, action: str, brief: str | None, memory_snippet: str | None, project_context: str
    ) -> Reply:
        from memstrata.operations.envelope import hand_off

        env = hand_off(
            store,
            skill,
            action,
            brief=brief,
            memory_snippet=memory_snippet,
            project_context=project_context,
        )
        return Reply(env.to_json(), env.to_dict())

    findings = obj({"findings": {"type": "array", "items": {"type": "object"}}}, ["findings"])
    room_out = obj({"name": S, "upstream": shapes.STRS}, ["name", "upstream"])
    room = _p("room", "string", "the room (default: yours)")
    return [
        ToolSpec(
            "task_folder_create",
            task_folder_create,
            "Create (or reuse) the task-episodic folder for a task; its slug is the title "
            "in kebab-case. Returns the slug and the files already in it.",
            (_req("title", "string", 'the task\'s title, e.g. "Add OAuth login"'),),
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
                _req("path", "string", "file inside the task folder, e.g. plan.md"),
                _req("content", "string", "the text"),
                _p("append", "boolean", "append instead of replacing", False),
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
            (_p("task", "string", "a task slug"), _p("path", "string", "a file in it")),
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
                _p("items", "array", "what was verified", items="string"),
                _p("iteration", "integer", "the iteration number", minimum=1),
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
                _req("task_id", "string", "the task id, e.g. TASK-7"),
                _req(
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
            "Seed 001's phase events: start (read the task folder, write a session note, "
            "promote facts through Checklist C), end (completion report, NOTES.md to the "
            "phase boundary), complete (durable facts to repo memory).",
            (
                _req("event", "string", "the event", enum=("start", "end", "complete")),
                task,
                _p("phase", "string", "start/end: the phase, e.g. 2"),
                _p("note", "string", "start: the session note"),
                _p("report", "string", "end: the phase completion report"),
                _p("next_phase", "string", "end: the phase that follows"),
                _p("blockers", "array", "end: unresolved blockers", items="string"),
                _p("next_steps", "array", "end: next steps", items="string"),
                _p(
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
            "Promote a session scratch file into a task folder (seed 001: session -> "
            "task-episodic at a phase boundary); the scratch stays until the conversation "
            "ends.",
            (
                _req("name", "string", "the scratch file, e.g. notes.md"),
                task,
                _p("dest", "string", "file in the task folder it is appended to", "notes.md"),
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
                _req("text", "string", "the fact, 1-2 sentences"),
                _req("citations", "array", "where it comes from (file, doc, task)", items="string"),
                _p(
                    "category",
                    "string",
                    "taxonomy category (default: by rule)",
                    enum=DURABLE_CATEGORIES,
                ),
                _p("key", "string", "the fact's key (default: made from the text)"),
                _p("dry_run", "boolean", "only run Checklist C", False),
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
            (_req("root", "string", "the codebase folder"),),
            findings,
            idempotent=True,
            group="episodes",
        ),
        ToolSpec(
            "room_channel",
            room_channel,
            "Your room's channel (seed 000 layer 1): post a message, or read the messages "
            "(only agents in the room may).",
            (
                _req("action", "string", "post or read", enum=("post", "read")),
                room,
                _p("content", "string", "post: the message"),
                _p("type", "string", "post: message type", "message", enum=MESSAGE_TYPES),
                _p("to", "string", "post: the agent it is for"),
                _p("ref", "string", "post: a task, file or entry it refers to"),
                _p("tags", "array", "post: tags", items="string"),
                _p("last_n", "integer", "read: only the last N", minimum=1),
            ),
            obj(
                {"room": S, "messages": {"type": "array", "items": {"type": "object"}}},
                ["room", "messages"],
            ),
            read_only=False,
            group="rooms",
        ),
        ToolSpec(
            "room_artifact",
            room_artifact,
            "A room's artifacts (seed 000 layer 2): write one in your room, read or list "
            "any room's.",
            (
                _req("action", "string", "write, read or list", enum=("write", "read", "list")),
                room,
                _p("path", "string", "write/read: file inside artifacts/"),
                _p("content", "string", "write: the file's content"),
            ),
            obj({"room": S, "path": S, "content": S, "artifacts": shapes.STRS}, ["room"]),
            read_only=False,
            destructive=True,
            group="rooms",
        ),
        ToolSpec(
            "room_close",
            room_close,
            "Close a room: its channel and artifacts stay readable, nothing new is "
            "written to them or published from it.",
            (room,),
            room_out,
            read_only=False,
            idempotent=True,
            group="rooms",
        ),
        ToolSpec(
            "room_upstream",
            room_upstream,
            "Read or declare the rooms a room follows in the DAG (predecessor context "
            "comes from them); a cycle is refused.",
            (room, _p("upstream", "array", "the upstream rooms (omit to read)", items="string")),
            room_out,
            read_only=False,
            idempotent=True,
            group="rooms",
        ),
        ToolSpec(
            "skill_handoff",
            skill_handoff,
            "Admins: the request envelope that hands a skill agent its context (seed 004: "
            "memory_snippet chosen from your memory for the brief, project_context); the "
            "skill reads that and nothing else.",
            (
                _req("skill", "string", "the skill agent"),
                _req("action", "string", "what it is asked to do, e.g. analyze"),
                _p("brief", "string", "what the task is about (picks the snippet)"),
                _p("memory_snippet", "string", "the snippet as is (default: from your memory)"),
                _p("project_context", "string", "the project context to pass", ""),
            ),
            obj(
                {"from": S, "to": S, "type": S, "payload": {"type": "object"}},
                ["from", "to", "type", "payload"],
            ),
            idempotent=True,
            group="admin",
        ),
    ]
