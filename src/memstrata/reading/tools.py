"""What a coding agent's tool call does, by its name, whatever client made it.

Claude Code calls its tools Read, Edit, Bash, Grep...; Cursor `read_file`,
`run_terminal_cmd`, `grep_search`; Codex CLI `shell`, `exec_command`, `apply_patch`;
Cline `execute_command`, `write_to_file`; Gemini CLI `run_shell_command`,
`read_many_files`; Anthropic's text editor tool `str_replace_based_edit_tool` (`view`
reads, its other commands edit). One table, `TOOL_CLASSES`, says which of four classes
each is in, so that everything that tells tool calls apart (the context's activity
counts, what a failure's target is, the bench's noise classifier) agrees:

    read     looks at a file, a folder or a page
    search   looks for something across files or the web
    edit     changes a file
    run      runs a command line (a test run is a run whose command is a test runner)

plus `other` for the known tools of no such class (a to-do list, a sub-agent).
An MCP tool (`mcp__server__read_file`) is classed by its own name. Names are matched
as written: `view` is the editor tool's, `Read` Claude Code's. Names common in prose
or code (`replace`, `insert`, `glob`) are left out: the noise classifier would count
`replace(` in a decision as a tool call. Pure, no regular expression at import.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_CLASSES = {
    "read": (
        "Read NotebookRead WebFetch LS read_file read_many_files read_text_file view "
        "view_file open_file list_dir list_directory list_files web_fetch"
    ),
    "search": (
        "Grep Glob WebSearch grep_search codebase_search file_search search_files "
        "search_file_content web_search google_web_search find_files"
    ),
    "edit": (
        "Edit Write MultiEdit NotebookEdit write_file edit_file apply_patch create_file "
        "write_to_file replace_in_file search_replace delete_file"
    ),
    "run": (
        "Bash run_terminal_cmd shell exec_command execute_command run_shell_command "
        "run_command local_shell"
    ),
    "other": "TodoWrite Task todo_write update_plan",
}
TOOL_CLASSES: Mapping[str, str] = {
    name: kind for kind, names in _CLASSES.items() for name in names.split()
}
# Tools whose `command` argument is one of their own operations, not a command line.
EDITOR_TOOLS = frozenset({"str_replace_based_edit_tool", "str_replace_editor"})
EDITOR_READS = frozenset({"view"})
# Where a call names the file, folder or pattern it acts on, by client, most specific first.
PATH_KEYS = (
    "file_path",
    "path",
    "target_file",
    "absolute_path",
    "notebook_path",
    "relative_workspace_path",
    "dir_path",
    "directory",
)
TARGET_KEYS = (*PATH_KEYS, "pattern", "url", "query", "args")
_SHELLS = frozenset({"bash", "sh", "zsh", "/bin/bash", "/bin/sh", "powershell", "pwsh"})


def base_name(tool: str) -> str:
    """`mcp__server__read_file` -> `read_file`; other names as they are."""
    return tool.rsplit("__", 1)[-1] if tool.startswith("mcp__") else tool


def tool_class(tool: str | None, args: Mapping[str, Any] | None = None) -> str | None:
    """'read', 'search', 'edit', 'run' or 'other' for a known tool, None for one this
    table does not know.

    >>> tool_class("run_terminal_cmd"), tool_class("Read"), tool_class("mcp__fs__edit_file")
    ('run', 'read', 'edit')
    >>> tool_class("str_replace_based_edit_tool", {"command": "view", "path": "a.py"})
    'read'
    """
    if not tool:
        return None
    name = base_name(tool)
    if name in EDITOR_TOOLS:
        said = args or {}
        return "read" if said.get("command", said.get("operation")) in EDITOR_READS else "edit"
    return TOOL_CLASSES.get(name)


def command_line(value: Any) -> str | None:
    """A command argument as one line: a string as it is; an argv list joined, the
    script of `["bash", "-lc", "pytest -q"]` alone (Codex CLI's `shell`)."""
    if isinstance(value, str) and value.startswith("[") and value.endswith("]"):
        import json  # an argv list the logger wrote as JSON (`loop.compact_args`)

        try:
            parsed: Any = json.loads(value)
        except ValueError:
            return str(value)
        value = parsed
    if isinstance(value, str):
        return value if value.strip() else None
    if isinstance(value, list) and value and all(isinstance(w, str) for w in value):
        if len(value) >= 3 and value[0] in _SHELLS and value[1] in ("-c", "-lc", "-Command"):
            return " ".join(value[2:])
        return " ".join(value)
    return None


def normal_args(tool: str | None, args: Mapping[str, Any]) -> dict[str, Any]:
    """A call's arguments with its command line under `command` (Codex's `cmd` or argv
    list) and its file under `path` (Cursor's `target_file`, Gemini's `absolute_path`),
    the editor tool's `command` (`view`, `str_replace`) kept as `operation`: the shape
    the rules that read a call expect, whichever client made it."""
    out = dict(args)
    name = base_name(tool or "")
    if name in EDITOR_TOOLS:
        if "command" in out:
            out["operation"] = out.pop("command")
    elif tool_class(tool) in ("run", None):
        for key in ("command", "cmd"):
            line = command_line(out.get(key))
            if line is not None:
                out.pop("cmd", None)
                out["command"] = line
                break
    if "path" not in out and "file_path" not in out:
        for key in PATH_KEYS[2:]:
            value = out.get(key)
            if isinstance(value, str) and value.strip():
                out["path"] = value
                break
    return out
