"""`memstrata files read|write|replace|insert|list|delete|rename`: the memory file tools.

Paths are relative to the agent's memory folder; `..`, absolute paths and
symlinks out are refused. Writes are atomic; `delete` moves the file to the
agent's archive; LOG.md is append-only (use `memstrata log append`).
"""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser("files", help="the agent's free-form memory files")
    fsub = p.add_subparsers(dest="files_action", metavar="ACTION", required=True)
    r = fsub.add_parser("read", help="print a memory file")
    r.add_argument("path", help="path relative to the agent's memory folder, e.g. notes/plan.md")
    r.set_defaults(func=run_read)
    w = fsub.add_parser("write", help="create or overwrite a file")
    w.add_argument("path", help="path relative to the agent's memory folder")
    w.add_argument("content", help="the new content ('-' reads stdin)")
    w.add_argument("--expected-sha", help="refuse if the file changed since this sha256")
    w.set_defaults(func=run_write)
    rp = fsub.add_parser("replace", help="replace text that occurs exactly once")
    rp.add_argument("path", help="path relative to the agent's memory folder")
    rp.add_argument("old", help="text to find (must occur exactly once)")
    rp.add_argument("new", help="replacement text ('' deletes)")
    rp.set_defaults(func=run_replace)
    ins = fsub.add_parser("insert", help="insert text after a line (0 = top)")
    ins.add_argument("path", help="path relative to the agent's memory folder")
    ins.add_argument("line", type=int, help="insert after this line (0 = at the top)")
    ins.add_argument("text", help="text to insert ('-' reads stdin)")
    ins.set_defaults(func=run_insert)
    ls = fsub.add_parser(
        "list", help="list the files (not folders) below a folder, with size and last change"
    )
    ls.add_argument(
        "path", nargs="?", default="", help="a folder (default: the whole memory folder)"
    )
    ls.set_defaults(func=run_list)
    d = fsub.add_parser(
        "delete",
        help="move a file to the archive (soft: the copy stays "
        "searchable; `memstrata purge file` removes it)",
    )
    d.add_argument("path", help="the file to archive")
    d.set_defaults(func=run_delete)
    mv = fsub.add_parser("rename", help="rename or move a file")
    mv.add_argument("old", help="current path")
    mv.add_argument("new", help="new path")
    mv.set_defaults(func=run_rename)


def _done(args: argparse.Namespace, verb: str, info: Any) -> int:
    from memstrata.cli.common import fields
    from memstrata.cli.main import emit

    emit(args, fields(info), f"{verb} {info.path} ({info.size} bytes)")
    return 0


def run_read(args: argparse.Namespace) -> int:
    import sys

    from memstrata.cli.common import agent_memory, fields
    from memstrata.cli.main import emit, shown

    store, mem = agent_memory(args)
    with store:
        text = mem.files.read(args.path)
        info = mem.files.stat(args.path)
    if args.json:
        emit(args, {**fields(info), "content": text})
    else:
        sys.stdout.write(shown(args, text))
    return 0


def run_write(args: argparse.Namespace) -> int:
    from memstrata.cli.common import agent_memory, text_arg

    content = text_arg(args.content)
    store, mem = agent_memory(args)
    with store:
        info = mem.files.write(args.path, content, expected_sha=args.expected_sha)
    return _done(args, "wrote", info)


def run_replace(args: argparse.Namespace) -> int:
    from memstrata.cli.common import agent_memory

    store, mem = agent_memory(args)
    with store:
        info = mem.files.replace(args.path, args.old, args.new)
    return _done(args, "replaced in", info)


def run_insert(args: argparse.Namespace) -> int:
    from memstrata.cli.common import agent_memory, text_arg

    text = text_arg(args.text)
    store, mem = agent_memory(args)
    with store:
        info = mem.files.insert(args.path, args.line, text)
    return _done(args, "inserted into", info)


def run_list(args: argparse.Namespace) -> int:
    from memstrata.cli.common import agent_memory, table
    from memstrata.cli.main import emit

    store, mem = agent_memory(args)
    with store:
        files = [f for f in mem.files.list(args.path) if not f.is_dir]  # as MCP memory_list
    rows = [(f.path, f.size, f.modified[:19]) for f in files]
    emit(
        args,
        [{"path": f.path, "bytes": f.size, "modified": f.modified} for f in files],
        table(rows, ("path", "bytes", "modified")),
    )
    return 0


def run_delete(args: argparse.Namespace) -> int:
    from memstrata.cli.common import agent_memory
    from memstrata.cli.main import emit

    store, mem = agent_memory(args)
    with store:
        archived = mem.files.delete(args.path)
    emit(args, {"path": args.path, "archived_to": archived}, f"moved {args.path} to {archived}")
    return 0


def run_rename(args: argparse.Namespace) -> int:
    from memstrata.cli.common import agent_memory

    store, mem = agent_memory(args)
    with store:
        info = mem.files.rename(args.old, args.new)
    return _done(args, f"renamed {args.old} to", info)
