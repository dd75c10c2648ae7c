"""Entry point: `memstrata [--home DIR] [--agent NAME] [--room ROOM] [--json] COMMAND ...`.

Command groups live in their own modules and register themselves through
`COMMAND_MODULES`; each exposes `register(subparsers)` and sets `func` on its
parsers. Library errors become one clear line on stderr and exit code 2 (user
mistake) or 1 (anything else the library reports); no tracebacks for user
mistakes.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

COMMAND_MODULES = (
    "memstrata.cli.init_cmd",
    "memstrata.cli.now_cmd",
    "memstrata.cli.log_cmd",
    "memstrata.cli.files_cmd",
    "memstrata.cli.facts_cmd",
    "memstrata.cli.tasks_cmd",
    "memstrata.cli.sessions_cmd",
    "memstrata.cli.ledger_cmd",
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
    "memstrata.cli.maintain_cmd",
    "memstrata.cli.purge_cmd",
    "memstrata.cli.serve_cmd",
)


def _common(p: argparse.ArgumentParser, *, top: bool) -> None:
    """The options every command takes, before or after the command name."""

    def d(value: Any) -> Any:
        return value if top else argparse.SUPPRESS

    p.add_argument("--home", default=d(os.environ.get("MEMSTRATA_HOME")),
                   help="store folder (default ./.memstrata or $MEMSTRATA_HOME)")
    p.add_argument("--agent", default=d(os.environ.get("MEMSTRATA_AGENT")),
                   help="agent identity ($MEMSTRATA_AGENT)")
    p.add_argument("--room", default=d(os.environ.get("MEMSTRATA_ROOM")), help="room ($MEMSTRATA_ROOM)")
    p.add_argument("--role", default=d(None), help="override the role (admin, project, skill)")
    p.add_argument("--json", action="store_true", default=d(False), help="machine-readable output")


def _add_common_everywhere(p: argparse.ArgumentParser) -> None:
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in set(action.choices.values()):
                _common(child, top=False)
                _add_common_everywhere(child)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="memstrata", description="Persistent, layered memory for AI agents.")
    _common(p, top=True)
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    _add_common_everywhere(p)
    return p


def emit(args: argparse.Namespace, data: Any, text: str | None = None) -> None:
    if args.json:
        sys.stdout.write(json.dumps(data, ensure_ascii=False, default=str) + "\n")
    else:
        sys.stdout.write((text if text is not None else str(data)).rstrip("\n") + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    from memstrata.errors import InvalidInput, MemstrataError, NotFound, ScopeDenied

    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        rc = args.func(args)
        return int(rc or 0)
    except (InvalidInput, NotFound, ScopeDenied) as exc:
        sys.stderr.write(f"memstrata: error: {exc}\n")
        return 2
    except MemstrataError as exc:
        sys.stderr.write(f"memstrata: error: {exc}\n")
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
