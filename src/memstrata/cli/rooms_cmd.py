"""`memstrata rooms ...`: the room layers (channel and artifacts), and the room's life.

    memstrata --room R rooms post TEXT [--type done] [--to A] [--ref X] [--tag T]   channel
    memstrata --room R rooms messages [ROOM] [--last N]                            channel
    memstrata --room R rooms artifact write PATH CONTENT                         artifacts
    memstrata rooms artifact read PATH [--of ROOM] | list [--of ROOM]            artifacts
    memstrata rooms close [ROOM] | upstream [ROOM] [--set R ...]                 end, DAG

The channel is readable and writable only in its room; artifacts are readable by
every agent ("all agents via filesystem") and written only in their room; a
closed room keeps both, read-only. The library (`layers.rooms.Room`) decides.
"""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any) -> None:
    from memstrata.layers.rooms import MESSAGE_TYPES

    ro = sub.add_parser(
        "rooms", help="a room's channel and artifacts, its end and its upstream rooms"
    )
    rsub = ro.add_subparsers(dest="rooms_action", metavar="ACTION", required=True)
    po = rsub.add_parser("post", help="append a message to --room's channel")
    po.add_argument("content", help="the message ('-' reads stdin)")
    po.add_argument("--type", default="message", choices=MESSAGE_TYPES, help="message type")
    po.add_argument("--to", help="the agent it is for")
    po.add_argument("--ref", help="a task, file or entry it refers to")
    po.add_argument("--tag", dest="tags", action="append", help="a tag (repeatable)")
    po.set_defaults(func=run_post)
    ms = rsub.add_parser("messages", help="a room's channel, oldest first (only in the room)")
    ms.add_argument("target", nargs="?", metavar="ROOM", help="the room (default: --room)")
    ms.add_argument("--last", type=int, help="only the last N messages")
    ms.set_defaults(func=run_messages)
    ar = rsub.add_parser("artifact", help="a room's artifacts: write (in the room), read, list")
    asub = ar.add_subparsers(dest="artifact_action", metavar="ACTION", required=True)
    aw = asub.add_parser("write", help="write a file in --room's artifacts/")
    aw.add_argument("path", help="file inside artifacts/, e.g. src/auth.py")
    aw.add_argument("content", help="the file's content ('-' reads stdin)")
    aw.set_defaults(func=run_artifact_write)
    ad = asub.add_parser("read", help="print an artifact (any room's)")
    ad.add_argument("path", help="file inside artifacts/")
    ad.add_argument("--of", dest="target", metavar="ROOM", help="the room (default: --room)")
    ad.set_defaults(func=run_artifact_read)
    al = asub.add_parser("list", help="a room's artifacts")
    al.add_argument("--of", dest="target", metavar="ROOM", help="the room (default: --room)")
    al.set_defaults(func=run_artifact_list)
    rc = rsub.add_parser("close", help="close a room: channel and artifacts kept read-only")
    rc.add_argument("target", nargs="?", metavar="ROOM", help="the room (default: --room)")
    rc.set_defaults(func=run_room_close)
    ru = rsub.add_parser("upstream", help="show or set the rooms a room follows in the DAG")
    ru.add_argument("target", nargs="?", metavar="ROOM", help="the room (default: --room)")
    ru.add_argument("--set", dest="upstream", action="append", help="an upstream room (repeatable)")
    ru.set_defaults(func=run_room_upstream)


def _open(args: argparse.Namespace) -> Any:
    from memstrata.cli.common import open_store

    return open_store(args, as_agent=bool(args.agent))


def run_post(args: argparse.Namespace) -> int:
    from memstrata.cli.common import text_arg
    from memstrata.cli.main import emit

    with _open(args) as store:
        room = store.room()
        rec = room.post(
            text_arg(args.content), type=args.type, to=args.to, ref=args.ref, tags=args.tags
        )
    emit(args, rec, f"posted {rec['id']} to {room.name}")
    return 0


def run_messages(args: argparse.Namespace) -> int:
    from memstrata.cli.common import table
    from memstrata.cli.main import emit

    with _open(args) as store:
        msgs = store.room(args.target).messages(args.last)
    emit(
        args,
        msgs,
        table(
            [
                (m.get("ts", "")[:19], m.get("from") or "-", m.get("type"), m.get("content"))
                for m in msgs
            ],
            ("ts", "from", "type", "content"),
        ),
    )
    return 0


def run_artifact_write(args: argparse.Namespace) -> int:
    from memstrata.cli.common import text_arg
    from memstrata.cli.main import emit

    with _open(args) as store:
        room = store.room()
        rel = room.write_artifact(args.path, text_arg(args.content))
    emit(args, {"room": room.name, "path": rel}, f"wrote {rel} in {room.name}/artifacts")
    return 0


def run_artifact_read(args: argparse.Namespace) -> int:
    from memstrata.cli.main import emit

    with _open(args) as store:
        room = store.room(args.target)
        text = room.read_artifact(args.path)
    emit(args, {"room": room.name, "path": args.path, "content": text}, text.rstrip("\n"))
    return 0


def run_artifact_list(args: argparse.Namespace) -> int:
    from memstrata.cli.main import emit

    with _open(args) as store:
        room = store.room(args.target)
        paths = room.artifacts()
    emit(args, {"room": room.name, "artifacts": paths}, "\n".join(paths) or "(no artifacts)")
    return 0


def run_room_close(args: argparse.Namespace) -> int:
    from memstrata.cli.main import emit

    with _open(args) as store:
        info = store.room(args.target).close()
    emit(args, info.to_dict(), f"room {info.name} closed at {info.closed}")
    return 0


def run_room_upstream(args: argparse.Namespace) -> int:
    from memstrata.cli.main import emit

    with _open(args) as store:
        room = store.room(args.target)
        info = room.set_upstream(args.upstream) if args.upstream else room.info()
        ancestors = room.ancestors()
    emit(
        args,
        {**info.to_dict(), "ancestors": ancestors},
        f"{info.name} <- {', '.join(info.upstream) or '(no upstream room)'}",
    )
    return 0
