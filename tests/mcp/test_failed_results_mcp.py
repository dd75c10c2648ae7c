"""Issue 19 (stop 35's note): a `session_append` tool_result had no error flag, so an MCP
agent could not say that a call failed through its transcript, and the failure was neither
an open error in the context nor an error to recall. `is_error` (the name Claude Code's
hooks use) marks it; the result is logged as the ERROR entry Claude Code's
PostToolUseFailure hook leaves. The official client over stdio against `memstrata mcp`."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")
from mcp.client.stdio import StdioServerParameters

from mcp import Client
from memstrata import Store
from memstrata.errors import MalformedInput

EXE = shutil.which("memstrata", path=str(Path(sys.executable).parent)) or "memstrata"
OPEN = "## Open errors (nothing later resolved them)"


def params(home: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=EXE,
        args=["--home", str(home), "--agent", "planner", "mcp", "--tools", "default,sessions"],
        env={k: os.environ[k] for k in ("PATH", "PYTHONPATH") if k in os.environ},
    )


def test_a_tool_result_flagged_is_error_is_an_open_error_and_recalled_over_stdio(
    home: Path,
) -> None:
    async def main() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with Client(params(home)) as c:

            async def append(**args: Any) -> None:
                r = await c.call_tool("session_append", {"session_id": "s-3", **args})
                assert not r.is_error, r.content

            await append(role="user", content="get the venue brochure for the sponsors")
            url = {"url": "https://heronsgate.example/brochure.pdf"}
            await append(role="tool_call", content="", id="t1", name="fetch_pdf", input=url)
            await append(
                role="tool_result",
                content="HTTP 404 Not Found: brochure.pdf",
                id="t1",
                name="fetch_pdf",
                is_error=True,
            )
            await append(role="tool_call", content="", id="t2", name="list_rooms", input={})
            await append(role="tool_result", content="Hall A, Hall B", id="t2", name="list_rooms")
            context = await c.read_resource("memory://prompt-context")
            out["context"] = "".join(getattr(x, "text", "") for x in context.contents)
            ask = {"query": "why did getting the brochure fail?", "n_results": 3}
            out["recall"] = (await c.call_tool("recall_memory", ask)).structured_content
            read = await c.call_tool("session_read", {"session_id": "s-3"})
            out["messages"] = read.structured_content["messages"]
        return out

    seen = anyio.run(main)
    errors = seen["context"].split(OPEN + "\n", 1)[1].split("\n## ", 1)[0]
    assert "fetch_pdf" in errors and "404" in errors, seen["context"]
    assert "list_rooms" not in errors  # a result without the flag is no failure
    top = seen["recall"]["results"]
    assert any(h["layer"] == "log" and h["kind"] == "ERROR" for h in top), json.dumps(top)
    flagged = [m for m in seen["messages"] if m.get("is_error")]
    assert [(m["id"], m["role"]) for m in flagged] == [("t1", "tool_result")]


def test_is_error_is_optional_and_only_on_a_tool_result(home: Path) -> None:
    """Backward compatible: a line without the field reads as before (no `is_error` in the
    file when false), and the flag is refused where it means nothing."""
    with Store(home, agent="planner") as s:
        sessions = s.agent().sessions
        ok = sessions.append("s-1", "tool_result", "done", id="t1", name="fetch_pdf")
        assert not ok.is_error and "is_error" not in ok.to_dict()
        with pytest.raises(MalformedInput):
            sessions.append("s-1", "user", "hello", is_error=True)
        with pytest.raises(MalformedInput):
            sessions.append("s-1", "tool_result", "x", id="t2", is_error="yes")
        failed = sessions.append("s-1", "tool_result", "boom", id="t3", is_error=True)
        assert failed.is_error
    lines = (home / "agents" / "planner" / "sessions" / "s-1.jsonl").read_text().splitlines()
    assert ["is_error" in json.loads(line) for line in lines] == [False, True]
