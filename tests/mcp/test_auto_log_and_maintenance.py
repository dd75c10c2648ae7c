"""MCP server: seed 002 auto-log of tool executions (`[mcp] auto_log`, off by default), seed 003's
agent-controlled mode turning it off, and seed 004 upkeep when a real server starts;
`memstrata maintain` as a command."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from memstrata import Store
from memstrata.model import iso

mcp = pytest.importorskip("mcp")
from mcp import Client  # noqa: E402

EXE = shutil.which("memstrata", path=str(Path(sys.executable).parent)) or "memstrata"


def _config(home: Path, text: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(text)


def _calls(home: Path) -> list[tuple[str, bool]]:
    from memstrata.mcp.server import build_server

    results = []

    async def main() -> None:
        with Store(home, agent="finn") as store:
            async with Client(build_server(store)) as c:
                for name, args in (
                    ("save_fact", {"key": "editor", "value": "vim"}),
                    ("recall_memory", {"query": "editor"}),
                    ("log_activity", {"entry_type": "THOUGHT", "content": "noted"}),
                    ("get_fact", {"key": "missing"}),
                ):
                    r = await c.call_tool(name, args)
                    results.append((name, bool(r.is_error)))

    anyio.run(main)
    return results


def test_seed002_mcp_auto_logs_every_tool_execution(home: Path) -> None:
    """Seed 002 "logging tool executions" for the MCP server, when `[mcp] auto_log = true`
    (off by default: a memory tool's effect is memory already; the engine integration,
    AgentLoop and the PostToolUse hook, logs the agent's other tools)."""
    _config(home, "[mcp]\nauto_log = true\n")
    assert _calls(home) == [
        ("save_fact", False),
        ("recall_memory", False),
        ("log_activity", False),
        ("get_fact", True),
    ]
    with Store(home, agent="finn") as s:
        entries = s.agent().log.entries()
    tools = [(e.entry_type, e.metadata.get("tool"), e.metadata.get("outcome")) for e in entries]
    assert tools == [
        ("TOOL_USE", "save_fact", "ok"),
        ("TOOL_USE", "recall_memory", "ok"),
        ("THOUGHT", None, None),  # log_activity is its own entry, not logged twice
        ("TOOL_USE", "get_fact", "error"),
    ]
    assert entries[0].content.startswith(
        'save_fact(key="editor", value="vim", category="general") -> ok'
    )
    assert all(e.metadata.get("via") == "mcp" for e in entries if e.entry_type == "TOOL_USE")


def test_mcp_auto_log_is_off_by_default_and_in_agent_controlled_mode(home: Path) -> None:
    for config in (
        "",
        "[mcp]\nauto_log = false\n",
        '[mcp]\nauto_log = true\n[memory]\nmode = "agent-controlled"\n',
    ):
        _config(home, config)
        _calls(home)
        with Store(home, agent="finn") as s:
            assert [
                e.entry_type for e in s.agent().log.entries() if e.entry_type == "TOOL_USE"
            ] == []


def _old_session_and_finished_milestone(home: Path) -> None:
    with Store(home, agent="finn") as s:
        mem = s.agent()
        mem.sessions.append("old", "user", "long ago", timestamp=iso(time.time() - 40 * 86400))
        mem.sessions.append("recent", "user", "today")
        a = mem.tasks.add("ship v1", milestone="M1")
        b = mem.tasks.add("write docs", milestone="M1")
        mem.tasks.add("plan v2", milestone="M2")
        mem.tasks.update(a.id, status="done")
        mem.tasks.update(b.id, status="cancelled")


def _check_maintained(home: Path) -> None:
    with Store(home, agent="finn") as s:
        mem = s.agent()
        assert mem.sessions.ids() == ["recent"]
        assert [t.milestone for t in mem.tasks.list()] == ["M2"]
        [archived] = s.layout.archive_dir("finn").glob("tasks-M1-*.json")
        assert [t["status"] for t in json.loads(archived.read_text())["tasks"]] == [
            "done",
            "cancelled",
        ]
        assert list((s.layout.archive_dir("finn") / "sessions").glob("old-*.jsonl"))


def test_seed004_memstrata_maintain_archives_sessions_and_finished_milestones(home: Path) -> None:
    _old_session_and_finished_milestone(home)
    r = subprocess.run(
        [EXE, "--home", str(home), "--json", "maintain"], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0, r.stderr
    [row] = json.loads(r.stdout)
    assert row["agent"] == "finn" and row["sessions_archived"] == ["old"]
    assert row["milestones_archived"] == ["M1"]
    _check_maintained(home)


def test_seed004_server_start_runs_the_upkeep(home: Path) -> None:
    _old_session_and_finished_milestone(home)
    server = subprocess.Popen(
        [EXE, "--home", str(home), "--agent", "finn", "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ},
    )
    try:
        assert server.stderr is not None
        line = server.stderr.readline()  # the server says when its upkeep is done
        assert line.startswith("memstrata: upkeep done"), line
    finally:
        server.terminate()
        server.wait(timeout=30)
    _check_maintained(home)
