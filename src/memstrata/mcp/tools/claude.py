"""Anthropic's memory tool (`memory_20250818`) over the same memory files
(`mcp.claude_memory.ClaudeMemoryHandler`); group `claude`, listed only when asked for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memstrata.mcp.claude_memory import ClaudeMemoryHandler
from memstrata.mcp.shapes import Reply
from memstrata.mcp.tools.spec import Caller, ToolSpec, p, req

if TYPE_CHECKING:
    from memstrata.config import Config


def memory(
    caller: Caller,
    command: str,
    path: str | None,
    file_text: str | None,
    old_str: str | None,
    new_str: str | None,
    insert_line: int | None,
    insert_text: str | None,
    old_path: str | None,
    new_path: str | None,
    view_range: list[int] | None,
) -> Reply:
    args = {k: v for k, v in locals().items() if v is not None and k != "caller"}
    text, is_error = ClaudeMemoryHandler(caller.agent.files).handle_result(args)
    return Reply(text, None, is_error=is_error)


def tools(config: Config) -> list[ToolSpec]:
    """The declarations, in catalogue order."""
    return [
        ToolSpec(
            "memory",
            memory,
            "Anthropic memory tool (memory_20250818): view, create, str_replace, insert, "
            "delete, rename under /memories.",
            (
                req(
                    "command",
                    "string",
                    "the command",
                    enum=("view", "create", "str_replace", "insert", "delete", "rename"),
                ),
                p("path", "string", "/memories/..."),
                p("file_text", "string", "create: the content"),
                p("old_str", "string", "str_replace: text to find"),
                p("new_str", "string", "str_replace: replacement"),
                p("insert_line", "integer", "insert: after this line"),
                p("insert_text", "string", "insert: the text"),
                p("old_path", "string", "rename: from"),
                p("new_path", "string", "rename: to"),
                p("view_range", "array", "view: [first, last] line", items="integer"),
            ),
            None,
            read_only=False,
            destructive=True,
            group="claude",
        ),
    ]
