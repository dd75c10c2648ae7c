"""The MCP server end to end: the installed `memstrata mcp` over stdio and HTTP,
driven by the official client."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

mcp = pytest.importorskip("mcp")
from mcp.client.stdio import StdioServerParameters  # noqa: E402

from mcp import Client  # noqa: E402

EXE = shutil.which("memstrata", path=str(Path(sys.executable).parent)) or "memstrata"


def _params(home: Path, agent: str, room: str, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=EXE,
        args=["--home", str(home), "--agent", agent, "--room", room, "mcp", *extra],
        env={k: os.environ[k] for k in ("PATH", "PYTHONPATH") if k in os.environ},
    )


async def _call(c: Client, name: str, args: dict[str, Any]) -> tuple[bool, str]:
    r = await c.call_tool(name, args)
    return bool(r.is_error), r.content[0].text if r.content else ""


async def _data(c: Client, name: str, args: dict[str, Any]) -> dict[str, Any]:
    """The structured result of a call that must succeed."""
    r = await c.call_tool(name, args)
    assert not r.is_error, (name, r.content)
    assert isinstance(r.structured_content, dict), (name, r)
    return r.structured_content


def test_every_tool_over_stdio(home: Path) -> None:
    async def main() -> None:
        async with Client(_params(home, "finn", "room-1", "--tools", "all")) as c:
            names = {t.name for t in (await c.list_tools()).tools}
            assert names >= {
                "memory_read",
                "memory_write",
                "memory_replace",
                "memory_insert",
                "memory_list",
                "memory_publish",
                "memory_query",
                "memory_search",
                "memory_get_context",
                "update_status",
                "log_activity",
                "recall_memory",
                "save_fact",
                "get_fact",
                "task_add",
                "session_append",
            }
            tools = {t.name: t for t in (await c.list_tools()).tools}
            assert tools["memory_read"].annotations.read_only_hint is True
            assert tools["memory_write"].annotations.destructive_hint is True
            ok = [
                ("memory_write", {"path": "CONTEXT.md", "content": "# Finn\nprefers tea\n"}),
                (
                    "memory_replace",
                    {"path": "CONTEXT.md", "old_str": "tea", "new_str": "green tea"},
                ),
                ("memory_insert", {"path": "CONTEXT.md", "line": 0, "text": "<!-- v1 -->"}),
                ("memory_list", {}),
                (
                    "memory_publish",
                    {"kind": "decision", "summary": "Chose bcrypt", "tags": ["auth"]},
                ),
                ("memory_query", {"tags": ["auth"]}),
                ("memory_search", {"text": "bcrypt"}),
                ("memory_get_context", {"brief_keywords": ["auth"]}),
                ("update_status", {"new_status": "Reviewing auth", "next_steps": ["read PR"]}),
                ("log_activity", {"entry_type": "THOUGHT", "content": "bcrypt is fine"}),
                ("save_fact", {"key": "api_key", "value": "12345", "category": "config"}),
                ("get_fact", {"key": "api_key"}),
                ("recall_memory", {"query": "bcrypt green tea"}),
                ("task_add", {"description": "Ship auth"}),
                ("task_update", {"task_id": "TASK-001", "status": "done"}),
                ("task_list", {}),
                ("session_append", {"session_id": "s1", "role": "user", "content": "hello"}),
                ("session_read", {"session_id": "s1"}),
            ]
            results = {}
            for name, args in ok:
                results[name] = await _data(c, name, args)
            assert (await _call(c, "memory_read", {"path": "CONTEXT.md"}))[
                1
            ] == "<!-- v1 -->\n# Finn\nprefers green tea\n"
            assert results["get_fact"]["value"] == "12345"
            hits = results["recall_memory"]["results"]
            assert hits and all("snippet" in h for h in hits)
            full = await _data(c, "memory_get", {"uid": hits[0]["uid"]})
            assert full["uid"] == hits[0]["uid"]
            res = await c.read_resource("memory://context")
            assert "green tea" in res.contents[0].text
            for name, args, code in [
                ("memory_read", {"path": "../../etc/passwd"}, "path_outside_store"),
                ("memory_write", {"path": "/etc/x", "content": "x"}, "path_outside_store"),
                ("memory_publish", {"kind": "decision", "summary": "x" * 5000}, "entry_too_large"),
                (
                    "memory_publish",
                    {"kind": "decision", "summary": "y", "supersedes": "mem-00000000"},
                    "unknown_supersedes",
                ),
                ("memory_publish", {"kind": "rumor", "summary": "y"}, "kind must be one of"),
                (
                    "memory_replace",
                    {"path": "CONTEXT.md", "old_str": "e", "new_str": "x"},
                    "not_unique",
                ),
                ("get_fact", {"key": "nope"}, "not_found"),
                ("memory_get", {"uid": "ledger:mem-ffffffff"}, "not_found"),
            ]:
                err, text = await _call(c, name, args)
                assert err and code in text, (name, text)
        assert (home / "agents/finn/memory/NOW.md").read_text().count("Reviewing auth") == 1
        assert len((home / "ledger.jsonl").read_text().splitlines()) == 1

    anyio.run(main)


def test_tool_subset_and_memory_tools_switch(home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text("[tools.memory]\nenabled = false\n")
    (home / "agents/finn/memory").mkdir(parents=True)
    (home / "agents/finn/memory/CONTEXT.md").write_text("still auto-loaded\n")

    async def main() -> None:
        async with Client(_params(home, "finn", "room-1")) as c:
            names = {t.name for t in (await c.list_tools()).tools}
            assert "memory_read" not in names and "memory_publish" in names
            assert (await c.read_resource("memory://context")).contents[
                0
            ].text == "still auto-loaded\n"
        async with Client(
            _params(home, "finn", "room-1", "--tools", "recall_memory,get_fact")
        ) as c:
            assert {t.name for t in (await c.list_tools()).tools} == {"recall_memory", "get_fact"}

    anyio.run(main)


def test_two_servers_two_rooms_share_the_ledger(home: Path) -> None:
    async def agent(name: str, room: str, out: dict[str, Any]) -> None:
        async with Client(_params(home, name, room)) as c:
            for i in range(15):
                err, _ = await _call(
                    c,
                    "memory_publish",
                    {"kind": "interface", "summary": f"{name} api {i}", "tags": ["api"]},
                )
                assert not err
            deadline = time.monotonic() + 60  # until the other server's 15 are all visible
            while True:
                out[name] = (
                    await _data(
                        c, "memory_query", {"tags": ["api"], "exclude_room": room, "last_n": 50}
                    )
                )["entries"]
                if len(out[name]) >= 15 or time.monotonic() > deadline:
                    break
                await anyio.sleep(0.05)

    async def main() -> None:
        out: dict[str, Any] = {}
        async with anyio.create_task_group() as tg:
            tg.start_soon(agent, "alice", "room-a", out)
            tg.start_soon(agent, "bob", "room-b", out)
        assert sorted(e["summary"] for e in out["alice"]) == sorted(
            f"bob api {i}" for i in range(15)
        )
        assert sorted(e["summary"] for e in out["bob"]) == sorted(
            f"alice api {i}" for i in range(15)
        )

    anyio.run(main)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_http_transport_and_host_origin_checks(home: Path) -> None:
    port = _free_port()
    proc = subprocess.Popen(
        [EXE, "--home", str(home), "--agent", "finn", "mcp", "--http", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 90  # start-up on a loaded machine, not a fixed wait
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"the HTTP server did not listen (exit code {proc.poll()})")
                time.sleep(0.05)
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
        hdrs = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        bad_host = httpx.post(url, json=init, headers={**hdrs, "Host": "evil.example:80"})
        assert bad_host.status_code in (400, 421)
        bad_origin = httpx.post(url, json=init, headers={**hdrs, "Origin": "http://evil.example"})
        assert bad_origin.status_code == 403

        async def main() -> None:
            async with Client(url) as c:
                err, _ = await _call(c, "save_fact", {"key": "k", "value": "over http"})
                assert not err
                assert (await _data(c, "get_fact", {"key": "k"}))["value"] == "over http"

        anyio.run(main)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_http_refuses_non_loopback_without_token(home: Path) -> None:
    r = subprocess.run(
        [EXE, "--home", str(home), "--agent", "finn", "mcp", "--http", "--host", "0.0.0.0"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "MEMSTRATA_MCP_TOKEN": ""},
    )
    assert r.returncode == 2 and "token" in r.stderr and "Traceback" not in r.stderr
