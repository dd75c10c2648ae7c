"""Issue 19 through Claude Code's hooks: what the agent gets back is what matters.

Each test drives `memstrata hook ...` as a process with the JSON Claude Code sends and a
real transcript file (`tests/claude_code.py`), where the issue's bugs showed: the Stop
hook overwriting the agent's own NOW or claiming "Task complete" over open tasks, the
pre-compact flush writing tool text into CONTEXT.md, the session-start context made of
`Read(...)` lines, capture notices and UUIDs, a failed tool recorded twice.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.claude_code import EXE, UUID, ClaudeSession, noise_share

from memstrata import Store

OK = {"stdout": "", "stderr": "", "interrupted": False, "isImage": False}


def _agent_sets_now(home: Path, status: str, *steps: str) -> None:
    """The agent's own call (what MCP `update_status` does), from another process."""
    args = [EXE, "--home", str(home), "--agent", "me", "now", "set", status]
    for step in steps:
        args += ["--step", step]
    subprocess.run(args, check=True, capture_output=True, timeout=60)


def _decide(home: Path, text: str) -> str:
    """The agent's own `record_decision` (here through the CLI, another process)."""
    args = [EXE, "--home", str(home), "--agent", "me", "decisions", "record", text]
    subprocess.run(args, check=True, capture_output=True, timeout=60)
    return text


def _now(home: Path) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    with Store(home, agent="me") as s:
        state = s.agent().now.state()
    return state.objective, state.next_steps, state.blockers


def test_stop_hook_keeps_the_now_the_agent_set_during_the_turn(home: Path, tmp_path: Path) -> None:
    """Issue 19: "In session 7 the agent set NOW to 'PDF export blocked ...'. The Stop hook
    of the same turn replaced it with 'Task complete: Start the PDF export ...'"."""
    s = ClaudeSession(home, tmp_path / "proj")
    s.hook("user-prompt-submit", s.prompt("Start the PDF export."))
    s.call(
        "post-tool-use",
        s.tool("Bash", {"command": "python -c 'import weasyprint'"}, {**OK, "stderr": "no pango"}),
    )
    _agent_sets_now(
        home,
        "PDF export blocked: WeasyPrint needs pango, missing in the CI image",
        "ask about the CI image",
        "else switch to ReportLab",
    )
    s.hook("stop", s.answer("WeasyPrint needs pango; I asked about the CI image."))
    objective, steps, _ = _now(home)
    assert objective == "PDF export blocked: WeasyPrint needs pango, missing in the CI image"
    assert steps == ("ask about the CI image", "else switch to ReportLab")
    with Store(home, agent="me") as st:  # the outcome is still logged
        finals = [
            e for e in st.agent().log.entries() if e.metadata.get("event") == "final_response"
        ]
    assert [e.content for e in finals] == [
        "Final response: WeasyPrint needs pango; I asked about the CI image."
    ]


def test_stop_hook_records_the_outcome_without_claiming_open_tasks_complete(
    home: Path, tmp_path: Path
) -> None:
    """Issue 19: session 8 started "with a false 'complete' and no next steps"; after
    "continue" NOW read "Task complete: OK, we decided: 15-minute access tokens..."."""
    with Store(home, agent="me") as st:
        task = st.agent().tasks.add("Export invoices as PDF", priority=1)
        st.agent().tasks.update(task.id, status="in_progress")
    s = ClaudeSession(home, tmp_path / "proj")
    s.hook(
        "user-prompt-submit",
        s.prompt("Start the PDF export. Also, remember that I prefer dark mode in every UI."),
    )
    s.hook("stop", s.answer("The export endpoint exists; the invoice template is next."))
    objective, steps, _ = _now(home)
    assert not objective.lower().startswith("task complete")
    assert objective == "Start the PDF export."
    assert any(task.id in step and "in_progress" in step for step in steps), steps
    s.hook("user-prompt-submit", s.prompt("continue"))
    s.hook("stop", s.answer("The template renders the invoice header now."))
    assert _now(home)[0] == "Start the PDF export."
    s.hook("user-prompt-submit", s.prompt("OK, we decided: 15-minute access tokens."))
    s.hook("stop", s.answer("Noted: access tokens live 15 minutes."))
    assert _now(home)[0] == "Start the PDF export."
    with Store(home, agent="me") as st:
        text = st.agent().now.read()
    assert "complete" not in text.lower()
    assert "The template renders the invoice header now." not in text  # replaced by the newer
    assert "Noted: access tokens live 15 minutes." in text  # the last outcome, said as one


def test_pre_compact_flush_writes_no_tool_text_into_context_md(home: Path, tmp_path: Path) -> None:
    """Issue 19: "The pre-compact flush wrote `- Decision: [tool_result] ok` and
    `- Constraint: [tool_use mcp__memstrata__log_activity] {"entry_type": ...}` into
    CONTEXT.md, the file the user curates"."""
    s = ClaudeSession(home, tmp_path / "proj")
    s.prompt("Decision: we ship the PDF export on Friday.")
    s.tool(
        "mcp__memstrata__log_activity",
        {"entry_type": "THOUGHT", "content": "constraint: the billing API is rate limited"},
        "ok",
    )
    s.tool("Bash", {"command": "pytest -q"}, {**OK, "stdout": "ok"})
    s.answer("Done: logged it.")
    r = s.hook("pre-compact", s.payload("PreCompact", trigger="auto"), "--json")
    assert json.loads(r.stdout)["flushed"] is True
    context = (home / "agents" / "me" / "memory" / "CONTEXT.md").read_text()
    assert "we ship the PDF export on Friday" in context
    assert "[tool_result]" not in context and "[tool_use" not in context
    assert "entry_type" not in context and "- Decision: ok" not in context
    assert "rate limited" not in context  # the agent's own log call, not a stated constraint


def test_session_start_context_is_meaning_not_traces(home: Path, tmp_path: Path) -> None:
    """Issue 19: "The session-start context is about 40% noise": `Read(...)`, `Edit(...)`,
    pytest runs, "stop hook: captured 26 new message(s) of session <uuid>", a failed tool
    twice. Now: a summary per session, no trace lines, no UUIDs, each failure once."""
    s = ClaudeSession(home, tmp_path / "proj")
    with Store(home, agent="me") as st:
        task = st.agent().tasks.add("Export invoices as PDF", priority=1)
        st.agent().tasks.update(task.id, status="in_progress")
    s.hook("user-prompt-submit", s.prompt("Start the PDF export."))
    for i in range(8):
        s.call("post-tool-use", s.tool("Read", {"file_path": f"/proj/app/m{i}.py"}, {"file": {}}))
    s.call(
        "post-tool-use",
        s.tool("Edit", {"file_path": "/proj/app/pdf.py", "old_string": "a", "new_string": "b"}, OK),
    )
    s.call("post-tool-use", s.tool("Bash", {"command": "pytest -q tests/test_pdf.py"}, OK))
    s.call(
        "post-tool-use-failure",
        s.tool("Bash", {"command": "pytest -q tests/test_render.py"}, None, failed="1 failed"),
    )
    s.hook("stop", s.answer("The export endpoint exists; test_render fails on fonts."))
    context = ClaudeSession(home, tmp_path / "proj").context()
    assert "Read(" not in context and "Edit(" not in context
    assert "captured" not in context and not UUID.search(context)
    assert context.count("tests/test_render.py") == 1  # the failed tool once: an open error
    assert "Start the PDF export." in context and "8 reads" in context and "1 edit" in context
    assert "2 test runs (1 failed)" in context
    assert noise_share(context) <= 0.15, noise_share(context)


def test_failed_tool_is_one_error_entry_with_its_call_id(home: Path, tmp_path: Path) -> None:
    """Issue 19: "a failed tool appears twice (TOOL_USE error and ERROR)"; DESIGN-recall:
    the LOG entry of a tool call carries `tool_use_id`."""
    s = ClaudeSession(home, tmp_path / "proj")
    payload = s.tool("Edit", {"file_path": "a.py"}, None, failed="String to replace not found")
    s.hook("post-tool-use-failure", payload)
    ok = s.tool("Read", {"file_path": "a.py"}, {"file": {}})
    s.hook("post-tool-use", ok)
    with Store(home, agent="me") as st:
        entries = st.agent().log.entries()
    assert [e.entry_type for e in entries] == ["ERROR", "TOOL_USE"]
    error, read = entries
    assert error.metadata["tool_use_id"] == payload["tool_use_id"]
    assert error.metadata["tool"] == "Edit" and "String to replace not found" in error.content
    assert read.metadata["tool_use_id"] == ok["tool_use_id"]


def test_captured_transcript_keeps_tool_call_ids_and_writes_no_capture_notice(
    home: Path, tmp_path: Path
) -> None:
    """DESIGN-recall: captured transcript messages keep their tool call id (so a call's
    LOG entry, call and result can be collapsed); bookkeeping serves nobody in LOG.md."""
    s = ClaudeSession(home, tmp_path / "proj")
    s.prompt("Read the config")
    call = s.tool("Read", {"file_path": "config.toml"}, {"file": {"content": "x = 1"}})
    s.hook("stop", s.answer("x is 1."))
    with Store(home, agent="me") as st:
        msgs = st.agent().sessions.messages(s.session_id)
        log = st.agent().log.entries()
    roles = [(m.role, m.id) for m in msgs]
    assert ("tool_call", call["tool_use_id"]) in roles and (
        "tool_result",
        call["tool_use_id"],
    ) in roles
    assert [m.content for m in msgs if m.role in ("user", "assistant")] == [
        "Read the config",
        "x is 1.",
    ]
    assert not any("captured" in e.content for e in log)


def test_hooks_record_what_the_user_and_the_answer_clearly_state(
    home: Path, tmp_path: Path
) -> None:
    """Issue 19 item 2 through the hooks: "we decided ...", "let's go with X instead of Y"
    become first-class records, the later one replacing the earlier; a question, an "ok"
    or an answer that decides nothing records nothing. A kind the agent recorded itself in
    a turn is not transcribed from that turn (its own record comes first)."""
    s = ClaudeSession(home, tmp_path / "proj")
    s.hook("user-prompt-submit", s.prompt("We decided to use WeasyPrint for the PDF export."))
    s.hook("stop", s.answer("I read the templates; the export needs a font config."))
    s.hook("user-prompt-submit", s.prompt("ok"))
    s.hook("stop", s.answer("Decision: invoices render at A4 with 2 cm margins."))
    s.hook(
        "user-prompt-submit",
        s.prompt(
            "Let's go with ReportLab instead of WeasyPrint, it needs no pango. Never ship"
            " a PDF without a page number."
        ),
    )
    s.hook("stop", s.answer("Switched the export to ReportLab."))
    s.hook("user-prompt-submit", s.prompt("What did we decide about the PDF library?"))
    s.hook("stop", s.answer("ReportLab, since WeasyPrint needs pango."))
    with Store(home, agent="me") as st:
        history = st.agent().decisions.history()
    said = {e.summary: (e.kind, by) for e, by in history}
    weasy = next(e for e, _ in history if "WeasyPrint for the PDF" in e.summary)
    report = next(e for e, _ in history if e.summary.startswith("Let's go with ReportLab"))
    assert said[weasy.summary] == ("decision", report.id)  # replaced, kept as history
    assert said["Invoices render at A4 with 2 cm margins."] == ("decision", None)  # no label
    assert said["Never ship a PDF without a page number."] == ("constraint", None)
    assert len(history) == 4  # nothing from the question, the "ok" or the plain answer
    s.hook("user-prompt-submit", s.prompt("We decided to cap invoices at 500 lines."))
    mine = _decide(home, "Split invoices longer than 500 lines into parts")
    s.hook("stop", s.answer("We decided to split long invoices into parts."))
    with Store(home, agent="me") as st:
        live = [e.summary for e in st.agent().decisions.in_force(("decision",))]
    assert mine in live and not any("500" in x and x != mine for x in live)
    context = ClaudeSession(home, tmp_path / "proj").context()
    decisions = context.split("## Decisions and constraints in force\n", 1)[1].split("\n## ")[0]
    assert "ReportLab instead of WeasyPrint" in decisions and "use WeasyPrint" not in decisions
    assert "Never ship a PDF without a page number." in decisions
