"""The MCP tool catalogue: the seeds' own tool names and parameters, as plain functions.

Each tool is a `ToolSpec`: name, the function (typed parameters become the
input schema), a description an agent can act on, and its annotations
(read-only, destructive, idempotent). Tools translate and never decide: every
call goes to the store, which enforces scope and bounds. Results list ids and
snippets first; `memory_get` returns full text on request.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memstrata.store import Store

SNIPPET = 200


@dataclass(frozen=True)
class ToolSpec:
    name: str
    fn: Callable[..., Any]
    description: str
    read_only: bool
    destructive: bool = False
    idempotent: bool = False
    group: str = "core"  # "files": seed 003's five tools, off when tools.memory.enabled = false;
    # "claude": the Anthropic memory-tool shape, exposed only when named in the subset


def _hits(hits: list[Any]) -> str:
    rows = [{"uid": h.uid, "layer": h.layer, "score": round(h.score, 4), "title": h.title,
             "snippet": h.snippet, "ts": h.ts, "room": h.room, "kind": h.kind,
             "source": h.source.rsplit("/", 1)[-1], "stale": h.explain.get("stale")} for h in hits]
    return json.dumps({"results": rows, "note": "call memory_get(uid) for full text"}, ensure_ascii=False)


def build_tools(store: Store) -> list[ToolSpec]:
    agent = store.agent()

    # -- seed 003: the five file tools -----------------------------------------
    def memory_read(path: str) -> str:
        """Read a file from your memory directory (e.g. CONTEXT.md, notes/plan.md)."""
        return agent.files.read(path)

    def memory_write(path: str, content: str) -> str:
        """Create or overwrite a memory file. CONTEXT.md is auto-loaded into your prompt."""
        info = agent.files.write(path, content)
        return f"wrote {info.path} ({info.size} bytes)"

    def memory_replace(path: str, old_str: str, new_str: str) -> str:
        """Replace text in a memory file; old_str must occur exactly once."""
        info = agent.files.replace(path, old_str, new_str)
        return f"replaced in {info.path}"

    def memory_insert(path: str, line: int, text: str) -> str:
        """Insert text after line `line` of a memory file (0 = at the top)."""
        info = agent.files.insert(path, line, text)
        return f"inserted into {info.path}"

    def memory_list(path: str = "") -> str:
        """List the files in your memory directory."""
        return "\n".join(f"{f.path}{'/' if f.is_dir else ''}\t{f.size}" for f in agent.files.list(path))

    # -- seed 000: the shared ledger ------------------------------------------
    def memory_publish(kind: str, summary: str, tags: list[str] | None = None,
                       detail: str | None = None, ref: str | None = None,
                       supersedes: str | None = None) -> str:
        """Publish to the shared ledger (kinds: artifact, decision, interface, convention,
        warning, code). Summary <= 4 KB, detail <= 16 KB. `supersedes` hides an old entry."""
        e = store.ledger.publish(kind, summary, tags=tags, detail=detail, ref=ref,
                                 supersedes=supersedes)
        return json.dumps(e.to_dict(), ensure_ascii=False)

    def memory_query(tags: list[str] | None = None, kind: str | None = None,
                     last_n: int | None = None, exclude_room: str | None = None,
                     room: str | None = None) -> str:
        """Structured ledger query, newest first, at most 50. Use exclude_room to see only
        other rooms' knowledge."""
        entries = store.ledger.query(tags=tags, kind=kind, last_n=last_n,
                                     exclude_room=exclude_room, room=room)
        return json.dumps([e.to_dict() for e in entries], ensure_ascii=False)

    def memory_search(text: str, max_results: int = 10, kind: str | None = None,
                      exclude_room: str | None = None) -> str:
        """Full-text ledger search, BM25 x per-kind time decay (default 10, max 50)."""
        from memstrata.search.query import SearchQuery

        q = SearchQuery(text=text, layers=("ledger",), kind=kind, exclude_room=exclude_room,
                        k=max_results)
        return _hits(store.search(q))

    def memory_get_context(room_id: str | None = None, brief_keywords: list[str] | None = None,
                           max_entries: int = 15) -> str:
        """Predecessor context: the most relevant ledger entries from other rooms as a
        Markdown document (<= 15 entries, ~10 KB)."""
        from memstrata.assembly.predecessor import predecessor_context

        return predecessor_context(store, room=room_id or store.principal.room,
                                   keywords=brief_keywords or [], max_entries=max_entries)

    # -- seed 002: the five memory skills -------------------------------------
    def update_status(new_status: str, next_steps: list[str] | None = None) -> str:
        """Overwrite NOW.md (hot memory) with your current objective and next steps."""
        agent.now.update(new_status, next_steps or [])
        return "NOW.md updated"

    def log_activity(entry_type: str, content: str, metadata: dict[str, Any] | None = None) -> str:
        """Append to LOG.md: entry_type TOOL_USE, THOUGHT, USER_FEEDBACK, ERROR or SYSTEM."""
        return agent.log.append(entry_type, content, metadata).id

    def recall_memory(query: str, n_results: int = 5, layers: list[str] | None = None) -> str:
        """Search all your memory (LOG and its archive, files, facts, sessions, ledger...)."""
        from memstrata.search.query import SearchQuery

        return _hits(store.search(SearchQuery(text=query, k=n_results, layers=tuple(layers or ()))))

    def save_fact(key: str, value: str, category: str = "general") -> str:
        """Store a key/value fact (categories: general, preference, personal, config, user,
        feedback, project, reference)."""
        agent.facts.set(key, value, category)
        return f"saved {key}"

    def get_fact(key: str) -> str:
        """Retrieve a fact by key."""
        f = agent.facts.get(key)
        return json.dumps({"key": f.key, "value": f.value, "category": f.category,
                           "updated_at": f.updated_at})

    def memory_get(uid: str) -> str:
        """Full text of one search result by its uid."""
        return _full(store, uid)

    # -- seed 004: tasks and sessions ------------------------------------------
    def task_add(description: str, milestone: str | None = None, priority: int = 3,
                 acceptance_criteria: list[str] | None = None) -> str:
        """Add a task to tasks.json."""
        t = agent.tasks.add(description, milestone=milestone, priority=priority,
                            acceptance_criteria=acceptance_criteria)
        return json.dumps(t.to_dict())

    def task_update(task_id: str, status: str | None = None, priority: int | None = None) -> str:
        """Change a task's status (pending, in_progress, blocked, done, cancelled) or priority."""
        return json.dumps(agent.tasks.update(task_id, status=status, priority=priority).to_dict())

    def task_list(status: str | None = None) -> str:
        """Tasks ordered by priority."""
        return json.dumps([t.to_dict() for t in agent.tasks.list(status=status)])

    def session_append(session_id: str, role: str, content: str) -> str:
        """Append a message (user, assistant, tool_call, tool_result) to a session transcript."""
        return agent.sessions.append(session_id, role, content).id

    def session_read(session_id: str, last_n: int = 20) -> str:
        """The last messages of a session transcript."""
        msgs = agent.sessions.messages(session_id)[-max(1, min(last_n, 200)):]
        return json.dumps([m.to_dict() for m in msgs], ensure_ascii=False)

    def memory(command: str, path: str | None = None, file_text: str | None = None,
               old_str: str | None = None, new_str: str | None = None,
               insert_line: int | None = None, insert_text: str | None = None,
               old_path: str | None = None, new_path: str | None = None,
               view_range: list[int] | None = None) -> Any:
        """Anthropic memory tool (memory_20250818): view, create, str_replace, insert, delete,
        rename under /memories."""
        from mcp.types import CallToolResult, TextContent

        from memstrata.mcp.claude_memory import ClaudeMemoryHandler

        args = {k: v for k, v in locals().items() if v is not None and k not in ("CallToolResult", "TextContent", "ClaudeMemoryHandler")}
        text, is_error = ClaudeMemoryHandler(agent.files).handle_result(args)
        return CallToolResult(content=[TextContent(type="text", text=text)], is_error=is_error)

    ro, rw = True, False
    return [
        ToolSpec("memory_read", memory_read, memory_read.__doc__ or "", ro, idempotent=True, group="files"),
        ToolSpec("memory_write", memory_write, memory_write.__doc__ or "", rw, destructive=True, idempotent=True, group="files"),
        ToolSpec("memory_replace", memory_replace, memory_replace.__doc__ or "", rw, destructive=True, group="files"),
        ToolSpec("memory_insert", memory_insert, memory_insert.__doc__ or "", rw, group="files"),
        ToolSpec("memory_list", memory_list, memory_list.__doc__ or "", ro, idempotent=True, group="files"),
        ToolSpec("memory_publish", memory_publish, memory_publish.__doc__ or "", rw),
        ToolSpec("memory_query", memory_query, memory_query.__doc__ or "", ro, idempotent=True),
        ToolSpec("memory_search", memory_search, memory_search.__doc__ or "", ro, idempotent=True),
        ToolSpec("memory_get_context", memory_get_context, memory_get_context.__doc__ or "", ro, idempotent=True),
        ToolSpec("memory_get", memory_get, memory_get.__doc__ or "", ro, idempotent=True),
        ToolSpec("update_status", update_status, update_status.__doc__ or "", rw, destructive=True, idempotent=True),
        ToolSpec("log_activity", log_activity, log_activity.__doc__ or "", rw),
        ToolSpec("recall_memory", recall_memory, recall_memory.__doc__ or "", ro, idempotent=True),
        ToolSpec("save_fact", save_fact, save_fact.__doc__ or "", rw, destructive=True, idempotent=True),
        ToolSpec("get_fact", get_fact, get_fact.__doc__ or "", ro, idempotent=True),
        ToolSpec("task_add", task_add, task_add.__doc__ or "", rw),
        ToolSpec("task_update", task_update, task_update.__doc__ or "", rw, idempotent=True),
        ToolSpec("task_list", task_list, task_list.__doc__ or "", ro, idempotent=True),
        ToolSpec("session_append", session_append, session_append.__doc__ or "", rw),
        ToolSpec("session_read", session_read, session_read.__doc__ or "", ro, idempotent=True),
        ToolSpec("memory", memory, memory.__doc__ or "", rw, destructive=True, group="claude"),
    ]


def _full(store: Store, uid: str) -> str:
    hit = store.get(uid)  # scope-checked in the library; NotFound if not visible
    return json.dumps({"uid": uid, "title": hit.title, "text": hit.text,
                       "meta": hit.meta or None}, ensure_ascii=False)
