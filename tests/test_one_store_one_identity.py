"""Issue 19 item 6: one store per project, one identity per user, found the same way everywhere.

"The store is `./.memstrata` of the process's cwd: a hook fired from `proj/app` creates a
second, empty store there. `make run`'s HTTP MCP writes as an agent named `agent` while the
README's hooks use `--agent me`, so one user's memory is split over two agents."
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from pathlib import Path

import anyio
import pytest
from tests.claude_code import EXE

ROOT = Path(__file__).resolve().parents[1]


def _env(**extra: str) -> dict[str, str]:
    """The environment of a user's shell: no MEMSTRATA_HOME, no agent chosen."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("MEMSTRATA_HOME", "MEMSTRATA_AGENT", "CLAUDE_PROJECT_DIR")
    }
    return {**env, **extra}


def _prompt(cwd: Path, env: dict[str, str], text: str, *argv: str) -> None:
    payload = {"session_id": "s1", "hook_event_name": "UserPromptSubmit", "prompt": text}
    r = subprocess.run(
        [EXE, *argv, "hook", "user-prompt-submit"],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        env=env,
    )
    assert r.returncode == 0 and "memstrata hook" not in r.stderr, r.stderr


def test_a_hook_fired_from_a_subfolder_uses_the_projects_store(tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    (proj / "app").mkdir(parents=True)
    (proj / ".git").mkdir()
    (proj / ".memstrata").mkdir()
    _prompt(proj / "app", _env(HOME=str(tmp_path)), "from the app folder")
    assert not (proj / "app" / ".memstrata").exists()
    log = (proj / ".memstrata" / "agents" / "agent" / "memory" / "LOG.md").read_text()
    assert "from the app folder" in log
    # Claude Code names the project in $CLAUDE_PROJECT_DIR; its hooks may run elsewhere.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    _prompt(elsewhere, _env(HOME=str(tmp_path), CLAUDE_PROJECT_DIR=str(proj)), "from elsewhere")
    assert not (elsewhere / ".memstrata").exists()
    assert (
        "from elsewhere"
        in log + (proj / ".memstrata" / "agents" / "agent" / "memory" / "LOG.md").read_text()
    )


def test_find_home_walks_up_like_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memstrata.files.layout import find_home

    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    user = tmp_path / "user"
    deep = user / "proj" / "app" / "src"
    deep.mkdir(parents=True)
    # nothing anywhere, no project marker: the folder it was asked from
    assert find_home(deep) == deep / ".memstrata"
    # a project marker (a git checkout) with no store yet: the project's root
    (user / "proj" / ".git").mkdir()
    assert find_home(deep) == user / "proj" / ".memstrata"
    # an existing store on the way up wins, the nearest first
    (user / "proj" / "app" / ".memstrata").mkdir()
    assert find_home(deep) == user / "proj" / "app" / ".memstrata"
    # $HOME stops the walk: a store in the home folder is not every project's store
    (user / ".memstrata").mkdir()
    other = user / "other" / "x"
    other.mkdir(parents=True)
    assert find_home(other) == other / ".memstrata"
    assert find_home(user) == user / ".memstrata"  # unless asked from $HOME itself


def _readme_hook_commands() -> list[list[str]]:
    readme = (ROOT / "docs" / "coding-agents.md").read_text()
    block = readme.split("Hooks for Claude Code (`.claude/settings.json`):", 1)[1]
    settings = json.loads(block.split("```json", 1)[1].split("```", 1)[0])
    return [
        shlex.split(h["command"])
        for entries in settings["hooks"].values()
        for entry in entries
        for h in entry["hooks"]
    ]


def _agent_of(argv: list[str]) -> str | None:
    return argv[argv.index("--agent") + 1] if "--agent" in argv else None


def test_make_run_banner_readme_and_mcp_agree_on_one_agent(home: Path, tmp_path: Path) -> None:
    """`make run` serves MCP at /mcp as one agent; the banner says which; the hooks and the
    stdio MCP config the docs show (docs/coding-agents.md, linked from the README) act as
    that same agent, so what the agent writes over HTTP MCP is what the hooks give back at
    the next session start."""
    from tests.web.conftest import start_server, stop_server

    from mcp import Client

    run = re.search(r"^run:.*\n\t(.+)$", (ROOT / "Makefile").read_text(), re.M)
    assert run is not None
    serve_argv = shlex.split(run.group(1).replace("$${PORT:-8765}", "0"))[1:]  # drop the path
    assert serve_argv[0] == "serve" and "--agent" not in serve_argv
    hooks = _readme_hook_commands()
    assert hooks and all(argv[:1] == ["memstrata"] for argv in hooks)
    readme = (ROOT / "docs" / "coding-agents.md").read_text()
    stdio = json.loads(re.search(r'`(\{"command": "memstrata", "args": [^`]+\})`', readme)[1])
    agents = {_agent_of(argv) for argv in hooks} | {_agent_of(stdio["args"])}
    assert len(agents) == 1, agents  # the README's configs name one identity (or none)
    served = start_server(home, *serve_argv[1:])
    try:
        banner = "".join(served.log)
        said = re.search(r"MCP at \S+/mcp acts as agent '([^']+)'", banner)
        assert said, banner
        default = said[1]
        assert agents in ({default}, {None})

        async def agent_writes() -> None:
            async with Client(f"{served.base}/mcp") as c:
                r = await c.call_tool("update_status", {"new_status": "Wire the PDF export"})
                assert not r.is_error

        anyio.run(agent_writes)
    finally:
        stop_server(served)
    start = next(argv for argv in hooks if argv[-1] == "session-start")
    r = subprocess.run(
        [EXE, "--home", str(home), *start[1:]],
        input=json.dumps({"session_id": "s2", "source": "startup"}),
        capture_output=True,
        text=True,
        timeout=60,
        env=_env(),
    )
    assert r.returncode == 0, r.stderr
    assert "Wire the PDF export" in json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
