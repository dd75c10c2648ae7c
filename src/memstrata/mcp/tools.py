"""The MCP tool catalogue: the seeds' own tool names, each declared once.

A `ToolSpec` is a plain function plus what an agent needs to call it right the
first time: a description that says what is searched or changed and what comes
back, every parameter described with its allowed values and default
(`mcp.schema.Param`), the output schema of its structured result
(`mcp.shapes`), and its annotations (read-only, destructive, idempotent).
Both transports (the light stdio server and the SDK's HTTP server) list and
call tools from these specs through `run`, the one call path: validate, call,
answer. Tools translate and never decide: every call goes to the library, which
enforces scope and bounds.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstrata.errors import MemstrataError
from memstrata.mcp import shapes
from memstrata.mcp.schema import REQUIRED, Param, input_schema, validate
from memstrata.mcp.shapes import Reply
from memstrata.model import FACT_CATEGORIES, LOG_TYPES, SESSION_ROLES, TASK_STATUSES, iso

if TYPE_CHECKING:
    from memstrata.store import Store



@dataclass(frozen=True)
class ToolSpec:
    name: str
    fn: Callable[..., Reply]
    description: str
    params: tuple[Param, ...] = ()
    output: dict[str, Any] | None = None  # the outputSchema of `Reply.data`
    read_only: bool = True
    destructive: bool = False
    idempotent: bool = False
    group: str = "core"  # one of GROUPS (`--tools` selects by group or by name)
    reveals: bool = False  # returns a value as stored (get_fact: seed 002), see `run`
    extra: dict[str, Any] = field(default_factory=dict)

    def input_schema(self) -> dict[str, Any]:
        return input_schema(self.params)

    def listing(self) -> dict[str, Any]:
        """The tool as `tools/list` shows it (MCP field names)."""
        d: dict[str, Any] = {"name": self.name, "description": self.description,
                             "inputSchema": self.input_schema()}
        if self.output is not None:
            d["outputSchema"] = self.output
        d["annotations"] = self.annotations()
        return d

    def annotations(self) -> dict[str, bool]:
        """The hints that differ from MCP's defaults (readOnly false, destructive true,
        idempotent false, openWorld true); the write hints only matter for writers."""
        if self.read_only:
            return {"readOnlyHint": True, "openWorldHint": False}
        out = {"destructiveHint": self.destructive, "openWorldHint": False}
        if self.idempotent:
            out["idempotentHint"] = True
        return out


# Tool groups, by the seed each serves. A server exposes DEFAULT_GROUPS (and "ledger" when
# it acts in a room) unless `--tools` names groups or tools ("all": every group but
# "claude"): every tool listed costs an agent context tokens at every session start.
GROUPS: dict[str, str] = {
    "core": "seed 002 skills and recall: recall_memory, memory_get, log_activity, "
            "update_status, save_fact, get_fact, record_decision",
    "files": "seed 003 memory files: memory_read, memory_write, memory_replace, memory_insert, "
             "memory_list (off with [tools.memory] enabled = false)",
    "ledger": "seed 000 shared ledger: memory_publish, memory_query, memory_search, "
              "memory_get_context (default when the server acts in a room)",
    "rooms": "seed 000 rooms: room_channel, room_artifact, room_close, room_upstream",
    "tasks": "seed 004 tasks: task_add, task_update, task_list",
    "sessions": "seed 004 session transcripts: session_append, session_read",
    "episodes": "seed 001 task folders, phases and hygiene: task_folder_create, "
                "task_folder_write, task_folder_read, task_verified, gate_event, task_phase, "
                "scratch_promote, memory_promote, memory_audit, memory_verify",
    "admin": "seed 004 skill hand-off: skill_handoff (admins; others are refused)",
    "claude": "Anthropic's memory tool (memory_20250818): memory",
    "versions": "earlier versions of memory files: memory_history, memory_restore (off by "
                "default: restoring is rare, and every listed tool costs tokens)",
}
DEFAULT_GROUPS = ("core", "files")

# Tools whose whole effect is a LOG entry: logging them again would only double it.
NOT_AUTO_LOGGED = frozenset({"log_activity"})


def auto_log_target(store: Store) -> Store | None:
    """The store to auto-log tool calls to (seed 002, `[mcp] auto_log = true`), or None."""
    return store if store.config.mcp_auto_log and store.config.automatic_writes else None


def run(spec: ToolSpec, arguments: Mapping[str, Any] | None, *,
        log_to: Store | None = None) -> Reply:
    """Validate the arguments against the spec and call the tool (the one call path of
    both transports); with `log_to`, every call also leaves a compact TOOL_USE entry.

    Raises the library's typed errors (MalformedInput for bad arguments); the
    transport turns them into a tool error whose text starts with the error code.

    A tool's result enters the model's context, so it passes `secretscan.withhold` (each
    secret shown as `[withheld: <kind>]`), the rule assembled context follows; only a
    spec that `reveals` (get_fact: the agent asked for one value by its key) is exempt.
    """
    from memstrata.secretscan import collect_notices, withhold

    kwargs = validate(spec.params, arguments)
    start = time.perf_counter()
    from memstrata.files.versions import surface

    with collect_notices() as notices, surface(f"mcp {spec.name}"):
        try:
            reply = spec.fn(**kwargs)
        except MemstrataError as exc:
            _auto_log(log_to, spec.name, kwargs, None, time.perf_counter() - start, exc)
            raise
        _auto_log(log_to, spec.name, kwargs, reply.text, time.perf_counter() - start, None)
    if not spec.reveals:
        reply = Reply(withhold(reply.text), withhold(reply.data), reply.is_error)
    if notices:  # secrets policy `warn`: tell the agent, in the text it reads
        warn = "".join(f"\nwarning: {n}" for n in dict.fromkeys(notices))
        reply = Reply(reply.text + warn, reply.data, reply.is_error)
    return reply


def _auto_log(store: Store | None, name: str, args: dict[str, Any], result: Any,
              duration: float, error: BaseException | None) -> None:
    if store is None or name in NOT_AUTO_LOGGED or store.principal.agent is None:
        return
    from memstrata.loop import log_tool

    given = {k: v for k, v in args.items() if v is not None}  # defaults left out: as called
    try:
        log_tool(store, store.principal.agent, name, given, result, duration, error, via="mcp")
    except (MemstrataError, OSError) as exc:  # the tool call itself succeeded or failed already
        sys.stderr.write(f"memstrata: could not auto-log {name}: {exc}\n")


def _p(name: str, typ: str, description: str, default: Any = None, **kw: Any) -> Param:
    return Param(name, typ, description, default, **kw)


def _req(name: str, typ: str, description: str, **kw: Any) -> Param:
    return Param(name, typ, description, REQUIRED, **kw)


class _AgentHandle:
    """`store.agent()`, looked up when a tool first needs it, so a store opened without an
    agent (the owner at the terminal) still serves the ledger tools."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store.agent(), name)


def build_tools(store: Store) -> list[ToolSpec]:
    agent = _AgentHandle(store)  # resolved at the first call: the owner may use the ledger
    kinds = store.config.kinds
    bounds = store.config.bounds
    from memstrata.mcp.decisions import build_decision_tools
    from memstrata.mcp.episodic import build_episodic_tools
    from memstrata.mcp.versions import build_version_tools
    from memstrata.search.query import LAYERS, SCOPES

    def where(source: str) -> str:
        return store.rel(Path(source))

    def search(q: Any, explain: bool) -> Reply:
        return shapes.hits_reply([shapes.hit(h, where(h.source), explain=explain)
                                  for h in store.search(q)])

    # -- seed 003: the five file tools -----------------------------------------
    path = _req("path", "string", "relative to your memory folder, e.g. notes/plan.md")

    def memory_read(path: str) -> Reply:
        text = agent.files.read(path)
        return Reply(text, {"path": path, "content": text})

    def memory_write(path: str, content: str) -> Reply:
        info = agent.files.write(path, content)
        return Reply(f"wrote {info.path} ({info.size} bytes)",
                     {"path": info.path, "bytes": info.size, "modified": info.modified})

    def memory_replace(path: str, old_str: str, new_str: str) -> Reply:
        info = agent.files.replace(path, old_str, new_str)
        return Reply(f"replaced in {info.path}",
                     {"path": info.path, "bytes": info.size, "modified": info.modified})

    def memory_insert(path: str, line: int, text: str) -> Reply:
        info = agent.files.insert(path, line, text)
        return Reply(f"inserted into {info.path} after line {line}",
                     {"path": info.path, "bytes": info.size, "modified": info.modified})

    def memory_list(path: str) -> Reply:
        files: list[dict[str, Any]] = [{"path": f.path, "bytes": f.size, "modified": f.modified}
                                       for f in agent.files.list(path) if not f.is_dir]
        text = "\n".join(f"{f['path']}\t{f['bytes']} bytes\t{f['modified'][:16]}" for f in files)
        return Reply(text or "(no files)", {"files": files})

    changed = shapes._obj({"path": shapes.S, "bytes": shapes.INT, "modified": shapes.S},
                          ["path", "bytes", "modified"])

    # -- seed 000: the shared ledger ------------------------------------------
    def memory_publish(kind: str, summary: str, tags: list[str] | None, detail: str | None,
                       ref: str | None, supersedes: str | None, room_id: str | None,
                       author_role: str | None, ts: str | None) -> Reply:
        e = store.ledger.publish(kind, summary, tags=tags, detail=detail, ref=ref,
                                 supersedes=supersedes, room_id=room_id,
                                 author_role=author_role, ts=ts)
        return Reply(f"published {e.id} ({e.kind}, room {e.room_id or '-'})",
                     {"entry": shapes.entry(e)})

    def memory_query(tags: list[str] | None, kind: str | None, last_n: int | None,
                     exclude_room: str | None, in_room: str | None,
                     include_own_room: bool) -> Reply:
        entries = store.ledger.query(tags=tags, kind=kind, last_n=last_n,
                                     exclude_room=exclude_room, in_room=in_room,
                                     include_own_room=include_own_room)
        text = "\n".join(shapes.entry_line(e) for e in entries) or "no matching entries"
        return Reply(text, {"entries": [shapes.entry(e) for e in entries]})

    def memory_search(text: str, max_results: int, kind: str | None, exclude_room: str | None,
                      include_own_room: bool, explain: bool) -> Reply:
        hits = store.ledger.search(text, max_results=max_results, kind=kind,
                                   exclude_room=exclude_room, include_own_room=include_own_room)
        return shapes.hits_reply([shapes.hit(h, where(h.source), explain=explain) for h in hits])

    def memory_get_context(room_id: str | None, brief_keywords: list[str] | None,
                           max_entries: int) -> Reply:
        from memstrata.assembly.predecessor import predecessor_context

        room = room_id or store.principal.room
        text = predecessor_context(store, room=room, keywords=brief_keywords or [],
                                   max_entries=max_entries)
        return Reply(text, shapes.compact({"room": room, "markdown": text}))

    def memory_get(uid: str) -> Reply:
        h = store.get(uid)
        data = shapes.compact({"uid": h.uid, "layer": h.layer, "kind": h.kind, "title": h.title,
                               "text": h.text, "when": iso(h.ts),
                               "where": where(h.source) + (f":{h.line}" if h.line else ""),
                               "room": h.room, "owner": h.owner, "tags": list(h.tags),
                               "meta": h.meta or None})
        return Reply(f"{h.title}\n\n{h.text}".strip(), data)

    # -- seed 002: the five memory skills -------------------------------------
    def update_status(new_status: str, next_steps: list[str] | None) -> Reply:
        state = agent.now.update(new_status, next_steps or [])
        return Reply("NOW.md updated", {"objective": state.objective,
                                        "next_steps": list(state.next_steps),
                                        "updated_at": state.updated or iso(time.time())})

    def log_activity(entry_type: str, content: str, metadata: dict[str, Any] | None) -> Reply:
        e = agent.log.append(entry_type, content, metadata)
        return Reply(f"logged {e.id} ({e.entry_type})",
                     {"id": e.id, "entry_type": e.entry_type, "ts": e.ts})

    def recall_memory(query: str, n_results: int, layers: list[str] | None, kind: str | None,
                      since: str | None, until: str | None, explain: bool) -> Reply:
        from memstrata.search.query import SearchQuery

        return search(SearchQuery(text=query, k=n_results, layers=tuple(layers or ()), kind=kind,
                                  since=since, until=until), explain)

    def save_fact(key: str, value: str, category: str, citations: list[str] | None) -> Reply:
        f = agent.facts.set(key, value, category, citations=citations)
        return Reply(f"saved {f.key} = {f.value} ({f.category})", _fact(f))

    def get_fact(key: str) -> Reply:
        f = agent.facts.get(key)
        return Reply(f"{f.key} = {f.value} ({f.category}, updated {f.updated_at[:10]})", _fact(f))

    # -- seed 004: tasks and sessions ------------------------------------------
    def task_add(description: str, milestone: str | None, priority: int,
                 acceptance_criteria: list[str] | None) -> Reply:
        t = agent.tasks.add(description, milestone=milestone, priority=priority,
                            acceptance_criteria=acceptance_criteria)
        return Reply(f"added {shapes.task_line(t)}", {"task": shapes.task(t)})

    def task_update(task_id: str, status: str | None, priority: int | None) -> Reply:
        t = agent.tasks.update(task_id, status=status, priority=priority)
        return Reply(f"updated {shapes.task_line(t)}", {"task": shapes.task(t)})

    def task_list(status: str | None) -> Reply:
        tasks = agent.tasks.list(status=status)
        return Reply("\n".join(shapes.task_line(t) for t in tasks) or "no tasks",
                     {"tasks": [shapes.task(t) for t in tasks]})

    def session_append(session_id: str, role: str, content: str, id: str | None,
                       name: str | None, input: Any) -> Reply:
        m = agent.sessions.append(session_id, role, content, id=id, name=name, input=input)
        return Reply(f"appended {m.id} to session {session_id}",
                     {"id": m.id, "session_id": session_id, "timestamp": m.timestamp})

    def session_read(session_id: str, last_n: int) -> Reply:
        msgs = agent.sessions.messages(session_id)[-last_n:]
        text = "\n".join(f"[{m.timestamp[:16]}] {m.role}: {m.content}" for m in msgs)
        return Reply(text or "(no messages)",
                     {"messages": [shapes.compact(m.to_dict()) for m in msgs]})

    def memory(command: str, path: str | None, file_text: str | None, old_str: str | None,
               new_str: str | None, insert_line: int | None, insert_text: str | None,
               old_path: str | None, new_path: str | None,
               view_range: list[int] | None) -> Reply:
        from memstrata.mcp.claude_memory import ClaudeMemoryHandler

        args = {k: v for k, v in locals().items() if v is not None and k != "ClaudeMemoryHandler"}
        text, is_error = ClaudeMemoryHandler(agent.files).handle_result(args)
        return Reply(text, None, is_error=is_error)

    def _fact(f: Any) -> dict[str, Any]:
        return shapes.compact({"key": f.key, "value": f.value, "category": f.category,
                               "created_at": f.created_at, "updated_at": f.updated_at})

    S = shapes.S
    hits_out = shapes.HITS
    k_max = bounds.query_max
    explain = _p("explain", "boolean", "add how each score was computed", False)
    kind = _p("kind", "string", "ledger kind", enum=kinds)
    tags = _p("tags", "array", "tags, e.g. [\"auth\"]", items="string")
    obj = shapes._obj
    return [
        ToolSpec("memory_read", memory_read,
                 "Read a file of your memory folder.",
                 (path,), obj({"path": S, "content": S}, ["path", "content"]),
                 idempotent=True, group="files"),
        ToolSpec("memory_write", memory_write,
                 "Create or overwrite a memory file. CONTEXT.md is loaded into every prompt; "
                 "LOG.md is append-only (use log_activity).",
                 (path, _req("content", "string", "the whole new content")), changed,
                 read_only=False, destructive=True, idempotent=True, group="files"),
        ToolSpec("memory_replace", memory_replace,
                 "Replace text that occurs exactly once in a memory file.",
                 (path, _req("old_str", "string", "text to find"),
                  _req("new_str", "string", "replacement; \"\" deletes")), changed,
                 read_only=False, destructive=True, group="files"),
        ToolSpec("memory_insert", memory_insert,
                 "Insert lines into a memory file.",
                 (path, _req("line", "integer", "after this line; 0 = at the top", minimum=0),
                  _req("text", "string", "the lines")), changed,
                 read_only=False, group="files"),
        ToolSpec("memory_list", memory_list,
                 "List the files (not folders) of your memory folder, with size and time.",
                 (_p("path", "string", "only below this folder; \"\" = all", ""),),
                 obj({"files": {"type": "array", "items": shapes.FILE}}, ["files"]),
                 idempotent=True, group="files"),
        ToolSpec("memory_publish", memory_publish,
                 "Publish to the ledger every room reads (records your room). Returns the entry.",
                 (_req("kind", "string", "kind of knowledge", enum=kinds),
                  _req("summary", "string", f"one paragraph, at most {bounds.summary_bytes} bytes"),
                  tags, _p("detail", "string", f"at most {bounds.detail_bytes} bytes"),
                  _p("ref", "string", "file, commit or URL"),
                  _p("supersedes", "string", "id of the entry this replaces (hides it)"),
                  _p("room_id", "string", "default: your room; another: admins only"),
                  _p("author_role", "string", "default: you; another: admins only"),
                  _p("ts", "string", "ISO 8601; default: now; another: admins only")),
                 obj({"entry": shapes.ENTRY}, ["entry"]), read_only=False, group="ledger"),
        ToolSpec("memory_query", memory_query,
                 "Ledger entries by filters, newest first (no text search). Default: other "
                 "rooms' entries, not your room's.",
                 (tags, kind, _p("last_n", "integer", "at most this many", k_max, minimum=1,
                                 maximum=k_max),
                  _p("exclude_room", "string", "leave out this room"),
                  _p("in_room", "string", "only this room"),
                  _p("include_own_room", "boolean", "include your room's entries", False)),
                 obj({"entries": {"type": "array", "items": shapes.ENTRY}}, ["entries"]),
                 idempotent=True, group="ledger"),
        ToolSpec("memory_search", memory_search,
                 "Search the shared ledger only, other rooms' entries unless include_own_room "
                 "(recall_memory searches all your memory). Returns ranked hits.",
                 (_req("text", "string", "words to look for"),
                  _p("max_results", "integer", "number of hits", bounds.search_default,
                     minimum=1, maximum=k_max),
                  kind, _p("exclude_room", "string", "leave out this room"),
                  _p("include_own_room", "boolean", "include your room's entries", False),
                  explain),
                 hits_out, idempotent=True, group="ledger"),
        ToolSpec("memory_get_context", memory_get_context,
                 "Other rooms' ledger entries most relevant to a brief, as Markdown "
                 "(predecessor context).",
                 (_p("room_id", "string", "the room to prepare for (default: yours)"),
                  _p("brief_keywords", "array", "what the room is about", items="string"),
                  _p("max_entries", "integer", "entries", bounds.context_entries, minimum=1,
                     maximum=bounds.context_entries)),
                 obj({"room": S, "markdown": S}, ["markdown"]), idempotent=True, group="ledger"),
        ToolSpec("memory_get", memory_get,
                 "Full text and metadata of one memory, by a search hit's uid.",
                 (_req("uid", "string", "a search hit's uid"),),
                 obj({"uid": S, "layer": S, "title": S, "text": S, "when": S, "where": S},
                     ["uid", "layer", "title", "text", "when", "where"]), idempotent=True),
        ToolSpec("update_status", update_status,
                 "Overwrite NOW.md with your current objective and next steps.",
                 (_req("new_status", "string", "the current objective"),
                  _p("next_steps", "array", "next steps, in order", items="string")),
                 obj({"objective": S, "next_steps": shapes.STRS, "updated_at": S},
                     ["objective", "next_steps", "updated_at"]),
                 read_only=False, destructive=True, idempotent=True),
        ToolSpec("log_activity", log_activity,
                 "Append an entry to your activity log (LOG.md).",
                 (_req("entry_type", "string", "kind of entry", enum=LOG_TYPES),
                  _req("content", "string", "what you did, saw or decided"),
                  _p("metadata", "object", "extra JSON, e.g. {\"file\": \"a.py\"}")),
                 obj({"id": S, "entry_type": S, "ts": S}, ["id", "entry_type", "ts"]),
                 read_only=False),
        ToolSpec("recall_memory", recall_memory,
                 "Search all the memory you may read (LOG and its archive, memory files, "
                 "CONTEXT.md, NOW.md, facts, tasks, the ledger); session transcripts only when "
                 "layers names \"session\". Returns ranked hits.",
                 (_req("query", "string", "a question or keywords"),
                  _p("n_results", "integer", "number of hits", 5, minimum=1, maximum=k_max),
                  _p("layers", "array", "only these layers or scopes (default: all but session)",
                     items="string", item_enum=(*SCOPES, *LAYERS)),
                  _p("kind", "string", "only this kind (LOG type, ledger kind, fact category...)"),
                  _p("since", "string", "not older than this ISO 8601 time"),
                  _p("until", "string", "not newer than this ISO 8601 time"),
                  explain),
                 hits_out, idempotent=True),
        ToolSpec("save_fact", save_fact,
                 "Save or update a durable key/value fact; repo facts (user, feedback, "
                 "project, reference) are create-only, cited, 1-2 sentences.",
                 (_req("key", "string", "a short identifier, e.g. db_engine"),
                  _req("value", "string", "the value"),
                  _p("category", "string", "kind of fact", "general", enum=FACT_CATEGORIES),
                  _p("citations", "array", "where it comes from (required for repo facts)",
                     items="string")),
                 shapes.FACT, read_only=False, destructive=True, idempotent=True),
        ToolSpec("get_fact", get_fact, "A fact by its exact key.",
                 (_req("key", "string", "the fact's key"),), shapes.FACT, idempotent=True,
                 reveals=True),
        ToolSpec("task_add", task_add, "Add a task to your task list; returns it with its id.",
                 (_req("description", "string", "what to do"),
                  _p("milestone", "string", "milestone name"),
                  _p("priority", "integer", "1 = highest", 3, minimum=0),
                  _p("acceptance_criteria", "array", "when it is done", items="string")),
                 obj({"task": shapes.TASK}, ["task"]), read_only=False, group="tasks"),
        ToolSpec("task_update", task_update, "Change a task's status or priority.",
                 (_req("task_id", "string", "e.g. TASK-001"),
                  _p("status", "string", "new status", enum=TASK_STATUSES),
                  _p("priority", "integer", "new priority (1 = highest)", minimum=0)),
                 obj({"task": shapes.TASK}, ["task"]), read_only=False, idempotent=True, group="tasks"),
        ToolSpec("task_list", task_list, "Your tasks, highest priority (1) first.",
                 (_p("status", "string", "only tasks in this status", enum=TASK_STATUSES),),
                 obj({"tasks": {"type": "array", "items": shapes.TASK}}, ["tasks"]),
                 idempotent=True, group="tasks"),
        ToolSpec("session_append", session_append,
                 "Append a message to a session transcript (created on first use). A tool call "
                 "is role tool_call with name and input; its result is role tool_result with "
                 "the same id.",
                 (_req("session_id", "string", "session name, e.g. 2026-11-23-auth"),
                  _req("role", "string", "who speaks", enum=SESSION_ROLES),
                  _req("content", "string", "the message (\"\" for a tool call)"),
                  _p("id", "string", "message id (default: a new one); a tool_call and its "
                     "tool_result share one, e.g. tool_001"),
                  _p("name", "string", "tool_call / tool_result: the tool's name"),
                  _p("input", "object", "tool_call: the tool's input, e.g. {\"path\": \"a.md\"}")),
                 obj({"id": S, "session_id": S, "timestamp": S}, ["id", "session_id", "timestamp"]),
                 read_only=False, group="sessions"),
        ToolSpec("session_read", session_read, "The last messages of a session transcript.",
                 (_req("session_id", "string", "session name"),
                  _p("last_n", "integer", "messages", 20, minimum=1, maximum=200)),
                 obj({"messages": {"type": "array", "items": shapes.MESSAGE}}, ["messages"]),
                 idempotent=True, group="sessions"),
        ToolSpec("memory", memory,
                 "Anthropic memory tool (memory_20250818): view, create, str_replace, insert, "
                 "delete, rename under /memories.",
                 (_req("command", "string", "the command",
                       enum=("view", "create", "str_replace", "insert", "delete", "rename")),
                  _p("path", "string", "/memories/..."),
                  _p("file_text", "string", "create: the content"),
                  _p("old_str", "string", "str_replace: text to find"),
                  _p("new_str", "string", "str_replace: replacement"),
                  _p("insert_line", "integer", "insert: after this line"),
                  _p("insert_text", "string", "insert: the text"),
                  _p("old_path", "string", "rename: from"), _p("new_path", "string", "rename: to"),
                  _p("view_range", "array", "view: [first, last] line", items="integer")),
                 None, read_only=False, destructive=True, group="claude"),
        *build_decision_tools(agent),  # decisions, constraints, preferences (issue 19)
        *build_version_tools(agent),  # earlier versions of memory files (issue 24)
        *build_episodic_tools(store, agent),  # seed 001 task-episodic + promotion, rooms
    ]

