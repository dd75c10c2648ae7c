"""`memstrata bench agent` at a small size: every metric computed and well formed (not
their values), the gold consistent with the scripts, the held-out scenario kept apart.

The bench is the yardstick issue 19's ranking, context and hook work is tuned against,
so these tests check the yardstick itself: that it measures through the real surfaces,
on the virtual clock, and that its gold cannot drift from what the scenarios write.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from memstrata.bench import agent_metrics as m
from memstrata.bench.agent import run_bench
from memstrata.bench.agent_drive import SeededIds
from memstrata.bench.agent_replay import HeldOut, replay
from memstrata.bench.agent_report import format_report
from memstrata.bench.agent_scenario import check_gold, load, scenario_names, written
from memstrata.bench.agent_steps import find_decision_tool

pytest.importorskip("mcp")

SRC = Path(__file__).resolve().parents[1] / "src"
RATES = (
    "context_coverage",
    "noise_share",
    "recall_at_1",
    "recall_at_3",
    "search_at_1",
    "search_at_3",
    "now_integrity",
    "continue_ok",
    "ignore_ok",
)
COUNTS = (
    "context_checkpoints",
    "context_items",
    "context_stale_shown",
    "context_stale_checks",
    "questions",
    "stale_questions",
    "stale_above_recall",
    "stale_above_search",
    "now_checks",
    "problems",
)


def _well_formed(mx: dict[str, Any]) -> None:
    for key in RATES:
        assert key in mx, key
        assert mx[key] is None or (isinstance(mx[key], float) and 0.0 <= mx[key] <= 1.0), (
            key,
            mx[key],
        )
    for key in COUNTS:
        assert isinstance(mx[key], int) and mx[key] >= 0, (key, mx[key])
    assert mx["stale_above_recall"] <= mx["stale_questions"] >= mx["stale_above_search"]
    assert mx["context_stale_shown"] <= mx["context_stale_checks"]
    for value in mx["coverage_by_what"].values():
        covered, total = (int(x) for x in value.split("/"))
        assert 0 <= covered <= total


def _store_text(home: Path) -> str:
    """Every string the store's files hold (JSON values decoded), folded: what the
    scenario wrote, wherever it landed."""
    parts: list[str] = []

    def strings(value: Any) -> None:
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, dict):
            for v in value.values():
                strings(v)
        elif isinstance(value, list):
            for v in value:
                strings(v)

    for path in home.rglob("*"):
        if not path.is_file() or "index" in path.parts or ".locks" in path.parts:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix in (".jsonl", ".json"):
            for line in text.splitlines() if path.suffix == ".jsonl" else [text]:
                try:
                    strings(json.loads(line))
                except json.JSONDecodeError:
                    parts.append(line)
        else:
            parts.append(text)
    return m.fold("\n".join(parts))


def test_every_scenario_s_gold_agrees_with_its_script() -> None:
    names = scenario_names()
    scenarios = [load(n) for n in names]
    held = [s for s in scenarios if s.held_out]
    assert len(held) == 1 and len(scenarios) - len(held) >= 3
    assert "held-out" in held[0].data["note"].lower()
    assert {s.surface for s in scenarios} == {"claude-code", "mcp", "python"}
    assert any(len(s.data["agents"]) == 2 for s in scenarios)  # the rooms scenario
    for sc in scenarios:
        assert check_gold(sc) == [], sc.name
        kinds = {step["do"] for session in sc.sessions for step in session["steps"]}
        expects = {step.get("expect") for s in sc.sessions for step in s["steps"]}
        assert {"continue", "ignore"} <= expects, sc.name
        assert any(
            step.get("replaces") or step.get("supersedes")
            for s in sc.sessions
            for step in s["steps"]
        ), sc.name
        assert any(
            step.get("fail") or step.get("test_fail") for s in sc.sessions for step in s["steps"]
        ), sc.name
        if sc.surface == "claude-code":
            assert {"compact", "work", "now", "reply"} <= kinds, sc.name
        # the NOW is set by the agent in some sessions and not in others
        sets_now = [any(st["do"] == "now" for st in s["steps"]) for s in sc.sessions]
        assert any(sets_now) and not all(sets_now), sc.name


def test_firmware_larkspur_holds_what_its_note_promises() -> None:
    """scen19c's blind scenario: four reversals, one of them stated only by the user (the
    report interval: no step records it, its stale decision is never replaced), facts
    updated in place, NOW left unset in exactly two sessions, one compaction."""
    sc = load("firmware-larkspur")
    assert check_gold(sc) == []
    steps = [st for s in sc.sessions for st in s["steps"]]
    assert len([st for st in steps if st.get("replaces")]) == 3
    said = [t for _, _, kind, t in written(sc) if m.has(t, "every 30 minutes")]
    assert said and all(m.has(t, "change of plan") for t in said)  # the user's prompt only
    assert not any(st.get("replaces") == "d-interval0" for st in steps)
    keys = [st["key"] for st in steps if st["do"] == "fact"]
    assert {k for k in keys if keys.count(k) > 1} >= {"pin_sensor_power", "lora_params"}
    assert [s["id"] for s in sc.sessions if not any(st["do"] == "now" for st in s["steps"])] == [
        "s04",
        "s08",
    ]
    assert [st["do"] for st in steps].count("compact") == 1


def test_infra_saltmarsh_is_mcp_only_with_a_reviewer_a_user_only_reversal_and_a_secret() -> None:
    """infra-saltmarsh (scen19d, written blind to the ranking) keeps what its brief asks for:
    an MCP-only agent with its own transcript and a reviewer in another room on the ledger;
    a reversal only the user states (no decision step replaces the old region); a password
    printed by a failing CI run that no later session-start context may show."""
    sc = load("infra-saltmarsh")
    assert check_gold(sc) == []
    agents = sc.data["agents"]
    assert sc.surface == "mcp" and agents["infra"]["transcripts"] == "session_append"
    assert len({a["room"] for a in agents.values()}) == 2
    steps = [(s, st) for s in sc.sessions for st in s["steps"]]
    assert any(st["do"] == "publish" and st.get("supersedes") for _, st in steps)
    region = sc.questions["q-region"]
    old = next(st for _, st in steps if st["do"] == "decide" and region["stale"][0] in st["text"])
    assert not any(st.get("replaces") == old["id"] for _, st in steps)
    secret = "Kx9vTq2mWs4LpZ7r"
    leak = next(i for i, (_, st) in enumerate(steps) if secret in st.get("fail", ""))
    later = {s["id"] for s, _ in steps[leak:] if sc.agent_of(s) == "infra"} - {steps[leak][0]["id"]}
    assert later and all(
        secret in s["context"]["must_not"] for s in sc.sessions if s["id"] in later
    )
    no_now = [s["id"] for s in sc.sessions if not any(st["do"] == "now" for st in s["steps"])]
    assert len(no_now) == 2


def test_chatbot_otterbrook_is_a_python_loop_with_a_user_only_reversal_and_a_secret() -> None:
    """chatbot-otterbrook (scen19e, written blind to the ranking): an agent on the Python API
    in its builder's own loop (no hooks, no MCP) that keeps a session transcript; four
    reversals, one only the user states (transcript retention: no step replaces it); an API
    key printed in a tool's output that no later session-start context may show; NOW left
    unset in two sessions; one compaction; facts updated in place."""
    sc = load("chatbot-otterbrook")
    assert check_gold(sc) == []
    assert sc.surface == "python" and sc.data["agents"]["devbot"]["transcripts"] == "session"
    steps = [(s, st) for s in sc.sessions for st in s["steps"]]
    assert len([st for _, st in steps if st.get("replaces")]) == 3
    assert not any(st.get("replaces") == "d-ret0" for _, st in steps)
    said = [t for _, _, kind, t in written(sc) if m.has(t, "after 30 days, not 90")]
    assert said and all(m.has(t, "change of plan") for t in said)  # the user's prompt only
    secret = "3f9c2e7a41b84d6e9a0c5b7d2e1f8a64"
    leak = next(i for i, (_, st) in enumerate(steps) if secret in st.get("output", ""))
    later = {s["id"] for s, _ in steps[leak:]} - {steps[leak][0]["id"]}
    assert len(later) == 5
    assert all(secret in s["context"]["must_not"] for s in sc.sessions if s["id"] in later)
    no_now = [s["id"] for s in sc.sessions if not any(st["do"] == "now" for st in s["steps"])]
    assert no_now == ["s04", "s08"]
    assert [st["do"] for _, st in steps].count("compact") == 1
    keys = [st["key"] for _, st in steps if st["do"] == "fact"]
    assert {k for k in keys if keys.count(k) > 1} == {
        "eval_pass_rate",
        "azure_deployment",
        "p95_latency",
    }
    tools = {st["name"] for _, st in steps if st["do"] == "tool"}
    assert tools == {"shell", "read_file", "apply_patch", "web_search"}


def test_the_gold_checker_catches_gold_the_script_never_writes() -> None:
    sc = load("coding-tidepool")
    sc.questions["q-db"] = {**sc.questions["q-db"], "answers": ["CockroachDB cluster"]}
    sc.sessions[3]["context"]["must"].append({"what": "decision", "phrases": ["use MongoDB"]})
    sc.questions["q-lock"] = {
        **sc.questions["q-lock"],
        "q": "Do we lock with SELECT ... FOR UPDATE at checkout?",
    }
    # analytics-kestrel's first runs: save_fact refused "metric", then an uncited "project"
    # fact (a repo category), so those facts were never saved and their questions missed
    facts = [st for s in sc.sessions for st in s["steps"] if st["do"] == "fact"]
    facts[0]["category"], facts[1]["category"] = "metric", "project"
    problems = check_gold(sc)
    assert any("'metric'" in p and "category" in p for p in problems)
    assert any("'project'" in p and "citations" in p for p in problems)
    assert any("CockroachDB" in p for p in problems)
    assert any("use MongoDB" in p for p in problems)
    assert any("q-lock" in p and "wording" in p for p in problems)
    rooms = load("rooms-checkout")
    next(st for s in rooms.sessions for st in s["steps"] if st["do"] == "publish")["kind"] = (
        "rumour"
    )
    assert any("'rumour'" in p and "memory_publish" in p for p in check_gold(rooms))


@pytest.mark.timeout(960)  # the suite's 120 s would end it before the run's own hang guard
def test_bench_agent_through_the_cli_at_a_small_size(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
    }
    argv = [sys.executable, "-m", "memstrata", "--json", "bench", "agent"]
    r = subprocess.run(
        [*argv, "--scenario", "coding-tidepool", "--sessions", "3", "--workdir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=900,  # a hang guard, not a speed check: 3 sessions of hook processes, loaded CI
        env=env,
    )
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    (sc,) = result["scenarios"]
    assert sc["name"] == "coding-tidepool" and sc["sessions_run"] == 3
    assert result["held_out"] is None  # only the scenario asked for ran
    _well_formed(sc["metrics"])
    _well_formed(result["dev"])
    mx = sc["metrics"]
    assert mx["context_checkpoints"] == 3 and mx["questions"] == 2 and mx["now_checks"] == 2
    assert (
        mx["context_items"] == 14 and mx["continue_ok"] is not None and mx["ignore_ok"] is not None
    )
    assert sc["counts"]["hook_calls"] > 50 and sc["counts"]["mcp_calls"] > 10
    assert sc["problems"] == []
    for cp in sc["checkpoints"]:
        assert cp["chars"] == sum(len(line) for line in cp["text"].splitlines())
        assert cp["trace_chars"] + cp["bookkeeping_chars"] <= cp["chars"]
    assert "# Memory context" in sc["checkpoints"][1]["text"]
    for ask in sc["asks"]:
        assert ask["mcp"]["results"] and ask["lib"]["results"]
        assert ask["mcp"]["rank"] is None or 1 <= ask["mcp"]["rank"] <= len(ask["mcp"]["results"])
    # The files a user would have: the store in the project, Claude Code's transcripts.
    project = Path(result["store"]) / "coding-tidepool"
    home = project / ".memstrata"
    transcripts = list((project.parent / ".claude" / "projects").rglob("*.jsonl"))
    assert len(transcripts) == 3
    first = json.loads(transcripts[0].read_text().splitlines()[0])
    assert {"uuid", "parentUuid", "sessionId", "timestamp", "message"} <= set(first)
    # Every question asked has an answer record in the store, and the context gold of the
    # sessions run is written somewhere: the gold is about what the scenario wrote.
    text = _store_text(home)
    scenario = load("coding-tidepool")
    for ask in sc["asks"]:
        assert any(m.fold(p) in text for p in scenario.questions[ask["id"]]["answers"]), ask["id"]
    for session in scenario.sessions[:3]:
        for item in session["context"]["must"]:
            if item["what"] != "now":
                assert all(m.fold(p) in text for p in item["phrases"]), item
    # The virtual clock: LOG entries are dated on the scenario's days, not today.
    logs = [
        home / "agents" / "me" / "memory" / "LOG.md",
        *(home / "agents" / "me").rglob("LOG-*.md"),
    ]
    log = "".join(p.read_text() for p in logs)  # LOG.md and its compaction archives
    assert "2026-03-02T09:" in log and "2026-03-04T14:" in log
    days = set(re.findall(r"\b(\d{4}-\d\d-\d\d)T\d\d:\d\d", log))
    assert days == {"2026-03-02", "2026-03-03", "2026-03-04"}  # none by the real clock


# Run in a fresh interpreter: what a scenario gets must not depend on what the process did
# before it (modules imported, servers built), so the first run has to be a process's first.
_ALONE_THEN_AFTER = """
import json, sys
from memstrata.bench.agent import run_bench

def recalled(result):
    (sc,) = result["scenarios"]
    return sc["metrics"], [
        [a["id"], a["mcp"]["rank"], [h["uid"] for h in a["mcp"]["results"]]] for a in sc["asks"]
    ]

alone = recalled(run_bench(["web-quillmark"], sessions=3, held_out=False))
run_bench(["research-scooters"], sessions=1, held_out=False)
after = recalled(run_bench(["web-quillmark"], sessions=3, held_out=False))
json.dump({"alone": alone, "after": after}, sys.stdout)
"""


@pytest.mark.timeout(900)  # three runs of real hooks and MCP servers, embedding
def test_a_scenario_recalls_the_same_alone_and_after_another_scenario() -> None:
    """A scenario's recall lists (each record's id, the answer's rank) and figures are the
    same when it runs first in a process and when another scenario ran before it. The
    library's ids (`log-...`, `mem-...`) are drawn from seeded streams; modules imported
    during a process's first scenario and the MCP SDK draw too, and once shifted the
    library's ids of that scenario only (`agent_drive.SeededIds`)."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
    }
    r = subprocess.run(
        [sys.executable, "-c", _ALONE_THEN_AFTER],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
    )
    assert r.returncode == 0, r.stderr
    runs = json.loads(r.stdout)
    assert runs["alone"][1]  # the questions of the first three sessions were asked
    assert runs["alone"] == runs["after"]


def test_seeded_ids_are_not_moved_by_other_code_drawing() -> None:
    """The ids one function draws under `SeededIds` do not depend on whether other code
    (a module imported lazily, a client built) drew random bytes in between."""

    def library_id() -> str:
        return os.urandom(4).hex()

    def other_code() -> None:
        uuid.uuid4()
        os.urandom(32)

    with SeededIds(7):
        quiet = [library_id() for _ in range(3)]
    with SeededIds(7):
        other_code()
        first = library_id()
        other_code()
        busy = [first, library_id(), library_id()]
    assert quiet == busy
    assert len(set(quiet)) == 3


@pytest.mark.timeout(600)  # real hooks and MCP servers, embedding: slow when loaded
def test_bench_agent_through_the_library_keeps_the_held_out_apart(tmp_path: Path) -> None:
    result = run_bench(
        ["heldout-bikeshare", "research-scooters"], sessions=3, workdir=tmp_path, snapshots=True
    )
    names = [r["name"] for r in result["scenarios"]]
    assert names == ["research-scooters", "heldout-bikeshare"]
    assert result["dev"]["scenarios"] == ["research-scooters"]
    assert result["held_out"]["scenarios"] == ["heldout-bikeshare"]
    for r in result["scenarios"]:
        _well_formed(r["metrics"])
        assert r["problems"] == []
        assert r["metrics"]["questions"] == 1  # one question is asked by session 3 in each
    research = result["scenarios"][0]
    assert research["surface"] == "mcp" and research["counts"]["hook_calls"] == 0
    assert research["metrics"]["now_integrity"] is not None
    report = format_report(result, details=True)
    dev_part, held_part = report.split("HELD-OUT", 1)
    assert "research-scooters" in dev_part.splitlines()[3]
    assert "heldout-bikeshare" in held_part and "never tune" in held_part
    assert "q-bullets" in report  # details: each question's ranks
    without = run_bench(["heldout-bikeshare"], sessions=1, held_out=False, workdir=tmp_path / "x")
    assert without["scenarios"] == [] and without["held_out"] is None
    # The replay (`bench agent --replay`): the dev question asked again against the copy of
    # the store it was asked in gives the bench's rank; the held-out store is never kept.
    run = Path(result["store"])
    assert (run / "research-scooters" / "snapshots" / "q-bullets").is_dir()
    assert not (run / "heldout-bikeshare" / "snapshots").exists()
    assert not (run / "heldout-bikeshare" / "asks.json").exists()
    again = replay(tmp_path)
    (sc,) = again["scenarios"]
    assert sc["name"] == "research-scooters" and sc["n"] == 1
    (q,) = sc["questions"]
    assert q["snapshot"] and q["rank"] == research["asks"][0]["lib"]["rank"]
    with pytest.raises(HeldOut):
        replay(tmp_path, ["heldout-bikeshare"])


def test_decision_steps_use_a_decision_tool_only_when_the_server_lists_one() -> None:
    today = {"log_activity": {"properties": {"entry_type": {}, "content": {}}}}
    tool, how = find_decision_tool(today)
    assert tool is None and "log_activity" in how
    future = {
        **today,
        "record_decision": {
            "properties": {
                "decision": {"type": "string"},
                "why": {"type": "string"},
                "supersedes": {"type": "string"},
                "kind": {"type": "string", "enum": ["decision", "constraint", "preference"]},
            },
            "required": ["decision"],
        },
    }
    tool, how = find_decision_tool(future)
    assert tool is not None and tool.name == "record_decision" and "record_decision" in how
    assert tool.args("Use PostgreSQL 16", "row locks", "log-1234", "decision") == {
        "decision": "Use PostgreSQL 16",
        "kind": "decision",
        "why": "row locks",
        "supersedes": "log-1234",
    }
    assert tool.args("Python 3.11 only", None, None, "constraint") == {
        "decision": "Python 3.11 only",
        "kind": "constraint",
    }
    narrow = {"decide": {"properties": {"text": {}}, "required": ["text"]}}
    tool, _ = find_decision_tool(narrow)
    assert tool is not None and tool.args("x", None, None, "constraint") is None  # fallback
    odd = {"record_decision": {"properties": {"title": {}}, "required": ["title"]}}
    tool, how = find_decision_tool(odd)
    assert tool is None and "not understood" in how


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        (
            '- 2026-03-04 14:31 TOOL_USE: Read(file_path="/p/app/models.py") -> ok, 10028 chars',
            "trace",
        ),
        ('- assistant: [tool_use Bash] {"command": "pytest -q"}', "trace"),
        ("- user: [tool_result] Exit code 1", "trace"),
        ("- Decision: [tool_result] ok", "trace"),
        ('Edit(file_path="app/db.py", old_string="x") -> ok', "trace"),
        (
            "- 2026-03-04 14:37 SYSTEM: stop hook: captured 2 new message(s) of session 5e047e7b-6a07-5188-ba7b-8f14598440c6",
            "bookkeeping",
        ),
        ("- session 5e047e7b-6a07-5188-ba7b-8f14598440c6 (ended 2026-03-04)", "bookkeeping"),
        ("- 2026-03-04 14:31 THOUGHT: Decision: Move to PostgreSQL 16 and lock the tool row", None),
        (
            "## This session before the compaction (session 5e047e7b-6a07-5188-ba7b-8f14598440c6, last 6 captured)",
            None,
        ),
        ("- TASK-002 [in_progress] (P1) Checkout and return endpoints for tools", None),
        (
            "- Error: tool Bash failed: Exit code 1 FAILED tests/test_members.py - database is locked",
            None,
        ),
    ],
)
def test_the_noise_classifier(line: str, kind: str | None) -> None:
    assert m.classify_line(line) == kind


def test_answer_rank_and_stale_above() -> None:
    question = m.Record("log:1", "log", "What database do we use?")
    stale = m.Record("log:2", "log", "Decision: Use SQLite (a single tidepool.db file) for now")
    answer = m.Record("log:3", "log", "Decision: Move to PostgreSQL 16 and lock the tool row")
    hidden = m.Record("ledger:4", "ledger", "Move to PostgreSQL 16", superseded=True)
    answers, old = ["move to postgresql 16"], ["SQLite (a single tidepool.db file)"]
    assert m.first_answer([question, stale, answer], answers) == 3
    assert m.stale_above([question, stale, answer], answers, old)
    assert not m.stale_above([answer, stale], answers, old)
    assert m.first_answer([hidden, question], answers) is None
    assert m.stale_above([question, stale], answers, old)  # stale back, answer not


def test_written_texts_follow_the_surface() -> None:
    research = load("research-scooters")
    rooms = load("rooms-checkout")
    kinds = {k for _, _, k, _ in written(research)}
    assert {"prompt", "reply"} <= kinds  # its transcript goes through session_append
    assert not {"prompt", "reply"} & {k for _, _, k, _ in written(rooms)}  # no transcript
