"""A CLI that explains itself: version, help and examples everywhere, completion, JSON
errors with documented exit codes, the effective config, one name per concept."""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from memstrata.cli.completion import SHELLS
from memstrata.cli.examples import EXAMPLES
from memstrata.cli.parser import build_parser

EXE = shutil.which("memstrata", path=str(Path(sys.executable).parent)) or "memstrata"


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [EXE, *args], capture_output=True, text=True, timeout=60, env={**os.environ, **(env or {})}
    )


def _parsers(
    p: argparse.ArgumentParser, path: str = ""
) -> list[tuple[str, argparse.ArgumentParser]]:
    out = [(path, p)]
    for a in p._actions:
        if isinstance(a, argparse._SubParsersAction):
            for name, child in a.choices.items():
                out += _parsers(child, f"{path} {name}".strip())
    return out


def test_version() -> None:
    r = run("--version")
    assert r.returncode == 0
    assert r.stdout.strip() == f"memstrata {importlib.metadata.version('memstrata')}"


def test_every_option_has_help_and_every_command_an_example_that_parses() -> None:
    parser = build_parser()
    for path, p in _parsers(parser):
        for a in p._actions:
            if not isinstance(a, argparse._SubParsersAction | argparse._HelpAction):
                assert a.help, (path, a.dest)
        assert p.epilog and "example" in p.epilog, path
        assert path in EXAMPLES, path
    for path, example in EXAMPLES.items():
        argv = shlex.split(example.split(">")[0])[1:]
        args = parser.parse_args(argv)  # an example that no longer parses fails here
        assert getattr(args, "func", None) or path == "", path


def test_allowed_values_are_choices() -> None:
    choices = {
        (path, a.dest): tuple(a.choices)
        for path, p in _parsers(build_parser())
        for a in p._actions
        if a.choices and not isinstance(a, argparse._SubParsersAction)
    }
    assert "preference" in choices[("facts set", "category")]
    assert "in_progress" in choices[("tasks update", "status")]
    assert "assistant" in choices[("sessions append", "message_role")]
    assert "THOUGHT" in choices[("log append", "type")]
    assert choices[("promote", "category")] == ("user", "feedback", "project", "reference")
    assert "ledger" in choices[("search", "layer")]
    assert choices[("search", "mode")] == ("lexical", "hybrid", "semantic")


def test_bash_completion_from_the_parser(tmp_path: Path) -> None:
    script = tmp_path / "memstrata.bash"
    script.write_text(run("completion", "bash").stdout)

    def complete(line: str) -> list[str]:
        words = shlex.split(line) + ([""] if line.endswith(" ") else [])
        probe = (
            f"source {script}; COMP_WORDS=({' '.join(shlex.quote(w) for w in words)}); "
            f"COMP_CWORD={len(words) - 1}; _memstrata; printf '%s\\n' \"${{COMPREPLY[@]}}\""
        )
        r = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, r.stderr
        return r.stdout.split()

    assert complete("memstrata led") == ["ledger"]
    assert set(complete("memstrata --agent finn ledger ")) >= {"publish", "query", "search"}
    assert complete("memstrata ledger query --in-r") == ["--in-room"]
    assert complete("memstrata facts set k v --category p") == ["preference", "personal", "project"]
    assert complete("memstrata log append T") == ["TOOL_USE", "THOUGHT"]
    assert "--only-room" not in complete("memstrata ledger query --")


def test_zsh_and_fish_completion_scripts() -> None:
    zsh = run("completion", "zsh").stdout
    assert "bashcompinit" in zsh and "complete -o default -F _memstrata memstrata" in zsh
    fish = run("completion", "fish").stdout
    assert "complete -c memstrata -n '__fish_seen_subcommand_from ledger' -a 'publish query" in fish
    assert "-l category -x -a 'general preference" in fish
    assert set(SHELLS) == {"bash", "zsh", "fish"}
    if shutil.which("fish"):  # pragma: no cover - fish is not on every machine
        r = subprocess.run(["fish", "-n", "-c", fish], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr


@pytest.mark.parametrize(
    ("argv", "code", "exit"),
    [
        (("facts", "get", "nope"), "not_found", 3),
        (("facts", "set", "k", "v", "--category", "gossip"), "usage", 2),
        (("ledger", "publish", "rumour", "x"), "unknown_kind", 2),
        (("files", "rename", "a.md", "b.md"), "already_exists", 4),
        (("--role", "skill", "facts", "get", "k"), "scope_denied", 2),
    ],
)
def test_json_errors_and_exit_codes(
    home: Path, argv: tuple[str, ...], code: str, exit: int
) -> None:
    run("--home", str(home), "--agent", "finn", "files", "write", "a.md", "a")
    run("--home", str(home), "--agent", "finn", "files", "write", "b.md", "b")
    r = run("--home", str(home), "--agent", "finn", "--json", *argv)
    assert r.returncode == exit, r.stderr
    err = json.loads(r.stderr)["error"]
    assert err["code"] == code and err["exit"] == exit and err["message"]
    assert r.stdout == ""
    plain = run("--home", str(home), "--agent", "finn", *argv)
    assert plain.returncode == exit and plain.stderr.startswith("memstrata: error: ")
    assert plain.stderr.count("\n") == 1


def json_lines(stderr: str) -> list[dict]:
    """Every line of stderr, each parsed as a JSON object (fails on any other line)."""
    return [json.loads(line) for line in stderr.splitlines()]


def test_os_errors_are_one_line_or_json_never_a_traceback(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("a file where the store's folder would go")
    r = run("--json", "--home", str(blocked / "store"), "init", "x")
    assert r.returncode == 1 and r.stdout == ""
    (line,) = json_lines(r.stderr)
    assert line["error"]["code"] == "os_error" and str(blocked) in line["error"]["message"]
    r = run("--home", str(blocked / "store"), "init", "x")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.startswith("memstrata: error: ") and r.stderr.count("\n") == 1


def test_an_internal_error_is_one_line_json_or_a_traceback_on_request(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from memstrata.cli import facts_cmd, main

    def broken(args: argparse.Namespace) -> int:
        raise RuntimeError("a bug")

    monkeypatch.setattr(facts_cmd, "run_get", broken)
    assert main.main(["--home", str(home), "--json", "facts", "get", "k"]) == 1
    (line,) = json_lines(capsys.readouterr().err)
    assert line == {"error": {"code": "internal", "message": "RuntimeError: a bug", "exit": 1}}
    assert main.main(["--home", str(home), "facts", "get", "k"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "MEMSTRATA_DEBUG=1" in err and "Traceback" not in err
    monkeypatch.setenv("MEMSTRATA_DEBUG", "1")
    with pytest.raises(RuntimeError, match="a bug"):
        main.main(["--home", str(home), "facts", "get", "k"])


def test_json_warnings_are_json_lines_and_the_default_agent_is_no_typo(home: Path) -> None:
    r = run("--json", "--home", str(home), "facts", "get", "nope")  # the default agent
    assert r.returncode == 3
    assert json_lines(r.stderr) == [
        {"error": {"code": "not_found", "message": "no fact 'nope'", "exit": 3}}
    ]
    assert "warning" not in run("--home", str(home), "facts", "get", "nope").stderr
    run("--home", str(home), "init", "finn")
    r = run("--json", "--home", str(home), "--agent", "fnn", "facts", "get", "nope")
    warning, error = json_lines(r.stderr)  # a named agent with no memory: a likely typo
    assert "did you mean 'finn'" in warning["warning"]["message"]
    assert error["error"]["code"] == "not_found"
    (home / "config.toml").write_text("[log]\ncompact_entries = -1\n")
    r = run("--json", "--home", str(home), "--agent", "finn", "facts", "list")
    assert r.returncode == 0 and json.loads(r.stdout) == []
    assert any("compact_entries" in w["warning"]["message"] for w in json_lines(r.stderr))


def test_config_shows_effective_values_and_origins(home: Path) -> None:
    r = run("--home", str(home), "--agent", "finn", "init")
    assert r.returncode == 0 and "created config.toml" in r.stdout
    text = (home / "config.toml").read_text()
    assert "# [search]" in text and "# text_weight = 0.7" in text
    (home / "config.toml").write_text(text + "\n[search]\ntext_weight = 0.5\n")
    out = json.loads(
        run("--home", str(home), "--json", "config", env={"MEMSTRATA_EMBEDDER": "fake"}).stdout
    )
    settings = {s["name"]: (s["value"], s["origin"]) for s in out["settings"]}
    assert settings["search.text_weight"] == (0.5, "config.toml")
    assert settings["search.embedder"] == ("fake", "env MEMSTRATA_EMBEDDER")
    assert settings["search.fusion"] == ("zsum", "default")
    assert out["file"] == "config.toml" and out["problems"] == []
    shown = run("--home", str(home), "config").stdout
    assert "search.text_weight" in shown and "config.toml" in shown
    # who and where: the store home, agent and room, each with its origin
    out = json.loads(
        run(
            "--agent",
            "finn",
            "--json",
            "config",
            env={"MEMSTRATA_HOME": str(home), "MEMSTRATA_ROOM": "room-9"},
        ).stdout
    )
    assert out["identity"] == [
        {"name": "home", "value": str(home.resolve()), "origin": "env MEMSTRATA_HOME"},
        {"name": "agent", "value": "finn", "origin": "--agent"},
        {"name": "room", "value": "room-9", "origin": "env MEMSTRATA_ROOM"},
    ]
    shown = run("--home", str(home), "config", env={"MEMSTRATA_ROOM": ""}).stdout
    assert re.search(r"^home +\S+ +--home$", shown, re.M)
    assert re.search(r"^agent +- +default: 'agent' for agent commands", shown, re.M)


def test_the_room_filter_has_one_name(home: Path) -> None:
    for room in ("room-1", "room-2"):
        run(
            "--home",
            str(home),
            "--agent",
            "a",
            "--room",
            room,
            "ledger",
            "publish",
            "decision",
            f"auth in {room}",
            "--tag",
            "auth",
        )
    q = json.loads(
        run("--home", str(home), "--json", "ledger", "query", "--in-room", "room-2").stdout
    )
    s = json.loads(
        run("--home", str(home), "--json", "search", "auth", "--in-room", "room-2").stdout
    )
    assert [e["room_id"] for e in q] == ["room-2"] and [h["room"] for h in s] == ["room-2"]
    from memstrata import SearchQuery, Store

    with Store(home) as store:
        assert [e.room_id for e in store.ledger.query(in_room="room-1")] == ["room-1"]
        assert [h.room for h in store.search(SearchQuery("auth", in_room="room-1"))] == ["room-1"]
        assert SearchQuery("x", room="room-1").in_room == "room-1"  # the old name still works


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


SERVERS = {
    "mcp --http": (("mcp", "--http"), "MCP server on"),
    "serve": (("serve",), "memstrata serve on"),
}


@pytest.mark.parametrize("server", SERVERS)
def test_http_startup_failures_come_before_any_banner(home: Path, server: str) -> None:
    """Port in use (exit 4), a wildcard bind without a token (2), an unknown tool (2):
    one line on stderr, or one JSON object with --json, and never a banner."""
    command, banner = SERVERS[server]
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        r = run("--home", str(home), *command, "--port", str(port))
        assert r.returncode == 4 and "cannot listen" in r.stderr, r.stderr
        assert banner not in r.stderr and "Traceback" not in r.stderr
        r = run("--json", "--home", str(home), *command, "--port", str(port))
        assert r.returncode == 4 and banner not in r.stderr
        assert json.loads(r.stderr)["error"]["code"] == "conflict"
    r = run(
        "--home",
        str(home),
        *command,
        "--host",
        "0.0.0.0",
        "--port",
        str(_free_port()),
        env={"MEMSTRATA_MCP_TOKEN": ""},
    )
    assert r.returncode == 2 and "token" in r.stderr and banner not in r.stderr
    r = run(
        "--json", "--home", str(home), *command, "--tools", "bogus", "--port", str(_free_port())
    )
    assert r.returncode == 2 and banner not in r.stderr
    error = json.loads(r.stderr)["error"]
    assert "bogus" in error["message"] and error["exit"] == 2
