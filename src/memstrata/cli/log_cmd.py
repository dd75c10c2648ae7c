"""`memstrata log append TYPE CONTENT [--meta JSON] | log tail [-n N]`.

Warm memory (LOG.md): typed entries (TOOL_USE, THOUGHT, USER_FEEDBACK,
ERROR, SYSTEM) appended durably; `append` returns once the entry is on disk.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from memstrata.model import LOG_TYPES


def register(sub: Any) -> None:
    p = sub.add_parser("log", help="append to or read the agent's activity log (LOG.md)")
    lsub = p.add_subparsers(dest="log_action", metavar="ACTION", required=True)
    a = lsub.add_parser("append", help="append one typed entry")
    a.add_argument("type", choices=LOG_TYPES, type=str.upper, help="what happened")
    a.add_argument("content", help="entry text ('-' reads stdin)")
    a.add_argument("--meta", help="metadata as a JSON object, e.g. '{\"rows\": 1200}'")
    a.set_defaults(func=run_append)
    t = lsub.add_parser("tail", help="the last entries, oldest first")
    t.add_argument("-n", type=int, default=20, help="how many entries (default 20)")
    t.set_defaults(func=run_tail)


def _entry(e: Any) -> dict[str, Any]:
    out = {
        "id": e.id,
        "ts": e.ts,
        "entry_type": e.entry_type,
        "content": e.content,
        "metadata": e.metadata,
        "content_hash": e.content_hash,
        "token_count": e.token_count,
        "compacted": e.compacted,
    }  # log_metadata
    if e.edited:
        out["edited"] = True
    return out


def run_append(args: argparse.Namespace) -> int:
    from memstrata.cli.common import agent_memory, json_object, text_arg
    from memstrata.cli.main import emit

    meta = json_object(args.meta, "--meta")
    content = text_arg(args.content)
    store, mem = agent_memory(args)
    with store:
        entry = mem.log.append(args.type, content, meta)
        # The acknowledgement goes out now; a compaction this append triggered
        # runs in the background and closing the store waits for it.
        emit(args, _entry(entry), f"{entry.id} {entry.ts} {entry.entry_type}")
        sys.stdout.flush()
    return 0


def run_tail(args: argparse.Namespace) -> int:
    import json

    from memstrata.cli.common import agent_memory
    from memstrata.cli.main import emit

    store, mem = agent_memory(args)
    with store:
        entries = mem.log.tail(args.n)
    blocks = []
    for e in entries:
        meta = f"  {json.dumps(e.metadata, ensure_ascii=False)}" if e.metadata else ""
        blocks.append(f"{e.ts} {e.entry_type} {e.id}{meta}\n  " + e.content.replace("\n", "\n  "))
    emit(args, [_entry(e) for e in entries], "\n".join(blocks) or "(LOG.md has no entries)")
    return 0
