"""The CLI's argparse parsers: the commands' table, the options every command takes, and
a usage error as one line (or JSON under --json), like other errors.

`cli.main` reads a plain `memstrata context` without any of this (`cli.quick`): argparse
with its `gettext` and `locale`, and building and running these parsers, were 6% of a
context's start. Every other command line (and any `context` line `cli.quick` is not
sure of) comes here.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from memstrata.cli.common import EXIT_USAGE, report, wants_json

COMMAND_MODULES = (
    "memstrata.cli.init_cmd",
    "memstrata.cli.config_cmd",
    "memstrata.cli.now_cmd",
    "memstrata.cli.log_cmd",
    "memstrata.cli.files_cmd",
    "memstrata.cli.versions_cmd",
    "memstrata.cli.facts_cmd",
    "memstrata.cli.tasks_cmd",
    "memstrata.cli.sessions_cmd",
    "memstrata.cli.ledger_cmd",
    "memstrata.cli.decisions_cmd",
    "memstrata.cli.search_cmd",
    "memstrata.cli.context_cmd",
    "memstrata.cli.reindex_cmd",
    "memstrata.cli.doctor_cmd",
    "memstrata.cli.export_cmd",
    "memstrata.cli.import_cmd",
    "memstrata.cli.migrate_cmd",
    "memstrata.cli.compact_cmd",
    "memstrata.cli.audit_cmd",
    "memstrata.cli.verify_cmd",
    "memstrata.cli.extract_cmd",
    "memstrata.cli.bench_cmd",
    "memstrata.cli.demo_cmd",
    "memstrata.cli.mcp_cmd",
    "memstrata.cli.hooks_cmd",
    "memstrata.cli.setup_cmd",
    "memstrata.cli.maintain_cmd",
    "memstrata.cli.purge_cmd",
    "memstrata.cli.serve_cmd",
    "memstrata.cli.completion",
    "memstrata.cli.episodes_cmd",
    "memstrata.cli.rooms_cmd",
    "memstrata.cli.phases_cmd",
)
# The module registering each command: `main` builds the parser of the command asked for
# only (building all of them was half of a `memstrata context` start). A command missing
# here still works (all parsers are built for it); tests/cli/test_lazy_parser.py checks
# this table against what the modules register.
COMMANDS = {
    "init": "memstrata.cli.init_cmd",
    "config": "memstrata.cli.config_cmd",
    "now": "memstrata.cli.now_cmd",
    "log": "memstrata.cli.log_cmd",
    "files": "memstrata.cli.files_cmd",
    "facts": "memstrata.cli.facts_cmd",
    "tasks": "memstrata.cli.tasks_cmd",
    "sessions": "memstrata.cli.sessions_cmd",
    "ledger": "memstrata.cli.ledger_cmd",
    "decisions": "memstrata.cli.decisions_cmd",
    "search": "memstrata.cli.search_cmd",
    "context": "memstrata.cli.context_cmd",
    "reindex": "memstrata.cli.reindex_cmd",
    "doctor": "memstrata.cli.doctor_cmd",
    "export": "memstrata.cli.export_cmd",
    "import": "memstrata.cli.import_cmd",
    "migrate": "memstrata.cli.migrate_cmd",
    "compact": "memstrata.cli.compact_cmd",
    "audit": "memstrata.cli.audit_cmd",
    "verify": "memstrata.cli.verify_cmd",
    "extract": "memstrata.cli.extract_cmd",
    "bench": "memstrata.cli.bench_cmd",
    "demo": "memstrata.cli.demo_cmd",
    "mcp": "memstrata.cli.mcp_cmd",
    "hook": "memstrata.cli.hooks_cmd",
    "setup": "memstrata.cli.setup_cmd",
    "maintain": "memstrata.cli.maintain_cmd",
    "purge": "memstrata.cli.purge_cmd",
    "serve": "memstrata.cli.serve_cmd",
    "completion": "memstrata.cli.completion",
    "episodes": "memstrata.cli.episodes_cmd",
    "promote": "memstrata.cli.episodes_cmd",
    "sources": "memstrata.cli.episodes_cmd",
    "rooms": "memstrata.cli.rooms_cmd",
    "phase": "memstrata.cli.phases_cmd",
    "handoff": "memstrata.cli.phases_cmd",
    "history": "memstrata.cli.versions_cmd",
    "restore": "memstrata.cli.versions_cmd",
}


def _help_width() -> int:
    """The width argparse's help formatter takes by default (`shutil.get_terminal_size`'s
    columns, less 2), worked out without importing `shutil`."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return (columns or 80) - 2


class _Quick(argparse.ArgumentParser):
    """argparse builds a help formatter on every `add_argument` (to check the metavar),
    and the formatter's default width imports `shutil` (with zlib, bz2 and lzma: 2-3 ms
    of every start): the same width, given."""

    def _get_formatter(self) -> argparse.HelpFormatter:
        return self.formatter_class(prog=self.prog, width=_help_width())  # type: ignore[call-arg]


class Parser(_Quick):
    """argparse, with a usage error as one line (or JSON under --json), like other errors."""

    def error(self, message: str) -> NoReturn:
        as_json = wants_json(sys.argv[1:] if _ARGV is None else _ARGV)
        said = _unknown_command(message) if self.prog == "memstrata" else None
        where = "" if self.prog == "memstrata" else f"{self.prog}: "  # "memstrata: error: " says it
        report(
            "usage",
            f"{where}{said or message} (see '{self.prog} --help')",
            EXIT_USAGE,
            as_json=as_json,
        )
        sys.exit(EXIT_USAGE)


# What people type for a memory command that has another name here.
_SAID_FOR: dict[str, tuple[str, ...]] = {
    "recall": ("search TEXT",),
    "find": ("search TEXT",),
    "query": ("search TEXT",),
    "lookup": ("search TEXT",),
    "grep": ("search TEXT",),
    "remember": ("facts set KEY VALUE", "decisions record TEXT", "log append THOUGHT TEXT"),
    "save": ("facts set KEY VALUE",),
    "note": ("log append THOUGHT TEXT",),
    "decide": ("decisions record TEXT",),
    "status": ("now",),
    "task": ("tasks",),
    "fact": ("facts",),
    "prompt": ("context",),
}
_INVALID_COMMAND = re.compile(r"^argument COMMAND: invalid choice: '([^']*)'")


def _unknown_command(message: str) -> str | None:
    """'unknown command 'recall'; to look something up: 'memstrata search TEXT'' instead of
    argparse's list of every command, for a command name memstrata does not have."""
    import difflib

    got = _INVALID_COMMAND.match(message)
    if got is None:
        return None
    typed = got.group(1)
    hints = _SAID_FOR.get(typed.lower()) or tuple(
        difflib.get_close_matches(typed, list(COMMANDS), n=1, cutoff=0.6)
    )
    said = f"unknown command {typed!r}"
    if not hints:
        return said
    named = [f"'memstrata {h}'" for h in hints]
    either = named[0] if len(named) == 1 else f"{', '.join(named[:-1])} or {named[-1]}"
    return f"{said}; did you mean {either}?"


_ARGV: Sequence[str] | None = None


def _common(p: argparse.ArgumentParser, *, top: bool) -> None:
    """The options every command takes, before or after the command name."""

    def d(value: Any) -> Any:
        return value if top else argparse.SUPPRESS

    p.add_argument(
        "--home",
        default=d(os.environ.get("MEMSTRATA_HOME")),
        help="store folder ($MEMSTRATA_HOME; default: the project's .memstrata, found "
        "upward from the working directory like git)",
    )
    p.add_argument(
        "--agent",
        default=d(os.environ.get("MEMSTRATA_AGENT")),
        help="agent identity ($MEMSTRATA_AGENT)",
    )
    p.add_argument(
        "--room",
        default=d(os.environ.get("MEMSTRATA_ROOM")),
        help="the room you act in ($MEMSTRATA_ROOM)",
    )
    p.add_argument(
        "--role", default=d(None), choices=("admin", "project", "skill"), help="override the role"
    )
    p.add_argument(
        "--json",
        action="store_true",
        default=d(False),
        help="machine-readable output; errors as JSON on stderr",
    )
    p.add_argument(
        "--reveal",
        action="store_true",
        default=d(False),
        help="print secrets as stored (default: each shown as [withheld: <kind>], as agents "
        "see memory)",
    )


def _add_common_everywhere(p: argparse.ArgumentParser, path: str = "") -> None:
    from memstrata.cli.examples import EXAMPLES

    example = EXAMPLES.get(path)
    if example and not p.epilog:
        p.epilog = f"example:\n  {example}"
        p.formatter_class = argparse.RawDescriptionHelpFormatter
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                if not any(
                    isinstance(a, argparse._StoreAction) and a.dest == "home"
                    for a in child._actions
                ):
                    _common(child, top=False)
                _add_common_everywhere(child, f"{path} {name}".strip())


class _NotSure(Exception):
    pass


class _Peek(_Quick):
    def error(self, message: str) -> NoReturn:
        raise _NotSure(message)


def command_asked(argv: Sequence[str] | None) -> str | None:
    """The command `argv` names, read with the top-level options `build_parser` has
    (abbreviations alike); None when unsure (help, version, an error): build them all."""
    peek = _Peek(prog="memstrata", add_help=False)
    peek.add_argument("-h", "--help", action="store_true")
    peek.add_argument("--version", action="store_true")
    _common(peek, top=True)
    peek.add_argument("rest", nargs=argparse.REMAINDER)
    try:
        got = peek.parse_args(sys.argv[1:] if argv is None else argv)
    except _NotSure:
        return None
    if got.help or got.version or not got.rest or got.rest[0] not in COMMANDS:
        return None
    return str(got.rest[0])


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The CLI's parser: every command's, or only `command`'s (and its module's others)."""
    from memstrata import __version__

    p = Parser(
        prog="memstrata",
        description="Persistent, layered memory for AI agents.",
        epilog="exit codes: 0 ok, 1 error, 2 usage or refused, 3 not found, 4 conflict",
    )
    p.add_argument("--version", action="version", version=f"memstrata {__version__}")
    _common(p, top=True)
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for name in COMMAND_MODULES if command is None else (COMMANDS[command],):
        importlib.import_module(name).register(sub)
    _add_common_everywhere(p)
    p.epilog = f"{p.epilog}\n\nexample:\n  memstrata --agent finn context"
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    return p
