"""The coding-agent guides are executed (issue 23 item 6): every ```console block of
docs/integrations/claude-code.md and cursor.md runs command by command in one bash session, in a fresh folder,
with the installed `memstrata` on PATH and no memstrata variables set, as a reader would
type them; each command must succeed and print what the guide shows under it (`...`
matches anything, whitespace is normalised), as README examples do (test_docs_examples.py).
So a guide whose commands stop working, or whose output changes, fails the build."""

from __future__ import annotations

import doctest
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs" / "integrations"
GUIDES = ("claude-code.md", "cursor.md")  # the framework guides: tests/integrations/test_guides.py
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
MARK = "@@guide-command-done@@"


def _commands(text: str) -> list[tuple[str, str]]:
    """(command, the output shown under it), in the guide's order, across its blocks."""
    out: list[tuple[str, str]] = []
    for kind, body in BLOCK.findall(text):
        if kind != "console":
            continue
        for line in body.splitlines():
            if line.startswith("$ "):
                out.append((line[2:], ""))
            elif out:
                out[-1] = (out[-1][0], out[-1][1] + line + "\n")
    return out


def _env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMSTRATA_", "CLAUDE_"))}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["HOME"] = str(tmp)
    if env.get("PYTHONPATH"):  # the guide `cd`s: a relative path would stop working
        parts = env["PYTHONPATH"].split(os.pathsep)
        env["PYTHONPATH"] = os.pathsep.join(str(Path(x).absolute()) for x in parts if x)
    return env


def test_every_guide_is_executed() -> None:
    frameworks = (DOCS.parents[1] / "tests" / "integrations" / "test_guides.py").read_text()
    for guide in DOCS.glob("*.md"):
        assert guide.name in GUIDES or f'"{guide.name}"' in frameworks, guide.name


@pytest.mark.parametrize("guide", GUIDES)
def test_guide_commands_run_and_print_what_the_guide_shows(guide: str, tmp_path: Path) -> None:
    cmds = _commands((DOCS / guide).read_text())
    assert len(cmds) >= 4, "a guide shows at least setup, what it wrote, check and remove"
    script = ["set +e"]
    for cmd, _ in cmds:
        script += [f"{{ {cmd}\n}} 2>&1", f'printf "\\n{MARK} %s\\n" "$?"']
    r = subprocess.run(
        ["bash", "-c", "\n".join(script)],
        cwd=tmp_path,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=600,
    )
    parts = r.stdout.split(f"\n{MARK} ")
    assert len(parts) == len(cmds) + 1, r.stdout + r.stderr
    checker = doctest.OutputChecker()
    for i, (cmd, want) in enumerate(cmds):
        got = parts[i].split("\n", 1)[1] if i else parts[0]
        rc = int(parts[i + 1].split("\n", 1)[0])
        assert rc == 0, f"{guide}: `{cmd}` exited {rc}:\n{got}"
        got = got if got.endswith("\n") or not got else got + "\n"
        assert checker.check_output(want, got, FLAGS), (
            f"{guide}: `{cmd}`\nwant:\n{want}\ngot:\n{got}"
        )
    # the guide left the project as it found it: setup removed, the memory kept
    project = tmp_path / "my-project"
    assert sorted(p.name for p in project.iterdir()) == [".memstrata"]
