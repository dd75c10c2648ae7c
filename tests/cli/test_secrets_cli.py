"""The CLI and the hooks follow the secrets rule (issue 20, item 5): an agent with a shell
reads CLI output as context, so secrets print as `[withheld: <kind>]`; `--reveal` prints
them as stored, for the person who asks. Hook output (injected into Claude Code's
context) is always withheld. Real `memstrata` processes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

from memstrata import Store

EXE = shutil.which("memstrata", path=str(Path(sys.executable).parent)) or "memstrata"
ANTHROPIC = "sk-ant-api03-Xy7Qp2Lm9Vt4Rw7Ks1Jd6Hf3Gb5Nc0YaZx8Q-AA"
AWS = "AKIAZ7Q4M2XK9LD3PB6W"


def cli(home: Path, *args: str, stdin: str = "") -> str:
    r = subprocess.run(
        [EXE, "--home", str(home), "--agent", "finn", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ),
    )
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_cli_reads_withhold_secrets_unless_revealed(home: Path) -> None:
    with Store(home, agent="finn") as s, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s.agent().files.write("notes/keys.md", f"# Keys\nthe deploy key is {ANTHROPIC}\n")
        s.agent().facts.set("deploy_id", f"id {AWS}")
    shown = {
        "files read": cli(home, "files", "read", "notes/keys.md"),
        "files read --json": cli(home, "--json", "files", "read", "notes/keys.md"),
        "search": cli(home, "search", "deploy key"),
        "facts get": cli(home, "facts", "get", "deploy_id"),
        "facts list --json": cli(home, "facts", "list", "--json"),
    }
    for what, out in shown.items():
        assert ANTHROPIC not in out and AWS not in out, what
    assert "the deploy key is [withheld: anthropic-key]" in shown["files read"]
    assert json.loads(shown["files read --json"])["content"].endswith("[withheld: anthropic-key]\n")
    assert "[withheld: aws-access-key]" in shown["facts get"]
    assert ANTHROPIC in cli(home, "files", "read", "notes/keys.md", "--reveal")
    assert AWS in cli(home, "--reveal", "facts", "get", "deploy_id")


def test_hook_output_withholds_secrets(home: Path, tmp_path: Path) -> None:
    with Store(home, agent="finn") as s, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s.agent().now.update(f"deploy with {AWS}", ["rotate it"])
        s.agent().log.append("TOOL_USE", f"used {ANTHROPIC} for the deploy")
    hook = {"session_id": "abc", "hook_event_name": "UserPromptSubmit", "prompt": "go on"}
    out = cli(home, "hook", "user-prompt-submit", "--reveal", stdin=json.dumps(hook))
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert "rotate it" in context and "[withheld: aws-access-key]" in context
    assert AWS not in context and ANTHROPIC not in context  # --reveal does not reach a model


def test_search_full_withholds_a_credential_in_a_tool_input(home: Path) -> None:
    """events-heronsgate's blind run (scen19k): `search --json --full` printed a session
    tool_call's `meta.input.password` in clear (its text and snippet were withheld)."""
    login = {"username": "priya", "password": "Kingfisher#2207"}
    with Store(home, agent="finn") as s, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s.agent().sessions.append("s1", "tool_call", "", id="t1", name="portal_login", input=login)
    out = cli(home, "--json", "search", "--layer", "sessions", "--full", "portal login")
    assert "portal_login" in out and "priya" in out
    assert "Kingfisher#2207" not in out
    revealed = cli(home, "--json", "--reveal", "search", "--layer", "sessions", "--full", "portal")
    assert "Kingfisher#2207" in revealed
