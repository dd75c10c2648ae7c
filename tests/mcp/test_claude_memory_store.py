"""The Anthropic memory-tool handler backed by a real store, and over MCP when chosen."""

from __future__ import annotations

import anyio
import pytest

from memstrata import Store
from memstrata.mcp.claude_memory import ClaudeMemoryHandler


def test_handler_on_real_memory_files(store: Store) -> None:
    h = ClaudeMemoryHandler(store.agent().files)
    text, err = h.handle_result(
        {"command": "create", "path": "/memories/notes/todo.md", "file_text": "a\nb\n"}
    )
    assert not err
    assert store.agent().files.read("notes/todo.md") == "a\nb\n"
    text, err = h.handle_result(
        {
            "command": "str_replace",
            "path": "/memories/notes/todo.md",
            "old_str": "b",
            "new_str": "c",
        }
    )
    assert not err and store.agent().files.read("notes/todo.md") == "a\nc\n"
    text, err = h.handle_result(
        {
            "command": "insert",
            "path": "/memories/notes/todo.md",
            "insert_line": 0,
            "insert_text": "top",
        }
    )
    assert not err and store.agent().files.read("notes/todo.md").startswith("top\n")
    text, err = h.handle_result({"command": "view", "path": "/memories/notes/todo.md"})
    assert not err and "top" in text
    text, err = h.handle_result({"command": "view", "path": "/memories/../../etc/passwd"})
    assert err
    text, err = h.handle_result(
        {
            "command": "rename",
            "old_path": "/memories/notes/todo.md",
            "new_path": "/memories/done.md",
        }
    )
    assert not err and store.agent().files.exists("done.md")
    text, err = h.handle_result({"command": "delete", "path": "/memories/done.md"})
    assert not err and not store.agent().files.exists("done.md")
    hits = store.search("top", layers=("archive",))
    assert hits  # deleted memory moved to the archive, still searchable


def test_memory_tool_is_opt_in_over_mcp(store: Store) -> None:
    pytest.importorskip("mcp")
    from mcp import Client
    from memstrata.mcp.server import build_server

    async def main() -> None:
        async with Client(build_server(store)) as c:
            assert "memory" not in {t.name for t in (await c.list_tools()).tools}
        async with Client(build_server(store, ["memory"])) as c:
            r = await c.call_tool(
                "memory", {"command": "create", "path": "/memories/x.md", "file_text": "hi"}
            )
            assert not r.is_error
            r = await c.call_tool("memory", {"command": "view", "path": "/etc/passwd"})
            assert r.is_error and "Error executing tool" not in r.content[0].text

    anyio.run(main)
