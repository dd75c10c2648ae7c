"""`memstrata config`: every setting's effective value and where it came from, the store
home, agent and room included (flag, environment or default).

Reads the store's config file and the environment exactly as a store does
(`config.load_config`), without opening the index. `--template` prints the
commented file `memstrata init` writes.
"""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser(
        "config", help="show the effective configuration and where each value came from"
    )
    p.add_argument(
        "--template",
        action="store_true",
        help="print a commented config.toml with every default instead",
    )
    p.set_defaults(func=run_config)


def run_config(args: argparse.Namespace) -> int:
    from memstrata.cli.main import emit
    from memstrata.config import commented_template, load_config
    from memstrata.files.layout import resolve_home

    if args.template:
        emit(args, {"template": commented_template()}, commented_template())
        return 0
    from memstrata.cli.common import DEFAULT_AGENT

    home = resolve_home(args.home).resolve()
    cfg = load_config(home)
    rows = cfg.effective()
    who = [
        (
            "home",
            str(home),
            _origin(
                "--home",
                "MEMSTRATA_HOME",
                args.home,
                "the project's .memstrata, found upward from $CLAUDE_PROJECT_DIR or the "
                "working directory (files.layout.find_home)",
            ),
        ),
        (
            "agent",
            args.agent,
            _origin(
                "--agent",
                "MEMSTRATA_AGENT",
                args.agent,
                f"{DEFAULT_AGENT!r} for agent commands, the store's owner for store-wide ones",
            ),
        ),
        ("room", args.room, _origin("--room", "MEMSTRATA_ROOM", args.room, "none")),
    ]
    data = {
        "home": str(home),
        "file": cfg.source,
        "problems": list(cfg.problems),
        "identity": [{"name": n, "value": v, "origin": o} for n, v, o in who],
        "settings": [
            {"name": n, "value": list(v) if isinstance(v, tuple) else v, "origin": o}
            for n, v, o in rows
        ],
    }
    width = max(len(n) for n, _, _ in rows)
    lines = [f"store: {home}", f"file:  {cfg.source or '(none: defaults)'}", ""]
    lines += [f"{n:<{width}}  {_show(v):<30}  {o}" for n, v, o in who]
    lines += [f"{n:<{width}}  {_show(v):<30}  {o}" for n, v, o in rows]
    lines += [f"problem: {p}" for p in cfg.problems]
    emit(args, data, "\n".join(lines))
    return 0


def _origin(flag: str, var: str, value: str | None, default: str) -> str:
    """Where a common option's value came from: the flag, the environment (the flag's
    default is read from it), or nowhere (the default, described)."""
    import os
    import sys

    from memstrata.cli import main

    argv = main._ARGV if main._ARGV is not None else sys.argv[1:]
    if any(a == flag or a.startswith(flag + "=") for a in argv):
        return flag
    if value is not None and os.environ.get(var) == value:
        return f"env {var}"
    return f"default: {default}"


def _show(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, tuple):
        return ", ".join(v) or "[]"
    return str(v)
