"""`memstrata COMMAND` builds the parser of that command only; it parses, helps and
errs exactly as the parser of every command does."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io

import pytest

from memstrata.cli.parser import COMMAND_MODULES, COMMANDS, build_parser, command_asked


def test_the_command_table_names_the_module_registering_each_command() -> None:
    p = argparse.ArgumentParser()
    sub = p.add_subparsers()
    registered: dict[str, str] = {}
    for module in COMMAND_MODULES:
        before = set(sub.choices)
        importlib.import_module(module).register(sub)
        registered.update({c: module for c in sub.choices if c not in before})
    assert registered == COMMANDS


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["context"], "context"),
        (["--agent", "context", "search", "x"], "search"),  # an option's value
        (["--ag", "finn", "--json", "log", "tail"], "log"),  # an abbreviated option
        (["--home=/tmp/x", "bench", "ops"], "bench"),
        (["--h", "x", "context"], None),  # ambiguous (--help, --home): the full parser says so
        (["-h"], None),
        (["--version"], None),
        (["--role", "nobody", "context"], None),  # a bad value: the full parser says so
        (["bogus"], None),
        ([], None),
    ],
)
def test_the_command_asked_is_read_like_the_full_parser_reads_it(
    argv: list[str], command: str | None
) -> None:
    assert command_asked(argv) == command


def _outcome(parser: argparse.ArgumentParser, argv: list[str]) -> tuple[str, str, str]:
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            got = vars(parser.parse_args(argv))
    except SystemExit as exc:
        return f"exit {exc.code}", out.getvalue(), err.getvalue()
    func = got.pop("func", None)
    return repr(sorted(got.items())), getattr(func, "__qualname__", ""), ""


def test_each_command_parses_helps_and_errs_as_with_every_command_built() -> None:
    full = build_parser()
    for command in COMMANDS:
        only = build_parser(command)
        for argv in (
            [command, "--help"],
            [command, "--no-such-option"],
            ["--json", command, "--no-such-option"],
            ["--agent", "finn", command],
        ):
            assert _outcome(only, argv) == _outcome(full, argv), argv
