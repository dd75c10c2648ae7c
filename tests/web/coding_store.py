"""Ten sessions of a coding agent, recorded the way Claude Code's hooks record them.

Issue 24 tried the web app "as a new user would after ten sessions of a coding agent":
this builds that store. Each session is a Claude Code transcript (`tests.claude_code`'s
records, timestamped with the real clock so LOG entries and transcript messages interleave
as they do live) driven through the hook functions in process: UserPromptSubmit, one
PostToolUse (or PostToolUseFailure) per tool call, Stop (which captures the transcript:
each tool call is then a LOG TOOL_USE entry plus a transcript tool_use and tool_result),
and the agent's own calls (NOW, tasks, a decision, a memory file). A few ledger entries in
two rooms and a second agent complete the home page.

    home = build(tmp / "store")          # agent "finn" (project, room-1) and "mira"
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.web.conftest import CONFIG  # the same roles and tokens as every web test

from memstrata import Store
from memstrata.operations import hooks

AGENT = "finn"
ROOM = "room-1"
FIRST_PROMPT = "Add rate limiting to the login endpoint"
GOALS = [
    FIRST_PROMPT,
    "Write tests for the rate limiter",
    "Fix the failing token refresh test",
    "We decided: use Redis for the rate limit counters",
    "Document the auth flow in docs/auth.md",
    "Refactor the session store into its own module",
    "Add a PDF export of the audit log",
    "Speed up the user search query",
    "Review the migration for the users table",
    "Prepare the release notes for 1.4",
]
FILES = ["app/auth.py", "app/limits.py", "tests/test_auth.py", "app/sessions.py", "docs/auth.md"]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class Transcript:
    """A Claude Code session: its transcript file and the hook payloads it sends."""

    folder: Path
    session_id: str = field(default_factory=lambda: str(uuid.uuid4()))

    @property
    def path(self) -> Path:
        return self.folder / f"{self.session_id}.jsonl"

    def _record(self, role: str, content: Any) -> None:
        rec = {
            "type": role,
            "uuid": str(uuid.uuid4()),
            "sessionId": self.session_id,
            "timestamp": _now(),
            "message": {"role": role, "content": content},
        }
        self.folder.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(rec) + "\n")

    def payload(self, event: str, **fields: Any) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "transcript_path": str(self.path),
            "cwd": str(self.folder),
            "hook_event_name": event,
            **fields,
        }

    def prompt(self, text: str) -> dict[str, Any]:
        self._record("user", text)
        return self.payload("UserPromptSubmit", prompt=text)

    def tool(
        self, name: str, tool_input: dict[str, Any], response: Any, failed: str | None = None
    ) -> dict[str, Any]:
        call = "toolu_" + uuid.uuid4().hex[:20]
        self._record(
            "assistant", [{"type": "tool_use", "id": call, "name": name, "input": tool_input}]
        )
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": call,
            "content": failed if failed is not None else json.dumps(response)[:500],
        }
        if failed is not None:
            block["is_error"] = True
            self._record("user", [block])
            return self.payload(
                "PostToolUseFailure",
                tool_name=name,
                tool_input=tool_input,
                tool_use_id=call,
                error=failed,
            )
        self._record("user", [block])
        return self.payload(
            "PostToolUse",
            tool_name=name,
            tool_input=tool_input,
            tool_response=response,
            tool_use_id=call,
        )

    def answer(self, text: str) -> dict[str, Any]:
        self._record("assistant", [{"type": "text", "text": text}])
        return self.payload("Stop", stop_hook_active=False, last_assistant_message=text)


def _session(store: Store, folder: Path, n: int, goal: str) -> str:
    t = Transcript(folder)
    hooks.user_prompt_submit(store, AGENT, t.prompt(goal))
    target = FILES[n % len(FILES)]
    calls: list[tuple[str, dict[str, Any], Any, str | None]] = [
        ("Read", {"file_path": target}, {"content": "x" * 120}, None),
        ("Grep", {"pattern": "rate_limit", "path": "app"}, {"matches": 3}, None),
        ("Edit", {"file_path": target, "old_string": "a", "new_string": "b"}, {"ok": True}, None),
    ]
    if n == 2:
        calls.append(
            ("Bash", {"command": "pytest -q tests/test_auth.py"}, None, "1 failed: test_refresh")
        )
    calls.append(("Bash", {"command": "pytest -q"}, {"stdout": "12 passed", "exit_code": 0}, None))
    for name, args, response, failed in calls:
        payload = t.tool(name, args, response, failed)
        if failed is not None:
            hooks.post_tool_use_failure(store, AGENT, payload)
        else:
            hooks.post_tool_use(store, AGENT, payload)
    mem = store.agent(AGENT)
    if n == 6:
        mem.now.update(
            "PDF export blocked: WeasyPrint needs pango on the CI image",
            ["ask about the CI image", "else switch to ReportLab"],
            blockers=["pango missing on CI"],
        )
    hooks.stop(store, AGENT, t.answer(f"Done: {goal.lower()}. All 12 tests pass."))
    return t.session_id


def build(home: Path) -> dict[str, Any]:
    """The store of issue 24's new user: ten sessions of finn, a ledger, a second agent."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(CONFIG, encoding="utf-8")
    folder = home.parent / "transcripts"
    out: dict[str, Any] = {"sessions": []}
    with Store(home, agent=AGENT, room=ROOM) as store:
        mem = store.agent(AGENT)
        mem.context.write("# Finn\n\nThe auth service of the shop.\n\n- Prefers small PRs.\n")
        t1 = mem.tasks.add("Rate limit the login endpoint", priority=1)
        mem.tasks.update(t1.id, status="in_progress")
        t2 = mem.tasks.add("PDF export of the audit log", priority=2)
        mem.tasks.update(t2.id, status="blocked")
        mem.tasks.add("Release notes for 1.4", priority=3)
        done = mem.tasks.add("Fix the token refresh test", priority=1)
        mem.tasks.update(done.id, status="done")
        out["tasks"] = {"in_progress": t1.id, "blocked": t2.id, "done": done.id}
        for n, goal in enumerate(GOALS):
            out["sessions"].append(_session(store, folder, n, goal))
        mem.decisions.record("Never log raw passwords, even at debug level", "constraint")
        mem.context.write(  # a second version: the history page has a diff to show
            "# Finn\n\nThe auth service of the shop.\n\n- Prefers small PRs.\n"
            "- Rate limit counters live in Redis.\n"
        )
        mem.files.write("notes/plan.md", "# Plan\n\n- rate limit login\n- then the PDF export\n")
        out["decision"] = store.ledger.publish(
            "decision", "Use argon2id for new password hashes", tags=["auth"]
        ).id
    with Store(home, agent="mira", room="room-2") as store:
        store.agent().now.update("Refactor billing", ["split the invoice module"])
        out["mira_entry"] = store.ledger.publish(
            "warning", "Billing API is rate limited", tags=["billing"]
        ).id
    return out
