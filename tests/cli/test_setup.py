"""`memstrata setup CLIENT` (issue 23 item 4), on real files in a temporary project, through
the real CLI process: what it writes, merged into existing settings without clobbering
them, idempotent, `--dry-run`, `--remove`, `--check`; then the written hooks and MCP server
run as Claude Code runs them (a shell, from a subfolder) and share one memory."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

EXE = shutil.which("memstrata", path=str(Path(sys.executable).parent)) or "memstrata"
EVENTS = {
    "SessionStart": "session-start",
    "UserPromptSubmit": "user-prompt-submit",
    "PostToolUse": "post-tool-use",
    "PostToolUseFailure": "post-tool-use-failure",
    "PreCompact": "pre-compact",
    "Stop": "stop",
    "SessionEnd": "session-end",
}
# Settings as Claude Code writes them (two spaces), with another tool's hooks, a
# permission list and keys memstrata knows nothing about.
SETTINGS = """{
  "permissions": {
    "allow": [
      "Bash(npm test)"
    ]
  },
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "$CLAUDE_PROJECT_DIR/.claude/guard.sh"
          }
        ]
      }
    ],
    "PostToolUse": [
      {
        "matcher": "Write|Edit",
        "hooks": [
          {
            "type": "command",
            "command": "npx prettier --write \\"$FILE\\"",
            "timeout": 30
          }
        ]
      }
    ]
  },
  "model": "opus",
  "x-team-notes": "keep me"
}
"""
MCP = """{
  "mcpServers": {
    "github": {
      "command": "npx",
      "args": [
        "-y",
        "@modelcontextprotocol/server-github"
      ],
      "env": {
        "GITHUB_TOKEN": "${GITHUB_TOKEN}"
      }
    }
  },
  "x-other": true
}
"""


def env() -> dict[str, str]:
    """A user's shell: no memstrata variables (the store and agent come from the files);
    PYTHONPATH made absolute, as the processes run in the project folder."""
    out = {k: v for k, v in os.environ.items() if not k.startswith(("MEMSTRATA_", "CLAUDE_"))}
    if out.get("PYTHONPATH"):
        parts = out["PYTHONPATH"].split(os.pathsep)
        out["PYTHONPATH"] = os.pathsep.join(str(Path(x).absolute()) for x in parts if x)
    return out


def setup(project: Path, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    r = subprocess.run(
        [EXE, "setup", *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        env=env(),
    )
    if ok:
        assert r.returncode == 0, r.stderr
    return r


def snapshot(project: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(project)): p.read_bytes()
        for p in sorted(project.rglob("*"))
        if p.is_file() and ".memstrata" not in p.parts
    }


def read(path: Path) -> Any:
    return json.loads(path.read_text())


def test_a_fresh_project_gets_seven_hooks_and_the_server_and_remove_leaves_it_empty(
    tmp_path: Path,
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    r = setup(project, "claude-code")
    assert "agent  agent (the default" in r.stdout and str(project / ".memstrata") in r.stdout
    settings = read(project / ".claude/settings.json")
    server = read(project / ".mcp.json")["mcpServers"]["memstrata"]
    assert set(settings["hooks"]) == set(EVENTS)
    for event, arg in EVENTS.items():
        (group,) = settings["hooks"][event]
        assert group.get("matcher") == ("*" if event.startswith("PostToolUse") else None)
        words = shlex.split(group["hooks"][0]["command"])
        assert Path(words[0]).is_absolute() and Path(words[0]).name == "memstrata"
        assert words[1:] == ["--home", str(project / ".memstrata"), "--agent", "agent", "hook", arg]
    assert server == {
        "type": "stdio",
        "command": words[0],
        "args": ["--home", str(project / ".memstrata"), "--agent", "agent", "mcp"],
    }
    written = snapshot(project)
    again = setup(project, "claude-code")
    assert "nothing to change" in again.stdout
    assert snapshot(project) == written  # idempotent: not a byte moved
    gone = setup(project, "claude-code", "--remove")
    assert "hook SessionStart: removed" in gone.stdout and "is kept" in gone.stdout
    assert sorted(os.listdir(project)) == []  # what setup created is gone, folders too
    assert "nothing to remove" in setup(project, "claude-code", "--remove").stdout


def test_existing_settings_are_merged_and_remove_restores_them_byte_for_byte(
    tmp_path: Path,
) -> None:
    project = tmp_path / "proj"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude/settings.json").write_text(SETTINGS)
    (project / ".mcp.json").write_text(MCP)
    before = snapshot(project)
    setup(project, "claude-code", "--agent", "finn")
    settings = read(project / ".claude/settings.json")
    original = json.loads(SETTINGS)
    # everything that was there is still there, unchanged and in its place
    assert settings["permissions"] == original["permissions"]
    assert settings["model"] == "opus" and settings["x-team-notes"] == "keep me"
    assert settings["hooks"]["PreToolUse"] == original["hooks"]["PreToolUse"]
    assert settings["hooks"]["PostToolUse"][0] == original["hooks"]["PostToolUse"][0]
    assert len(settings["hooks"]["PostToolUse"]) == 2  # prettier, then memstrata
    assert list(settings)[:2] == ["permissions", "hooks"]
    text = (project / ".claude/settings.json").read_text()
    assert SETTINGS[: SETTINGS.index('  "hooks"')] in text  # untouched text kept byte for byte
    assert '"model": "opus",\n  "x-team-notes": "keep me"\n}\n' in text
    mcp = read(project / ".mcp.json")
    assert mcp["mcpServers"]["github"] == json.loads(MCP)["mcpServers"]["github"]
    assert mcp["x-other"] is True and list(mcp["mcpServers"]) == ["github", "memstrata"]
    assert mcp["mcpServers"]["memstrata"]["args"][3] == "finn"
    setup(project, "claude-code", "--agent", "finn", "--remove")
    assert snapshot(project) == before


def test_compact_files_keep_their_untouched_text(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".claude").mkdir(parents=True)
    compact = '{"permissions": {"allow": ["Read"]}, "hooks": {"Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}]}}'
    (project / ".claude/settings.json").write_text(compact)
    setup(project, "claude-code")
    text = (project / ".claude/settings.json").read_text()
    assert '"permissions": {"allow": ["Read"]}' in text
    assert '"Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}]' in text
    assert not text.endswith("\n")  # the file's own ending, kept
    setup(project, "claude-code", "--remove")
    assert read(project / ".claude/settings.json") == json.loads(compact)
    assert not (project / ".mcp.json").exists()


def test_a_symlinked_settings_file_is_written_where_it_points_with_its_mode(
    tmp_path: Path,
) -> None:
    project = tmp_path / "proj"
    (project / ".claude").mkdir(parents=True)
    real = tmp_path / "dotfiles" / "settings.json"
    real.parent.mkdir()
    real.write_text('{"model": "opus"}\n')
    real.chmod(0o600)
    (project / ".claude/settings.json").symlink_to(real)
    setup(project, "claude-code")
    assert (project / ".claude/settings.json").is_symlink()
    assert read(real)["model"] == "opus" and "SessionStart" in read(real)["hooks"]
    assert real.stat().st_mode & 0o777 == 0o600
    setup(project, "claude-code", "--remove")
    assert read(real) == {"model": "opus"} and (project / ".claude/settings.json").is_symlink()


def test_dry_run_shows_the_diff_and_writes_nothing(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude/settings.json").write_text(SETTINGS)
    before = snapshot(project)
    r = setup(project, "claude-code", "--dry-run")
    assert snapshot(project) == before
    lines = r.stdout.splitlines()
    assert "--- a/.claude/settings.json\n+++ b/.claude/settings.json" in r.stdout
    assert "--- /dev/null\n+++ b/.mcp.json" in r.stdout
    assert any(x.startswith("+") and x.endswith('hook session-start"') for x in lines)
    assert not any(x.startswith("-") and "prettier" in x for x in lines)  # others untouched
    assert "(dry run: nothing written)" in r.stdout
    setup(project, "claude-code")
    r = setup(project, "claude-code", "--remove", "--dry-run")
    assert any(
        x.startswith("-") and x.endswith('hook session-start"') for x in r.stdout.splitlines()
    )
    assert read(project / ".claude/settings.json")["hooks"]["SessionStart"]  # still there
    data = json.loads(setup(project, "claude-code", "--dry-run", "--json").stdout)
    assert [f["action"] for f in data["files"]] == ["unchanged", "unchanged"]


def test_an_older_memstrata_hook_is_updated_in_place_never_doubled(tmp_path: Path) -> None:
    """The README used to show `memstrata --agent me hook stop`: setup updates that entry
    (a second one would log every turn twice) and keeps the group's other handlers."""
    project = tmp_path / "proj"
    (project / ".claude").mkdir(parents=True)
    old = {
        "hooks": {
            "Stop": [
                {
                    "hooks": [
                        {"type": "command", "command": "memstrata --agent me hook stop"},
                        {"type": "command", "command": "say done"},
                    ]
                }
            ],
            "PostToolUse": [
                {
                    "matcher": "*",
                    "hooks": [{"type": "command", "command": "memstrata hook post-tool-use"}],
                },
                {
                    "matcher": "*",
                    "hooks": [{"type": "command", "command": "memstrata hook post-tool-use"}],
                },
            ],
        }
    }
    (project / ".claude/settings.json").write_text(json.dumps(old, indent=2))
    r = setup(project, "claude-code")
    assert "hook Stop: updated (was: memstrata --agent me hook stop)" in r.stdout
    assert "hook PostToolUse: removed a duplicate" in r.stdout
    hooks = read(project / ".claude/settings.json")["hooks"]
    (stop,) = hooks["Stop"]
    assert [h["command"].split()[-1] for h in stop["hooks"]] == ["stop", "done"]
    assert "--home" in stop["hooks"][0]["command"]
    assert len(hooks["PostToolUse"]) == 1


def test_a_file_that_is_not_json_is_refused_and_left_alone(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".vscode").mkdir(parents=True)
    jsonc = '{\n  // my servers\n  "servers": {},\n}\n'
    (project / ".vscode/mcp.json").write_text(jsonc)
    r = setup(project, "vscode", ok=False)
    assert r.returncode == 2 and "line 2 column 3" in r.stderr and "Traceback" not in r.stderr
    assert (project / ".vscode/mcp.json").read_text() == jsonc


@pytest.mark.parametrize(
    ("client", "path", "key", "typed"),
    [
        ("cursor", ".cursor/mcp.json", "mcpServers", False),
        ("vscode", ".vscode/mcp.json", "servers", True),
    ],
)
def test_cursor_and_vscode_get_the_server(
    tmp_path: Path, client: str, path: str, key: str, typed: bool
) -> None:
    project = tmp_path / "proj"
    (project / path).parent.mkdir(parents=True)
    other = {key: {"other": {"command": "uvx", "args": ["other-mcp"]}}}
    if client == "vscode":
        other["inputs"] = [{"type": "promptString", "id": "api-key", "password": True}]
    (project / path).write_text(json.dumps(other, indent=2) + "\n")
    before = snapshot(project)
    setup(project, client)
    doc = read(project / path)
    assert doc[key]["other"] == other[key]["other"]
    entry = doc[key]["memstrata"]
    assert ("type" in entry) is typed and entry["args"][-1] == "mcp"
    assert entry["args"][:2] == ["--home", str(project / ".memstrata")]
    assert not (project / ".claude").exists() and not (project / ".mcp.json").exists()
    r = setup(project, client, "--check")
    assert "starts and lists" in r.stdout and "all set" in r.stdout
    setup(project, client, "--remove")
    assert snapshot(project) == before


def test_check_runs_what_the_files_say(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    r = setup(project, "claude-code", "--check", ok=False)
    assert r.returncode == 1 and "FAIL .claude/settings.json: missing" in r.stdout
    setup(project, "claude-code")
    r = setup(project, "claude-code", "--check")
    assert "ok   .claude/settings.json: 7 of 7 memstrata hooks" in r.stdout
    assert "the SessionStart hook runs (context of" in r.stdout
    assert "MCP server 'memstrata' starts and lists" in r.stdout
    doc = read(project / ".mcp.json")
    doc["mcpServers"]["memstrata"]["command"] = str(tmp_path / "gone" / "memstrata")
    (project / ".mcp.json").write_text(json.dumps(doc))
    r = setup(project, "claude-code", "--check", ok=False)
    assert r.returncode == 1 and "FAIL .mcp.json: MCP server 'memstrata' did not start" in r.stdout


def _fire(command: str, cwd: Path, project: Path, payload: dict[str, Any]) -> str:
    """A hook as Claude Code runs it: the command line through a shell, JSON on stdin."""
    r = subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=120,
        env={**env(), "CLAUDE_PROJECT_DIR": str(project), "PATH": "/usr/bin:/bin"},
    )
    assert r.returncode == 0 and "memstrata hook" not in r.stderr, r.stderr
    return r.stdout


def test_the_written_hooks_and_server_share_one_memory_from_any_subfolder(tmp_path: Path) -> None:
    """Claude Code's working directory moves (`cd app`), its PATH is not the user's shell's:
    the hooks still write the project's store, and the agent's own MCP calls read it."""
    import anyio
    from mcp.client.stdio import StdioServerParameters

    from mcp import Client

    project = tmp_path / "proj"
    app = project / "app" / "src"
    app.mkdir(parents=True)
    setup(project, "claude-code")
    hooks = read(project / ".claude/settings.json")["hooks"]
    cmd = {event: hooks[event][0]["hooks"][0]["command"] for event in EVENTS}
    sid = "0b7e7a52-5d0e-4d7c-9a4e-1f2a3b4c5d6e"
    base = {"session_id": sid, "cwd": str(app), "transcript_path": str(tmp_path / "t.jsonl")}
    out = _fire(
        cmd["SessionStart"],
        app,
        project,
        {**base, "hook_event_name": "SessionStart", "source": "startup"},
    )
    assert "additionalContext" in out
    _fire(
        cmd["UserPromptSubmit"],
        app,
        project,
        {
            **base,
            "hook_event_name": "UserPromptSubmit",
            "prompt": "Add the zebra export to the API",
        },
    )
    _fire(
        cmd["PostToolUse"],
        project / "app",
        project,
        {
            **base,
            "hook_event_name": "PostToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": "pytest -q"},
            "tool_response": {"stdout": "3 passed", "exit_code": 0},
        },
    )
    assert not (app / ".memstrata").exists() and not (project / "app" / ".memstrata").exists()
    log = (project / ".memstrata/agents/agent/memory/LOG.md").read_text()
    assert "zebra export" in log and "pytest" in log

    server = read(project / ".mcp.json")["mcpServers"]["memstrata"]

    async def main() -> None:
        params = StdioServerParameters(
            command=server["command"], args=server["args"], env=env(), cwd=str(app)
        )
        async with Client(params, mode="2026-07-28") as c:
            # the context the agent reads holds the prompt the hook logged ...
            ctx = (await c.read_resource("memory://prompt-context")).contents[0].text
            assert "zebra export" in ctx, ctx
            # ... and what it records itself is there for the hooks' next session start
            r = await c.call_tool("record_decision", {"text": "Zebra export as CSV only"})
            assert not r.is_error, r.content

    anyio.run(main)
    start = _fire(
        cmd["SessionStart"],
        app,
        project,
        {**base, "session_id": "s2", "hook_event_name": "SessionStart", "source": "startup"},
    )
    assert (
        "Zebra export as CSV only" in json.loads(start)["hookSpecificOutput"]["additionalContext"]
    )


@pytest.mark.parametrize(("client", "own"), [("claude-code", True), ("cursor", False)])
def test_the_entries_use_the_store_the_cli_finds_in_the_project(
    tmp_path: Path, client: str, own: bool
) -> None:
    """One store per project, found the same way everywhere: after setup, `memstrata` run
    in the project (store discovery, issue 19) names the store the entries were given. In a
    monorepo with a store at its root, Cursor's entries use that store; Claude Code's
    `.claude/` makes its project a root of its own."""
    mono = tmp_path / "mono"
    project = mono / "pkg"
    project.mkdir(parents=True)
    (mono / ".git").mkdir()
    (mono / ".memstrata").mkdir()
    setup(project, client)
    path = ".mcp.json" if client == "claude-code" else ".cursor/mcp.json"
    args = read(project / path)["mcpServers"]["memstrata"]["args"]
    store = Path(args[args.index("--home") + 1])
    assert store == (project if own else mono) / ".memstrata"
    r = subprocess.run(
        [EXE, "config", "--json"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
        env={**env(), "HOME": str(tmp_path)},
    )
    assert r.returncode == 0, r.stderr
    assert Path(json.loads(r.stdout)["home"]) == store
