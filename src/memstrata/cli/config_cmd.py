"""`memstrata config`: every setting's effective value and where it came from.

Reads the store's config file and the environment exactly as a store does
(`config.load_config`), without opening the index. `--template` prints the
commented file `memstrata init` writes.
"""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser("config", help="show the effective configuration and where each value came from")
    p.add_argument("--template", action="store_true",
                   help="print a commented config.toml with every default instead")
    p.set_defaults(func=run_config)


def run_config(args: argparse.Namespace) -> int:
    from memstrata.cli.main import emit
    from memstrata.config import commented_template, load_config
    from memstrata.files.layout import resolve_home

    if args.template:
        emit(args, {"template": commented_template()}, commented_template())
        return 0
    home = resolve_home(args.home).resolve()
    cfg = load_config(home)
    rows = cfg.effective()
    data = {"home": str(home), "file": cfg.source, "problems": list(cfg.problems),
            "settings": [{"name": n, "value": list(v) if isinstance(v, tuple) else v,
                          "origin": o} for n, v, o in rows]}
    width = max(len(n) for n, _, _ in rows)
    lines = [f"store: {home}", f"file:  {cfg.source or '(none: defaults)'}", ""]
    lines += [f"{n:<{width}}  {_show(v):<30}  {o}" for n, v, o in rows]
    lines += [f"problem: {p}" for p in cfg.problems]
    emit(args, data, "\n".join(lines))
    return 0


def _show(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, tuple):
        return ", ".join(v) or "[]"
    return str(v)
