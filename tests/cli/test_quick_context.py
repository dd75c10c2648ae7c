"""`memstrata context` is read without argparse (`cli.quick`, start-up): every line it
reads gives the attributes argparse gives, and every line it is not sure of goes to
argparse."""

from __future__ import annotations

import itertools

import pytest

from memstrata.cli.context_cmd import run_context
from memstrata.cli.parser import build_parser
from memstrata.cli.quick import context_args

BEFORE = [[], ["--home", "/tmp/h"], ["--agent", "finn", "--json"], ["--room", "r1", "--reveal"]]
AFTER = [
    [],
    ["--budget", "800"],
    ["--brief", "which port; the gateway"],
    ["--brief", ""],
    ["--ignore-memory", "--log-entries", "20"],
    ["--workspace", "/w", "--json"],
    ["--agent", "late", "--home", "/other", "--budget", " 12 "],
    ["--budget", "5", "--budget", "6", "--reveal", "--room", "context"],
]
UNSURE = [
    ["context", "--help"],
    ["-h", "context"],
    ["--version"],
    ["context", "--bud", "5"],  # an abbreviation
    ["context", "--budget=5"],
    ["--home=/h", "context"],
    ["context", "--budget", "five"],  # argparse says what is wrong
    ["context", "--budget", "-5"],
    ["context", "--brief", "-x"],
    ["context", "--brief"],
    ["--role", "admin", "context"],
    ["context", "extra"],
    ["context", "context"],
    ["context", "--"],
    ["--json"],
    ["search", "x"],
    ["contexts"],
    [],
]


@pytest.fixture(autouse=True)
def _no_env_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("MEMSTRATA_HOME", "MEMSTRATA_AGENT", "MEMSTRATA_ROOM"):
        monkeypatch.delenv(name, raising=False)


def _argparse(argv: list[str]) -> dict[str, object]:
    return vars(build_parser("context").parse_args(argv))


def test_each_plain_context_line_reads_as_argparse_reads_it() -> None:
    for before, after in itertools.product(BEFORE, AFTER):
        argv = [*before, "context", *after]
        quick = context_args(argv)
        assert quick is not None, argv
        assert vars(quick) == _argparse(argv), argv
        assert quick.func is run_context


def test_environment_defaults_are_argparse_s(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMSTRATA_HOME", "/env/home")
    monkeypatch.setenv("MEMSTRATA_AGENT", "envagent")
    monkeypatch.setenv("MEMSTRATA_ROOM", "envroom")
    for argv in (["context"], ["--agent", "finn", "context", "--room", "r"]):
        quick = context_args(argv)
        assert quick is not None and vars(quick) == _argparse(argv)


def test_any_other_line_is_left_to_argparse() -> None:
    for argv in UNSURE:
        assert context_args(argv) is None, argv
