"""The README is executed: its examples are read from README.md itself and run.

* ```pycon blocks run as doctests against a fresh store (cwd = an empty folder,
  so the default ./.memstrata is new);
* ```console blocks run command by command in one bash session in a fresh
  folder, with the installed `memstrata` on PATH; each command's stdout must
  match the lines shown under it (`...` matches anything, whitespace is
  normalised), and every command must succeed unless the README shows its
  status with `echo $?`;
* ```python blocks run as scripts in a fresh folder, and the turn example left
  what its comment says in the store;
* ```text blocks that show a command's output (the HTTP connect hints) are
  compared with what the command really prints;
* ```toml blocks load as the store config without a single problem; ```json
  hook commands and the `memstrata` lines of ```sh blocks parse with the CLI's
  own parser.

So an example that returns nothing, or no longer runs, fails the build (the way
sqlite-utils runs its documentation).
"""

from __future__ import annotations

import doctest
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def blocks(lang: str) -> list[str]:
    return [body for kind, body in BLOCK.findall(README.read_text()) if kind == lang]


def test_the_readme_has_examples_of_every_kind() -> None:
    assert len(blocks("pycon")) >= 1 and len(blocks("console")) >= 1 and blocks("toml")


@pytest.mark.parametrize("n", range(len(blocks("pycon"))))
def test_python_examples(n: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMSTRATA_HOME", raising=False)
    monkeypatch.chdir(tmp_path)
    test = doctest.DocTestParser().get_doctest(
        blocks("pycon")[n], {}, f"README pycon {n}", str(README), 0
    )
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    report: list[str] = []
    runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)


@pytest.mark.parametrize("n", range(len(blocks("python"))))
def test_python_scripts(n: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMSTRATA_HOME", raising=False)
    monkeypatch.chdir(tmp_path)
    code = blocks("python")[n]
    namespace: dict[str, object] = {"__name__": "__readme__"}
    exec(compile(code, f"README python {n}", "exec"), namespace)
    if "m.turn(" in code:  # what the comment under the turn says it left behind
        from memstrata import Store

        with Store(tmp_path / ".memstrata", agent="finn") as store:
            entries = store.agent().log.tail(3)
            now = store.agent().now.read()
        assert [e.entry_type for e in entries] == ["USER_FEEDBACK", "TOOL_USE", "SYSTEM"]
        assert "Research Python decorators" in entries[0].content
        assert entries[1].content == 'web_search(q="decorators") -> ok, 30 chars in 0.80s'
        assert entries[1].content in code  # the comment quotes it
        assert entries[2].content.startswith("Final response: A decorator wraps")
        assert "Task complete: Research Python decorators" in now


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_text_blocks_show_what_the_command_prints(tmp_path: Path) -> None:
    """A ```text block whose first line is `$ command` shows lines the command prints (a
    server's start-up hints): run it (on a free port instead of 8765), read its stderr
    until the last hint, and find every shown line there."""
    shown = [b for b in blocks("text") if b.startswith("$ ")]
    assert shown
    for body in shown:
        first, *want = body.splitlines()
        words = shlex.split(first[2:])
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTRATA_")}
        while "=" in words[0]:
            key, value = words.pop(0).split("=", 1)
            env[key] = value
        assert words[0] == "memstrata"
        port = _free_port()
        exe = str(Path(sys.executable).parent / "memstrata")
        argv = [exe, "--home", str(tmp_path / "store"), *words[1:], "--port", str(port)]
        proc = subprocess.Popen(
            argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        got: list[str] = []
        import threading

        deadline = threading.Timer(120, proc.kill)  # no hints at all: fail, never hang
        deadline.start()
        try:
            assert proc.stderr is not None
            for line in proc.stderr:  # the hints end with the stdio alternative
                got.append(line.rstrip("\n").replace(str(port), "8765"))
                if line.startswith("stdio instead"):
                    break
        finally:
            deadline.cancel()
            proc.terminate()
            proc.wait(timeout=30)
        for line in want:
            assert line in got, f"{first}\nwant: {line}\ngot:\n" + "\n".join(got)


def _commands(block: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            out.append((line[2:], ""))
        elif out:
            out[-1] = (out[-1][0], out[-1][1] + line + "\n")
    return out


@pytest.mark.parametrize("n", range(len(blocks("console"))))
def test_cli_examples(n: int, tmp_path: Path) -> None:
    cmds = _commands(blocks("console")[n])
    marker = "@@readme-example-done@@"
    script = ["set +e", "__rc=0"]
    for cmd, _ in cmds:
        script += [
            f"(exit $__rc); {{ {cmd}\n}} 2>&1",
            "__rc=$?",
            f'printf "\\n{marker} %s\\n" "$__rc"',
        ]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTRATA_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    r = subprocess.run(
        ["bash", "-c", "\n".join(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    parts = r.stdout.split(f"\n{marker} ")
    assert len(parts) == len(cmds) + 1, r.stdout + r.stderr
    checker = doctest.OutputChecker()
    for i, (cmd, want) in enumerate(cmds):
        got = parts[i].split("\n", 1)[1] if i else parts[0]
        rc = int(parts[i + 1].split("\n", 1)[0])
        shown = i + 1 < len(cmds) and cmds[i + 1][0] == "echo $?"
        assert rc == 0 or shown or cmd == "echo $?", f"`{cmd}` exited {rc}:\n{got}"
        got = got if got.endswith("\n") or not got else got + "\n"
        assert checker.check_output(want, got, FLAGS), f"`{cmd}`\nwant:\n{want}\ngot:\n{got}"


def test_config_examples_load_without_problems(tmp_path: Path) -> None:
    from memstrata.config import load_config

    for n, text in enumerate(blocks("toml")):
        home = tmp_path / str(n)
        home.mkdir()
        (home / "config.toml").write_text(text)
        assert load_config(home).problems == (), text


def test_shown_commands_parse() -> None:
    from memstrata.cli.main import build_parser

    parser = build_parser()
    lines = [cmd for body in blocks("sh") for cmd in body.splitlines()]
    for body in blocks("json"):
        data = json.loads(body)
        lines += [
            h["command"]
            for event in data.get("hooks", {}).values()
            for group in event
            for h in group["hooks"]
        ]
    shown = [line.split("#")[0].strip() for line in lines]
    shown = [c for c in shown if re.match(r"^(\.venv/bin/)?memstrata ", c)]
    assert shown
    for cmd in shown:
        argv = shlex.split(cmd)[1:]
        if "../shared" in cmd:
            argv = [a.replace("../shared/data/locomo10_dev.json", "x.json") for a in argv]
        parser.parse_args(argv)
