"""`memstrata setup CLIENT --check`: run what the client's files say, the way the client will.

Finding the entries is not enough: the check starts the MCP server exactly as written
(its command and arguments, from the project folder) and asks it for its tools, and for
Claude Code runs the SessionStart hook's command line through a shell from a subfolder,
with the JSON Claude Code sends, and reads the context it answers. A wrong path, a
missing install or a store that cannot open shows up here, not in the agent's session.
Running them writes no memory (SessionStart only reads; the MCP server is asked for
its tool list only), though opening the store creates its folder if it was not there.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from memstrata.agentconfig.clients import HOOKS, SERVER_NAME, Client, is_memstrata_hook
from memstrata.agentconfig.jsonedit import parse
from memstrata.values import value_type

TIMEOUT_S = 60.0
_HANDSHAKE = (
    json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "memstrata-setup-check", "version": "1"},
            },
        }
    )
    + "\n"
    + json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
    + "\n"
    + json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    + "\n"
)


@value_type(frozen=True)
class Finding:
    ok: bool
    text: str


def _doc(path: Path) -> dict[str, Any] | None:
    if not path.exists():
        return None
    text = path.read_text(encoding="utf-8")
    value = parse(text, path.name).value if text.strip() else {}
    return value if isinstance(value, dict) else None


def check(client: Client, project: Path) -> list[Finding]:
    out: list[Finding] = []
    for cfg in client.files:
        doc = _doc(project / cfg.path)
        if doc is None:
            out.append(Finding(False, f"{cfg.path}: missing"))
        elif cfg.servers is None:
            out.extend(_hooks(doc, project, cfg.path))
        else:
            out.append(_server(doc.get(cfg.servers), project, cfg.path))
    return out


def _server(servers: Any, project: Path, rel: str) -> Finding:
    entry = servers.get(SERVER_NAME) if isinstance(servers, dict) else None
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return Finding(False, f"{rel}: no MCP server {SERVER_NAME!r}")
    argv = [entry["command"], *[str(a) for a in entry.get("args") or []]]
    try:
        r = subprocess.run(
            argv,
            cwd=project,
            input=_HANDSHAKE,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            env={**os.environ, **{k: str(v) for k, v in (entry.get("env") or {}).items()}},
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Finding(False, f"{rel}: MCP server {SERVER_NAME!r} did not start: {exc}")
    tools = None
    for line in r.stdout.splitlines():
        try:
            msg = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(msg, dict) and msg.get("id") == 2:
            tools = (msg.get("result") or {}).get("tools")
    if not isinstance(tools, list):
        why = (r.stderr.strip().splitlines() or [f"exit code {r.returncode}"])[-1]
        return Finding(False, f"{rel}: MCP server {SERVER_NAME!r} listed no tools ({why})")
    return Finding(True, f"{rel}: MCP server {SERVER_NAME!r} starts and lists {len(tools)} tools")


def _hooks(doc: dict[str, Any], project: Path, rel: str) -> list[Finding]:
    hooks = doc.get("hooks")
    found: dict[str, str] = {}
    for event, arg in HOOKS:
        groups = hooks.get(event) if isinstance(hooks, dict) else None
        for group in groups if isinstance(groups, list) else []:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for h in handlers if isinstance(handlers, list) else []:
                if is_memstrata_hook(h, arg):
                    found.setdefault(event, h["command"])
    missing = [event for event, _ in HOOKS if event not in found]
    out = [
        Finding(
            not missing,
            f"{rel}: {len(found)} of {len(HOOKS)} memstrata hooks"
            + (f" (missing: {', '.join(missing)})" if missing else ""),
        )
    ]
    if "SessionStart" in found:
        out.append(_session_start(found["SessionStart"], project, rel))
    return out


def _session_start(command: str, project: Path, rel: str) -> Finding:
    """The SessionStart hook as Claude Code runs it: a shell, from a subfolder of the
    project (hooks run wherever the agent's working directory is), JSON on stdin."""
    payload = {
        "session_id": "memstrata-setup-check",
        "hook_event_name": "SessionStart",
        "source": "startup",
        "cwd": str(project),
    }
    with tempfile.TemporaryDirectory(dir=project, prefix=".memstrata-check-") as sub:
        try:
            r = subprocess.run(
                command,
                shell=True,
                cwd=sub,
                input=json.dumps(payload),
                capture_output=True,
                text=True,
                timeout=TIMEOUT_S,
                env={**os.environ, "CLAUDE_PROJECT_DIR": str(project)},
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return Finding(False, f"{rel}: the SessionStart hook did not run: {exc}")
        stray = Path(sub, ".memstrata").exists()
    try:
        context = json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
    except (json.JSONDecodeError, KeyError, TypeError):
        why = (r.stderr.strip().splitlines() or [f"exit code {r.returncode}"])[-1]
        return Finding(False, f"{rel}: the SessionStart hook gave no context ({why})")
    if stray:
        return Finding(False, f"{rel}: the SessionStart hook made a store in the subfolder")
    said = r.stderr.strip().splitlines()
    note = f"; it said: {said[-1]}" if said else ""
    return Finding(
        True, f"{rel}: the SessionStart hook runs (context of {len(context)} characters{note})"
    )


def all_ok(findings: list[Finding]) -> bool:
    return bool(findings) and all(f.ok for f in findings)
