"""The five memory file tools: your memory folder's files, read and edited in place.

`memory_write` creates or overwrites (CONTEXT.md is loaded into every prompt; LOG.md is
append-only), `memory_replace` changes text that occurs exactly once, `memory_insert`
adds lines; the layer (`layers.files`) checks paths, sizes and secrets.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memstrata.mcp import shapes
from memstrata.mcp.shapes import Reply
from memstrata.mcp.tools.spec import Caller, ToolSpec, p, req

if TYPE_CHECKING:
    from memstrata.config import Config


def memory_read(caller: Caller, path: str) -> Reply:
    text = caller.agent.files.read(path)
    return Reply(text, {"path": path, "content": text})


def memory_write(caller: Caller, path: str, content: str) -> Reply:
    info = caller.agent.files.write(path, content)
    return Reply(
        f"wrote {info.path} ({info.size} bytes)",
        {"path": info.path, "bytes": info.size, "modified": info.modified},
    )


def memory_replace(caller: Caller, path: str, old_str: str, new_str: str) -> Reply:
    info = caller.agent.files.replace(path, old_str, new_str)
    return Reply(
        f"replaced in {info.path}",
        {"path": info.path, "bytes": info.size, "modified": info.modified},
    )


def memory_insert(caller: Caller, path: str, line: int, text: str) -> Reply:
    info = caller.agent.files.insert(path, line, text)
    return Reply(
        f"inserted into {info.path} after line {line}",
        {"path": info.path, "bytes": info.size, "modified": info.modified},
    )


def memory_list(caller: Caller, path: str) -> Reply:
    files: list[dict[str, Any]] = [
        {"path": f.path, "bytes": f.size, "modified": f.modified}
        for f in caller.agent.files.list(path)
        if not f.is_dir
    ]
    text = "\n".join(f"{f['path']}\t{f['bytes']} bytes\t{f['modified'][:16]}" for f in files)
    return Reply(text or "(no files)", {"files": files})


def tools(config: Config) -> list[ToolSpec]:
    """The declarations, in catalogue order."""
    S, obj = shapes.S, shapes._obj
    path = req("path", "string", "relative to your memory folder, e.g. notes/plan.md")
    changed = obj({"path": S, "bytes": shapes.INT, "modified": S}, ["path", "bytes", "modified"])
    return [
        ToolSpec(
            "memory_read",
            memory_read,
            "Read a file of your memory folder.",
            (path,),
            obj({"path": S, "content": S}, ["path", "content"]),
            idempotent=True,
            group="files",
        ),
        ToolSpec(
            "memory_write",
            memory_write,
            "Create or overwrite a memory file. CONTEXT.md is loaded into every prompt; "
            "LOG.md is append-only (use log_activity).",
            (path, req("content", "string", "the whole new content")),
            changed,
            read_only=False,
            destructive=True,
            idempotent=True,
            group="files",
        ),
        ToolSpec(
            "memory_replace",
            memory_replace,
            "Replace text that occurs exactly once in a memory file.",
            (
                path,
                req("old_str", "string", "text to find"),
                req("new_str", "string", 'replacement; "" deletes'),
            ),
            changed,
            read_only=False,
            destructive=True,
            group="files",
        ),
        ToolSpec(
            "memory_insert",
            memory_insert,
            "Insert lines into a memory file.",
            (
                path,
                req("line", "integer", "after this line; 0 = at the top", minimum=0),
                req("text", "string", "the lines"),
            ),
            changed,
            read_only=False,
            group="files",
        ),
        ToolSpec(
            "memory_list",
            memory_list,
            "List the files (not folders) of your memory folder, with size and time.",
            (p("path", "string", 'only below this folder; "" = all', ""),),
            obj({"files": {"type": "array", "items": shapes.FILE}}, ["files"]),
            idempotent=True,
            group="files",
        ),
    ]
