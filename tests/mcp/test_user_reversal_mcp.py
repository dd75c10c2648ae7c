"""Issue 19 for an MCP-only agent: the user's words reach memory only through the transcript
it keeps (`session_append`), and a change of plan said there replaces the decision it names
(infra-saltmarsh: "change of plan on the region ... Build all the new stuff in eu-west-1,
not London." left "Region: eu-west-2 (London) for the new stack" in force)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

mcp = pytest.importorskip("mcp")
from mcp.client.stdio import StdioServerParameters  # noqa: E402

from mcp import Client  # noqa: E402

EXE = shutil.which("memstrata", path=str(Path(sys.executable).parent)) or "memstrata"
OLD = "Region: eu-west-2 (London) for the new stack, next to the existing EC2 box"
SAID = (
    "Before you apply anything: change of plan on the region. Our backups are in Ireland. "
    "Build all the new stuff in eu-west-1, not London. The old box stays until the cutover."
)


async def _data(c: Client, name: str, args: dict[str, Any]) -> dict[str, Any]:
    r = await c.call_tool(name, args)
    assert not r.is_error, (name, r.content)
    assert isinstance(r.structured_content, dict)
    return r.structured_content


def test_a_change_of_plan_in_the_users_message_replaces_the_decision(home: Path) -> None:
    params = StdioServerParameters(
        command=EXE,
        args=["--home", str(home), "--agent", "infra", "mcp", "--tools", "default,sessions"],
        env={k: os.environ[k] for k in ("PATH", "PYTHONPATH") if k in os.environ},
    )

    async def main() -> None:
        async with Client(params) as c:
            old = await _data(c, "record_decision", {"text": OLD})
            await _data(c, "record_decision", {"text": "State in S3 with a DynamoDB lock table"})
            said = {"session_id": "s03", "role": "assistant", "content": "Change of plan noted?"}
            await _data(c, "session_append", said)  # the agent's words change nothing
            context = await c.read_resource("memory://prompt-context")
            assert OLD in context.contents[0].text  # type: ignore[union-attr]
            await _data(c, "session_append", {"session_id": "s03", "role": "user", "content": SAID})
            context = await c.read_resource("memory://prompt-context")
            text = context.contents[0].text  # type: ignore[union-attr]
            assert "eu-west-1, not London" in text and "eu-west-2 (London)" not in text, text
            assert "State in S3 with a DynamoDB lock table" in text
            hits = await _data(c, "recall_memory", {"query": "which AWS region for the new stack"})
            top = hits["results"][0]
            assert "eu-west-1" in str(top) and "eu-west-2" not in str(top), top
            history = await _data(c, "memory_get", {"uid": f"ledger:{old['entry']['id']}"})
            assert history["title"] == OLD  # still readable by its id

    anyio.run(main)
