"""Issue 19 item 5: compaction digests carry meaning only.

"The LOG compaction digest files every 'Final response' under Decisions", and a digest's
objective read "Task complete: Start the PDF export. Also, remember that I prefer dark
mode...". Driven through `memstrata compact` (a real process over a real store).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from memstrata import Store
from memstrata.operations.loop import AgentLoop

EXE = shutil.which("memstrata", path=str(Path(sys.executable).parent)) or "memstrata"


def _compact(home: Path) -> str:
    r = subprocess.run(
        [EXE, "--home", str(home), "--agent", "me", "--json", "compact", "--force"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    with Store(home, agent="me") as s:
        [entry] = s.agent().log.entries()
    return entry.content


def test_digest_files_a_final_response_under_decisions_only_when_it_states_one(
    home: Path,
) -> None:
    with Store(home, agent="me") as s:
        log = s.agent().log
        log.append("USER_FEEDBACK", "Start the PDF export", {"event": "user_intent"})
        log.append(
            "SYSTEM",
            "Final response: I read the three templates and the tests pass.",
            {"event": "final_response"},
        )
        log.append(
            "SYSTEM",
            "Final response: We decided to switch the PDF library to ReportLab.",
            {"event": "final_response"},
        )
        log.append(
            "SYSTEM",
            "stop hook: captured 26 new message(s) of session "
            "9b1f0c2e-4d4b-4a7e-9d55-0f1e2a3b4c5d; last: assistant: done",
            {"event": "stop", "captured": 26, "session": "9b1f0c2e-4d4b-4a7e-9d55-0f1e2a3b4c5d"},
        )
    digest = _compact(home)
    decisions = [x for x in digest.splitlines() if x.startswith("- Decision:")]
    assert decisions == ["- Decision: We decided to switch the PDF library to ReportLab."]
    assert "captured 26" not in digest and "9b1f0c2e" not in digest  # bookkeeping is gone


def test_digest_objective_is_the_users_goal_not_task_complete(home: Path) -> None:
    with AgentLoop.open("me", home) as loop, loop.turn("Start the PDF export") as turn:
        turn.final_response("The endpoint exists.")  # seed 002: the loop owns NOW
    with Store(home, agent="me") as s:
        assert s.agent().now.state().objective == "Task complete: Start the PDF export"
    digest = _compact(home)
    objective = [x for x in digest.splitlines() if x.startswith("- Objective:")]
    assert objective == ["- Objective: Start the PDF export"]


def test_digest_objective_is_no_question_asked_when_the_user_set_a_goal(home: Path) -> None:
    """chatbot-otterbrook s10: most turns were questions asked in a launch review, the loop
    ended the last with "Task complete: How should Brook word ...?", and the digest's
    objective was that question. A question asked is a goal only when nothing else is."""
    with AgentLoop.open("me", home) as loop:
        with loop.turn("Let's get Brook onto the staging cluster today.") as turn:
            turn.final_response("Brook is on staging (3 replicas).")
        for asked in ("What did Microsoft say about the quota?", "How should Brook word it?"):
            with loop.turn(asked) as turn:
                turn.final_response("Plain British English, short sentences.")
    digest = _compact(home)
    objective = [x for x in digest.splitlines() if x.startswith("- Objective:")]
    assert objective == ["- Objective: Let's get Brook onto the staging cluster today."]
