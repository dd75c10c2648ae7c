"""Issue 23, "Why", the setup bullets, each through the surface that showed it:

* setting up Claude Code took reading ~470 lines of README to reach the hooks: the Quick
  start names the one command and links the guide;
* the README's hook config had no `--home`, so a hook fired from a subfolder used another
  store: whatever the README says to do for Claude Code, done in a fresh project, keeps a
  hook fired from `proj/app` in the project's store;
* the README's MCP config (`{"url": ...}`) differed from the banner's (`{"type": "http",
  "url": ...}`): the README shows what `memstrata serve` (= `make run`) prints, and both
  come from one function;
* `make run` takes `PORT=` but a busy port said "pick one with --port": the message names
  both ways.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
CODING_AGENTS = ROOT / "docs" / "coding-agents.md"  # where the README's hook setup moved
DOCS = [README, *sorted((ROOT / "docs").rglob("*.md"))]
EXE = shutil.which("memstrata", path=str(Path(sys.executable).parent)) or "memstrata"


def _env(**extra: str) -> dict[str, str]:
    """A user's shell with memstrata on PATH: no memstrata variables, PYTHONPATH absolute
    (the processes run in other folders)."""
    out = {k: v for k, v in os.environ.items() if not k.startswith(("MEMSTRATA_", "CLAUDE_"))}
    out["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{out.get('PATH', '')}"
    if out.get("PYTHONPATH"):
        parts = out["PYTHONPATH"].split(os.pathsep)
        out["PYTHONPATH"] = os.pathsep.join(str(Path(x).absolute()) for x in parts if x)
    return {**out, **extra}


def _section(title: str, doc: Path = README) -> str:
    text = doc.read_text()
    start = text.index(f"## {title}")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else len(text)]


def test_the_quick_start_names_the_setup_command_and_links_the_guide() -> None:
    quick = _section("Quick start")
    text = README.read_text()
    assert "memstrata setup claude-code" in quick
    assert text.index("## Quick start") < text.index("memstrata setup claude-code") < 4000
    for link in re.findall(r"\]\((docs/integrations/[\w.-]+\.md)\)", quick):
        assert (ROOT / link).exists(), link
    assert "(docs/integrations/claude-code.md)" in quick


def test_the_readmes_claude_code_setup_keeps_hooks_in_the_projects_store(tmp_path: Path) -> None:
    """Follow the Claude Code instructions the README links (docs/coding-agents.md: its setup
    command, or else the hook config it shows), then fire the prompt hook as Claude Code does after
    `cd app`: a shell in the subfolder, `$CLAUDE_PROJECT_DIR` naming the project."""
    proj = tmp_path / "proj"
    (proj / "app").mkdir(parents=True)
    section = CODING_AGENTS.read_text()
    blocks = re.findall(r"^```(\w+)\n(.*?)^```", section, re.S | re.M)
    setup = [
        line.split("#")[0].strip()
        for kind, body in blocks
        if kind == "sh"
        for line in body.splitlines()
        if line.startswith("memstrata setup claude-code")
    ]
    env = _env(HOME=str(tmp_path))
    if setup:
        r = subprocess.run(
            shlex.split(setup[0]), cwd=proj, env=env, capture_output=True, text=True, timeout=120
        )
        assert r.returncode == 0, r.stderr
        settings = json.loads((proj / ".claude/settings.json").read_text())
    else:  # the README shows the settings to paste
        (shown,) = [json.loads(body) for kind, body in blocks if kind == "json" and "hooks" in body]
        settings = shown
    (group,) = settings["hooks"]["UserPromptSubmit"]
    payload = {"session_id": "s1", "hook_event_name": "UserPromptSubmit", "prompt": "from app/"}
    r = subprocess.run(
        ["bash", "-c", group["hooks"][0]["command"]],
        cwd=proj / "app",
        input=json.dumps(payload),
        env={**env, "CLAUDE_PROJECT_DIR": str(proj)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert not (proj / "app" / ".memstrata").exists(), "the hook made a second store in app/"
    logs = list((proj / ".memstrata" / "agents").glob("*/memory/LOG.md"))
    assert len(logs) == 1 and "from app/" in logs[0].read_text()


def _mcp_configs(text: str) -> list[str]:
    """Every one-line MCP client config JSON the text shows (in `code` or in a block)."""
    return re.findall(r'(\{"mcpServers": \{"memstrata": \{.*?\}\}\})(?=`|\n|$)', text, re.M)


def test_the_readme_shows_the_mcp_config_the_banner_prints(tmp_path: Path) -> None:
    (quick,) = _mcp_configs(_section("Quick start"))
    # the banner of `make run` (memstrata serve) prints exactly what the Quick start shows
    proc = subprocess.Popen(
        [EXE, "--home", str(tmp_path / "store"), "serve", "--port", "0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    killer = threading.Timer(120, proc.kill)
    killer.start()
    try:
        assert proc.stderr is not None
        banner = ""
        for line in proc.stderr:
            banner += line
            if "MCP client config:" in line:
                break
    finally:
        killer.cancel()
        proc.terminate()
        proc.wait(timeout=30)
    (printed,) = _mcp_configs(banner)
    port = json.loads(printed)["mcpServers"]["memstrata"]["url"].split(":")[2].split("/")[0]
    assert printed.replace(f":{port}/", ":8765/") == quick
    # and every config the README and the guides show is what the one function makes for
    # its URL and token
    from memstrata.agentconfig.clients import client_config, http_entry

    shown = [c for doc in DOCS for c in _mcp_configs(doc.read_text())]
    assert len(shown) >= 2, shown
    for config in shown:
        entry = json.loads(config)["mcpServers"]["memstrata"]
        token = entry.get("headers", {}).get("Authorization", "").removeprefix("Bearer ")
        assert config == client_config(http_entry(entry["url"], token or None)), config


@pytest.mark.parametrize("command", [["serve"], ["mcp", "--http"]])
def test_a_busy_port_names_both_ways_to_choose_another(tmp_path: Path, command: list[str]) -> None:
    makefile = (ROOT / "Makefile").read_text()
    assert "--port $${PORT:-8765}" in makefile  # `make run PORT=N` passes N to serve
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        r = subprocess.run(
            [EXE, "--home", str(tmp_path / "store"), *command, "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=120,
            env=_env(),
        )
    assert r.returncode == 4, r.stderr
    assert f"--port {port + 1}" in r.stderr and f"make run PORT={port + 1}" in r.stderr
    assert "Traceback" not in r.stderr
