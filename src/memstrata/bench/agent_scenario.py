"""`bench agent` scenarios: loading them, and checking their gold against their script.

A scenario is a JSON file in `bench/scenarios/`: a project, its agents, 8-15
sessions of abstract steps (a user prompt, a tool call and its result, the agent
setting NOW, recording a decision, saving a fact, writing CONTEXT.md, a final
response, a compaction, a question...), and the gold, written with the script:

* per session, `context.must`: what the context at that session's start must hold
  (each item one or more phrases, all of which must appear), and
  `context.must_not`: phrases it must not present as current (reversed decisions,
  "Task complete" claims for open work);
* `questions`: 20+ questions an agent would ask, each with the phrases of the
  records that answer it and, for a reversed decision, the stale phrase that must
  not rank above the answer. A step `{"do": "ask", "id": ...}` asks it.

`check_gold` holds the gold to the script: every phrase must be written by a step
before it is expected (the current NOW by the agent's last `now` step), every
question asked once, in words other than its answer's, every fact one
`save_fact` accepts (a category it lists; a repo category cited): it refuses any other,
and the fact is never saved; every ledger entry of a kind `memory_publish` accepts.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from memstrata.bench.agent_metrics import fold, has
from memstrata.config import DEFAULT_HALF_LIVES
from memstrata.model import DURABLE_CATEGORIES, FACT_CATEGORIES, RECORD_KINDS
from memstrata.values import field, value_type

SURFACES = ("claude-code", "mcp", "python")
LOOPLESS = frozenset({"work", "publish", "ledger"})  # steps a `python` loop has no call for
WHATS = ("now", "task", "decision", "constraint", "preference", "error", "fact", "context")
STEP_KINDS = frozenset(
    {
        "prompt",
        "tool",
        "work",
        "now",
        "decide",
        "fact",
        "log",
        "context",
        "task",
        "recall",
        "reply",
        "compact",
        "publish",
        "ledger",
        "ask",
    }
)
MIN_SESSIONS, MAX_SESSIONS, MIN_QUESTIONS = 8, 15, 20
HOOK_WRITTEN = "task complete"  # a must_not phrase a hook writes, not the script


@value_type
class Scenario:
    name: str
    data: dict[str, Any]
    sessions: list[dict[str, Any]] = field(default_factory=list)
    questions: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def held_out(self) -> bool:
        return bool(self.data.get("held_out"))

    @property
    def surface(self) -> str:
        return str(self.data["surface"])

    def agent_of(self, session: dict[str, Any]) -> str:
        return str(session.get("agent") or next(iter(self.data["agents"])))


def scenario_names() -> list[str]:
    folder = resources.files("memstrata.bench") / "scenarios"
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".json"))


def load(name: str) -> Scenario:
    path = resources.files("memstrata.bench") / "scenarios" / f"{name}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    return from_dict(data)


def from_dict(data: dict[str, Any]) -> Scenario:
    if data.get("surface") not in SURFACES:
        raise ValueError(f"scenario {data.get('name')}: surface must be one of {SURFACES}")
    questions = {q["id"]: q for q in data.get("questions", [])}
    return Scenario(str(data["name"]), data, list(data["sessions"]), questions)


def written(sc: Scenario) -> list[tuple[int, int, str, str]]:
    """(session index, step index, kind, text) of everything the script writes to memory."""
    out: list[tuple[int, int, str, str]] = []
    for si, session in enumerate(sc.sessions):
        agent = sc.data["agents"][sc.agent_of(session)]
        transcripts = agent.get("transcripts", "hooks" if sc.surface == "claude-code" else "none")
        if sc.surface == "python":  # the loop logs prompts, replies and failures itself
            transcripts = "loop+session" if transcripts == "session" else "loop"
        for ti, step in enumerate(session["steps"]):
            for kind, text in _texts(step, transcripts):
                out.append((si, ti, kind, text))
    return out


def _texts(step: dict[str, Any], transcripts: str) -> list[tuple[str, str]]:
    do = step["do"]
    said = transcripts != "none"
    if do in ("prompt", "reply"):
        return [(do, step["text"])] if said else []
    if do == "tool":
        texts = [("error", step["fail"])] if step.get("fail") and (said or step.get("log")) else []
        if transcripts == "loop+session" and not step.get("fail"):  # the turn keeps its result
            texts.append(("output", step.get("output") or step.get("stdout") or ""))
        return texts + ([("log", step["log"])] if isinstance(step.get("log"), str) else [])
    if do == "work":
        fail = step.get("test_fail")
        return [("error", fail)] if fail and said else []
    if do == "now":
        return [("now", " ".join([step["status"], *step.get("next", [])]))]
    if do == "decide":
        return [(step.get("kind", "decision"), f"{step['text']} {step.get('why', '')}")]
    if do == "fact":
        return [("fact", f"{step['key']} {step['value']}")]
    if do == "log":
        return [("log", step["text"])]
    if do == "context":
        return [("context", step.get("write") or step.get("new", ""))]
    if do == "task":
        return [("task", step["add"])] if "add" in step else []
    if do == "compact":
        return [("summary", step["summary"])]
    if do == "publish":
        return [("ledger", f"{step['summary']} {step.get('detail', '')}")]
    return []


def check_gold(sc: Scenario) -> list[str]:
    """Every way the gold disagrees with the script (empty: consistent)."""
    problems: list[str] = []
    say = problems.append
    if not MIN_SESSIONS <= len(sc.sessions) <= MAX_SESSIONS:
        say(f"{len(sc.sessions)} sessions (want {MIN_SESSIONS}-{MAX_SESSIONS})")
    if len(sc.questions) < MIN_QUESTIONS:
        say(f"{len(sc.questions)} questions (want {MIN_QUESTIONS}+)")
    texts = written(sc)
    asked: dict[str, tuple[int, int]] = {}
    refs: set[str] = set()
    last_now: dict[str, str] = {}
    for si, session in enumerate(sc.sessions):
        agent = sc.agent_of(session)
        if agent not in sc.data["agents"]:
            say(f"{session['id']}: unknown agent {agent!r}")
        before = [t for s, _, _, t in texts if s < si]
        _check_context(session["id"], session.get("context", {}), before, last_now.get(agent), say)
        for ti, step in enumerate(session["steps"]):
            where = f"{session['id']} step {ti + 1} ({step.get('do')})"
            if step.get("do") not in STEP_KINDS:
                say(f"{where}: unknown step")
                continue
            if sc.surface == "python" and step["do"] in LOOPLESS:
                say(f"{where}: a python loop has no call for this step")
            if step["do"] == "ask":
                if step["id"] in asked:
                    say(f"{where}: question {step['id']} asked twice")
                asked[step["id"]] = (si, ti)
            for key in ("replaces", "supersedes"):
                if step.get(key) and step[key] not in refs:
                    say(f"{where}: {key} {step[key]!r} names no earlier step")
            if step["do"] == "fact":
                _check_fact(where, step, say)
            if step["do"] == "publish" and step["kind"] not in (*DEFAULT_HALF_LIVES, *RECORD_KINDS):
                say(f"{where}: ledger kind {step['kind']!r} is one memory_publish refuses")
            if step["do"] == "task" and "add" not in step and step.get("ref") not in refs:
                say(f"{where}: task {step.get('ref')!r} was never added")
            refs.update(str(step[k]) for k in ("id", "ref") if step.get(k))
            if step["do"] == "now":
                last_now[agent] = " ".join([step["status"], *step.get("next", [])])
            if step["do"] == "compact" and step.get("context"):
                upto = [t for s, i, _, t in texts if s < si or (s == si and i < ti)]
                _check_context(where, step["context"], upto, last_now.get(agent), say)
    for qid, q in sc.questions.items():
        if qid not in asked:
            say(f"question {qid} is never asked")
            continue
        si, ti = asked[qid]
        before = [t for s, i, _, t in texts if s < si or (s == si and i < ti)]
        if not q.get("answers"):
            say(f"question {qid} has no answer phrase")
        for phrase in [*q.get("answers", []), *q.get("stale", [])]:
            if not any(has(t, phrase) for t in before):
                say(f"question {qid}: {phrase!r} is not written before it is asked")
        for words in (q["q"], q.get("query", q["q"])):
            for phrase in q.get("answers", []):
                if has(words, phrase):
                    say(f"question {qid}: its wording contains its answer {phrase!r}")
    return problems


def _check_fact(where: str, step: dict[str, Any], say: Any) -> None:
    """A fact `save_fact` would refuse is never saved: a category it does not list, or a
    repo category (user, feedback, project, reference) without a citation."""
    category = step.get("category", "general")
    if category not in FACT_CATEGORIES:
        say(f"{where}: fact category {category!r} is not one of {FACT_CATEGORIES}")
    elif category in DURABLE_CATEGORIES and not step.get("citations"):
        say(f"{where}: a {category!r} fact needs citations (a repo fact), else it is refused")


def _check_context(
    where: str, gold: dict[str, Any], before: list[str], now: str | None, say: Any
) -> None:
    for item in gold.get("must", []):
        if item.get("what") not in WHATS or not item.get("phrases"):
            say(f"{where}: context item {item} needs a known 'what' and phrases")
            continue
        for phrase in item["phrases"]:
            if item["what"] == "now":
                if now is None or not has(now, phrase):
                    say(f"{where}: NOW phrase {phrase!r} is not in the agent's last NOW")
            elif not any(has(t, phrase) for t in before):
                say(f"{where}: context phrase {phrase!r} is not written before this point")
    for phrase in gold.get("must_not", []):
        if not fold(phrase).startswith(HOOK_WRITTEN) and not any(has(t, phrase) for t in before):
            say(f"{where}: must_not phrase {phrase!r} is not written before this point")
