"""The session-start context ranked by value under its budget (issue 19 item 3).

NOW as the agent left it; open tasks with status and blockers; decisions and constraints
in force; preferences; open errors, each once; facts; then the activity as one line per
session. Also for stores written before: old capture notices and a failure logged twice
(TOOL_USE error + ERROR) are not shown as such.
"""

from __future__ import annotations

from pathlib import Path

from tests.claude_code import noise_share

from memstrata import Store
from memstrata.assembly.context import assemble_context
from memstrata.operations.loop import log_tool

TS = 1_800_000_000.0


def _titles(text: str) -> list[str]:
    """The context's section titles (not the headings inside a fenced memory file)."""
    out, fenced = [], False
    for x in text.splitlines():
        fenced = (fenced or x.startswith("<memory ")) and x != "</memory>"
        if x.startswith("## ") and not fenced:
            out.append(x)
    return out


def _section(text: str, title: str) -> str:
    return text.split(title + "\n", 1)[1].split("\n## ", 1)[0]


def _old_store_session(s: Store, sid: str) -> None:
    """What the hooks of earlier versions wrote for one Claude Code turn."""
    log = s.agent().log
    log.append(
        "USER_FEEDBACK", "Wire the invoice PDF endpoint", {"event": "user_intent", "session": sid}
    )
    for i in range(12):
        log_tool(s, "me", "Read", {"file_path": f"/p/app/f{i}.py"}, {"file": {}}, session=sid)
    log_tool(s, "me", "Edit", {"file_path": "/p/app/pdf.py"}, {"ok": 1}, session=sid)
    log_tool(s, "me", "Bash", {"command": "pytest -q"}, {"exit_code": 1}, session=sid)
    log.append(
        "ERROR",
        "Error: tool Bash failed: exit code 1",
        {"tool": "Bash", "error": "exit code 1", "session": sid},
    )
    log.append(
        "SYSTEM",
        f"stop hook: captured 26 new message(s) of session {sid}; last: assistant: "
        "[tool_use Read] {}",
        {"session": sid, "event": "stop", "captured": 26},
    )
    log.append(
        "SYSTEM",
        "Final response: The endpoint renders; one test fails on fonts.",
        {"event": "final_response", "session": sid},
    )


def test_sections_come_in_order_of_value_and_hold_no_traces(home: Path) -> None:
    sid = "6f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f"
    with Store(home, agent="me") as s:
        mem = s.agent()
        mem.now.update("PDF export blocked: fonts", ["ask for the CI image"])
        done = mem.tasks.add("Set up CI", priority=2)
        mem.tasks.update(done.id, status="done")
        wip = mem.tasks.add("Export invoices as PDF", priority=1)
        mem.tasks.update(wip.id, status="in_progress")
        mem.tasks.add("Email invoices", priority=3, blocked_by=[wip.id])
        old = mem.decisions.record("Use WeasyPrint for PDFs")
        mem.decisions.record("Use ReportLab for PDFs", replaces=old.id)
        mem.decisions.record("Never email a PDF without a page number", "constraint")
        mem.decisions.record("Dark mode in every UI", "preference")
        mem.facts.set("db_engine", "PostgreSQL 16", "config")
        _old_store_session(s, sid)
        mem.log.append("THOUGHT", "fonts come from the CI image, not the repo")
        text = assemble_context(s, "me", now=TS, workspace="/p").text
    assert _titles(text)[2:9] == [
        "## Current status (NOW)",
        "## Open tasks",
        "## Decisions and constraints in force",
        "## Preferences",
        "## Open errors (nothing later resolved them)",
        "## Known facts",
        "## Recent activity (LOG.md, by session)",
    ]
    tasks = _section(text, "## Open tasks")
    assert tasks.splitlines()[0].startswith(f"- {wip.id} [in_progress]")
    assert f"(blocked by {wip.id})" in tasks and "Set up CI" not in tasks
    decisions = _section(text, "## Decisions and constraints in force")
    assert decisions.splitlines()[0].startswith("- constraint: Never email a PDF")
    assert "Use ReportLab for PDFs" in decisions and "WeasyPrint" not in text
    errors = _section(text, "## Open errors (nothing later resolved them)").strip().splitlines()
    assert len(errors) == 1 and "Bash (pytest -q) failed" in errors[0]  # logged twice, once here
    activity = _section(text, "## Recent activity (LOG.md, by session)")
    assert "goal: Wire the invoice PDF endpoint" in activity
    assert "12 reads, 1 edit, 1 test run (1 failed)" in activity
    assert "outcome: The endpoint renders; one test fails on fonts." in activity
    assert "fonts come from the CI image, not the repo" in activity  # the agent's own note
    assert sid not in text and "captured" not in text and "Read(" not in text
    assert noise_share(text) == 0.0


def test_an_error_a_later_success_resolved_is_not_open(home: Path) -> None:
    with Store(home, agent="me") as s:
        for outcome in ({"exit_code": 1}, {"exit_code": 0}):
            log_tool(s, "me", "Bash", {"command": "pytest -q tests/a.py"}, outcome)
        for _ in range(3):
            log_tool(s, "me", "Bash", {"command": "ruff check src"}, {"exit_code": 1})
        text = assemble_context(s, "me", now=TS).text
    errors = _section(text, "## Open errors (nothing later resolved them)")
    assert "pytest" not in errors  # the later run passed
    assert (
        errors.strip().splitlines()
        == [next(x for x in errors.splitlines() if "ruff check src" in x)]
        and "(×3)" in errors
    )  # three failures of one call: one line


def test_a_tight_budget_drops_activity_before_what_stands(home: Path) -> None:
    with Store(home, agent="me") as s:
        mem = s.agent()
        mem.now.update("Ship the billing migration", ["dry run"])
        mem.decisions.record("Bill in EUR from March")
        for i in range(60):
            mem.log.append("THOUGHT", f"note {i} about the billing tables and their indexes")
        full = assemble_context(s, "me", now=TS).text
        tight = assemble_context(s, "me", now=TS, budget_chars=1400).text
    assert "note 59" in full and len(tight) <= 1400
    assert "Bill in EUR from March" in tight and "Ship the billing migration" in tight
    assert "note 0 " not in tight  # the oldest activity went first


def test_a_compaction_does_not_cut_a_session_or_hide_its_open_error(home: Path) -> None:
    """The context reads the latest compaction archive before LOG.md: the session the
    compaction cut keeps its goal, and a failure nothing resolved stays an open error
    (told by its telling line, not "Exit code 1")."""
    from memstrata.lifecycle.compaction import compact_log

    sid = "s-pdf"
    with Store(home, agent="me") as s:
        log = s.agent().log
        log.append(
            "USER_FEEDBACK", "Start the PDF receipts", {"event": "user_intent", "session": sid}
        )
        log.append(
            "ERROR",
            "Error: tool Bash failed: Exit code 1",
            {
                "tool": "Bash",
                "args": {"command": "pytest -q tests/test_receipts.py"},
                "error": "Exit code 1\nFAILED tests/test_receipts.py::test_1 - OSError: cannot "
                "load library 'libpango-1.0-0'",
                "session": sid,
            },
        )
        assert compact_log(s, "me", force=True).compacted
        log.append(
            "SYSTEM",
            "Final response: Blocked on pango.",
            {"event": "final_response", "session": sid},
        )
        text = assemble_context(s, "me", now=TS).text
    errors = _section(text, "## Open errors (nothing later resolved them)")
    assert "OSError: cannot load library 'libpango-1.0-0'" in errors and "Exit code" not in errors
    activity = _section(text, "## Recent activity (LOG.md, by session)")
    assert (
        "goal: Start the PDF receipts; 1 test run (1 failed); outcome: Blocked on pango."
        in activity
    )


def test_tool_calls_an_agent_logs_by_hand_in_their_shape_are_counted_not_shown(home: Path) -> None:
    with Store(home, agent="me") as s:
        log = s.agent().log
        log.append("TOOL_USE", 'web_search("Paris e-scooter vote 2023") -> 10 results')
        log.append(
            "TOOL_USE", 'Bash(command="pytest -x -q tests/test_payments.py") -> ok, 12 passed'
        )
        log.append("TOOL_USE", 'fetch_pdf("https://journal.example/paper.pdf") -> error')
        log.append("ERROR", "HTTP 403 Forbidden: the journal PDF is paywalled")
        log.append("TOOL_USE", "loaded prices.csv by hand")  # a note, not a call
        text = assemble_context(s, "me", now=TS).text
    assert "web_search(" not in text and "Bash(" not in text and "fetch_pdf(" not in text
    # web_search is a search tool in the one table of tool names (`reading.tools`): a read
    assert "1 read, 1 test run, 1 other call (1 failed; fetch_pdf)" in text
    errors = _section(text, "## Open errors (nothing later resolved them)").strip().splitlines()
    assert len(errors) == 1 and "paywalled" in errors[0] and "fetch_pdf" in errors[0]
    assert "loaded prices.csv by hand" in text


def test_a_long_open_error_keeps_its_innermost_cause(home: Path) -> None:
    """A failed call whose one-line error states where it failed first and why last (an
    Ansible FAILED line wrapping a tool's message) shows both ends in the context, not the
    first 160 characters that stop before the cause."""
    why = (
        'fatal: [stream1]: FAILED! => {"changed": false, "msg": "restic init: Fatal: create '
        "repository at b2:station-backups-offsite-nightly failed after 3 retries with backoff: "
        "b2_create_bucket: 401: unauthorized: application "
        'key is restricted to bucket web"}'
    )
    with Store(home, agent="me") as s:
        log_tool(s, "me", "Bash", {"command": "ansible-playbook site.yml"}, None, error=why)
        text = assemble_context(s, "me", now=TS).text
    errors = _section(text, "## Open errors (nothing later resolved them)")
    assert "fatal: [stream1]: FAILED!" in errors, errors
    assert "application key is restricted to bucket web" in errors, errors
    assert len(errors.strip().splitlines()[0]) < 300, errors
    assert "…" in errors  # the middle went


def test_a_past_outcome_does_not_restate_a_decision_replaced_since(home: Path) -> None:
    """chatbot-otterbrook (stale context 3/38): s02's final response said "Transcripts are
    kept 90 days and then purged nightly."; the user changed it to 30 days in s08, and the
    s08-s10 contexts still quoted the 90 days on s02's activity line. Through the Python
    API: the outcome keeps its other sentences, not the replaced one."""
    from memstrata import MemoryManager

    with MemoryManager("devbot", home) as m:
        old = m.record_decision(
            "Chat transcripts are kept 90 days in the conversations table, then deleted by "
            "the nightly purge job"
        )
        with m.turn("Carry on with the article index.", session_id="s02") as turn:
            turn.final_response(
                "The index is built: 3,912 chunks in Qdrant. Transcripts are kept 90 days "
                "and then purged nightly."
            )
    with MemoryManager("devbot", home) as m:
        m.record_decision("Chat transcripts are deleted after 30 days, not 90", replaces=old)
        with m.turn("Where are we?", session_id="s03") as turn:
            text = turn.before_llm_call()
    activity = _section(text, "## Recent activity (LOG.md, by session)")
    assert "3,912 chunks in Qdrant" in activity
    assert "kept 90 days" not in text
    assert "deleted after 30 days" in _section(text, "## Decisions and constraints in force")


def test_a_past_outcome_in_bullets_loses_the_one_that_restates_a_replaced_decision(
    home: Path,
) -> None:
    """events-heronsgate (stale context 3 of 29 checks): a final reply in bullets becomes an
    outcome of clauses joined by "; " ("Rooms confirmed; Deposit paid; Catering: <the
    caterer replaced since>, £14.50 a head; ..."), one sentence to `without_replaced`, so
    the replaced caterer stayed in every later context. Each clause is told apart."""
    from memstrata import MemoryManager

    with MemoryManager("planner", home) as m:
        old = m.record_decision(
            "Print shop: Inkwell Press, 400 programmes on recycled paper, £0.60 a copy"
        )
        with m.turn("Can you book the print run?", session_id="s03") as turn:
            turn.final_response(
                "- Print run booked for 3 March\n- Proofs due on 24 February\n"
                "- Print shop: Inkwell Press, £0.60 a copy\n- Delivery to the hall is free"
            )
    with MemoryManager("planner", home) as m:
        m.record_decision("Print shop: Greenleaf Print, 400 programmes, £0.55 a copy", replaces=old)
        with m.turn("Where are we?", session_id="s04") as turn:
            text = turn.before_llm_call()
    activity = _section(text, "## Recent activity (LOG.md, by session)")
    assert "Proofs due on 24 February" in activity
    assert "Delivery to the hall is free" in activity
    assert "Inkwell Press" not in text
    assert "Greenleaf Print" in _section(text, "## Decisions and constraints in force")
