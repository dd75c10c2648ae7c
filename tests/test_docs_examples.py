"""The documentation is executed: README.md and every guide under docs/ are read and their
examples run, so an example that no longer runs, or no longer prints what it shows, fails
the build (the way sqlite-utils runs its documentation).

Each document is one story: its blocks run in the document's order, in one fresh folder
(`HOME` is that folder's parent and no `MEMSTRATA_*` variable is set, so `./.memstrata`
is a new store), sharing one Python namespace:

* ```pycon blocks run as doctests (`...` matches anything, whitespace is normalised);
* ```python blocks run as scripts; each must check what it shows, with an `assert` or a
  `print(...)  # text` whose comment is found in what it printed;
* ```console blocks run command by command in one bash session, with the `memstrata` of
  this checkout on PATH; each command's output must match the lines shown under it, and
  every command must succeed unless the document shows its status with `echo $?`. A
  command ending in `&` starts a server for the commands after it (on a free port, written
  8765 in the document), stopped at the end of the block; what it printed must match the
  lines shown under it;
* ```text blocks whose first line is `$ memstrata ...` start that server and find every
  line shown in what it prints at start (the connect hints);
* ```toml blocks load as the store config without a single problem;
* ```json blocks parse, and the hook commands in them parse with the CLI's own parser;
* ```sh blocks hold what a sandbox cannot run (installs, `make run`, a PostgreSQL server,
  the long benchmarks): every `memstrata` line parses with the CLI's parser, every `make`
  target exists, every extra named in a `pip` line is defined in pyproject.toml, and any
  other line is refused.

docs/integrations/ are run by tests/test_integration_guides.py and
tests/integrations/test_guides.py.
"""

from __future__ import annotations

import contextlib
import doctest
import io
import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import threading
import tomllib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)
FENCE = re.compile(r"^```(\S*)", re.M)
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
KINDS = ("pycon", "python", "console", "text", "toml", "json", "sh")
MARK = "@@docs-example-done@@"
# The guides README.md links (docs/seeds.md, the seed -> test map, has no examples).
GUIDES = (
    "concepts.md",
    "python-api.md",
    "cli.md",
    "mcp.md",
    "http-api.md",
    "coding-agents.md",
    "configuration.md",
    "operations.md",
    "postgresql.md",
    "benchmarks.md",
)
DOCS = [README, *sorted((ROOT / "docs").glob("*.md"))]


def blocks(doc: Path, lang: str | None = None) -> list[tuple[str, str]]:
    """(kind, body) of every fenced block of `doc`, in order (only `lang`'s if given)."""
    found = BLOCK.findall(doc.read_text(encoding="utf-8"))
    return [(k, b) for k, b in found if lang is None or k == lang]


def _name(doc: Path) -> str:
    return str(doc.relative_to(ROOT))


def _env(tmp: Path) -> dict[str, str]:
    """A reader's shell: this checkout's memstrata on PATH, HOME = the story's parent folder
    (a store is never found above it), no memstrata variables, PYTHONPATH absolute."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMSTRATA_", "CLAUDE_"))}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["HOME"] = str(tmp)
    env["HF_HUB_OFFLINE"] = "1"
    parts = [str(ROOT / "src"), *env.get("PYTHONPATH", "").split(os.pathsep)]
    env["PYTHONPATH"] = os.pathsep.join(str(Path(x).absolute()) for x in parts if x)
    return env


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# -- one block of each kind -------------------------------------------------------------


def _run_pycon(body: str, ns: dict[str, Any], where: str) -> None:
    test = doctest.DocTestParser().get_doctest(body, ns, where, where, 0)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    report: list[str] = []
    runner.run(test, out=report.append, clear_globs=False)
    ns.update(test.globs)  # (a DocTest runs in a copy of the namespace it is given)
    assert runner.tries > 0 and runner.failures == 0, "".join(report)


def _run_python(body: str, ns: dict[str, Any], where: str) -> None:
    shown = re.findall(r"print\(.*\)\s+# (.+)", body)
    assert shown or re.search(r"^\s*assert ", body, re.M), (
        f"{where}: an example must check what it shows (an assert, or print(...)  # text)"
    )
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(body, where, "exec"), ns)
    for text in shown:
        assert text.strip() in out.getvalue(), f"{where}: {text!r} not in:\n{out.getvalue()}"


def _commands(block: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            out.append((line[2:], ""))
        elif out:
            out[-1] = (out[-1][0], out[-1][1] + line + "\n")
    return out


def _background(cmd: str, port: int, log: Path) -> list[str]:
    """A `cmd &` line: the server on `port`, its output to `log`; wait until it listens."""
    argv = cmd[:-1].rstrip().replace("8765", str(port))
    if re.search(r"\b(serve|--http)\b", argv) and "--port" not in argv:
        argv += f" --port {port}"
    return [
        f"{{ {argv}\n}} > {shlex.quote(str(log))} 2>&1 &",
        "__bg+=($!)",
        f"for __i in $(seq 1200); do (exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && break;"
        f" kill -0 $! 2>/dev/null || break; sleep 0.05; done",
    ]


def _run_console(body: str, cwd: Path, env: dict[str, str], where: str) -> None:
    cmds = _commands(body)
    assert cmds, f"{where}: a console block without a command"
    port = _free_port()
    logs: dict[int, Path] = {}
    script = ["set +e", "__rc=0", "__bg=()"]
    for i, (cmd, _) in enumerate(cmds):
        if cmd.endswith("&"):
            logs[i] = cwd.parent / f"background-{port}-{i}.log"
            script += _background(cmd, port, logs[i])
            script += [f'printf "\\n{MARK} 0\\n"']
            continue
        script += [
            f"(exit $__rc); {{ {cmd.replace('8765', str(port))}\n}} 2>&1",
            "__rc=$?",
            f'printf "\\n{MARK} %s\\n" "$__rc"',
        ]
    # `{ cmd; } &` may fork a subshell that runs the server as its child: stop the child as
    # Ctrl-C would (the subshell then ends), or the process `$!` names when bash ran the
    # server itself. Killing only the subshell left the server running after the suite.
    script += [
        'for __p in "${__bg[@]}"; do pkill -INT -P "$__p" 2>/dev/null || kill "$__p" 2>/dev/null;'
        " done; wait"
    ]
    r = subprocess.run(
        ["bash", "-c", "\n".join(script)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if logs:  # every server the block started is gone with it
        with socket.socket() as probe:
            assert probe.connect_ex(("127.0.0.1", port)) != 0, (
                f"{where}: a server outlived its block"
            )
    parts = r.stdout.split(f"\n{MARK} ")
    assert len(parts) == len(cmds) + 1, f"{where}\n{r.stdout}{r.stderr}"
    checker = doctest.OutputChecker()
    for i, (cmd, want) in enumerate(cmds):
        got = parts[i].split("\n", 1)[1] if i else parts[0]
        rc = int(parts[i + 1].split("\n", 1)[0])
        if i in logs:
            got = logs[i].read_text() if logs[i].exists() else ""
        got = got.replace(str(port), "8765")
        shown = i + 1 < len(cmds) and cmds[i + 1][0] == "echo $?"
        assert rc == 0 or shown or cmd == "echo $?", f"{where}: `{cmd}` exited {rc}:\n{got}"
        got = got if got.endswith("\n") or not got else got + "\n"
        assert checker.check_output(want, got, FLAGS), (
            f"{where}: `{cmd}`\nwant:\n{want}\ngot:\n{got}"
        )


def _run_text(body: str, home: Path, env: dict[str, str], where: str) -> None:
    """A server's start-up lines: run it (on a free port instead of 8765), read its stderr
    until the last hint, and find every shown line there."""
    first, *want = body.splitlines()
    words = shlex.split(first[2:])
    env = dict(env)
    while "=" in words[0]:
        key, value = words.pop(0).split("=", 1)
        env[key] = value
    assert words[0] == "memstrata", where
    port = _free_port()
    exe = str(Path(sys.executable).parent / "memstrata")
    argv = [exe, "--home", str(home), *words[1:], "--port", str(port)]
    proc = subprocess.Popen(
        argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    got: list[str] = []
    deadline = threading.Timer(120, proc.kill)  # no hints at all: fail, never hang
    deadline.start()
    try:
        assert proc.stderr is not None
        for line in proc.stderr:  # the hints end with the stdio alternative or Ctrl-C
            got.append(line.rstrip("\n").replace(str(port), "8765"))
            if line.startswith("stdio instead") or "(Ctrl-C to stop)" in line:
                break
    finally:
        deadline.cancel()
        proc.terminate()
        proc.wait(timeout=30)
    for line in want:
        assert line in got, f"{where}: {first}\nwant: {line}\ngot:\n" + "\n".join(got)


def _run_toml(body: str, home: Path, where: str) -> None:
    from memstrata.config import load_config

    home.mkdir(parents=True)
    (home / "config.toml").write_text(body)
    assert load_config(home).problems == (), f"{where}\n{body}"


def _hook_commands(data: Any) -> list[str]:
    if not isinstance(data, dict):
        return []
    return [
        h["command"]
        for event in data.get("hooks", {}).values()
        for group in event
        for h in group["hooks"]
    ]


def _parse_memstrata(line: str, where: str) -> None:
    from memstrata.cli.parser import build_parser

    argv = shlex.split(line)
    argv = [a.replace("../shared/data/locomo10_dev.json", "x.json") for a in argv]
    assert Path(argv[0]).name == "memstrata", where
    try:
        build_parser().parse_args(argv[1:])
    except SystemExit as exc:
        raise AssertionError(f"{where}: `{line}` does not parse") from exc


def _check_sh(body: str, where: str) -> int:
    """The lines of an ```sh block that cannot run here, checked as far as they can be."""
    targets = set(re.findall(r"^([\w-]+):", (ROOT / "Makefile").read_text(), re.M))
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    checked = 0
    for raw in body.splitlines():
        line = raw.split(" #")[0].strip()
        if not line:
            continue
        words = shlex.split(line)
        while words and re.match(r"^[A-Z_]+=", words[0]):  # VAR=value before a command
            words.pop(0)
        redirect = [i for i, w in enumerate(words) if re.match(r"^\d?>", w)]
        words = words[: redirect[0]] if redirect else words  # `> result.json` is the shell's
        if line.startswith("export "):
            checked += 1
            continue
        if re.match(r"^(\S*/)?memstrata$", words[0]):
            _parse_memstrata(" ".join(shlex.quote(w) for w in words), where)
        elif words[0] == "make":
            named = [w for w in words[1:] if "=" not in w]
            assert named and set(named) <= targets, f"{where}: `{line}`: no such make target"
        elif words[0] in ("pip", "pipx", "uv") or words[:3] == ["python", "-m", "pip"]:
            for spec in re.findall(r"'[^']*\[([\w,-]+)\]'", line):
                for extra in spec.split(","):
                    assert extra in extras, f"{where}: `{line}`: no extra {extra!r}"
        elif words[0] == "claude" and words[1:3] == ["mcp", "add"]:
            pass
        else:
            raise AssertionError(f"{where}: `{line}`: run it in a ```console block instead")
        checked += 1
    return checked


# -- the tests ---------------------------------------------------------------------------


def _story(doc: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Run every block of `doc` in order; how many of each kind ran."""
    work = tmp_path / "work"
    work.mkdir()
    env = _env(tmp_path)
    for key in [k for k in os.environ if k.startswith(("MEMSTRATA_", "CLAUDE_"))]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(work)
    ns: dict[str, Any] = {"__name__": "__docs__"}
    ran: dict[str, int] = {}
    try:
        for n, (kind, body) in enumerate(blocks(doc)):
            where = f"{_name(doc)} block {n} ({kind})"
            if kind == "pycon":
                _run_pycon(body, ns, where)
            elif kind == "python":
                _run_python(body, ns, where)
            elif kind == "console":
                _run_console(body, work, env, where)
            elif kind == "text" and body.startswith("$ "):
                _run_text(body, tmp_path / f"server-{n}", env, where)
            elif kind == "text":
                continue  # prose in a box (a diagram, a formula): not an example
            elif kind == "toml":
                _run_toml(body, tmp_path / f"config-{n}", where)
            elif kind == "json":
                data = json.loads(body)
                for cmd in _hook_commands(data):
                    _parse_memstrata(cmd, where)
            elif kind == "sh":
                assert _check_sh(body, where), where
            else:
                raise AssertionError(f"{where}: unknown kind of block")
            ran[kind] = ran.get(kind, 0) + 1
    finally:
        for value in list(ns.values()):
            close = getattr(value, "close", None)
            if type(value).__module__.startswith("memstrata") and callable(close):
                with contextlib.suppress(Exception):
                    close()
    return ran


@pytest.mark.parametrize("doc", DOCS, ids=[_name(d) for d in DOCS])
def test_every_example_of_the_document_runs(
    doc: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if any(b.startswith("$ curl") or "| jq" in b for _, b in blocks(doc, "console")):
        for tool in ("curl", "jq"):
            if shutil.which(tool) is None:
                pytest.skip(f"{tool} is not installed (.ci/run installs it)")
    ran = _story(doc, tmp_path, monkeypatch)
    if doc.name in GUIDES or doc == README:
        assert sum(ran.values()) >= 2, (doc.name, ran)


def test_every_fence_names_a_kind_this_test_runs() -> None:
    """A block of another kind (or none) would be an example nothing runs."""
    for doc in DOCS:
        fences = FENCE.findall(doc.read_text(encoding="utf-8"))
        opening = fences[0::2]
        assert len(fences) % 2 == 0, f"{_name(doc)}: a fence is not closed"
        for kind in opening:
            assert kind in KINDS, f"{_name(doc)}: ```{kind or '(no kind)'} blocks are not run"


def test_the_readme_is_a_front_door() -> None:
    """Short, its two commands first, a link to every guide, and no run's timings (they
    are in docs/benchmarks.md with their commands and dates)."""
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 160
    (quick,) = [b for k, b in blocks(README, "sh") if "make run" in b]
    assert [line.split()[:2] for line in quick.splitlines()] == [["make", "run"], ["make", "test"]]
    for guide in GUIDES:
        assert f"(docs/{guide})" in text, guide
        assert (ROOT / "docs" / guide).exists(), guide
    for unit in (r"\bp50\b", r"\bp95\b", r"\d ms\b", r"req/s", r"\d s wall"):
        assert not re.search(unit, text), unit
    ci = (ROOT / ".ci" / "run").read_text()
    assert ci.rstrip().endswith("exec make test")
