"""The `python` surface of `bench agent`: an agent built on the Python API, in its own loop.

A builder's own agent loop (OpenAI-Agents or LangGraph style: the model's tools are
`shell`, `read_file`, `apply_patch`, `web_search`, plus memory tools the builder wrote
over `MemoryManager`), wired as docs/python-api.md says, no hooks, no MCP:

    step        what the loop calls
    (session)   `MemoryManager(agent, home, room=...)`, one process per session; with
                `transcripts: "session"`, `store.agent().sessions.start(id)` and every
                turn opened with `session_id=` (`sessions.end` at the session's end)
    prompt      the open turn ends; `m.turn(text, session_id=...)` opens (logs the
                intent), `turn.before_llm_call(workspace=root)` is what the model
                gets (the scenario's project folder, not the bench's cwd): the first
                prompt's is the session-start context, a "continue" turn's must hold NOW,
                an "ignore memory" turn's none
    tool        `turn.tool_executed(name, input, output, error=fail)`
    memory      the tools the model calls, each one documented call, and logged with
                `turn.tool_executed` like every tool: update_status -> `m.update_now`,
                save_fact -> `m.save_fact`, log_activity -> `m.append_log`,
                record_decision -> `m.record_decision(text, kind, replaces=, detail=)`,
                recall_memory -> `m.recall_memory`, task_add / task_update ->
                `store.agent().tasks.add / .update`, memory_write / memory_replace ->
                `store.agent().context` (CONTEXT.md) or `.files`
    reply       `turn.final_response(text)`; the turn ends (`AgentLoop` then sets NOW to
                "Task complete: <prompt>" unless the agent set NOW in the turn)
    compact     the loop's own history is summarised: `m.compact_log(summary)` (the
                manual LOG compaction), then the next LLM call's context is checked
    ask         the user's question opens a turn, then the model calls recall_memory

`work`, `publish` and `ledger` have no meaning here (`check_gold` says so).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from memstrata.bench import agent_metrics as m
from memstrata.bench.agent_steps import DecisionTool
from memstrata.errors import MemstrataError
from memstrata.operations.manager import MemoryManager

if TYPE_CHECKING:
    from memstrata.bench.agent_drive import VirtualClock
    from memstrata.operations.loop import Turn

CONTEXT_FILE = "CONTEXT.md"
TOOL_SECONDS = 15
# `MemoryManager.record_decision(text, kind, replaces=, detail=)`, as the bench's decide maps it
DECISION_TOOL = DecisionTool(
    "record_decision",
    "text",
    "replaces",
    "detail",
    "kind",
    ("decision", "constraint", "preference"),
)
DECISION_HOW = "MemoryManager.record_decision (the Python API's one-call decision)"
OWN_STEPS = frozenset({"prompt", "reply", "compact", "ask", "work", "publish", "ledger"})


class LoopIO:
    """One session of the builder's loop over one `MemoryManager`."""

    transcript = None  # no Claude Code transcript: the loop keeps its own (`sessions`)

    def __init__(
        self,
        manager: MemoryManager,
        agent: str,
        session_name: str,
        clock: VirtualClock,
        workspace: str | None = None,
    ) -> None:
        self.m = manager
        self.workspace = workspace  # the project's folder, as the builder's loop runs in it
        self.agent = agent
        self.session_name = session_name
        self.clock = clock
        self.session_id: str | None = None
        self.turn: Turn | None = None
        self.problems: list[str] = []
        self.calls = 0  # memory tools the model called
        self.checkpoint_due = True  # the first LLM call's context is the session start's

    # -- the session -----------------------------------------------------------
    def start(self, keep_transcript: bool) -> None:
        if keep_transcript:
            self.session_id = self.m.store.agent().sessions.start(self.session_name).id

    def end(self) -> None:
        self.end_turn()
        if self.session_id is not None:
            self.m.store.agent().sessions.end(self.session_id)

    def open_turn(self, text: str) -> str:
        """A user message: the open turn ends, a new one opens; what the model is given."""
        self.end_turn()
        turn = self.m.turn(text, session_id=self.session_id)
        self.turn = turn.__enter__()
        return self.turn.before_llm_call(workspace=self.workspace)

    def end_turn(self) -> None:
        if self.turn is not None:
            turn, self.turn = self.turn, None
            turn.__exit__(None, None, None)

    def context(self) -> str:
        """What the model is given now: the open turn's next LLM call, else a fresh read."""
        if self.turn is not None:
            return self.turn.before_llm_call(workspace=self.workspace)
        return self.m.format_context_for_prompt(workspace=self.workspace)

    # -- the steps the bench's own runner maps (agent.ScenarioRun.step) ---------
    async def call(self, tool: str, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """A memory tool the model calls: its `MemoryManager` call, logged as a tool."""
        self.calls += 1
        try:
            data = self._memory(tool, args)
        except MemstrataError as exc:
            self.problems.append(f"{self.session_name}: {tool}({_short(args)}): {exc}")
            if self.turn is not None:
                self.turn.tool_executed(tool, args, None, error=exc)
            return "", {}
        text = json.dumps(data, ensure_ascii=False)
        if self.turn is not None:
            self.turn.tool_executed(tool, args, text)
        return text, data

    async def tool(
        self,
        name: str,
        tool_input: dict[str, Any],
        text: str,
        response: Any,
        *,
        fail: str | None = None,
        log: str | None = None,
    ) -> None:
        """A tool of the agent's own (shell, read_file, apply_patch, web_search)."""
        self.clock.advance(TOOL_SECONDS)
        if self.turn is None:
            self.problems.append(f"{self.session_name}: {name} ran outside a turn")
        else:
            self.turn.tool_executed(name, tool_input, None if fail else text, error=fail)
        if log:
            await self.call("log_activity", {"entry_type": "TOOL_USE", "content": log})

    def _memory(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        mm = self.m
        me = mm.store.agent()
        if tool == "update_status":
            mm.update_now(args["new_status"], list(args.get("next_steps", [])))
            return {"ok": True}
        if tool == "save_fact":
            category = args.get("category", "general")
            mm.save_fact(args["key"], args["value"], category, citations=args.get("citations"))
            return {"ok": True, "key": args["key"]}
        if tool == "log_activity":
            return {"id": mm.append_log(args["entry_type"], args["content"])}
        if tool == "record_decision":
            kind = args.get("kind", "decision")
            replaces, detail = args.get("replaces"), args.get("detail")
            return {"id": mm.record_decision(args["text"], kind, replaces=replaces, detail=detail)}
        if tool == "recall_memory":
            hits = mm.recall_memory(args["query"], n_results=int(args.get("n_results", 5)))
            return {"results": [{"uid": h.uid, "layer": h.layer, "title": h.title} for h in hits]}
        if tool == "task_add":
            task = me.tasks.add(args["description"], priority=int(args.get("priority", 3)))
            return {"task": {"id": task.id}}
        if tool == "task_update":
            task = me.tasks.update(args["task_id"], status=args["status"])
            return {"task": {"id": task.id, "status": task.status}}
        if tool in ("memory_write", "memory_replace"):
            return self._file(tool, args)
        raise ValueError(f"the python surface has no memory tool {tool!r}")

    def _file(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        me = self.m.store.agent()
        path = args["path"]
        if path == CONTEXT_FILE:
            if tool == "memory_write":
                me.context.write(args["content"])
            else:
                text = me.context.read()
                if args["old_str"] not in text:
                    self.problems.append(
                        f"{self.session_name}: CONTEXT.md has no {args['old_str']!r}"
                    )
                    return {}
                me.context.write(text.replace(args["old_str"], args["new_str"], 1))
        elif tool == "memory_write":
            me.files.write(path, args["content"])
        else:
            me.files.replace(path, args["old_str"], args["new_str"])
        return {"ok": True, "path": path}

    # -- the steps only the loop knows ---------------------------------------
    async def own(self, run: Any, session: dict[str, Any], step: dict[str, Any]) -> None:
        do = step["do"]
        if do == "prompt":
            self.prompt(run, session, step["text"], step.get("expect"))
        elif do == "reply":
            if self.turn is None:
                self.problems.append(f"{self.session_name}: a reply outside a turn")
                return
            self.turn.final_response(step["text"])
            self.end_turn()
        elif do == "compact":
            self.m.compact_log(step["summary"])
            gold = step.get("context", {})
            run.checkpoint(f"{session['id']}+compact", session, self.context(), gold, self.agent)
        elif do == "ask":
            q = run.sc.questions[step["id"]]
            self.prompt(run, session, q["q"], None)
            run.embed()  # what the prompt logged is searchable before the model's recall
            await run.ask(self, session, q)
        else:
            self.problems.append(f"{self.session_name}: step {do!r} has no python-loop mapping")

    def prompt(self, run: Any, session: dict[str, Any], text: str, expect: str | None) -> None:
        injected = self.open_turn(text)
        if self.checkpoint_due:
            self.checkpoint_due = False
            run.checkpoint(session["id"], session, injected, session.get("context", {}), self.agent)
        now = run.last_now.get(self.agent)
        if expect == "ignore":
            shown = "Current status (NOW)" in injected or "Recent activity" in injected
            run.turns["ignore"].append({"prompt": text, "ok": not shown})
        elif expect == "continue" and now is not None:
            run.turns["continue"].append(
                {"prompt": text, "ok": m.has(injected, now[0]), "now": now[0]}
            )


def _short(args: dict[str, Any]) -> str:
    return json.dumps(args, ensure_ascii=False)[:200]


async def loop_session(run: Any, session: dict[str, Any]) -> None:
    """One session of a `python` scenario (`agent.ScenarioRun` calls it): the agent's
    process opens its memory, runs its turns, and closes it."""
    sc = run.sc
    agent = sc.agent_of(session)
    conf = sc.data["agents"][agent]
    run.surfaces.setdefault("decision", DECISION_HOW)
    with MemoryManager(agent, run.home, room=conf.get("room")) as manager:
        io = LoopIO(manager, agent, f"{sc.name}-{session['id']}", run.clock, run.root)
        io.start(conf.get("transcripts", "none") == "session")
        if not session["steps"] or session["steps"][0]["do"] != "prompt":
            io.checkpoint_due = False
            run.checkpoint(session["id"], session, io.context(), session.get("context", {}), agent)
        run.settle()
        for step in session["steps"]:
            await run.step(io, session, step, DECISION_TOOL)
            run.counts["steps"] += 1
            run.settle()
        io.end()
        run.settle()
        run.counts["api_calls"] = run.counts.get("api_calls", 0) + io.calls
        run.problems += io.problems
