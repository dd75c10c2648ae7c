"""Issue 19 item 2 over a real stdio MCP client: a decision in one call, with what it replaces.

"A changed decision comes back as the old one": the decision that replaced WeasyPrint with
ReportLab came 5th. Now `record_decision(..., replaces=...)` supersedes the earlier one
(seed 000's rule, the ledger's own supersede): recall and the context present only the
decision in force, and the replaced one stays readable by its uid (history).
"""

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


async def _data(c: Client, name: str, args: dict[str, Any]) -> dict[str, Any]:
    r = await c.call_tool(name, args)
    assert not r.is_error, (name, r.content)
    assert isinstance(r.structured_content, dict)
    return r.structured_content


def test_record_decision_replaces_the_earlier_one_everywhere(home: Path) -> None:
    params = StdioServerParameters(
        command=EXE,
        args=["--home", str(home), "--agent", "me", "mcp"],
        env={k: os.environ[k] for k in ("PATH", "PYTHONPATH") if k in os.environ},
    )

    async def main() -> None:
        async with Client(params) as c:
            names = {t.name for t in (await c.list_tools()).tools}
            assert "record_decision" in names  # in the default (core) group
            old = await _data(c, "record_decision", {"text": "Use WeasyPrint for the PDF export"})
            pref = await _data(
                c, "record_decision", {"text": "Dark mode in every UI", "kind": "preference"}
            )
            assert pref["entry"]["kind"] == "preference"
            new = await _data(
                c,
                "record_decision",
                {
                    "text": "Use ReportLab for the PDF export: WeasyPrint needs pango",
                    "replaces": "weasyprint for the pdf",  # by matching text
                },
            )
            assert new["replaced"] == old["entry"]["id"]
            assert new["entry"]["supersedes"] == old["entry"]["id"]
            hits = await _data(c, "recall_memory", {"query": "PDF library decision"})
            uids = [h["uid"] for h in hits["results"]]
            assert f"ledger:{new['entry']['id']}" in uids
            assert f"ledger:{old['entry']['id']}" not in uids  # never presented as current
            context = await c.read_resource("memory://prompt-context")
            text = context.contents[0].text  # type: ignore[union-attr]
            assert "Use ReportLab for the PDF export" in text and "Dark mode in every UI" in text
            assert "Use WeasyPrint for the PDF export" not in text
            history = await _data(c, "memory_get", {"uid": f"ledger:{old['entry']['id']}"})
            assert history["title"] == "Use WeasyPrint for the PDF export"  # still readable
            again = await c.call_tool(
                "record_decision", {"text": "Something else", "replaces": "PDF export"}
            )
            assert not again.is_error  # one decision in force matches: the ReportLab one
            both = await c.call_tool(
                "record_decision", {"text": "Light mode", "replaces": "no such decision"}
            )
            assert both.is_error and both.content[0].text.startswith("unknown_supersedes")  # type: ignore[union-attr]

    anyio.run(main)
