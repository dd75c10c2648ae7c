"""Claude Code hooks as real processes: Claude Code-shaped JSON on stdin, files and exit codes checked.

Seed 002 (automatic logging through the hooks), seed 001 (ignore memory), seed 003
(agent-controlled mode) and issue 9 item 10 (hooks never block by accident).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memstrata import Store

EXE = shutil.which("memstrata", path=str(Path(sys.executable).parent)) or "memstrata"


def _run(
    home: Path, *args: str, stdin: str = "", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [EXE, "--home", str(home), "--agent", "coder", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


def _payload(event: str, tmp_path: Path, **fields: Any) -> str:
    """The common input fields every Claude Code hook receives, plus the event's own."""
    base = {
        "session_id": "abc-123",
        "transcript_path": str(tmp_path / "t.jsonl"),
        "cwd": str(tmp_path),
        "permission_mode": "default",
        "hook_event_name": event,
    }
    return json.dumps({**base, **fields})


def _transcript(path: Path, n: int, *, start: int = 0) -> list[str]:
    """A Claude Code transcript of `n` alternating user/assistant records (plus noise)."""
    ids, lines = [], []
    for i in range(start, start + n):
        role = "user" if i % 2 == 0 else "assistant"
        content: Any = (
            f"message {i} about the login test"
            if role == "user"
            else [
                {"type": "text", "text": f"reply {i} about the login test"},
                {"type": "tool_use", "name": "Read", "input": {"path": f"f{i}.py"}},
            ]
        )
        ids.append(f"uuid-{i:03d}")
        lines.append(
            {
                "type": role,
                "uuid": ids[-1],
                "timestamp": f"2026-11-22T10:{i // 60:02d}:{i % 60:02d}Z",
                "message": {"role": role, "content": content},
            }
        )
        if i % 4 == 0:
            lines.append({"type": "summary", "summary": "ignored"})
    with path.open("a") as f:
        f.write("".join(json.dumps(x) + "\n" for x in lines))
    return ids


def _log_bytes(home: Path) -> bytes:
    path = home / "agents" / "coder" / "memory" / "LOG.md"
    return path.read_bytes() if path.exists() else b""


def test_hook_session_start_prints_context_json(home: Path) -> None:
    s = Store(home, agent="coder")
    s.agent().now.update("Fix the flaky login test", ["rerun CI"])
    s.close()
    r = _run(home, "hook", "session-start")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "SessionStart"
    assert "Fix the flaky login test" in out["additionalContext"]


def test_hook_session_start_uses_session_id_and_source(home: Path, tmp_path: Path) -> None:
    _transcript(tmp_path / "t.jsonl", 6)
    assert _run(home, "hook", "pre-compact", stdin=_payload("PreCompact", tmp_path)).returncode == 0
    resumed = _run(
        home, "hook", "session-start", stdin=_payload("SessionStart", tmp_path, source="compact")
    )
    assert resumed.returncode == 0, resumed.stderr
    text = json.loads(resumed.stdout)["hookSpecificOutput"]["additionalContext"]
    section = text.split("## This session before the compaction (its last ", 1)[1]
    assert "user: message 4 about the login test" in section
    fresh = _run(
        home, "hook", "session-start", stdin=_payload("SessionStart", tmp_path, source="startup")
    )
    assert (
        "## This session" not in json.loads(fresh.stdout)["hookSpecificOutput"]["additionalContext"]
    )


def test_hook_user_prompt_submit_logs_intent_and_injects_now_and_log(
    home: Path, tmp_path: Path
) -> None:
    with Store(home, agent="coder") as s:
        s.agent().now.update("Fix the flaky login test", ["rerun CI"])
        s.agent().log.append("THOUGHT", "the retry decorator hides the race")
    r = _run(
        home,
        "hook",
        "user-prompt-submit",
        stdin=_payload("UserPromptSubmit", tmp_path, prompt="Now make the test deterministic"),
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "UserPromptSubmit"
    assert "Fix the flaky login test" in out["additionalContext"]
    assert "the retry decorator hides the race" in out["additionalContext"]
    with Store(home, agent="coder") as s:
        last = s.agent().log.entries()[-1]
    assert (last.entry_type, last.content) == ("USER_FEEDBACK", "Now make the test deterministic")
    assert last.metadata["event"] == "user_intent" and last.metadata["session"] == "abc-123"


def test_hook_user_prompt_submit_ignore_memory_injects_nothing(home: Path, tmp_path: Path) -> None:
    with Store(home, agent="coder") as s:
        s.agent().now.update("Secret objective", [])
    r = _run(
        home,
        "hook",
        "user-prompt-submit",
        stdin=_payload("UserPromptSubmit", tmp_path, prompt="Ignore memory: what is 2+2?"),
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""  # nothing reaches the model's context for this turn
    with Store(home, agent="coder") as s:
        last = s.agent().log.entries()[-1]
    assert last.entry_type == "USER_FEEDBACK" and last.metadata["ignore_memory"] is True


def test_hook_post_tool_use_logs_a_compact_entry(home: Path, tmp_path: Path) -> None:
    output = "\n".join(f"tests/test_login.py::test_{i} PASSED" for i in range(600))
    r = _run(
        home,
        "hook",
        "post-tool-use",
        stdin=_payload(
            "PostToolUse",
            tmp_path,
            tool_name="Bash",
            tool_use_id="toolu_01",
            tool_input={"command": "pytest -q tests/test_login.py", "description": "run the tests"},
            tool_response={"stdout": output, "stderr": "", "interrupted": False, "isImage": False},
        ),
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""
    with Store(home, agent="coder") as s:
        [entry] = s.agent().log.entries()
    assert entry.entry_type == "TOOL_USE" and entry.content.startswith("Bash(")
    assert "pytest -q tests/test_login.py" in entry.content and len(entry.content) < 400
    assert entry.metadata["outcome"] == "ok" and entry.metadata["result_chars"] > len(output)
    assert entry.metadata["tool_use_id"] == "toolu_01" and entry.metadata["session"] == "abc-123"
    assert b"test_599 PASSED" not in _log_bytes(home)  # the output itself is never logged
    failed = _run(
        home,
        "hook",
        "post-tool-use",
        stdin=_payload(
            "PostToolUse",
            tmp_path,
            tool_name="Bash",
            tool_input={"command": "false"},
            tool_response={"stdout": "", "stderr": "boom", "interrupted": True},
        ),
    )
    assert failed.returncode == 0
    with Store(home, agent="coder") as s:
        ok, error = s.agent().log.entries()
    # a failed tool is one entry (issue 19: it appeared twice, TOOL_USE error and ERROR)
    assert ok.entry_type == "TOOL_USE" and error.entry_type == "ERROR"
    assert error.metadata["outcome"] == "error" and error.metadata["args"] == {"command": "false"}


def test_hook_pre_compact_and_stop_capture_transcript_once(home: Path, tmp_path: Path) -> None:
    ids = _transcript(tmp_path / "t.jsonl", 2)
    r = _run(
        home,
        "--json",
        "hook",
        "pre-compact",
        stdin=_payload("PreCompact", tmp_path, trigger="auto"),
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {
        "session_id": "abc-123",
        "appended": 3,
        "skipped": 0,
        "remaining": 0,
        "flushed": True,
        "flush": "no new durable items",
        "items": [],
    }
    r2 = _run(
        home, "--json", "hook", "stop", stdin=_payload("Stop", tmp_path, stop_hook_active=False)
    )
    assert json.loads(r2.stdout)["appended"] == 0
    with Store(home, agent="coder") as s:
        msgs = s.agent().sessions.messages("abc-123")
        assert [m.id for m in msgs if m.role in ("user", "assistant")] == ids
        assert [(m.role, m.name, m.input) for m in msgs if m.role == "tool_call"] == [
            ("tool_call", "Read", {"path": "f1.py"})  # a message of its own, not text
        ]
        log = [e.content for e in s.agent().log.entries()]
    # no capture notice in LOG.md (the transcript is the record): only the Stop hook's entry
    assert log == ["Final response: reply 1 about the login test"]
    audit = [json.loads(x) for x in (home / "events.jsonl").read_text().splitlines()]
    assert any(
        a["event"] == "memory:flush" and a["payload"] == {"sessionId": "abc-123"} for a in audit
    )


def test_hook_stop_with_nothing_new_writes_nothing(home: Path, tmp_path: Path) -> None:
    _transcript(tmp_path / "t.jsonl", 4)
    assert _run(home, "hook", "stop", stdin=_payload("Stop", tmp_path)).returncode == 0
    session = home / "agents" / "coder" / "sessions" / "abc-123.jsonl"
    log_before, session_before = _log_bytes(home), session.read_bytes()
    for _ in range(3):  # every turn ends with a Stop hook
        r = _run(home, "hook", "stop", stdin=_payload("Stop", tmp_path, stop_hook_active=False))
        assert r.returncode == 0, r.stderr
    assert _log_bytes(home) == log_before
    assert session.read_bytes() == session_before


def test_hook_long_transcript_is_captured_in_order(home: Path, tmp_path: Path) -> None:
    ids = _transcript(tmp_path / "t.jsonl", 9)  # 9 records: 13 messages (4 tool calls)
    got = []
    for _ in range(4):  # more messages than one call captures: the rest come next time, after
        r = _run(
            home, "--json", "hook", "stop", "--max-capture", "4", stdin=_payload("Stop", tmp_path)
        )
        assert r.returncode == 0, r.stderr
        got.append(json.loads(r.stdout)["appended"])
    assert got == [4, 4, 4, 1]
    ids += _transcript(tmp_path / "t.jsonl", 2, start=9)
    _run(home, "hook", "stop", "--max-capture", "4", stdin=_payload("Stop", tmp_path))
    with Store(home, agent="coder") as s:
        msgs = s.agent().sessions.messages("abc-123")
    assert [m.id for m in msgs if m.role != "tool_call"] == ids
    # each tool call right after the assistant message it belongs to, in transcript order
    assert [m.id for m in msgs if m.role == "tool_call"] == [f"{i}-tool1" for i in ids[1::2]]
    assert all(
        msgs[i - 1].id + "-tool1" == m.id for i, m in enumerate(msgs) if m.role == "tool_call"
    )


def test_capture_over_the_bound_keeps_transcript_order(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The library path with the module's own bound: older messages are never stored after newer."""
    from memstrata.operations import hooks

    monkeypatch.setattr(hooks, "MAX_CAPTURE", 3)
    ids = _transcript(tmp_path / "t.jsonl", 8)
    payload = json.loads(_payload("Stop", tmp_path))
    with Store(home, agent="coder") as s:
        for _ in range(4):  # 8 records, 11 messages
            hooks.capture_transcript(s, "coder", payload, event="stop")
        msgs = s.agent().sessions.messages("abc-123")
    assert [m.id for m in msgs if m.role != "tool_call"] == ids
    assert all(
        msgs[i - 1].id + "-tool1" == m.id for i, m in enumerate(msgs) if m.role == "tool_call"
    )


def test_hook_internal_errors_exit_0_with_a_message_on_stderr(home: Path, tmp_path: Path) -> None:
    for event in ("stop", "pre-compact", "user-prompt-submit", "post-tool-use", "session-start"):
        bad = _run(home, "hook", event, stdin="{not json")
        assert bad.returncode == 0, event  # exit 2 would block Stop / PreCompact in Claude Code
        assert "not JSON" in bad.stderr and "Traceback" not in bad.stderr
        assert bad.stdout == ""
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")  # the store cannot even be opened
    broken = subprocess.run(
        [EXE, "--home", str(not_a_dir / "store"), "--agent", "coder", "hook", "stop"],
        input=_payload("Stop", tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert broken.returncode == 0 and "memstrata hook stop" in broken.stderr
    assert "Traceback" not in broken.stderr


def test_hook_agent_controlled_mode_writes_nothing(home: Path, tmp_path: Path) -> None:
    with Store(home, agent="coder") as s:
        s.agent().now.update("Fix the flaky login test", [])
    _transcript(tmp_path / "t.jsonl", 4)
    mode = {"MEMSTRATA_MEMORY_MODE": "agent-controlled"}
    now_file = home / "agents" / "coder" / "memory" / "NOW.md"
    before = now_file.read_bytes()
    prompt = _run(
        home,
        "hook",
        "user-prompt-submit",
        env=mode,
        stdin=_payload("UserPromptSubmit", tmp_path, prompt="carry on"),
    )
    assert prompt.returncode == 0, prompt.stderr
    assert "Fix the flaky login test" in prompt.stdout  # reading is still fine
    events_before = (home / "events.jsonl").read_text()
    for event, name in (
        ("post-tool-use", "PostToolUse"),
        ("post-tool-use-failure", "PostToolUseFailure"),
        ("pre-compact", "PreCompact"),
        ("stop", "Stop"),
    ):
        r = _run(
            home,
            "hook",
            event,
            env=mode,
            stdin=_payload(
                name,
                tmp_path,
                tool_name="Bash",
                tool_input={"command": "ls"},
                tool_response={"stdout": "a", "exit_code": 1},
                error="boom",
                last_assistant_message="Done.",
            ),
        )
        assert r.returncode == 0, r.stderr
    assert _log_bytes(home) == b""
    events = (home / "events.jsonl").read_text()[len(events_before) :]
    assert "memory:flush" not in events and "memory:write" not in events
    assert not (home / "agents" / "coder" / "sessions").exists()
    assert now_file.read_bytes() == before
    start = _run(home, "hook", "session-start", env=mode, stdin=_payload("SessionStart", tmp_path))
    assert (
        "Fix the flaky login test"
        in json.loads(start.stdout)["hookSpecificOutput"]["additionalContext"]
    )


def _turn_transcript(path: Path, prompt: str, answer: str, *, start: int = 0) -> None:
    """One Claude Code turn: the prompt, a tool call and its result, then the final text."""
    rows = [
        {"type": "user", "uuid": f"p{start}", "message": {"role": "user", "content": prompt}},
        {
            "type": "assistant",
            "uuid": f"a{start}",
            "message": {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "Bash",
                        "input": {"command": "pytest"},
                    }
                ],
            },
        },
        {
            "type": "user",
            "uuid": f"r{start}",
            "message": {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "3 passed"}
                ],
            },
        },
        {
            "type": "assistant",
            "uuid": f"f{start}",
            "message": {"role": "assistant", "content": [{"type": "text", "text": answer}]},
        },
    ]
    with path.open("a") as f:
        f.write(
            "".join(json.dumps({**r, "timestamp": "2026-11-22T10:00:00Z"}) + "\n" for r in rows)
        )


def test_hook_stop_logs_the_final_response_and_records_the_outcome(
    home: Path, tmp_path: Path
) -> None:
    """Seed 002 "after execution": the final response is logged, once (a Stop hook that sees
    the same response again writes nothing), and, while the agent owns no NOW, NOW.md
    records the outcome with the user's goal, never "Task complete" (issue 19). Once the
    agent sets NOW itself, the hooks leave it as the agent left it."""
    _turn_transcript(
        tmp_path / "t.jsonl", "Wire the OAuth callback", "All done:\n\n  the callback is wired."
    )
    r = _run(
        home, "--json", "hook", "stop", stdin=_payload("Stop", tmp_path, stop_hook_active=False)
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["final_response"] is True
    with Store(home, agent="coder") as s:
        final = [e for e in s.agent().log.entries() if e.metadata.get("event") == "final_response"]
        state = s.agent().now.state()
        text = s.agent().now.read()
    assert [e.content for e in final] == ["Final response: All done:\nthe callback is wired."]
    assert final[0].entry_type == "SYSTEM" and final[0].metadata["session"] == "abc-123"
    assert state.objective == "Wire the OAuth callback" and state.next_steps == ()
    assert "answered: All done: the callback is wired." in text
    assert "complete" not in text.lower()
    before = _log_bytes(home)
    again = _run(
        home, "--json", "hook", "stop", stdin=_payload("Stop", tmp_path, stop_hook_active=True)
    )
    assert again.returncode == 0 and json.loads(again.stdout)["final_response"] is False
    assert _log_bytes(home) == before
    # The next turn: the agent sets NOW itself; newer Claude Code sends the answer itself.
    _turn_transcript(tmp_path / "t.jsonl", "Now add a test", "stale line", start=1)
    prompt = _payload("UserPromptSubmit", tmp_path, prompt="Now add a test")
    assert _run(home, "hook", "user-prompt-submit", stdin=prompt).returncode == 0
    assert _run(home, "now", "set", "Test the callback", "--step", "cover the 401").returncode == 0
    _run(
        home, "hook", "stop", stdin=_payload("Stop", tmp_path, last_assistant_message="Test added.")
    )
    with Store(home, agent="coder") as s:
        assert s.agent().log.entries()[-1].content == "Final response: Test added."
        state = s.agent().now.state()
    assert (state.objective, state.next_steps) == ("Test the callback", ("cover the 401",))


def test_hook_failed_tool_logs_an_error_and_recovery_steps(home: Path, tmp_path: Path) -> None:
    """Seed 002 self-annealing through the hooks: a failed tool leaves an ERROR entry and,
    while the agent owns no NOW (here: the outcome a Stop hook recorded), the recovery
    steps in NOW.md, the interrupted objective kept as a blocker (also after a second
    failure). A NOW the agent set is never replaced (issue 19): the error is logged only."""
    _turn_transcript(tmp_path / "t.jsonl", "Ship OAuth", "The callback is half wired.")
    assert _run(home, "hook", "stop", stdin=_payload("Stop", tmp_path)).returncode == 0
    r = _run(
        home,
        "hook",
        "post-tool-use",
        stdin=_payload(
            "PostToolUse",
            tmp_path,
            tool_name="Bash",
            tool_input={"command": "false"},
            tool_response={"stdout": "", "stderr": "boom", "exit_code": 1},
        ),
    )
    assert r.returncode == 0, r.stderr
    with Store(home, agent="coder") as s:
        error = s.agent().log.entries()[-1]  # one entry per failure (issue 19)
        state = s.agent().now.state()
    assert error.entry_type == "ERROR" and error.content == "Error: tool Bash failed: boom"
    assert error.metadata["tool"] == "Bash" and error.metadata["session"] == "abc-123"
    assert state.objective == "Error encountered - Recovery needed"
    assert state.next_steps == ("Review LOG.md", "Analyze root cause", "Implement fix")
    assert "Interrupted objective: Ship OAuth" in state.blockers
    failure = _run(
        home,
        "hook",
        "post-tool-use-failure",
        stdin=_payload(
            "PostToolUseFailure",
            tmp_path,
            tool_name="Edit",
            tool_use_id="toolu_9",
            tool_input={"file_path": "a.py"},
            error="String to replace not found",
            is_interrupt=False,
        ),
    )
    assert failure.returncode == 0, failure.stderr
    with Store(home, agent="coder") as s:
        error = s.agent().log.entries()[-1]
        state = s.agent().now.state()
    assert error.metadata["outcome"] == "error" and error.metadata["tool_use_id"] == "toolu_9"
    assert error.content == "Error: tool Edit failed: String to replace not found"
    assert (
        state.blockers[0] == error.content and "Interrupted objective: Ship OAuth" in state.blockers
    )
    assert _run(home, "now", "set", "Fix the OAuth edit", "--step", "re-read a.py").returncode == 0
    third = _run(
        home,
        "hook",
        "post-tool-use-failure",
        stdin=_payload("PostToolUseFailure", tmp_path, tool_name="Bash", error="exit code 2"),
    )
    assert third.returncode == 0, third.stderr
    with Store(home, agent="coder") as s:
        assert s.agent().log.entries()[-1].content == "Error: tool Bash failed: exit code 2"
        state = s.agent().now.state()
    assert (state.objective, state.next_steps) == ("Fix the OAuth edit", ("re-read a.py",))


def test_hook_pre_compact_flushes_durable_items_into_long_term_memory(
    home: Path, tmp_path: Path
) -> None:
    """Seed 004 "memory flush before compaction": the transcript's decisions and constraints
    reach CONTEXT.md before Claude Code compacts, and `memory:flush` says so."""
    rows = [
        {
            "uuid": "u1",
            "type": "user",
            "timestamp": "2026-01-01T00:00:00Z",
            "message": {
                "role": "user",
                "content": "Decision: we ship on Friday. Never deploy on weekends.",
            },
        },
        {
            "uuid": "a1",
            "type": "assistant",
            "timestamp": "2026-01-01T00:00:01Z",
            "message": {"role": "assistant", "content": [{"type": "text", "text": "Understood."}]},
        },
    ]
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(x) + "\n" for x in rows))
    r = _run(
        home,
        "--json",
        "hook",
        "pre-compact",
        stdin=_payload("PreCompact", tmp_path, trigger="auto"),
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["appended"] == 2 and out["flushed"] is True and out["items"]
    context = (home / "agents" / "coder" / "memory" / "CONTEXT.md").read_text()
    assert "we ship on Friday" in context and "Never deploy on weekends" in context
    events = [json.loads(x) for x in (home / "events.jsonl").read_text().splitlines()]
    assert [e["payload"] for e in events if e["event"] == "memory:flush"] == [
        {"sessionId": "abc-123"}
    ]
