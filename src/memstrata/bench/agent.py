"""`memstrata bench agent`: memstrata as an agent's memory over many sessions, judged by
what comes back.

Each scenario (`bench/scenarios/*.json`, see `agent_scenario`) runs in a fresh
project folder with its store at `<project>/.memstrata`, on a virtual clock that
starts at the scenario's date (sessions span days and weeks). A Claude Code
scenario drives the hooks the README installs, fed the JSON Claude Code sends and
real transcript files, plus the MCP tools the agent calls itself; an MCP scenario
drives the MCP server only (`agent_steps` maps each step to its surface). Then:

* at every session start (and after a compaction) the context the agent gets (the
  SessionStart hook's `additionalContext`; for an MCP agent the resource
  `memory://prompt-context`) is checked against the session's gold: coverage of
  the items it must hold, stale items it must not present as current, and the
  share of its characters on tool-trace and bookkeeping lines (`agent_metrics`);
* NOW integrity: at every session start NOW.md holds the objective and next steps
  the agent itself last set (`update_status`), not a hook's "Task complete";
* every question is asked where the script says (in Claude Code the user's prompt
  goes through the prompt hook first, as it would), then `recall_memory` (what the
  agent calls, default `n_results`) and `store.search` (the library, default k)
  are judged: rank of the first answering record, a stale record above it.

The held-out scenario is run and reported apart: it is a check, never a target.
"""

from __future__ import annotations

import shutil
import tempfile
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memstrata.bench import agent_metrics as m
from memstrata.bench.agent_drive import (
    HookRunner,
    McpAgent,
    SeededIds,
    Transcript,
    VirtualClock,
    default_environment,
    parse_when,
    stable_uuid,
)
from memstrata.bench.agent_loop import OWN_STEPS, LoopIO, loop_session
from memstrata.bench.agent_noise import document
from memstrata.bench.agent_replay import snapshot, write_asks
from memstrata.bench.agent_scenario import Scenario, load, scenario_names
from memstrata.bench.agent_steps import (
    SECONDS,
    DecisionTool,
    SessionIO,
    find_decision_tool,
    work,
)
from memstrata.errors import MemstrataError
from memstrata.lifecycle.compaction import compact_log
from memstrata.lifecycle.thresholds import needs_compaction
from memstrata.store.view import Store

HELD_OUT_NOTE = (
    "held-out: a check of generalisation, reported apart; never tune ranking, context "
    "assembly or hooks on it, and do not read its questions while tuning"
)
Progress = Callable[[str], None]
# The store's one non-default setting. LOG compaction is triggered by an append and runs
# in a background thread, racing the appends the same hook call makes next (a failed
# tool's TOOL_USE, then its ERROR): which entries land in the archive would change from
# run to run. The bench runs the same `compact_log` at the end of the step instead.
BENCH_CONFIG = "[log]\nauto_compact = false\n"
# Search is the default install's: hybrid, all-MiniLM-L6-v2 in NumPy. Vectors are built
# after writes, never on the write path: a hook process hands the build to the embedding
# daemon, a server runs it in a thread. The bench, which would race either, builds what the
# step wrote at the step's end (`settle`), and what the prompt hook logged before the
# agent's recall call: what the daemon does in the second after the write.


def run_bench(
    names: list[str] | None = None,
    *,
    sessions: int | None = None,
    held_out: bool = True,
    workdir: Path | None = None,
    progress: Progress | None = None,
    snapshots: bool = False,
) -> dict[str, Any]:
    """Run the scenarios (all of them by default; `sessions` keeps the first N of each).
    With a `workdir`, each project keeps `asks.json` for `bench agent --replay`, and with
    `snapshots` a copy of the store at each dev question (`agent_replay`)."""
    chosen = names or scenario_names()
    scenarios = sorted((load(n) for n in chosen), key=lambda s: s.held_out)  # held-out last
    if not held_out:
        scenarios = [s for s in scenarios if not s.held_out]
    base = workdir or _scratch_root()
    base.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="bench-agent-", dir=base))
    results = []
    try:
        for sc in scenarios:
            if progress:
                progress(f"bench agent: {sc.name}")
            copies = snapshots and not sc.held_out  # the held-out store is never kept for replay
            result = run_scenario(sc, folder / sc.name, sessions=sessions, snapshots=copies)
            results.append(result)
            if workdir is not None and not sc.held_out:
                write_asks(folder / sc.name, sc.name, result["asks"])
    finally:
        if workdir is None:
            shutil.rmtree(folder, ignore_errors=True)
    dev = [r for r in results if not r["held_out"]]
    held = [r for r in results if r["held_out"]]
    return {
        "scenarios": results,
        "dev": pooled(dev) if dev else None,
        "held_out": pooled(held) if held else None,
        "held_out_note": HELD_OUT_NOTE,
        "store": str(folder) if workdir is not None else None,
    }


def _scratch_root() -> Path:
    """tmpfs when there is one: the bench measures what comes back, not fsync."""
    shm = Path("/dev/shm")
    return shm if shm.is_dir() and shm.stat().st_mode & 0o002 else Path(tempfile.gettempdir())


def run_scenario(
    sc: Scenario, project: Path, *, sessions: int | None = None, snapshots: bool = False
) -> dict[str, Any]:
    import anyio

    started = time.perf_counter()
    run = ScenarioRun(sc, project, sessions)
    run.snapshots = snapshots
    with default_environment(), run.clock, SeededIds(zlib.crc32(sc.name.encode("utf-8"))):
        anyio.run(run.run)
    out = run.result()
    out["seconds"] = round(time.perf_counter() - started, 2)
    return out


class ScenarioRun:
    def __init__(self, sc: Scenario, project: Path, sessions: int | None) -> None:
        self.sc = sc
        self.project = project
        self.home = project / ".memstrata"
        # The project as the agent's tools name it (`Read(file_path=...)`): the same on every
        # machine, so the traces' text, and their BM25 lengths, do not depend on where the
        # bench runs. The store, the transcripts and the hooks' cwd are in `project`.
        self.root = str(sc.data.get("root") or f"/home/user/{sc.name.split('-', 1)[-1]}")
        self.sessions = sc.sessions[:sessions] if sessions else sc.sessions
        self.clock = VirtualClock(parse_when(sc.data["start"]))
        self.refs: dict[str, tuple[str, dict[str, Any]]] = {}  # step id/ref -> (id, data)
        self.last_now: dict[str, tuple[str, list[str]]] = {}
        self.checkpoints: list[dict[str, Any]] = []
        self.asks: list[dict[str, Any]] = []
        self.turns: dict[str, list[dict[str, Any]]] = {"continue": [], "ignore": []}
        self.problems: list[str] = []
        self.surfaces: dict[str, str] = {}
        self.counts = {"steps": 0, "tool_calls": 0, "mcp_calls": 0, "hook_calls": 0}
        self.hooks: dict[str, HookRunner] = {}
        self.keeper: Any = None
        self.snapshots = False  # a copy of the store at each question (`agent_replay`)

    async def run(self) -> None:

        self.home.mkdir(parents=True, exist_ok=True)
        (self.home / "config.toml").write_text(BENCH_CONFIG, encoding="utf-8")
        self.keeper = Store(self.home, watch=False)  # the bench's own upkeep process
        try:
            for session in self.sessions:
                await self.session(session)
        finally:
            self.keeper.close()
        for hooks in self.hooks.values():
            self.problems += hooks.errors
            self.counts["hook_calls"] += hooks.calls

    async def session(self, session: dict[str, Any]) -> None:
        sc = self.sc
        agent = sc.agent_of(session)
        conf = sc.data["agents"][agent]
        day, at = int(session["day"]), str(session.get("at", "09:00"))
        hh, mm = (int(x) for x in at.split(":"))
        self.clock.set(parse_when(sc.data["start"]) + day * 86400 + hh * 3600 + mm * 60)
        if sc.surface == "python":
            await loop_session(self, session)
            return
        claude = sc.surface == "claude-code"
        async with McpAgent(
            self.home, agent, conf.get("tools", ["default"]), conf.get("room")
        ) as mcp:
            decision_tool, how = find_decision_tool(mcp.listed)
            hidden = [n for n in mcp.unlisted if "decision" in n.lower()]
            if decision_tool is None and hidden:
                how += f" ({', '.join(hidden)} exists but this scenario's --tools does not list it)"
            self.surfaces.setdefault("decision", how)
            io = SessionIO(mcp, agent, f"{sc.name}-{session['id']}")
            io.transcripts = conf.get("transcripts", "hooks" if claude else "none")
            io.clock = self.clock
            if claude:
                sid = stable_uuid(sc.name, session["id"])
                slug = "-" + str(self.project).strip("/").replace("/", "-")
                path = self.project.parent / ".claude" / "projects" / slug / f"{sid}.jsonl"
                io.transcript = Transcript(path, sid, self.project, self.clock)
                io.hooks = self.hooks.setdefault(agent, HookRunner(self.home, agent, self.project))
                out = io.fire("session-start", "SessionStart", source="startup", model="sonnet")
                text = _context_of(out)
            else:
                text = await mcp.read("memory://prompt-context")
            self.checkpoint(session["id"], session, text, session.get("context", {}), agent)
            self.settle()
            for step in session["steps"]:
                await self.step(io, session, step, decision_tool)
                self.counts["steps"] += 1
                self.settle()
            self.counts["mcp_calls"] += mcp.calls
            self.problems += io.problems

    def settle(self) -> None:
        """The end of a step: LOG compaction where a LOG.md is over its limit (what the
        append trigger runs in a background thread, run here, see `BENCH_CONFIG`), the
        files the step wrote dated by the virtual clock, and the index caught up with
        those dates at once, as the next process that opens the store would (a running
        server's watcher notices them only after its settle time: machine speed)."""

        keeper = self.keeper
        assert keeper is not None
        for agent in self.sc.data["agents"]:
            if keeper.has_agent(agent) and needs_compaction(keeper, agent):
                compact_log(keeper, agent)
        if self.clock.stamp_files(self.home):
            keeper.sync()
        self.embed()

    def embed(self) -> None:
        """Vectors of what was written so far (`settle`); nothing when semantic recall is off."""
        keeper = self.keeper
        if keeper is not None and keeper.semantic.active():
            keeper.vectors(keeper.embedder()).build(wait=True)

    async def step(
        self,
        io: SessionIO | LoopIO,
        session: dict[str, Any],
        step: dict[str, Any],
        tool: DecisionTool | None,
    ) -> None:
        do = step["do"]
        self.clock.advance(SECONDS.get(do, 10))
        if do in OWN_STEPS:  # what the python loop does its own way (`agent_loop`)
            if isinstance(io, LoopIO):
                await io.own(self, session, step)
            else:
                await self.session_step(io, session, step)
        elif do == "tool":
            text = step.get("output") or step.get("stdout") or ""
            if "document" in step:
                text = document(step["document"], text)
            response = step.get("response") or (
                {"stdout": text, "stderr": "", "interrupted": False, "isImage": False}
                if step["name"] == "Bash"
                else text
            )
            log = step.get("log") if isinstance(step.get("log"), str) else None
            await io.tool(
                step["name"], step.get("input", {}), text, response, fail=step.get("fail"), log=log
            )
            self.counts["tool_calls"] += 1
        elif do == "now":
            await io.call(
                "update_status", {"new_status": step["status"], "next_steps": step.get("next", [])}
            )
            self.last_now[io.agent] = (step["status"], list(step.get("next", [])))
        elif do == "decide":
            await self.decide(io, step, tool)
        elif do == "fact":
            args = {
                "key": step["key"],
                "value": step["value"],
                "category": step.get("category", "general"),
            }
            if step.get("citations"):
                args["citations"] = step["citations"]
            await io.call("save_fact", args)
        elif do == "log":
            await io.call(
                "log_activity", {"entry_type": step.get("type", "THOUGHT"), "content": step["text"]}
            )
        elif do == "context":
            path = step.get("path", "CONTEXT.md")
            if "write" in step:
                await io.call("memory_write", {"path": path, "content": step["write"]})
            else:
                args = {"path": path, "old_str": step["old"], "new_str": step["new"]}
                await io.call("memory_replace", args)
        elif do == "task":
            await self.task(io, step)
        elif do == "recall":
            await io.call("recall_memory", {"query": step["query"]})

    async def session_step(
        self, io: SessionIO, session: dict[str, Any], step: dict[str, Any]
    ) -> None:
        """The steps of a Claude Code or MCP session that a python loop does its own way."""
        do = step["do"]
        if do == "prompt":
            await self.prompt(io, step["text"], step.get("expect"))
        elif do == "reply":
            if io.transcript is not None:
                io.transcript.assistant_text(step["text"])
                io.fire("stop", "Stop", stop_hook_active=False, last_assistant_message=step["text"])
            else:
                await io.said("assistant", step["text"])
        elif do == "work":
            n = await work(io, step, self.sc.data.get("files", {}), self.root)
            self.counts["tool_calls"] += n
        elif do == "compact":
            await self.compact(io, session, step)
        elif do == "publish":
            await self.publish(io, step)
        elif do == "ledger":
            await self.ledger(io, step)
        elif do == "ask":
            await self.ask(io, session, self.sc.questions[step["id"]])

    async def prompt(self, io: SessionIO, text: str, expect: str | None) -> None:
        if io.transcript is not None:
            io.transcript.user(text)
            out = io.fire("user-prompt-submit", "UserPromptSubmit", prompt=text)
            injected = _context_of(out) if out else None
        else:
            await io.said("user", text)
            # An MCP agent rereads its context when the user says "continue" (the AgentOS
            # planner prompt); on "ignore memory" its harness reads none.
            injected = (
                await io.mcp.read("memory://prompt-context") if expect == "continue" else None
            )
        now = self.last_now.get(io.agent)
        if expect == "ignore" and io.transcript is not None:
            self.turns["ignore"].append({"prompt": text, "ok": injected is None})
        elif expect == "continue" and now is not None:
            ok = injected is not None and m.has(injected, now[0])
            self.turns["continue"].append({"prompt": text, "ok": ok, "now": now[0]})

    async def decide(
        self, io: SessionIO | LoopIO, step: dict[str, Any], tool: DecisionTool | None
    ) -> None:
        kind = step.get("kind", "decision")
        replaced = self.refs.get(step["replaces"], ("", {}))[0] if step.get("replaces") else None
        args = tool.args(step["text"], step.get("why"), replaced, kind) if tool else None
        if tool is not None and args is not None:
            _, data = await io.call(tool.name, args)
        else:
            label = "Constraint" if kind == "constraint" else "Decision"
            why = f" Why: {step['why']}" if step.get("why") else ""
            content = f"{label}: {step['text']}{why}"
            _, data = await io.call("log_activity", {"entry_type": "THOUGHT", "content": content})
        self.refs[step["id"]] = (_id_in(data), data)

    async def task(self, io: SessionIO | LoopIO, step: dict[str, Any]) -> None:
        if "add" in step:
            args = {"description": step["add"], "priority": step.get("priority", 3)}
            _, data = await io.call("task_add", args)
            self.refs[step["ref"]] = (str(data.get("task", {}).get("id", "")), data)
        else:
            task_id = self.refs[step["ref"]][0]
            await io.call("task_update", {"task_id": task_id, "status": step["status"]})

    async def compact(self, io: SessionIO, session: dict[str, Any], step: dict[str, Any]) -> None:
        if io.transcript is None:
            return
        io.fire("pre-compact", "PreCompact", trigger="auto", custom_instructions="")
        io.transcript.compact(step["summary"], pre_tokens=int(step.get("tokens", 160_000)))
        out = io.fire("session-start", "SessionStart", source="compact", model="sonnet")
        gold = step.get("context", {})
        self.checkpoint(f"{session['id']}+compact", session, _context_of(out), gold, io.agent)

    async def publish(self, io: SessionIO, step: dict[str, Any]) -> None:
        args: dict[str, Any] = {"kind": step["kind"], "summary": step["summary"]}
        for key in ("tags", "detail"):
            if step.get(key):
                args[key] = step[key]
        if step.get("supersedes"):
            args["supersedes"] = self.refs[step["supersedes"]][0]
        _, data = await io.call("memory_publish", args)
        self.refs[step["ref"]] = (str(data.get("entry", {}).get("id", "")), data)

    async def ledger(self, io: SessionIO, step: dict[str, Any]) -> None:
        if "search" in step:
            await io.call("memory_search", {"text": step["search"]})
        elif "get_context" in step:
            await io.call("memory_get_context", {"brief_keywords": step["get_context"]})
        else:
            await io.call("memory_query", dict(step.get("query", {})))

    async def ask(self, io: SessionIO | LoopIO, session: dict[str, Any], q: dict[str, Any]) -> None:

        query = q.get("query", q["q"])
        if io.transcript is not None:
            await self.prompt(io, q["q"], None)
            self.embed()
        _, data = await io.call("recall_memory", {"query": query})
        hits = data.get("results", [])
        room = self.sc.data["agents"][io.agent].get("room")
        if self.snapshots:
            snapshot(self.home, self.project, q["id"])
        with Store(self.home, agent=io.agent, room=room, audit=False) as store:
            if self.keeper is not None and self.keeper.semantic.active():
                store.use_embedder(self.keeper.embedder())  # the model, loaded once
            mcp_records = [_record(store, h["uid"], h) for h in hits]
            lib_records = [_as_record(h) for h in store.search(query)]
        answers, stale = q["answers"], q.get("stale", [])
        self.asks.append(
            {
                "id": q["id"],
                "q": q["q"],
                "query": query,
                "session": session["id"],
                "agent": io.agent,
                "room": room,
                "at": self.clock.now,  # the virtual time it was asked (replays use it)
                "about": q.get("about"),
                "answers": q["answers"],
                "stale": q.get("stale", []),
                "mcp": _judged(mcp_records, answers, stale),
                "lib": _judged(lib_records, answers, stale),
            }
        )

    def checkpoint(
        self, label: str, session: dict[str, Any], text: str, gold: dict[str, Any], agent: str
    ) -> None:

        items = [
            {**item, "covered": all(m.has(text, p) for p in item["phrases"])}
            for item in gold.get("must", [])
        ]
        must_not = [{"phrase": p, "present": m.has(text, p)} for p in gold.get("must_not", [])]
        n = m.noise(text)
        now = None
        if agent in self.last_now:
            status, steps = self.last_now[agent]
            with Store(self.home, agent=agent, audit=False) as store:
                state = store.agent(agent).now.state()
            ok = m.fold(state.objective) == m.fold(status) and [
                m.fold(s) for s in state.next_steps
            ] == [m.fold(s) for s in steps]
            now = {"ok": ok, "expected": status, "found": state.objective}
        self.checkpoints.append(
            {
                "label": label,
                "agent": agent,
                "chars": n.chars,
                "trace_chars": n.trace,
                "bookkeeping_chars": n.bookkeeping,
                "items": items,
                "must_not": must_not,
                "now": now,
                "text": text,
            }
        )

    def result(self) -> dict[str, Any]:
        out = {
            "name": self.sc.name,
            "title": self.sc.data.get("title", ""),
            "held_out": self.sc.held_out,
            "surface": self.sc.surface,
            "sessions_run": len(self.sessions),
            "counts": self.counts,
            "surfaces": self.surfaces,
            "problems": self.problems,
            "checkpoints": self.checkpoints,
            "asks": self.asks,
            "turns": self.turns,
        }
        out["metrics"] = metrics([out])
        return out


def _context_of(out: dict[str, Any] | None) -> str:
    spec = (out or {}).get("hookSpecificOutput", {})
    return str(spec.get("additionalContext", "")) if isinstance(spec, dict) else ""


def _id_in(data: dict[str, Any]) -> str:
    """The id a write tool returned (a log entry, a decision, a ledger entry)."""
    for key in ("id", "uid"):
        if isinstance(data.get(key), str):
            return str(data[key])
    for inner in data.values():
        if isinstance(inner, dict):
            found = _id_in(inner)
            if found:
                return found
    return ""


def _record(store: Any, uid: str, hit: dict[str, Any]) -> m.Record:
    """A recall hit as a record with its full text (the hit shows a snippet only)."""

    try:
        h = store.get(uid)
    except MemstrataError:
        return m.Record(
            uid, str(hit.get("layer")), f"{hit.get('title', '')} {hit.get('snippet', '')}"
        )
    return _as_record(h)


def _as_record(h: Any) -> m.Record:
    """A hit's whole record: its title (a ledger entry's summary, a heading) and its text."""
    return m.Record(h.uid, h.layer, f"{h.title}\n{h.text}".strip(), h.superseded)


def _judged(records: list[m.Record], answers: list[str], stale: list[str]) -> dict[str, Any]:
    return {
        "rank": m.first_answer(records, answers),
        "stale_above": m.stale_above(records, answers, stale),
        "results": [
            {"uid": r.uid, "layer": r.layer, "text": " ".join(r.text.split())[:240]}
            for r in records
        ],
    }


def metrics(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The figures of one scenario's result, or pooled over several (sums over sums)."""
    cps = [c for r in results for c in r["checkpoints"]]
    asks = [a for r in results for a in r["asks"]]
    items = [i for c in cps for i in c["items"]]
    by_what: dict[str, list[int]] = {}
    for i in items:
        row = by_what.setdefault(i["what"], [0, 0])
        row[0] += int(i["covered"])
        row[1] += 1
    nows = [c["now"] for c in cps if c["now"] is not None]
    turns = {k: [t for r in results for t in r["turns"][k]] for k in ("continue", "ignore")}
    chars = sum(c["chars"] for c in cps)

    def at(surface: str, k: int) -> float | None:
        return m.share(sum(1 for a in asks if (a[surface]["rank"] or 99) <= k), len(asks))

    return {
        "context_checkpoints": len(cps),
        "context_coverage": m.share(sum(int(i["covered"]) for i in items), len(items)),
        "context_items": len(items),
        "coverage_by_what": {k: f"{v[0]}/{v[1]}" for k, v in sorted(by_what.items())},
        "context_stale_shown": sum(int(x["present"]) for c in cps for x in c["must_not"]),
        "context_stale_checks": sum(len(c["must_not"]) for c in cps),
        "noise_share": m.share(sum(c["trace_chars"] + c["bookkeeping_chars"] for c in cps), chars),
        "context_chars_mean": round(chars / len(cps)) if cps else None,
        "questions": len(asks),
        "recall_at_1": at("mcp", 1),
        "recall_at_3": at("mcp", 3),
        "search_at_1": at("lib", 1),
        "search_at_3": at("lib", 3),
        "stale_questions": sum(1 for a in asks if a["stale"]),
        "stale_above_recall": sum(int(a["mcp"]["stale_above"]) for a in asks),
        "stale_above_search": sum(int(a["lib"]["stale_above"]) for a in asks),
        "now_integrity": m.share(sum(int(n["ok"]) for n in nows), len(nows)),
        "now_checks": len(nows),
        "continue_ok": m.share(
            sum(int(t["ok"]) for t in turns["continue"]), len(turns["continue"])
        ),
        "ignore_ok": m.share(sum(int(t["ok"]) for t in turns["ignore"]), len(turns["ignore"])),
        "problems": sum(len(r["problems"]) for r in results),
    }


def pooled(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Pooled figures over several scenario results (their checkpoints and asks)."""
    return {**metrics(results), "scenarios": [r["name"] for r in results]}
