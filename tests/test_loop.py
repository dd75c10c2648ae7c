"""Seed 002's engine integration (`memstrata.operations.loop`): the "Automatic" list around one agent turn.

Also the seed's Amnesia test through the loop API with a real process SIGKILLed mid-task,
seed 003's agent-controlled mode, and seed 001's "ignore memory" for one turn.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from memstrata import MemoryManager, Store
from memstrata.lifecycle.anneal import RECOVERY_STATUS
from memstrata.operations.loop import AgentLoop, describe_tool


class ToolCrashed(RuntimeError):
    pass


def _mode(home: Path, mode: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(f'[memory]\nmode = "{mode}"\n')


def test_seed002_turn_writes_exactly_the_automatic_entries(home: Path) -> None:
    m = MemoryManager("finn", home)
    m.save_fact("preferred_currency", "USD", "preference")
    before = len(m.read_log(100))
    big = {"rows": list(range(5000))}
    with AgentLoop(m).turn("Analyse the portfolio and report returns") as turn:
        prompt = turn.before_llm_call()
        assert "preferred_currency" in prompt  # facts are read before the call
        turn.tool_executed("load_csv", {"path": "prices.csv"}, big, duration=0.25)
        turn.tool_executed("calculate_returns", {"window": 30}, {"ok": True, "value": 0.07})
        turn.final_response("Returns over 30 days: 7%")
    log = m.read_log(100)[before:]
    assert [
        (e["entry_type"], e["metadata"].get("event") or e["metadata"].get("tool")) for e in log
    ] == [
        ("USER_FEEDBACK", "user_intent"),
        ("TOOL_USE", "load_csv"),
        ("TOOL_USE", "calculate_returns"),
        ("SYSTEM", "final_response"),
    ]
    assert log[0]["content"] == "Analyse the portfolio and report returns"
    tool = log[1]
    assert tool["content"].startswith('load_csv(path="prices.csv") -> ok, ')
    assert (
        tool["metadata"]["result_chars"] == len(json.dumps(big)) and "4999" not in tool["content"]
    )
    assert tool["metadata"]["duration_s"] == 0.25
    assert log[3]["content"] == "Final response: Returns over 30 days: 7%"
    now = m.memory.now.state()
    assert now.objective == "Task complete: Analyse the portfolio and report returns"
    assert now.next_steps == ()
    m.close()


def test_seed004_turn_with_a_session_persists_the_transcript(home: Path) -> None:
    """Seed 004 "Episodic: written in the loop PERSIST stage": a turn with a session id
    appends the user's message, each tool call (name, input) and result, and the final
    response to `sessions/<id>.jsonl`; without one, no transcript is written."""
    with MemoryManager("finn", home) as m:
        with m.turn("Read the README", session_id="s1") as turn:
            turn.tool_executed("read", {"path": "README.md"}, "# Project\n" + "x" * 20_000)
            turn.tool_executed("grep", {"pattern": "TODO"}, error=FileNotFoundError("no src/"))
            turn.final_response("The README describes the project.")
        msgs = m.memory.sessions.messages("s1")
        with m.turn("No session this time") as turn:
            turn.final_response("ok")
        assert m.memory.sessions.ids() == ["s1"]
    assert [(x.role, x.name) for x in msgs] == [
        ("user", None),
        ("tool_call", "read"),
        ("tool_result", "read"),
        ("tool_call", "grep"),
        ("tool_result", "grep"),
        ("assistant", None),
    ]
    user, call, result, _, failed, answer = msgs
    assert (
        user.content == "Read the README" and answer.content == "The README describes the project."
    )
    assert call.input == {"path": "README.md"} and call.id == result.id != msgs[3].id
    assert result.content.startswith("# Project") and result.content.endswith("(20010 chars)")
    assert failed.content == "error: FileNotFoundError: no src/"
    assert all(x.timestamp for x in msgs)


def test_seed004_agent_controlled_turn_writes_no_transcript(home: Path) -> None:
    _mode(home, "agent-controlled")
    with MemoryManager("finn", home) as m, m.turn("hello", session_id="s1") as turn:
        turn.tool_executed("read", {"path": "a"}, "b")
        turn.final_response("hi")
    assert not (home / "agents" / "finn" / "sessions").exists()


def test_seed002_before_llm_call_reads_now_and_log_fresh_each_call(home: Path) -> None:
    with AgentLoop.open("finn", home) as loop, loop.turn("Fix the parser") as turn:
        first = turn.before_llm_call()
        with Store(home, agent="finn") as other:  # another process's write between two calls
            other.agent().now.update("Parser fixed; write the changelog", ["changelog"])
            other.agent().log.append("THOUGHT", "the tokenizer drops trailing commas")
        second = turn.before_llm_call()
    assert "Parser fixed" not in first
    assert "Parser fixed; write the changelog" in second
    assert "the tokenizer drops trailing commas" in second


def test_seed001_ignore_memory_turn_reads_nothing(home: Path) -> None:
    m = MemoryManager("finn", home)
    m.update_now("Secret objective about the merger", [])
    m.save_fact("api_key", "12345")
    with m.turn("No memory please, ignore memory: summarise this paragraph") as turn:
        assert turn.ignore_memory
        text = turn.before_llm_call()
    assert "Secret objective" not in text and "12345" not in text
    assert "ignored for this turn" in text
    with m.turn("And now the merger status?") as turn:  # the override does not persist
        text = turn.before_llm_call()
    # memory is read again (the fact named api_key is listed, its value withheld from the
    # prompt by the secrets policy: get_fact returns it)
    assert "api_key" in text and "Task complete: No memory please" in text
    m.close()


def test_seed002_turn_self_anneals_on_error(home: Path) -> None:
    m = MemoryManager("finn", home)
    m.update_now("Load the quarterly data", ["Load CSV"])
    with pytest.raises(ToolCrashed, match="disk quota"), m.turn("Load the quarterly data") as turn:
        turn.tool_executed("load_csv", {"path": "q3.csv"}, None, error="disk quota exceeded")
        raise ToolCrashed("disk quota exceeded")
    log = m.read_log(10)
    assert [e["entry_type"] for e in log[-3:]] == ["USER_FEEDBACK", "TOOL_USE", "ERROR"]
    assert log[-2]["metadata"]["outcome"] == "error"
    assert "Traceback" in log[-1]["metadata"]["traceback"]
    state = m.memory.now.state()
    assert state.objective == RECOVERY_STATUS  # not "task complete"
    assert any("Load the quarterly data" in b for b in state.blockers)
    m.close()


def test_seed003_agent_controlled_turn_writes_nothing(home: Path) -> None:
    _mode(home, "agent-controlled")
    m = MemoryManager("finn", home)
    assert not m.memory.now.exists() and not m.memory.log.path.exists()  # a blank slate
    m.update_now("Agent's own objective", ["step"])  # the agent itself may always write
    files = sorted((home / "agents" / "finn").rglob("*"))
    snapshot = {p: p.read_bytes() for p in files if p.is_file()}
    with pytest.raises(ToolCrashed), m.turn("Do the thing") as turn:
        assert "Agent's own objective" in turn.before_llm_call()
        turn.tool_executed("grep", {"pattern": "x"}, "match")
        turn.final_response("done")
        raise ToolCrashed("no anneal either")
    with m.turn("Do the next thing") as turn:
        turn.final_response("done")
    assert {p: p.read_bytes() for p in files if p.is_file()} == snapshot
    assert sorted((home / "agents" / "finn").rglob("*")) == files
    m.close()


def test_describe_tool_keeps_parameters_small() -> None:
    content, meta = describe_tool(
        "Write",
        {"file_path": "a.py", "content": "x" * 10_000, "mode": 420, "flag": True},
        {"success": False},
        1.5,
    )
    assert (
        content
        == 'Write(file_path="a.py", content="<10000 chars>", mode=420, flag=true) -> error, 18 chars in 1.50s'
    )
    assert meta["outcome"] == "error" and meta["args"]["content"] == "<10000 chars>"


def test_seed002_amnesia_sigkill_mid_task_then_resume(home: Path) -> None:
    """Start a task, let the research step finish, kill -9 the process, restart, "Continue"."""
    worker = str(Path(__file__).with_name("loop_worker.py"))
    proc = subprocess.Popen(
        [sys.executable, worker, str(home), "finn", "work"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "RESEARCH_DONE"  # acknowledged, not slept on
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGKILL
    out = subprocess.run(
        [sys.executable, worker, str(home), "finn", "resume"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    seen = json.loads(out.stdout)
    # The new process read NOW.md before its first LLM call and sees research done, outline next.
    assert "Outline the blog post on Python decorators" in seen["context"]
    assert "research done" in seen["context"]
    # the research step is in the LOG it read: the session's line counts its web search as a
    # read (`reading.tools`: the activity summary counts calls by class, not by name)
    assert "goal: Research Python decorators and outline a blog post; 1 read" in seen["context"]
    assert seen["next_steps"] == ["Write the outline from the research notes"]
    with Store(home, agent="finn") as s:
        entries = s.agent().log.entries()
        assert any(e.content.startswith("web_search(") for e in entries)
        assert [e.content for e in entries if e.entry_type == "USER_FEEDBACK"] == [
            "Research Python decorators and outline a blog post",
            "Continue",
        ]
        assert s.agent().now.state().objective == "Task complete: Continue"


def test_a_turn_keeps_the_now_the_agent_set_during_it(home: Path) -> None:
    """The model called update_now inside the turn (seed 002's "updating NOW.md mid-task",
    the agent's own call): the turn's end does not erase it with "Task complete". A turn in
    which the agent set none still ends with "Task complete" (seed 002: the loop owns NOW)."""
    m = MemoryManager("finn", home)
    with m.turn("Export the report as PDF") as turn:
        turn.tool_executed("shell", {"cmd": "make pdf"}, None, error="OSError: cannot load pango")
        m.update_now("PDF export blocked: WeasyPrint needs pango", ["Ask about the CI image"])
        turn.final_response("Blocked: WeasyPrint needs pango on the CI image.")
    state = m.memory.now.state()
    assert state.objective == "PDF export blocked: WeasyPrint needs pango"
    assert state.next_steps == ("Ask about the CI image",)
    with m.turn("Thanks, that's all for today") as turn:
        turn.final_response("Bye")
    assert m.memory.now.state().objective == "Task complete: Thanks, that's all for today"
    m.close()


def test_a_turn_keeps_the_now_the_agent_set_in_an_earlier_turn_while_tasks_are_open(
    home: Path,
) -> None:
    """chatbot-otterbrook (NOW 7/10): the agent set NOW ("Moved to Azure ...; next: answer
    generation") in one turn; a later turn where it set none, a task open, rewrote NOW's
    next steps as the open tasks, so the next session (and the context after a compaction)
    did not start from the agent's NOW. The hooks keep an agent's NOW from any earlier turn;
    the loop now does too while a task is open."""
    m = MemoryManager("finn", home)
    m.store.agent().tasks.add("Answer generation with citations")
    with m.turn("Rework the model and the index") as turn:
        m.update_now("Moved to Azure and pgvector", ["Answer generation on the new stack"])
        turn.final_response("Both done.")
    with m.turn("What is left on the index?") as turn:
        turn.final_response("Nothing, it is in pgvector now.")
    m.close()
    with MemoryManager("finn", home) as later, later.turn("Let's fix the handoff first.") as t:
        t.final_response("Looking at it.")
        state = later.memory.now.state()
    assert state.objective == "Moved to Azure and pgvector"
    assert state.next_steps == ("Answer generation on the new stack",)


def test_a_turn_records_the_change_of_plan_the_user_states(home: Path) -> None:
    """The user's change of plan, said in a turn's message, replaces the one decision in force
    it names, as the hooks' UserPromptSubmit and MCP session_append do (chatbot-otterbrook:
    "kept 90 days" stayed "in force" in three contexts after the user said 30)."""
    m = MemoryManager("finn", home)
    m.record_decision(
        "Chat transcripts are kept 90 days in the conversations table, then deleted by the "
        "nightly purge job"
    )
    said = (
        "Change of plan on transcripts: our DPO came back and chat transcripts must be "
        "deleted after 30 days, not 90. Please change the purge job today."
    )
    with m.turn(said) as turn:
        turn.final_response("Done: the purge job now deletes transcripts after 30 days.")
    in_force = [e.summary for e in m.store.agent().decisions.in_force()]
    assert not [s for s in in_force if "kept 90 days" in s]
    assert [s for s in in_force if "after 30 days, not 90" in s]
    assert "kept 90 days" not in m.format_context_for_prompt()
    with m.turn("Ignore memory: what is 30 days in hours?") as turn:  # an aside changes nothing
        turn.final_response("720 hours.")
    assert len(m.store.agent().decisions.in_force()) == len(in_force)
    m.close()


def test_a_change_of_plan_on_a_subject_the_record_names_otherwise_replaces_it(
    home: Path,
) -> None:
    """renovation-ashgrove s09: "Change of plan on the back doors: ... We'd rather have a
    three-panel sliding door", said through the loop, replaced nothing ("back doors" is not
    all in "Rear opening: ... bifold door"), so the bifold stayed in force in every later
    context. An unrelated wish in the same session replaces nothing."""
    m = MemoryManager("finn", home)
    m.record_decision("Rear opening: a four-panel aluminium bifold door, 3.6 m wide, dark grey")
    m.record_decision("No site meetings or trade calls on Wednesdays", "constraint")
    with m.turn("We'd rather have the site meetings at nine, Tom's on nights.") as turn:
        turn.final_response("Noted: nine o'clock.")
    assert len(m.store.agent().decisions.in_force()) == 2
    said = (
        "Change of plan on the back doors: the bifold frames look chunky whether they're open "
        "or shut. We'd rather have a three-panel sliding door, same width, same grey."
    )
    with m.turn(said, session_id="s9") as turn:
        turn.final_response("I'll ask for a revised drawing.")
    in_force = sorted(e.summary for e in m.store.agent().decisions.in_force())
    assert in_force[0] == "No site meetings or trade calls on Wednesdays"
    assert in_force[1].startswith("Rear opening: ") and "three-panel sliding door" in in_force[1]
    context = m.format_context_for_prompt()
    assert "four-panel aluminium bifold door, 3.6 m" not in context
    assert "three-panel sliding door" in context
    m.close()


def test_a_users_change_of_plan_records_the_decision_not_the_errand(home: Path) -> None:
    """chatbot-otterbrook: the record in force read "Our DPO came back and chat transcripts
    must be deleted after 30 days, not 90. Please change the purge job today." The decision
    is what holds; the request for the day's work around it is not part of it."""
    with MemoryManager("finn", home) as m:
        m.record_decision(
            "Chat transcripts are kept 90 days in the conversations table, then deleted by "
            "the nightly purge job"
        )
        said = (
            "Change of plan on transcripts: our DPO came back and chat transcripts must be "
            "deleted after 30 days, not 90. Please change the purge job today."
        )
        with m.turn(said) as turn:
            turn.final_response("Done: the purge job now deletes transcripts after 30 days.")
        new = [e.summary for e in m.store.agent().decisions.in_force()]
    assert new == ["Our DPO came back and chat transcripts must be deleted after 30 days, not 90."]


def test_a_turn_logs_no_trace_of_memorys_own_tools(home: Path) -> None:
    """The model's memory tools (recall_memory, save_fact, ...) act on memory already: the
    turn keeps their calls in the transcript, and logs no TOOL_USE line for them that recall
    would hand back (`recall_memory(query="Where do the embeddings ...")` was a hit in
    chatbot-otterbrook). The agent's other tools are logged as before."""
    m = MemoryManager("finn", home)
    with m.turn("Where do the embeddings live?", session_id="s1") as turn:
        hits = m.recall_memory("embeddings store")
        turn.tool_executed("recall_memory", {"query": "Where do the embeddings live"}, hits)
        m.save_fact("vector_store", "pgvector in Postgres 16", "general")
        turn.tool_executed("save_fact", {"key": "vector_store"}, {"ok": True})
        turn.tool_executed("read_file", {"path": "app/db.py"}, "import psycopg")
        turn.final_response("pgvector, in the app's Postgres.")
    traces = [e["content"] for e in m.read_log(50) if e["entry_type"] == "TOOL_USE"]
    assert traces == ['read_file(path="app/db.py") -> ok, 14 chars'], traces
    calls = [x.name for x in m.memory.sessions.messages("s1") if x.role == "tool_call"]
    assert calls == ["recall_memory", "save_fact", "read_file"]
    m.close()


def test_memory_tools_name_every_tool_of_the_mcp_catalogue(home: Path) -> None:
    from memstrata.integrations.memory_tools import MemoryTools
    from memstrata.mcp.tools import declarations
    from memstrata.operations.loop import MEMORY_TOOLS

    with Store(home, agent="finn") as s:
        listed = {spec.name for spec in declarations(s.config)}
    methods = {n for n in vars(MemoryTools) if not n.startswith("_")}
    assert listed | methods == MEMORY_TOOLS, sorted(MEMORY_TOOLS ^ (listed | methods))


def test_a_failed_tools_entry_tells_what_went_wrong_not_the_banner(home: Path) -> None:
    """A test run's failure prints pytest's header first and the assertion last; the
    TOOL_USE line kept the first 160 characters ("platform linux ..."), so neither recall
    nor the context could say what failed (chatbot-otterbrook, class 3)."""
    output = (
        "Exit code 1\n"
        "============================= test session starts ==============================\n"
        "platform linux -- Python 3.12.3, pytest-8.3.2, pluggy-1.5.0\n"
        "rootdir: /srv/otterbrook-assistant\nconfigfile: pyproject.toml\ncollected 14 items\n\n"
        "tests/test_redact.py ........F.....                                        [100%]\n\n"
        "E       AssertionError: postcode 'bs16qw' was not redacted\n"
        "FAILED tests/test_redact.py::test_postcode_lower_case - AssertionError\n"
        "========================= 1 failed, 13 passed in 0.84s =========================="
    )
    with MemoryManager("finn", home) as m:
        with m.turn("Run the redaction tests") as turn:
            turn.tool_executed(
                "shell", {"cmd": "uv run pytest tests/test_redact.py"}, None, error=output
            )
        (entry,) = [e for e in m.read_log(20) if e["entry_type"] == "TOOL_USE"]
    assert "postcode 'bs16qw' was not redacted" in entry["content"], entry["content"]
    assert "platform linux" not in entry["content"]
    assert "not redacted" in entry["metadata"]["error"]


def test_a_turn_claims_nothing_complete_while_tasks_are_open(home: Path) -> None:
    """chatbot-otterbrook: sessions began from "Task complete: I've added 30 harder questions
    to the eval ... Run it?" while the eval task was open (and "continue" found nothing to
    resume). A turn where the agent set no NOW records the outcome as the Stop hook does
    when a task is open (the user's goal, the open tasks as next steps, the last turn);
    "Task complete" (seed 002) only when no task is open."""
    m = MemoryManager("finn", home)
    task = m.store.agent().tasks.add("Run the eval set v2 (150 questions) and report the pass rate")
    with m.turn("I've added 30 harder questions to the eval. Run it?") as turn:
        turn.tool_executed("shell", {"cmd": "uv run python -m app.eval run"}, "started")
        turn.final_response("The eval run is started; results in about 14 minutes.")
    state = m.memory.now.state()
    assert not state.objective.lower().startswith("task complete"), state.objective
    assert any(task.id in step for step in state.next_steps), state.next_steps
    assert "The eval run is started" in m.memory.now.read()
    m.store.agent().tasks.update(task.id, status="done")
    with m.turn("Thanks, that's all") as turn:
        turn.final_response("Bye")
    assert m.memory.now.state().objective == "Task complete: Thanks, that's all"
    m.close()


def test_conversation_compacted_flushes_the_session_and_returns_its_tail(home: Path) -> None:
    """docs/misses/chatbot-otterbrook.md: the Python API had no call for "the model's
    conversation was compacted" (the hooks' PreCompact, then SessionStart "compact"); a
    builder's loop could only compact LOG.md. `conversation_compacted` flushes the session's
    durable items to CONTEXT.md and returns the context with the session's last messages."""
    with MemoryManager("finn", home) as m:
        sid = m.store.agent().sessions.start("s1").id
        with m.turn("Wire the report export.", session_id=sid) as turn:
            turn.tool_executed("shell", {"cmd": "make export"}, "12 passed")
            turn.final_response("Decision: the report export runs nightly at 02:00 UTC.")
        log_before = len(m.memory.log.tail(100))
        text = m.conversation_compacted(sid, workspace="/home/finn/reports")
        assert "## Workspace\n/home/finn/reports\n" in text
        tail = text.split("## This session before the compaction", 1)[1].split("\n## ", 1)[0]
        assert "- user: Wire the report export." in tail
        flushed = m.store.agent().context.read()
        assert "the report export runs nightly at 02:00 UTC" in flushed
        assert "12 passed" not in flushed and "make export" not in flushed
        assert len(m.memory.log.tail(100)) == log_before  # LOG.md is not compacted by it
