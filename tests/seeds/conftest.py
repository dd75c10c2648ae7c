"""Helpers of the seed conformance suite: stores with roles, and in-process MCP calls.

Every test in tests/seeds/ is named in one row of docs/seeds.md and exercises that
row's behaviour itself (through the library, the CLI in-process, or an MCP tool
called through `memstrata.mcp.tools.run`, the call path both transports use).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memstrata import Store

ROLES = '[roles]\nadmin = ["wilco"]\nskill = ["seo"]\n'


@pytest.fixture
def roles(home: Path) -> Path:
    """A store home whose config names an admin (wilco) and a skill (seo)."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(ROLES)
    return home


@pytest.fixture
def owner(home: Path) -> Iterator[Store]:
    """The store's owner (no agent name: the person at the terminal, an admin)."""
    home.mkdir(parents=True, exist_ok=True)
    s = Store(home)
    yield s
    s.close()


def call(store: Store, tool: str, **arguments: Any) -> Any:
    """Call one MCP tool in process, as either transport would; returns its structured data
    (or its text when it has none)."""
    from memstrata.mcp.tools import build_tools, run

    spec = next(s for s in build_tools(store) if s.name == tool)
    reply = run(spec, arguments)
    assert not reply.is_error, reply.text
    return reply.data if reply.data is not None else reply.text


def tool_names(store: Store) -> set[str]:
    from memstrata.mcp.tools import build_tools

    return {s.name for s in build_tools(store)}


def cli(home: Path, *args: str, stdin: str | None = None) -> tuple[int, str, str]:
    """Run the CLI in process (exit code, stdout, stderr)."""
    import contextlib
    import io
    import sys

    from memstrata.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    old_in = sys.stdin
    sys.stdin = io.StringIO(stdin or "")
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(["--home", str(home), *args])
            except SystemExit as exc:  # argparse
                code = int(exc.code or 0)
    finally:
        sys.stdin = old_in
    return code, out.getvalue(), err.getvalue()


def cli_json(home: Path, *args: str) -> Any:
    code, out, err = cli(home, "--json", *args)
    assert code == 0, err
    return json.loads(out)
