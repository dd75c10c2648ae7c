"""`memory_history` and `memory_restore` (group `versions`, not served by default).

Every replace of a memory file keeps what it replaced (`layers.versions`). These two
tools let an agent look back and undo its own overwrite. They are a group of their
own, off unless `--tools versions` (or `all`) asks for them: every tool a server
lists costs the agent context tokens at every session start, and restoring is rare
and usually a person's decision, made with `memstrata history` / `restore` or the
web app's history pages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memstrata.mcp import shapes
from memstrata.mcp.schema import REQUIRED, Param
from memstrata.mcp.shapes import Reply
from memstrata.mcp.tools.spec import Caller, ToolSpec

if TYPE_CHECKING:
    from memstrata.config import Config

_VERSION = {
    "type": "object",
    "properties": {k: shapes.S for k in ("id", "sha256", "ts", "by", "surface", "note", "changed")}
    | {"size": shapes.INT, "current": {"type": "boolean"}},
}


def memory_history(caller: Caller, path: str, limit: int) -> Reply:
    hist = caller.agent.versions.history(path, limit=limit)
    rows: list[dict[str, Any]] = [
        {
            "id": v.id,
            "sha256": v.sha256,
            "ts": v.ts,
            "by": v.by,
            "surface": v.surface,
            "note": v.note,
            "changed": v.changed,
            "size": v.size,
            "current": v.current,
        }
        for v in hist.versions
    ]
    text = "\n".join(
        f"{r['id']}{' (current)' if r['current'] else ''}\t{r['ts'][:19]}\t"
        f"{r['by'] or '-'}\t{r['size']} bytes\t{r['changed'] or ''}"
        for r in rows
    )
    return Reply(text or "(no versions)", {"path": hist.path, "versions": rows})


def memory_restore(caller: Caller, path: str, version: str, expected_sha: str | None) -> Reply:
    hist = caller.agent.versions.restore(path, version, expected_sha=expected_sha)
    now = hist.versions[0]
    return Reply(
        f"restored {hist.path} to {version}; the content it replaced is kept as a version",
        {"path": hist.path, "id": now.id, "sha256": now.sha256},
    )


def tools(config: Config) -> list[ToolSpec]:
    """The declarations, in catalogue order."""
    path = Param("path", "string", "the file, e.g. CONTEXT.md, NOW.md, notes/a.md", REQUIRED)
    return [
        ToolSpec(
            "memory_history",
            memory_history,
            "Earlier versions of a memory file, newest first (id, time, author, first change).",
            (path, Param("limit", "integer", "at most this many", 20, minimum=1, maximum=200)),
            shapes._obj(
                {"path": shapes.S, "versions": {"type": "array", "items": _VERSION}},
                ["path", "versions"],
            ),
            idempotent=True,
            group="versions",
        ),
        ToolSpec(
            "memory_restore",
            memory_restore,
            "Make an earlier version of a memory file current again (the content it replaces "
            "is kept as a version).",
            (
                path,
                Param("version", "string", "the version id from memory_history", REQUIRED),
                Param("expected_sha", "string", "sha256 of the content you saw", None),
            ),
            shapes._obj({"path": shapes.S, "id": shapes.S, "sha256": shapes.S}, ["path", "id"]),
            read_only=False,
            group="versions",
        ),
    ]
