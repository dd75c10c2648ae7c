"""The framework guides are executed, and the frameworks stay optional.

For each guide under docs/integrations/: its ```python blocks run in order as scripts in
one fresh folder (so `./.memstrata` is new; what a `print` is commented to show must be
printed), then its ```console blocks run command by command in that folder through the
CLI's `main` (each command's output must match what the guide shows; `...` matches
anything), as tests/test_docs_examples.py runs the README. Its ```sh install line must name an extra pyproject.toml defines.

And `import memstrata` / `memstrata --help` import no framework; the extras exist, are
in `dev` (so `make test` installs them) and not in `serve`.
"""

from __future__ import annotations

import contextlib
import doctest
import io
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
FRAMEWORKS = ("langgraph", "langchain_core", "agents", "openai", "pydantic_ai")
EXTRAS = {
    "langgraph.md": "langgraph",
    "openai-agents.md": "openai-agents",
    "pydantic-ai.md": "pydantic-ai",
}
# the framework guides (the coding-agent guides beside them, claude-code.md and cursor.md,
# are executed by tests/test_integration_guides.py)
GUIDES = sorted(p for p in (ROOT / "docs" / "integrations").glob("*.md") if p.name in EXTRAS)


def _blocks(path: Path, lang: str) -> list[str]:
    return [body for kind, body in BLOCK.findall(path.read_text()) if kind == lang]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTRATA_")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    return env


def test_there_is_a_guide_per_framework() -> None:
    assert sorted(p.name for p in GUIDES) == sorted(EXTRAS)


@pytest.mark.parametrize("guide", GUIDES, ids=[p.stem for p in GUIDES])
def test_every_example_of_the_guide_runs(
    guide: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = {"langgraph": "langgraph", "openai-agents": "agents", "pydantic-ai": "pydantic_ai"}
    pytest.importorskip(module[EXTRAS[guide.name]])
    from memstrata.cli.main import main

    monkeypatch.delenv("MEMSTRATA_HOME", raising=False)
    monkeypatch.chdir(tmp_path)
    scripts = _blocks(guide, "python")
    assert len(scripts) >= 2, "a five-line example and an agent example"
    for n, code in enumerate(scripts):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, f"{guide.name} python block {n}", "exec"), {"__name__": "__guide__"})
        for comment in re.findall(r"print\(.*\)\s+# (.+)", code):  # what each print shows
            assert comment.strip() in out.getvalue(), f"{guide.name} block {n}: {out.getvalue()}"
    consoles = _blocks(guide, "console")
    assert consoles
    checker = doctest.OutputChecker()
    for block in consoles:
        cmds: list[tuple[str, str]] = []
        for line in block.splitlines():
            if line.startswith("$ "):
                cmds.append((line[2:], ""))
            else:
                cmds[-1] = (cmds[-1][0], cmds[-1][1] + line + "\n")
        for cmd, want in cmds:
            argv = shlex.split(cmd)
            assert argv[0] == "memstrata"
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                code = main(argv[1:])
            assert code == 0, f"`{cmd}` exited {code}"
            got = out.getvalue()
            assert checker.check_output(want, got, FLAGS), f"`{cmd}`\n{want}\ngot:\n{got}"
    for line in "".join(_blocks(guide, "sh")).splitlines():
        assert line == f"pip install 'memstrata[{EXTRAS[guide.name]}]'"


def test_every_test_a_guide_names_exists() -> None:
    from test_docs_refs import broken_references

    for guide in GUIDES:
        checked, bad = broken_references(guide.read_text(encoding="utf-8"), guide.name)
        assert bad == [] and checked >= 2, (guide.name, bad)


def test_the_extras_are_optional_and_installed_by_make_test() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    dev, serve = " ".join(extras["dev"]), " ".join(extras["serve"])
    for name in EXTRAS.values():
        assert extras[name], name
        for requirement in extras[name]:
            assert requirement in extras["dev"]
            package = re.split(r"[<>=\[ ]", requirement)[0]
            assert package not in serve and package in dev


def test_memstrata_and_its_cli_import_no_framework() -> None:
    code = (
        "import sys, memstrata, memstrata.cli.main\n"
        "from memstrata import Store, MemoryManager, SearchQuery\n"
        "try:\n    memstrata.cli.main.main(['--help'])\nexcept SystemExit:\n    pass\n"
        f"print([m for m in {FRAMEWORKS!r} if m in sys.modules])"
    )
    r = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == "[]"
