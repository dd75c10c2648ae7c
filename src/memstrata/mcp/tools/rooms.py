"""Rooms: the channel (layer 1), the artifacts (layer 2), closing a room and its
place in the DAG of rooms (the predecessor context comes from upstream rooms).

Who may post, write or close is the layer's and the gate's (`layers.rooms`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memstrata.errors import MalformedInput
from memstrata.layers.rooms import MESSAGE_TYPES
from memstrata.mcp import shapes
from memstrata.mcp.shapes import Reply
from memstrata.mcp.tools.spec import Caller, ToolSpec, p, req

if TYPE_CHECKING:
    from memstrata.config import Config


def _room_fields(info: Any) -> dict[str, Any]:  # an open room: no "closed", not null
    return {k: v for k, v in info.to_dict().items() if v is not None}


def room_channel(
    caller: Caller,
    action: str,
    room: str | None,
    content: str | None,
    type: str,
    to: str | None,
    ref: str | None,
    tags: list[str] | None,
    last_n: int | None,
) -> Reply:
    r = caller.store.room(room)
    if action == "post":
        if content is None:
            raise MalformedInput("room_channel post needs content")
        rec = r.post(content, type=type, to=to, ref=ref, tags=tags)
        return Reply(f"posted {rec['id']} to {r.name}", {"room": r.name, "messages": [rec]})
    msgs = r.messages(last_n)
    text = "\n".join(
        f"[{m.get('ts', '')[:16]}] {m.get('from') or '-'} ({m.get('type')}): {m.get('content')}"
        for m in msgs
    )
    return Reply(text or "(no messages)", {"room": r.name, "messages": msgs})


def room_artifact(
    caller: Caller, action: str, room: str | None, path: str | None, content: str | None
) -> Reply:

    r = caller.store.room(room)
    if action == "list":
        paths = r.artifacts()
        return Reply("\n".join(paths) or "(no artifacts)", {"room": r.name, "artifacts": paths})
    if not path:
        raise MalformedInput(f"room_artifact {action} needs a path")
    if action == "read":
        text = r.read_artifact(path)
        return Reply(text, {"room": r.name, "path": path, "content": text})
    if content is None:
        raise MalformedInput("room_artifact write needs content")
    rel = r.write_artifact(path, content)
    return Reply(f"wrote {rel} in {r.name}/artifacts", {"room": r.name, "path": rel})


def room_close(caller: Caller, room: str | None) -> Reply:
    info = caller.store.room(room).close()
    return Reply(f"room {info.name} closed at {info.closed}", _room_fields(info))


def room_upstream(caller: Caller, room: str | None, upstream: list[str] | None) -> Reply:
    r = caller.store.room(room)
    info = r.set_upstream(upstream) if upstream is not None else r.info()
    return Reply(
        f"room {info.name} follows {', '.join(info.upstream) or 'no room'}",
        {**_room_fields(info), "ancestors": r.ancestors()},
    )


def tools(config: Config) -> list[ToolSpec]:
    """The declarations, in catalogue order."""
    S, obj = shapes.S, shapes._obj
    room_out = obj({"name": S, "upstream": shapes.STRS}, ["name", "upstream"])
    room = p("room", "string", "the room (default: yours)")
    return [
        ToolSpec(
            "room_channel",
            room_channel,
            "Your room's channel (room layer 1): post a message, or read the messages "
            "(only agents in the room may).",
            (
                req("action", "string", "post or read", enum=("post", "read")),
                room,
                p("content", "string", "post: the message"),
                p("type", "string", "post: message type", "message", enum=MESSAGE_TYPES),
                p("to", "string", "post: the agent it is for"),
                p("ref", "string", "post: a task, file or entry it refers to"),
                p("tags", "array", "post: tags", items="string"),
                p("last_n", "integer", "read: only the last N", minimum=1),
            ),
            obj(
                {"room": S, "messages": {"type": "array", "items": {"type": "object"}}},
                ["room", "messages"],
            ),
            read_only=False,
            group="rooms",
        ),
        ToolSpec(
            "room_artifact",
            room_artifact,
            "A room's artifacts (room layer 2): write one in your room, read or list any room's.",
            (
                req("action", "string", "write, read or list", enum=("write", "read", "list")),
                room,
                p("path", "string", "write/read: file inside artifacts/"),
                p("content", "string", "write: the file's content"),
            ),
            obj({"room": S, "path": S, "content": S, "artifacts": shapes.STRS}, ["room"]),
            read_only=False,
            destructive=True,
            group="rooms",
        ),
        ToolSpec(
            "room_close",
            room_close,
            "Close a room: its channel and artifacts stay readable, nothing new is "
            "written to them or published from it.",
            (room,),
            room_out,
            read_only=False,
            idempotent=True,
            group="rooms",
        ),
        ToolSpec(
            "room_upstream",
            room_upstream,
            "Read or declare the rooms a room follows in the DAG (predecessor context "
            "comes from them); a cycle is refused.",
            (room, p("upstream", "array", "the upstream rooms (omit to read)", items="string")),
            room_out,
            read_only=False,
            idempotent=True,
            group="rooms",
        ),
    ]
