"""A fresh store's session-start context: what `memstrata init` wrote for a person to
fill in is not handed to the agent as memory (issue 19: the context is ranked by value)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

EXE = shutil.which("memstrata", path=str(Path(sys.executable).parent)) or "memstrata"
ASKS = (
    "Describe who this agent is",
    "List the tools and skills this agent may use",
    "Long-term notes that are loaded into every prompt",
)


def _cli(home: Path, *args: str) -> str:
    cmd = [EXE, "--home", str(home), "--agent", "finn", *args]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    return r.stdout


def test_a_fresh_store_context_holds_no_fill_in_text_but_keeps_the_rules(home: Path) -> None:
    _cli(home, "init")
    text = _cli(home, "context")
    assert [a for a in ASKS if a in text] == []
    assert "Read NOW.md and CONTEXT.md before acting" in text  # the starter's rules stay
    assert "## Persistent memory" not in text  # CONTEXT.md says nothing yet


def test_an_edited_agent_file_is_shown_as_written(home: Path) -> None:
    _cli(home, "init")
    agent_md = home / "agents" / "finn" / "AGENT.md"
    agent_md.write_text(agent_md.read_text().replace("## Rules", "## Rules\n- Answer in French."))
    context_md = home / "agents" / "finn" / "memory" / "CONTEXT.md"
    context_md.write_text(context_md.read_text() + "- The staging host is blue-7.\n")
    text = _cli(home, "context")
    assert "Answer in French." in text and "Describe who this agent is" in text
    assert "The staging host is blue-7." in text and "## Persistent memory" in text
