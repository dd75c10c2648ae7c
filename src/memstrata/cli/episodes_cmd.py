"""Task-episodic memory and promotion, and indexed source folders, on the
command line (rooms: `cli.rooms_cmd`; phase events: `cli.phases_cmd`).

    memstrata episodes create|write|read|list|verified|gate   task folders
    memstrata promote TEXT --cite FILE [--dry-run]            Checklist C, durable fact
    memstrata promote --scratch NAME --task SLUG              session -> task-episodic
    memstrata sources add|remove|list|sync                    project folders
"""

from __future__ import annotations

import argparse
from typing import Any

from memstrata.model import DURABLE_CATEGORIES


def register(sub: Any) -> None:
    p = sub.add_parser("episodes", help="task-episodic memory: one folder per task")
    esub = p.add_subparsers(dest="episodes_action", metavar="ACTION", required=True)
    c = esub.add_parser("create", help="create (or reuse) a task folder; prints its slug")
    c.add_argument("title", help="the task's title")
    c.set_defaults(func=run_create)
    w = esub.add_parser("write", help="write (or --append to) a file in a task folder")
    w.add_argument("task", help="task slug")
    w.add_argument("path", help="file inside the task folder, e.g. plan.md")
    w.add_argument("content", help="the text ('-' reads stdin)")
    w.add_argument("--append", action="store_true", help="append instead of replacing")
    w.set_defaults(func=run_write)
    r = esub.add_parser("read", help="print a file of a task folder")
    r.add_argument("task", help="task slug")
    r.add_argument("path", help="file inside the task folder")
    r.set_defaults(func=run_read)
    ls = esub.add_parser("list", help="the task folders, or the files of one")
    ls.add_argument("task", nargs="?", help="task slug")
    ls.set_defaults(func=run_list)
    v = esub.add_parser("verified", help="record (or list) verified items of an iteration")
    v.add_argument("task", help="task slug")
    v.add_argument("items", nargs="*", help="what was verified (none: list them)")
    v.add_argument("--iteration", type=int, help="iteration number")
    v.set_defaults(func=run_verified)
    g = esub.add_parser("gate", help="append a gate event to observability/<task-id>.ndjson")
    g.add_argument("task", help="task slug")
    g.add_argument("task_id", help="task id, e.g. TASK-7")
    g.add_argument("event", help='the event as a JSON object, e.g. \'{"verdict": "approved"}\'')
    g.set_defaults(func=run_gate)

    pr = sub.add_parser(
        "promote",
        help="promote a durable fact through Checklist C, or a "
        "session scratch file into a task folder",
    )
    pr.add_argument("text", nargs="?", help="the fact, 1-2 sentences")
    pr.add_argument(
        "--scratch",
        metavar="NAME",
        help="instead: append session/NAME to the task folder --task (session -> task-episodic)",
    )
    pr.add_argument("--task", help="with --scratch: the task slug")
    pr.add_argument("--dest", default="notes.md", help="with --scratch: the task file (notes.md)")
    pr.add_argument("--cite", action="append", default=[], help="a citation (repeatable)")
    pr.add_argument(
        "--category",
        choices=DURABLE_CATEGORIES,
        help="the durable-fact category (default: chosen by rule from the text)",
    )
    pr.add_argument("--key", help="the fact's key (default: made from the text)")
    pr.add_argument("--dry-run", action="store_true", help="only run Checklist C")
    pr.set_defaults(func=run_promote)

    so = sub.add_parser("sources", help="project folders indexed for search (scope sources)")
    ssub = so.add_subparsers(dest="sources_action", metavar="ACTION", required=True)
    sa = ssub.add_parser("add", help="index a project folder")
    sa.add_argument("folder", help="the folder")
    sa.set_defaults(func=run_sources_add)
    sr = ssub.add_parser("remove", help="stop indexing a project folder")
    sr.add_argument("folder", help="the folder")
    sr.set_defaults(func=run_sources_remove)
    sl = ssub.add_parser("list", help="the indexed folders")
    sl.set_defaults(func=run_sources_list)
    sy = ssub.add_parser("sync", help="catch the index up with the folders")
    sy.set_defaults(func=run_sources_sync)


def run_create(args: argparse.Namespace) -> int:
    from memstrata.cli.common import agent_memory
    from memstrata.cli.main import emit

    store, mem = agent_memory(args)
    with store:
        slug = mem.episodes.create(args.title)
    emit(args, {"task": slug}, slug)
    return 0


def run_write(args: argparse.Namespace) -> int:
    from memstrata.cli.common import agent_memory, text_arg
    from memstrata.cli.main import emit

    content = text_arg(args.content)
    store, mem = agent_memory(args)
    with store:
        eps = mem.episodes
        where = (
            eps.append(args.task, args.path, content)
            if args.append
            else eps.write(args.task, args.path, content)
        )
    emit(args, {"task": args.task, "path": args.path, "where": where}, f"wrote {where}")
    return 0


def run_read(args: argparse.Namespace) -> int:
    from memstrata.cli.common import agent_memory
    from memstrata.cli.main import emit

    store, mem = agent_memory(args)
    with store:
        text = mem.episodes.read(args.task, args.path)
    emit(args, {"task": args.task, "path": args.path, "content": text}, text.rstrip("\n"))
    return 0


def run_list(args: argparse.Namespace) -> int:
    from memstrata.cli.common import agent_memory
    from memstrata.cli.main import emit

    store, mem = agent_memory(args)
    with store:
        names = mem.episodes.files(args.task) if args.task else mem.episodes.list()
    emit(args, names, "\n".join(names))
    return 0


def run_verified(args: argparse.Namespace) -> int:
    from memstrata.cli.common import agent_memory
    from memstrata.cli.main import emit

    store, mem = agent_memory(args)
    with store:
        if args.items:
            mem.episodes.add_verified(args.task, args.items, iteration=args.iteration)
        got = mem.episodes.verified(args.task)
    emit(
        args,
        [{"iteration": i, "item": t} for i, t in got],
        "\n".join(f"[{i if i is not None else '-'}] {t}" for i, t in got),
    )
    return 0


def run_gate(args: argparse.Namespace) -> int:
    from memstrata.cli.common import agent_memory, json_object
    from memstrata.cli.main import emit

    event = json_object(args.event, "event") or {}
    store, mem = agent_memory(args)
    with store:
        rec = mem.episodes.log_gate_event(args.task, args.task_id, event)
    emit(args, rec, f"gate event recorded for {args.task_id}")
    return 0


def run_promote(args: argparse.Namespace) -> int:
    from memstrata.cli.common import open_store
    from memstrata.cli.main import emit
    from memstrata.errors import Refused
    from memstrata.lifecycle.promotion import checklist_c, promote_fact

    if args.scratch is not None:
        return _promote_scratch(args)
    if args.text is None:
        from memstrata.errors import MalformedInput

        raise MalformedInput("give the fact to promote, or --scratch NAME --task SLUG")
    with open_store(args) as store:
        agent = store.agent().name
        verdict = checklist_c(store, agent, args.text, args.cite, args.category)
        lines = [f"[{'x' if c.passed else ' '}] {c.name}: {c.why}" for c in verdict.checks]
        if not verdict.passed:
            raise Refused(verdict.failed.why if verdict.failed else "Checklist C failed")
        if args.dry_run:
            emit(args, verdict.to_dict(), "\n".join(lines))
            return 0
        fact = promote_fact(store, agent, verdict.text, verdict.category, args.cite, key=args.key)
    emit(
        args,
        {"checklist": verdict.to_dict(), "key": fact.key, "category": fact.category},
        "\n".join([*lines, f"promoted {fact.key} ({fact.category})"]),
    )
    return 0


def _promote_scratch(args: argparse.Namespace) -> int:
    from memstrata.cli.common import open_store
    from memstrata.cli.main import emit
    from memstrata.errors import MalformedInput
    from memstrata.lifecycle.promotion import promote_scratch

    if not args.task:
        raise MalformedInput("--scratch needs --task SLUG (the task folder it goes to)")
    with open_store(args) as store:
        where = promote_scratch(store, store.agent().name, args.scratch, args.task, args.dest)
    emit(args, {"task": args.task, "where": where}, f"session/{args.scratch} promoted to {where}")
    return 0


def _sources(args: argparse.Namespace) -> Any:
    from memstrata.cli.common import open_store

    return open_store(args, as_agent=False)


def run_sources_add(args: argparse.Namespace) -> int:
    from memstrata.cli.main import emit
    from memstrata.layers.sources import Sources

    with _sources(args) as store:
        got = Sources(store).add(args.folder)
    emit(args, got, f"indexed {got['path']} ({got['files']} files)")
    return 0


def run_sources_remove(args: argparse.Namespace) -> int:
    from memstrata.cli.main import emit
    from memstrata.layers.sources import Sources

    with _sources(args) as store:
        dropped = Sources(store).remove(args.folder)
    emit(args, {"dropped": dropped}, f"dropped {dropped} files from the index")
    return 0


def run_sources_list(args: argparse.Namespace) -> int:
    from memstrata.cli.common import table
    from memstrata.cli.main import emit
    from memstrata.layers.sources import Sources

    with _sources(args) as store:
        rows = Sources(store).list()
    emit(args, rows, table([(r["path"], r["files"]) for r in rows], ("path", "files")))
    return 0


def run_sources_sync(args: argparse.Namespace) -> int:
    from memstrata.cli.main import emit
    from memstrata.layers.sources import Sources

    with _sources(args) as store:
        report = Sources(store).sync()
    emit(
        args,
        {
            "scanned": report.scanned,
            "reparsed": len(report.reparsed),
            "removed": len(report.removed),
        },
        f"{report.scanned} files, {len(report.reparsed)} re-indexed, {len(report.removed)} dropped",
    )
    return 0
