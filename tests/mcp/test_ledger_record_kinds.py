"""The ledger's MCP tools take the three record kinds the ledger itself accepts.

bench agent, infra-saltmarsh (scen19d's blind run): a reviewer agent in a room read the
ledger, saw entries shown as `[constraint] ...` (written by `record_decision`), and
published its own compliance rule with `memory_publish(kind="constraint")`: refused,
"kind must be one of convention, interface, decision, artifact, warning, code", although
the ledger accepts `decision`, `constraint` and `preference` whatever `[kinds]` says
(`layers.decisions`), and `memstrata ledger publish constraint ...` and the Python API
both take it. The rule never reached the ledger, so the migration agent never saw it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

mcp = pytest.importorskip("mcp")

from mcp import Client  # noqa: E402
from memstrata.mcp.server import build_server  # noqa: E402
from memstrata.store.view import Store  # noqa: E402


async def _data(c: Client, name: str, args: dict[str, Any]) -> dict[str, Any]:
    r = await c.call_tool(name, args)
    assert not r.is_error, (name, r.content)
    assert isinstance(r.structured_content, dict)
    return r.structured_content


def test_memory_publish_and_query_take_the_record_kinds(home: Path) -> None:
    async def main() -> None:
        with Store(home, agent="reviewer", room="review") as store:
            async with Client(build_server(store)) as c:
                listed = {t.name: t.input_schema for t in (await c.list_tools()).tools}
                for tool in ("memory_publish", "memory_query", "memory_search"):
                    enum = listed[tool]["properties"]["kind"]["enum"]
                    assert {"constraint", "preference", "decision", "warning"} <= set(enum)
                rule = "RDS storage is encrypted with the customer-managed key alias/salt-prod-rds"
                e = await _data(
                    c, "memory_publish", {"kind": "constraint", "summary": rule, "tags": ["rds"]}
                )
                assert e["entry"]["kind"] == "constraint"
                pref = {"kind": "preference", "summary": "Plans are shown before any apply"}
                assert (await _data(c, "memory_publish", pref))["entry"]["kind"] == "preference"
                found = await _data(
                    c, "memory_query", {"kind": "constraint", "include_own_room": True}
                )
                assert [x["summary"] for x in found["entries"]] == [rule]
            unknown = {"kind": "rumour", "summary": "x"}
            async with Client(build_server(store)) as c:
                refused = await c.call_tool("memory_publish", unknown)
                assert refused.is_error  # a kind neither [kinds] nor the record kinds name

    anyio.run(main)
