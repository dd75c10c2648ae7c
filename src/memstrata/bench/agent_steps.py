"""How each abstract step of a scenario reaches memstrata: the surface a real agent uses.

    step        Claude Code agent (hooks + MCP)              MCP-only agent
    prompt      transcript + UserPromptSubmit hook           session_append (if it keeps one)
    tool/work   transcript + PostToolUse(Failure) hook       session_append; log_activity if told
    now         MCP update_status                            the same
    decide      MCP decision tool if `tools/list` has one,   the same
                else log_activity THOUGHT "Decision: ..."
    fact        MCP save_fact                                the same
    context     MCP memory_write / memory_replace CONTEXT.md the same
    task        MCP task_add / task_update                   the same
    reply       transcript + Stop hook                       session_append (if it keeps one)
    compact     PreCompact hook, compaction records,         -
                SessionStart(source=compact)
    publish     -                                            MCP memory_publish (supersedes)
    ledger      -                                            memory_query / _search / _get_context
    ask         the prompt (hook), then recall_memory        recall_memory

In a Claude Code session every MCP call is also a tool call of the transcript
(`mcp__memstrata__<tool>`) and fires PostToolUse, as Claude Code does.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from memstrata.bench import agent_noise as noise
from memstrata.bench.agent_drive import ToolFailed
from memstrata.values import field, value_type

if TYPE_CHECKING:
    from memstrata.bench.agent_drive import HookRunner, McpAgent, Transcript, VirtualClock

SECONDS = {
    "prompt": 45,
    "now": 10,
    "decide": 15,
    "fact": 10,
    "log": 10,
    "context": 25,
    "task": 10,
    "recall": 10,
    "reply": 30,
    "compact": 60,
    "publish": 15,
    "ledger": 10,
    "ask": 30,
}
TOOL_SECONDS = 15
MCP_PREFIX = "mcp__memstrata__"
# How a "record a decision" tool names its parameters (first match wins).
TEXT_PARAMS = ("decision", "text", "content", "summary", "statement", "what")
REPLACES_PARAMS = (
    "supersedes",
    "replaces",
    "replace",
    "supersedes_id",
    "replaces_id",
    "previous",
    "previous_id",
    "overrides",
)
WHY_PARAMS = ("why", "rationale", "reason", "because", "detail", "details")
KIND_PARAMS = ("kind", "type", "category")


@value_type(frozen=True)
class DecisionTool:
    """A one-call "record a decision" tool found in `tools/list`, its parameters mapped."""

    name: str
    text: str
    replaces: str | None = None
    why: str | None = None
    kind: str | None = None
    kinds: tuple[str, ...] = ()

    def args(
        self, text: str, why: str | None, replaces: str | None, kind: str
    ) -> dict[str, Any] | None:
        """The call's arguments, or None when the tool cannot record this kind."""
        out: dict[str, Any] = {self.text: text}
        if self.kind is not None:
            if self.kinds and kind not in self.kinds:
                return None
            out[self.kind] = kind
        elif kind != "decision":
            return None
        if why and self.why:
            out[self.why] = why
        if replaces and self.replaces:
            out[self.replaces] = replaces
        return out


def find_decision_tool(listed: dict[str, dict[str, Any]]) -> tuple[DecisionTool | None, str]:
    """The decision tool of a `tools/list` (name -> inputSchema), and how it was chosen."""
    names = sorted(
        (n for n in listed if "decision" in n.lower() or n.lower() in ("decide", "memory_decide")),
        key=lambda n: (n != "record_decision", n),
    )
    if not names:
        return None, "no decision tool listed: log_activity THOUGHT 'Decision: ...'"
    for name in names:
        schema = listed[name]
        props: dict[str, Any] = schema.get("properties", {})
        pick = {
            role: next((p for p in cands if p in props), None)
            for role, cands in (
                ("text", TEXT_PARAMS),
                ("replaces", REPLACES_PARAMS),
                ("why", WHY_PARAMS),
                ("kind", KIND_PARAMS),
            )
        }
        unmapped = set(schema.get("required", [])) - {p for p in pick.values() if p}
        if pick["text"] is None or unmapped:
            continue
        kind_schema = props.get(pick["kind"] or "", {})
        kinds = tuple(kind_schema.get("enum", ())) if isinstance(kind_schema, dict) else ()
        tool = DecisionTool(name, pick["text"], pick["replaces"], pick["why"], pick["kind"], kinds)
        return tool, f"{name} (listed by the server; parameters {json.dumps(pick)})"
    return None, f"{', '.join(names)} listed but not understood: log_activity THOUGHT fallback"


@value_type
class SessionIO:
    """What one session's steps write through: its MCP agent, and in Claude Code its
    transcript and hooks."""

    mcp: McpAgent
    agent: str
    session_name: str
    hooks: HookRunner | None = None
    transcript: Transcript | None = None
    transcripts: str = "none"  # "hooks" | "session_append" | "none"
    clock: VirtualClock | None = None
    problems: list[str] = field(default_factory=list)

    def hook_payload(self, event: str, **fields: Any) -> dict[str, Any]:
        assert self.transcript is not None
        return {
            "session_id": self.transcript.session_id,
            "transcript_path": str(self.transcript.path),
            "cwd": self.transcript.cwd,
            "permission_mode": "default",
            "hook_event_name": event,
            **fields,
        }

    def fire(self, event: str, name: str, **fields: Any) -> dict[str, Any] | None:
        assert self.hooks is not None
        return self.hooks.fire(event, self.hook_payload(name, **fields))

    async def call(self, tool: str, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """An MCP call the agent makes; in Claude Code also a transcript tool call + hook."""
        tool_id = None
        if self.transcript is not None:
            tool_id = self.transcript.tool_use(MCP_PREFIX + tool, args)
        try:
            text, data = await self.mcp.call(tool, args)
        except ToolFailed as exc:
            self.problems.append(f"{self.session_name}: MCP {exc}")
            if self.transcript is not None and tool_id is not None:
                self.transcript.tool_result(tool_id, str(exc), is_error=True)
                self.fire(
                    "post-tool-use-failure",
                    "PostToolUseFailure",
                    tool_name=MCP_PREFIX + tool,
                    tool_input=args,
                    tool_use_id=tool_id,
                    error=str(exc),
                    is_interrupt=False,
                )
            return "", {}
        if self.transcript is not None and tool_id is not None:
            self.transcript.tool_result(tool_id, text, data or text)
            self.fire(
                "post-tool-use",
                "PostToolUse",
                tool_name=MCP_PREFIX + tool,
                tool_input=args,
                tool_response=data or text,
                tool_use_id=tool_id,
            )
        return text, data

    async def said(self, role: str, text: str) -> None:
        """A prompt or reply, in an MCP-only agent's own transcript (session_append)."""
        if self.transcripts == "session_append":
            await self.call(
                "session_append",
                {"session_id": self.session_name, "role": role, "content": text},
            )

    async def tool(
        self,
        name: str,
        tool_input: dict[str, Any],
        text: str,
        response: Any,
        *,
        fail: str | None = None,
        log: str | None = None,
    ) -> None:
        """A tool the agent runs that is not memory (a read, an edit, a shell, a fetch)."""
        if self.clock is not None:
            self.clock.advance(TOOL_SECONDS)
        if self.transcript is not None:
            tool_id = self.transcript.tool_use(name, tool_input)
            if fail:
                self.transcript.tool_result(tool_id, fail, is_error=True)
                self.fire(
                    "post-tool-use-failure",
                    "PostToolUseFailure",
                    tool_name=name,
                    tool_input=tool_input,
                    tool_use_id=tool_id,
                    error=fail,
                    is_interrupt=False,
                )
            else:
                self.transcript.tool_result(tool_id, text, response)
                self.fire(
                    "post-tool-use",
                    "PostToolUse",
                    tool_name=name,
                    tool_input=tool_input,
                    tool_response=response,
                    tool_use_id=tool_id,
                )
            return
        if self.transcripts == "session_append":
            call_id = f"tool_{self.mcp.calls:04d}"
            base = {"session_id": self.session_name, "id": call_id, "name": name}
            await self.call(
                "session_append", {**base, "role": "tool_call", "content": "", "input": tool_input}
            )
            await self.call(
                "session_append", {**base, "role": "tool_result", "content": fail or text}
            )
        if log:
            await self.call("log_activity", {"entry_type": "TOOL_USE", "content": log})
        if fail and log:
            await self.call("log_activity", {"entry_type": "ERROR", "content": fail})


async def work(io: SessionIO, step: dict[str, Any], files: dict[str, str], root: str) -> int:
    """A stretch of ordinary coding work: reads, edits, commands, a test run. Returns
    the number of tool calls it made."""
    calls = 0
    edits: dict[str, int] = {}
    for path in step.get("read", []):
        abs_path = f"{root}/{path}"
        text, response = noise.read_result(abs_path, noise.file_content(path, files.get(path, "")))
        await io.tool("Read", {"file_path": abs_path}, text, response)
        calls += 1
    for path in step.get("edit", []):
        abs_path = f"{root}/{path}"
        edits[path] = edits.get(path, 0) + 1
        content = noise.file_content(path, files.get(path, ""))
        tool_input, text, response = noise.edit_io(abs_path, content, edits[path], path)
        await io.tool("Edit", tool_input, text, response)
        calls += 1
    for command in step.get("run", []):
        cmd, _, stdout = command.partition(" => ")
        await io.tool(
            "Bash",
            {"command": cmd, "description": f"Run {cmd.split()[0]}"},
            stdout or "(no output)",
            noise.bash_response(stdout),
        )
        calls += 1
    if step.get("test"):
        failure = step.get("test_fail")
        out = noise.pytest_stdout(root, step["test"], failure)
        cmd = {"command": "python -m pytest -q", "description": "Run the test suite"}
        if failure:
            summary = [line for line in out.splitlines() if line.startswith("FAILED ")]
            error = "Exit code 1\n" + "\n".join(summary + out.splitlines()[-1:])
            await io.tool("Bash", cmd, out, None, fail=error)
        else:
            await io.tool("Bash", cmd, out, noise.bash_response(out))
        calls += 1
    return calls
