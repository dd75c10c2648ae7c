"""`memstrata init`: create the store folder and one agent's files, then say where.

Creates (never overwrites) `AGENT.md` from a template (`layers.starters`: not indexed
until edited), `NOW.md` with its
default objective, `LOG.md` with its header, a `CONTEXT.md` to fill in, and,
when the store has no config file yet, `config.toml` with every setting
commented out at its default. Running it again is harmless: files that exist
are left as they are and reported.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path


def register(sub: Any) -> None:
    p = sub.add_parser("init", help="create the store, its commented config and an agent's files")
    p.add_argument("name", nargs="?", help="agent to create (default: --agent, else 'agent')")
    p.set_defaults(func=run_init)


def run_init(args: argparse.Namespace) -> int:
    from memstrata.cli.common import DEFAULT_AGENT, command_name
    from memstrata.cli.main import emit
    from memstrata.config import CONFIG_FILES, commented_template
    from memstrata.files.atomic import atomic_write_bytes
    from memstrata.layers.starters import AGENT_STARTER, CONTEXT_STARTER
    from memstrata.store.view import Store

    name = args.name or args.agent or DEFAULT_AGENT
    with Store(args.home, agent=name, room=args.room, role=args.role) as store:
        mem = store.agent(name)
        steps: list[tuple[Path, Callable[[], object]]] = [
            (mem.identity.path, lambda: mem.identity.write(AGENT_STARTER.format(name=name))),
            (mem.now.path, lambda: mem.now.update("No active objective yet", [])),
            (mem.log.path, mem.log._ensure_header),
            (mem.context.path, lambda: mem.context.write(CONTEXT_STARTER)),
        ]
        if not any((store.home / n).exists() for n in CONFIG_FILES):
            steps.insert(
                0,
                (
                    store.home / "config.toml",
                    lambda: atomic_write_bytes(
                        store.home / "config.toml", commented_template().encode()
                    ),
                ),
            )
        created: list[str] = []
        kept: list[str] = []
        for path, make in steps:
            if store.engine.exists(path):
                kept.append(store.rel(path))
            else:
                make()
                created.append(store.rel(path))
        home = str(store.home)
    lines = [f"store: {home}", f"agent: {name}"]
    lines += [f"  created {p}" for p in created] + [f"  kept    {p}" for p in kept]
    lines.append(f"next: {command_name()} --home {home} --agent {name} context")
    emit(args, {"home": home, "agent": name, "created": created, "kept": kept}, "\n".join(lines))
    return 0
