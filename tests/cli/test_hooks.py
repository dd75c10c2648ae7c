"""Session hooks through the installed CLI: start prints context; pre-compact/stop capture."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from memstrata import Store

EXE = shutil.which("memstrata", path=str(Path(sys.executable).parent)) or "memstrata"


def _run(home: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([EXE, "--home", str(home), "--agent", "coder", *args],
                          input=stdin, capture_output=True, text=True, timeout=60)


def test_session_start_prints_context_json(home: Path) -> None:
    s = Store(home, agent="coder")
    s.agent().now.update("Fix the flaky login test", ["rerun CI"])
    s.close()
    r = _run(home, "hook", "session-start")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "SessionStart"
    assert "Fix the flaky login test" in out["additionalContext"]


def test_pre_compact_and_stop_capture_transcript_once(home: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    lines = [
        {"type": "user", "uuid": "u1", "timestamp": "2026-11-22T10:00:00Z",
         "message": {"role": "user", "content": "please fix the login test"}},
        {"type": "assistant", "uuid": "a1", "timestamp": "2026-11-22T10:00:05Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "Looking at tests/test_login.py"},
                                                      {"type": "tool_use", "name": "Read", "input": {"path": "x"}}]}},
        {"type": "summary", "summary": "ignored"},
    ]
    transcript.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    hook = json.dumps({"session_id": "abc-123", "transcript_path": str(transcript)})
    r = _run(home, "--json", "hook", "pre-compact", stdin=hook)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"session_id": "abc-123", "appended": 2, "skipped": 0}
    r2 = _run(home, "--json", "hook", "stop", stdin=hook)
    assert json.loads(r2.stdout)["appended"] == 0
    s = Store(home, agent="coder")
    msgs = s.agent().sessions.messages("abc-123")
    assert [m.id for m in msgs] == ["u1", "a1"] and "[tool_use Read]" in msgs[1].content
    log = [e.content for e in s.agent().log.tail(5)]
    assert any("pre-compact hook: captured 2" in c for c in log)
    audit = [json.loads(x) for x in (home / "events.jsonl").read_text().splitlines()]
    assert any(a["event"] == "memory:flush" and a["payload"] == {"sessionId": "abc-123"} for a in audit)
    s.close()
    bad = _run(home, "hook", "stop", stdin="{not json")
    assert bad.returncode == 2 and "not JSON" in bad.stderr and "Traceback" not in bad.stderr
