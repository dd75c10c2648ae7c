"""The MCP server under real conditions (issue 9): locations are 1-based line numbers
over MCP, and a full disk is one `storage_full: ...` tool error, after which the same
server process keeps serving."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
from pathlib import Path

import anyio
import pytest

mcp = pytest.importorskip("mcp")
from mcp.client.stdio import StdioServerParameters  # noqa: E402

from mcp import Client  # noqa: E402
from memstrata import Store  # noqa: E402

EXE = shutil.which("memstrata", path=str(Path(sys.executable).parent)) or "memstrata"


def test_where_is_a_one_based_line_number_over_mcp(home: Path) -> None:
    from memstrata.mcp.server import build_server

    store = Store(home, agent="finn", room="r1")
    for i in range(6):
        store.ledger.publish("decision", f"entry {i} " + ("pangolin" if i == 5 else "filler"))
    store.agent().log.append("THOUGHT", "one")
    store.agent().log.append("THOUGHT", "the pangolin log")
    log_lines = (home / "agents/finn/memory/LOG.md").read_text().splitlines()

    async def main() -> None:
        async with Client(build_server(store)) as c:
            r = await c.call_tool("recall_memory", {"query": "pangolin"})
            assert not r.is_error, r.content
            where = {h["layer"]: h["where"] for h in r.structured_content["results"]}
            assert where["ledger"] == "ledger.jsonl:6"  # the sixth line, not a byte offset
            path, line = where["log"].rsplit(":", 1)
            assert path == "agents/finn/memory/LOG.md"
            assert log_lines[int(line) - 1].startswith("### ")  # the entry's header line
            assert "the pangolin log" in log_lines[int(line)]
            s = await c.call_tool("memory_search", {"text": "pangolin", "include_own_room": True})
            assert not s.is_error, s.content
            hits = s.structured_content["results"]
            assert [h["where"] for h in hits] == ["ledger.jsonl:6"]
            got = await c.call_tool("memory_get", {"uid": hits[0]["uid"]})
            assert got.structured_content["where"] == "ledger.jsonl:6"

    anyio.run(main)
    store.close()


def _fill(disk: Path) -> Path:
    filler = disk / "filler.bin"
    with open(filler, "wb", buffering=0) as fh:
        for size in (1 << 20, 65536, 4096, 512, 1):
            with contextlib.suppress(OSError):
                while True:
                    fh.write(b"\0" * size)
    return filler


def test_save_fact_on_a_full_disk_is_a_storage_full_tool_error_and_serving_goes_on(
    disk: Path,
) -> None:
    home = disk / "home"
    with Store(home, agent="finn") as store:
        store.agent().facts.set("animal", "panda")
        store.agent().log.append("THOUGHT", "written before the disk filled up")
    params = StdioServerParameters(
        command=EXE,
        args=["--home", str(home), "--agent", "finn", "mcp"],
        env={"PATH": os.environ.get("PATH", "")},
    )

    async def main() -> None:
        async with Client(params) as c:
            assert not (await c.call_tool("get_fact", {"key": "animal"})).is_error
            filler = _fill(disk)
            r = await c.call_tool("save_fact", {"key": "colour", "value": "z" * 8000})
            assert r.is_error
            text = r.content[0].text.removeprefix("Error executing tool save_fact: ")
            assert text.startswith("storage_full: no space left"), text
            # the same server process goes on serving reads
            got = await c.call_tool("get_fact", {"key": "animal"})
            assert not got.is_error and got.structured_content["value"] == "panda"
            found = await c.call_tool("recall_memory", {"query": "disk filled"})
            assert not found.is_error
            assert found.structured_content["results"][0]["snippet"].startswith("written before")
            filler.unlink()  # and writes again once space returns
            saved = await c.call_tool("save_fact", {"key": "colour", "value": "black and white"})
            assert not saved.is_error, saved.content
            got = await c.call_tool("get_fact", {"key": "colour"})
            assert got.structured_content["value"] == "black and white"

    anyio.run(main)
