"""What `memstrata setup CLIENT` writes for each coding agent, as edits of JSON documents.

Every client gets the MCP server (`memstrata mcp`, stdio) under the name `memstrata`;
Claude Code also gets the seven hooks of `memstrata hook` (`cli.hooks_cmd`), one per
event. Each entry runs one `Target`: the same program, store and agent everywhere, so
the hooks and the agent's own MCP calls write one memory:

* the program is an absolute path (the client starts it with its own PATH, which need
  not hold the user's virtualenv);
* the store is an absolute `--home` (a hook fired from any subfolder, or with another
  working directory, reaches the project's store and never creates a second one): the
  store discovery finds from the project once setup is done (`store_for`), so the CLI run
  in the project and the entries agree;
* the agent is named (`--agent`), the default one every surface uses unless chosen.

`add` and `remove` are pure: a document in, the new document and what changed out. An
entry is memstrata's when it runs memstrata (`runs_memstrata`): a second setup updates it
in place rather than adding a duplicate (an older hand-written `memstrata --agent me hook
stop` is replaced, so a tool call is never logged twice); a removal takes exactly those
entries away, and the containers that only they filled.
"""

from __future__ import annotations

import copy
import itertools
import json
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memstrata.errors import MalformedInput
from memstrata.files.layout import DEFAULT_HOME, find_home
from memstrata.values import value_type

SERVER_NAME = "memstrata"  # the hooks skip the agent's calls of `mcp__memstrata__*` tools
# Claude Code's hook events and the `memstrata hook` event each runs (`cli.hooks_cmd`).
HOOKS = (
    ("SessionStart", "session-start"),
    ("UserPromptSubmit", "user-prompt-submit"),
    ("PostToolUse", "post-tool-use"),
    ("PostToolUseFailure", "post-tool-use-failure"),
    ("PreCompact", "pre-compact"),
    ("Stop", "stop"),
    ("SessionEnd", "session-end"),
)
TOOL_EVENTS = ("PostToolUse", "PostToolUseFailure")  # the events that take a tool matcher

Doc = dict[str, Any]
Edit = Callable[[Doc, "Target"], tuple[Doc, list[str]]]


@value_type(frozen=True)
class Target:
    """The memstrata a client runs: program (argv prefix), store and agent."""

    program: tuple[str, ...]
    home: Path
    agent: str

    def argv(self, *args: str) -> list[str]:
        return [*self.program, "--home", str(self.home), "--agent", self.agent, *args]

    def shell(self, *args: str) -> str:
        """The command line a shell runs (Claude Code runs hook commands in one)."""
        return shlex.join(self.argv(*args))


@value_type(frozen=True)
class ConfigFile:
    """One file a client reads, relative to the project, and the edits memstrata makes;
    `servers` names the key its MCP servers sit under (None: a hooks file)."""

    path: str
    add: Edit
    remove: Edit
    servers: str | None = None


@value_type(frozen=True)
class Client:
    """A coding agent: its files, what to do next, and whether setup makes the project a
    root for store discovery (`files.layout.PROJECT_MARKERS`: Claude Code's `.claude/`)."""

    name: str
    title: str
    files: tuple[ConfigFile, ...]
    next_step: str
    marks_root: bool = False


def store_for(client: Client, project: Path) -> Path:
    """The store the project's entries use by default: the one `files.layout.find_home`
    finds from the project once setup is done. Claude Code's `.claude/` makes the project
    a root, so its own `.memstrata` (existing or not); Cursor's and VS Code's folders do
    not, so a store further up (a monorepo's) is found as the CLI run there finds it."""

    here = project / DEFAULT_HOME
    return here if client.marks_root else find_home(project)


def runs_memstrata(words: list[str]) -> bool:
    """Whether a command line runs memstrata: a word naming the program, or `-m memstrata`."""
    return any(Path(w).name in ("memstrata", "memstrata.exe") for w in words) or any(
        a == "-m" and b == "memstrata" for a, b in itertools.pairwise(words)
    )


def _words(command: Any) -> list[str]:
    if not isinstance(command, str):
        return []
    try:
        return shlex.split(command)
    except ValueError:  # an unbalanced quote: not ours to judge
        return []


def is_memstrata_hook(handler: Any, event: str) -> bool:
    """A Claude Code hook handler that runs `memstrata ... hook EVENT`."""
    if not isinstance(handler, dict):
        return False
    words = _words(handler.get("command"))
    hook_at = [i for i, w in enumerate(words) if w == "hook"]
    return runs_memstrata(words) and any(words[i + 1 : i + 2] == [event] for i in hook_at)


def _object(doc: Doc, key: str, where: str) -> Doc:
    value = doc.setdefault(key, {})
    if not isinstance(value, dict):
        raise MalformedInput(f"{where}: {key!r} is not a JSON object; nothing was changed")
    return value


# -- Claude Code's hooks (.claude/settings.json) -----------------------------------------------


def add_hooks(doc: Doc, target: Target) -> tuple[Doc, list[str]]:
    doc = copy.deepcopy(doc)
    hooks = _object(doc, "hooks", ".claude/settings.json")
    changes = []
    for event, arg in HOOKS:
        command = target.shell("hook", arg)
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise MalformedInput(f".claude/settings.json: hooks.{event} is not a JSON array")
        ours = [
            (g, h)
            for g in groups
            if isinstance(g, dict) and isinstance(g.get("hooks"), list)
            for h in g["hooks"]
            if is_memstrata_hook(h, arg)
        ]
        if not ours:
            handler = {"type": "command", "command": command}
            groups.append(
                {"matcher": "*", "hooks": [handler]}
                if event in TOOL_EVENTS
                else {"hooks": [handler]}
            )
            changes.append(f"hook {event}: added")
            continue
        (_, first), extra = ours[0], ours[1:]
        if first.get("command") != command or first.get("type") != "command":
            changes.append(f"hook {event}: updated (was: {first.get('command')})")
            first.update(type="command", command=command)
        emptied = []
        for group, handler in extra:  # a duplicate would log every call twice
            group["hooks"].remove(handler)
            changes.append(f"hook {event}: removed a duplicate ({handler.get('command')})")
            if not group["hooks"]:
                emptied.append(group)
        hooks[event] = [g for g in groups if not any(g is e for e in emptied)]
    return doc, changes


def remove_hooks(doc: Doc, target: Target) -> tuple[Doc, list[str]]:
    doc = copy.deepcopy(doc)
    hooks = doc.get("hooks")
    if not isinstance(hooks, dict):
        return doc, []
    changes = []
    for event, arg in HOOKS:
        groups = hooks.get(event)
        if not isinstance(groups, list):
            continue
        kept = []
        for group in groups:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if isinstance(inner, list) and any(is_memstrata_hook(h, arg) for h in inner):
                group["hooks"] = [h for h in inner if not is_memstrata_hook(h, arg)]
                changes.append(f"hook {event}: removed")
                if not group["hooks"]:  # the group held only memstrata's hook
                    continue
            kept.append(group)
        if kept:
            hooks[event] = kept
        elif groups:
            del hooks[event]
    if not hooks and changes:
        del doc["hooks"]
    return doc, changes


# -- MCP servers (.mcp.json, .cursor/mcp.json, .vscode/mcp.json) ---------------------------------


def http_entry(url: str, token: str | None = None) -> Doc:
    """The client config entry of memstrata's HTTP MCP server (`memstrata serve`, `memstrata
    mcp --http`): the one the start-up banner prints and the README shows (a test holds
    them equal), carrying the bearer header when a token is set."""
    entry: Doc = {"type": "http", "url": url}
    if token:
        entry["headers"] = {"Authorization": f"Bearer {token}"}
    return entry


def client_config(entry: Doc) -> str:
    """An MCP client config holding memstrata's entry, as one line of JSON."""
    return json.dumps({"mcpServers": {SERVER_NAME: entry}})


def _server_edits(key: str, where: str, typed: bool) -> tuple[Edit, Edit]:
    """add/remove of the `memstrata` stdio server under `key` (`mcpServers`, `servers`)."""

    def entry(target: Target) -> Doc:
        argv = target.argv("mcp")
        return {**({"type": "stdio"} if typed else {}), "command": argv[0], "args": argv[1:]}

    def add(doc: Doc, target: Target) -> tuple[Doc, list[str]]:
        doc = copy.deepcopy(doc)
        servers = _object(doc, key, where)
        want, have = entry(target), servers.get(SERVER_NAME)
        if have == want:
            return doc, []
        servers[SERVER_NAME] = want
        if have is None:
            return doc, [f"MCP server {SERVER_NAME!r}: added"]
        return doc, [f"MCP server {SERVER_NAME!r}: replaced (was: {have})"]

    def remove(doc: Doc, target: Target) -> tuple[Doc, list[str]]:
        doc = copy.deepcopy(doc)
        servers = doc.get(key)
        if not isinstance(servers, dict) or SERVER_NAME not in servers:
            return doc, []
        del servers[SERVER_NAME]
        if not servers:
            del doc[key]
        return doc, [f"MCP server {SERVER_NAME!r}: removed"]

    return add, remove


_CLAUDE_MCP = _server_edits("mcpServers", ".mcp.json", typed=True)
_CURSOR_MCP = _server_edits("mcpServers", ".cursor/mcp.json", typed=False)
_VSCODE_MCP = _server_edits("servers", ".vscode/mcp.json", typed=True)

CLIENTS: dict[str, Client] = {
    "claude-code": Client(
        "claude-code",
        "Claude Code",
        (
            ConfigFile(".claude/settings.json", add_hooks, remove_hooks),
            ConfigFile(".mcp.json", *_CLAUDE_MCP, servers="mcpServers"),
        ),
        "start Claude Code in the project; approve the 'memstrata' MCP server when it asks "
        "(or in /mcp); /hooks lists the hooks",
        marks_root=True,
    ),
    "cursor": Client(
        "cursor",
        "Cursor",
        (ConfigFile(".cursor/mcp.json", *_CURSOR_MCP, servers="mcpServers"),),
        "open the project in Cursor; Settings > MCP shows 'memstrata' and its tools (turn it on "
        "if it is off)",
    ),
    "vscode": Client(
        "vscode",
        "VS Code",
        (ConfigFile(".vscode/mcp.json", *_VSCODE_MCP, servers="servers"),),
        "open the project in VS Code; run 'MCP: List Servers' and start 'memstrata' (Copilot "
        "agent mode lists its tools)",
    ),
}
