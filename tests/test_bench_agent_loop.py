"""`bench agent`'s `python` surface: an agent built on the Python API in its own loop
(`MemoryManager`, `turn()`, the memory tools the builder wires), no hooks, no MCP."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from memstrata.bench import agent_metrics as m
from memstrata.bench.agent import run_scenario
from memstrata.bench.agent_loop import DECISION_HOW
from memstrata.bench.agent_scenario import check_gold, from_dict, load, written
from memstrata.store.view import Store

SHELL_OUT = "collected 12 items\n" + "tests/test_router.py ........ [100%]\n" * 40 + "12 passed"
TINY: dict[str, Any] = {
    "name": "loop-tiny",
    "surface": "python",
    "start": "2026-10-05",
    "root": "/home/user/tiny",
    "agents": {"bot": {"tools": ["default"], "transcripts": "session"}},
    "sessions": [
        {
            "id": "s01",
            "day": 0,
            "context": {"must": [], "must_not": []},
            "steps": [
                {"do": "prompt", "text": "Set up the intent router and run its tests."},
                {
                    "do": "tool",
                    "name": "shell",
                    "input": {"cmd": "uv run pytest -q"},
                    "output": SHELL_OUT,
                },
                {
                    "do": "tool",
                    "name": "web_search",
                    "input": {"q": "pgvector hnsw"},
                    "fail": "HTTP 503 from the search API",
                },
                {"do": "decide", "id": "d-store0", "text": "Vector store: Qdrant in a container"},
                {
                    "do": "decide",
                    "id": "d-store",
                    "text": "Vector store: pgvector in the main Postgres",
                    "replaces": "d-store0",
                    "why": "one database to run",
                },
                {"do": "fact", "key": "router_model", "value": "intent router v2, 41 intents"},
                {"do": "task", "ref": "t-eval", "add": "Write the evaluation set", "priority": 1},
                {"do": "context", "write": "# Tiny\n- the router lives in app/router.py\n"},
                {
                    "do": "now",
                    "status": "Router tests green; next the evaluation set",
                    "next": ["Write 50 eval questions"],
                },
                {"do": "reply", "text": "Router is in and its 12 tests pass."},
            ],
        },
        {
            "id": "s02",
            "day": 1,
            "context": {
                "must": [{"what": "decision", "phrases": ["pgvector in the main Postgres"]}],
                "must_not": ["Qdrant in a container"],
            },
            "steps": [
                {"do": "prompt", "text": "continue", "expect": "continue"},
                {
                    "do": "prompt",
                    "text": "Ignore memory for this one: what does HNSW stand for?",
                    "expect": "ignore",
                },
                {"do": "ask", "id": "q-store"},
            ],
        },
    ],
    "questions": [
        {
            "id": "q-store",
            "q": "Where do the embeddings live?",
            "answers": ["pgvector in the main Postgres"],
            "stale": ["Qdrant in a container"],
        },
    ],
}


def test_the_python_surface_drives_memorymanager_in_the_builders_own_loop(tmp_path: Path) -> None:
    sc = from_dict(copy.deepcopy(TINY))
    result = run_scenario(sc, tmp_path / "p")
    assert result["problems"] == []
    assert result["surface"] == "python" and result["surfaces"]["decision"] == DECISION_HOW
    counts = result["counts"]
    assert counts["hook_calls"] == 0 and counts["mcp_calls"] == 0 and counts["api_calls"] >= 6
    assert counts["tool_calls"] == 2
    labels = [c["label"] for c in result["checkpoints"]]
    assert labels == ["s01", "s02"]
    s02 = result["checkpoints"][1]
    for checkpoint in result["checkpoints"]:  # the project's folder, not the bench's cwd
        assert "## Workspace\n/home/user/tiny\n" in checkpoint["text"], checkpoint["text"]
    # the first LLM call's context: what the loop hands the model at the session's start
    assert all(i["covered"] for i in s02["items"]) and not s02["must_not"][0]["present"]
    (ask,) = result["asks"]
    assert ask["mcp"]["results"] and ask["lib"]["results"]
    assert result["turns"]["ignore"] and result["turns"]["continue"]
    mx = result["metrics"]
    assert mx["questions"] == 1 and mx["context_checkpoints"] == 2
    with Store(tmp_path / "p" / ".memstrata", agent="bot", audit=False) as store:
        me = store.agent("bot")
        entries = me.log.tail(200)
        types = {e.entry_type for e in entries}
        assert {"USER_FEEDBACK", "TOOL_USE", "SYSTEM"} <= types  # the loop's own logging
        assert any(e.content.startswith("shell(") for e in entries)
        assert any("HTTP 503" in e.content for e in entries)  # the failed tool, its error
        # memstrata's own memory tools leave no trace line (their effect is memory already)
        assert not any(e.content.startswith("record_decision(") for e in entries)
        assert [d.summary for d in me.decisions.in_force()] == [
            "Vector store: pgvector in the main Postgres"
        ]
        assert me.facts.get("router_model").value == "intent router v2, 41 intents"
        assert "app/router.py" in me.context.read()
        assert [t.description for t in me.tasks.list()] == ["Write the evaluation set"]
        sessions = {s.id for s in me.sessions.list()}
        assert sessions == {"loop-tiny-s01", "loop-tiny-s02"}
        said = json.dumps([m.content for m in me.sessions.messages("loop-tiny-s01")])
        assert "12 passed" in said  # the turn keeps the tool's result in its transcript


def test_the_gold_checker_knows_what_a_python_loop_writes() -> None:
    data = copy.deepcopy(TINY)
    assert not [p for p in check_gold(from_dict(data)) if "12 passed" in p]
    data["sessions"][1]["context"]["must_not"].append("12 passed")  # a tool's result: written
    problems = check_gold(from_dict(data))
    assert not [p for p in problems if "12 passed" in p]
    data["agents"]["bot"]["transcripts"] = "none"  # no transcript: only its size is logged
    assert any("12 passed" in p for p in check_gold(from_dict(data)))
    data["sessions"][0]["steps"].append({"do": "work", "read": ["app/router.py"]})
    assert any("python loop has no call" in p for p in check_gold(from_dict(data)))


def test_renovation_ashgrove_is_a_non_coding_python_loop_with_its_gold_fixed() -> None:
    """renovation-ashgrove (scen19m, written blind to the ranking): a renovation project
    assistant on the Python API (no coding tools); a decision reversed twice (the
    worktops) and one only the user states (no step replaces the bifold doors); a portal
    password in a user's prompt that no later session-start context may show; NOW unset
    in s04 and s08; one compaction; facts updated in place; 25+ questions."""
    sc = load("renovation-ashgrove")
    assert check_gold(sc) == []
    assert sc.surface == "python" and sc.data["agents"]["hearth"]["transcripts"] == "session"
    steps = [(s, st) for s in sc.sessions for st in s["steps"]]
    tools = {st["name"] for _, st in steps if st["do"] == "tool"}
    assert not tools & {"shell", "apply_patch", "read_file", "Bash", "Edit"}
    replaces = [st["replaces"] for _, st in steps if st.get("replaces")]
    assert len(replaces) == 7 and {"d-top0", "d-top1"} <= set(replaces)
    assert "d-doors0" not in replaces
    said = [t for _, _, kind, t in written(sc) if m.has(t, "three-panel sliding door")]
    assert said and all(m.has(t, "change of plan") for t in said)  # the user's prompt only
    secret = "Tern!Slate-4471"
    leak = next(i for i, (_, st) in enumerate(steps) if secret in st.get("text", ""))
    later = {s["id"] for s, _ in steps[leak:]} - {steps[leak][0]["id"]}
    assert len(later) == 5
    assert all(secret in s["context"]["must_not"] for s in sc.sessions if s["id"] in later)
    no_now = [s["id"] for s in sc.sessions if not any(st["do"] == "now" for st in s["steps"])]
    assert no_now == ["s04", "s08"]
    assert [st["do"] for _, st in steps].count("compact") == 1
    keys = [st["key"] for _, st in steps if st["do"] == "fact"]
    assert {k for k in keys if keys.count(k) > 1} == {
        "budget_total",
        "builder_quote",
        "start_date",
        "steel_beam",
        "budget_forecast",
        "kitchen_lead_time",
    }
    assert len(sc.questions) >= 25
