"""`memstrata context` read without argparse: it starts before every agent turn.

argparse (with the `gettext` and `locale` it imports), the parsers `cli.parser` builds
and their two readings of the line were ~25M instructions, 6% of a context. A line
made only of the exact option names below, each value a separate word not starting
with "-", and the command `context` is read here into the attributes argparse gives
it (`tests/cli/test_quick_context.py` compares the two on every option). Anything
else (help, an abbreviation, `--opt=value`, `--role`, a value starting with "-", a
number that is not one, another command) returns None: argparse reads it and says
what is wrong.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from types import SimpleNamespace

from memstrata.cli.context_cmd import run_context

# the options every command takes (`cli.parser._common`): value-taking, then flags
_COMMON_VALUES = {"--home": "home", "--agent": "agent", "--room": "room"}
_COMMON_FLAGS = {"--json": "json", "--reveal": "reveal"}
# `memstrata context`'s own (`cli.context_cmd.register`)
_CONTEXT_VALUES = {
    "--budget": ("budget", int),
    "--brief": ("brief", str),
    "--log-entries": ("log_entries", int),
    "--workspace": ("workspace", str),
}
_CONTEXT_FLAGS = {"--ignore-memory": "ignore_memory"}


def context_args(argv: Sequence[str]) -> SimpleNamespace | None:
    """The parsed `memstrata ... context ...` line, or None when argparse must read it."""
    got: dict[str, object] = {
        "home": os.environ.get("MEMSTRATA_HOME"),
        "agent": os.environ.get("MEMSTRATA_AGENT"),
        "room": os.environ.get("MEMSTRATA_ROOM"),
        "role": None,
        "json": False,
        "reveal": False,
    }
    words = list(argv)
    command = False
    i = 0
    while i < len(words):
        word = words[i]
        if word == "context" and not command:
            command = True
            got.update(
                command="context",
                budget=None,
                brief=None,
                ignore_memory=False,
                log_entries=None,
                workspace=None,
                func=run_context,
            )
        elif word in _COMMON_FLAGS:
            got[_COMMON_FLAGS[word]] = True
        elif command and word in _CONTEXT_FLAGS:
            got[_CONTEXT_FLAGS[word]] = True
        elif word in _COMMON_VALUES or (command and word in _CONTEXT_VALUES):
            if i + 1 >= len(words) or words[i + 1].startswith("-"):
                return None
            value = words[i + 1]
            if word in _COMMON_VALUES:
                got[_COMMON_VALUES[word]] = value
            else:
                name, kind = _CONTEXT_VALUES[word]
                try:
                    got[name] = kind(value)
                except ValueError:
                    return None
            i += 1
        else:
            return None
        i += 1
    return SimpleNamespace(**got) if command else None
