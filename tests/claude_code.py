"""A scripted Claude Code session: the transcript file it writes and the hook JSON it sends.

Claude Code appends one JSON record per message to `transcript_path` (assistant text
and `tool_use` blocks, tool results as `user` records with `tool_result` blocks) and
runs the configured hooks with a JSON object on stdin. `ClaudeSession` writes the
same records and builds the same payloads, so tests can drive memstrata's hooks the
way a real session does: `hook(...)` runs `memstrata hook EVENT` as a process (the
surface where the issue 19 bugs showed), `call(...)` runs the same hook function in
process for the bulk of tool events (identical input, no interpreter start-up each).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

EXE = shutil.which("memstrata", path=str(Path(sys.executable).parent)) or "memstrata"
UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
# Lines of a context that carry tool traces or hook bookkeeping (issue 19 "noise"):
# a tool call as logged (`Read(file_path=...) -> ok, 120 chars`), transcript tool text,
# capture notices, and session UUIDs.
TRACE = re.compile(
    r"\b[A-Z][A-Za-z_]*\((?:[a-z_]+=|\)).*->\s*(?:ok|error)\b|\[tool_use\b|\[tool_result\]|"
    r"\btool_(?:call|result|use):|hook: captured \d+|captured \d+ new message"
)


def noise_share(text: str) -> float:
    """Characters on lines with tool traces, capture notices or UUIDs / all characters."""
    lines = text.splitlines()
    total = sum(len(x) + 1 for x in lines) or 1
    noisy = sum(len(x) + 1 for x in lines if TRACE.search(x) or UUID.search(x))
    return noisy / total


@dataclass
class ClaudeSession:
    """One Claude Code session (its id is a UUID, as Claude Code's are)."""

    home: Path
    folder: Path
    agent: str = "me"
    session_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    clock: int = 0
    last_prompt: str = ""

    @property
    def transcript(self) -> Path:
        return self.folder / f"{self.session_id}.jsonl"

    def _ts(self) -> str:
        self.clock += 1
        return f"2026-11-20T10:{self.clock // 60:02d}:{self.clock % 60:02d}Z"

    def _record(self, role: str, content: Any, **extra: Any) -> str:
        rid = str(uuid.uuid4())
        rec = {
            "type": role,
            "uuid": rid,
            "sessionId": self.session_id,
            "timestamp": self._ts(),
            "cwd": str(self.folder),
            "message": {"role": role, "content": content},
            **extra,
        }
        self.folder.mkdir(parents=True, exist_ok=True)
        with self.transcript.open("a", encoding="utf-8") as f:
            f.write(json.dumps(rec) + "\n")
        return rid

    def payload(self, event: str, **fields: Any) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "transcript_path": str(self.transcript),
            "cwd": str(self.folder),
            "permission_mode": "default",
            "hook_event_name": event,
            **fields,
        }

    # -- what happens in a turn -------------------------------------------------------
    def prompt(self, text: str) -> dict[str, Any]:
        self.last_prompt = text
        self._record("user", text)
        return self.payload("UserPromptSubmit", prompt=text)

    def tool(
        self, name: str, tool_input: dict[str, Any], response: Any, *, failed: str | None = None
    ) -> dict[str, Any]:
        """A tool call and its result in the transcript; the PostToolUse (or, with `failed`,
        PostToolUseFailure) payload."""
        call_id = "toolu_" + uuid.uuid4().hex[:20]
        self._record(
            "assistant", [{"type": "tool_use", "id": call_id, "name": name, "input": tool_input}]
        )
        text = (
            failed
            if failed is not None
            else (response if isinstance(response, str) else json.dumps(response)[:2000])
        )
        block = {"type": "tool_result", "tool_use_id": call_id, "content": text}
        if failed is not None:
            block["is_error"] = True
        self._record("user", [block])
        if failed is not None:
            return self.payload(
                "PostToolUseFailure",
                tool_name=name,
                tool_input=tool_input,
                tool_use_id=call_id,
                error=failed,
                is_interrupt=False,
            )
        return self.payload(
            "PostToolUse",
            tool_name=name,
            tool_input=tool_input,
            tool_response=response,
            tool_use_id=call_id,
        )

    def answer(self, text: str) -> dict[str, Any]:
        """The turn's final text; the Stop payload (with `last_assistant_message`)."""
        self._record("assistant", [{"type": "text", "text": text}])
        return self.payload("Stop", stop_hook_active=False, last_assistant_message=text)

    # -- running hooks ---------------------------------------------------------------
    def hook(
        self, event: str, payload: dict[str, Any], *args: str, cwd: Path | None = None
    ) -> subprocess.CompletedProcess[str]:
        """`memstrata --home H --agent A hook EVENT` as a process, the payload on stdin."""
        r = subprocess.run(
            [EXE, "--home", str(self.home), "--agent", self.agent, *args, "hook", event],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            timeout=120,
            cwd=cwd,
            env=os.environ.copy(),
        )
        assert r.returncode == 0, r.stderr
        assert "Traceback" not in r.stderr and "memstrata hook" not in r.stderr, r.stderr
        return r

    def call(self, event: str, payload: dict[str, Any]) -> Any:
        """The same hook in process (`memstrata.operations.hooks`), for the bulk of tool events."""
        from memstrata import Store
        from memstrata.operations import hooks

        fn = {
            "post-tool-use": hooks.post_tool_use,
            "post-tool-use-failure": hooks.post_tool_use_failure,
            "user-prompt-submit": hooks.user_prompt_submit,
            "stop": hooks.stop,
        }[event]
        with Store(self.home, agent=self.agent) as store:
            return fn(store, self.agent, payload)

    def context(self, source: str = "startup") -> str:
        """What a new session starts with: the SessionStart hook's additionalContext."""
        r = self.hook("session-start", self.payload("SessionStart", source=source))
        return str(json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"])


# A tool call's result as Claude Code reports a quiet success.
OK = {"stdout": "", "stderr": "", "interrupted": False, "isImage": False}


def section(context: str, title: str) -> str:
    """The lines of the context section whose title starts with `title`."""
    for part in context.split("\n## ")[1:]:
        if part.startswith(title):
            return part.split("\n", 1)[1] if "\n" in part else ""
    return ""


def cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`memstrata --home home --agent me ARGS` as a process; it must succeed."""
    r = subprocess.run(
        [EXE, "--home", str(home), "--agent", "me", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    return r
