"""Issue 19, an MCP-only agent's open errors: its prompts never reach LOG.md, so the
"before the user's next prompt" bound on a note that says it fixed something never applied,
and any later note sharing one word with a failure closed it, days later. The failure's
session bounds the note now (`lifecycle.resolved`); in it, one shared name is still enough.
In process: the server as `memstrata mcp` builds it, a client, a clock the test sets."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest

mcp = pytest.importorskip("mcp")
from mcp import Client  # noqa: E402
from memstrata.mcp.server import build_server  # noqa: E402
from memstrata.store.view import Store  # noqa: E402

DAY = 86_400.0
T0 = 1_800_000_000.0
OPEN = "## Open errors (nothing later resolved them)"


async def _log(c: Client, entry_type: str, content: str) -> None:
    r = await c.call_tool("log_activity", {"entry_type": entry_type, "content": content})
    assert not r.is_error, r.content


def test_a_note_in_a_later_session_sharing_one_word_leaves_an_error_open(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = [T0]
    monkeypatch.setattr(time, "time", lambda: clock[0])

    async def main() -> str:
        with Store(home, agent="infra") as store:
            async with Client(build_server(store)) as c:
                await _log(c, "ERROR", "The nightly export to the billing bucket timed out")
                await _log(c, "ERROR", "The deploy role cannot use kms:Decrypt on the SSM key")
                clock[0] += 600
                await _log(c, "THOUGHT", "Fixed the deploy: granted kms:Decrypt to the role")
                clock[0] += 2 * DAY  # another day: another session of an agent naming none
                await _log(c, "THOUGHT", "Fixed the export button on the invoices page")
                context = await c.read_resource("memory://prompt-context")
                return str(context.contents[0].text)  # type: ignore[union-attr]

    text = anyio.run(main)
    errors = text.split(OPEN + "\n", 1)[1].split("\n## ", 1)[0] if OPEN in text else ""
    assert "nightly export" in errors, text
    assert "kms:Decrypt" not in errors  # noted fixed in its own session: closed
