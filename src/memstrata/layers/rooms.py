"""Room memory (layers 1 and 2 under the shared ledger): the channel log and the artifacts folder.

`rooms/<room>/channel.jsonl` captures every inter-agent message of a war-room
(task assignments, done reports, reviews, verdicts), appended durably; only the
room's agents (and admins) read or write it. `rooms/<room>/artifacts/` holds the
room's work product: every agent may read it ("Access: all agents via
filesystem"), only the room's agents write it.

`rooms/<room>/room.json` says where the room sits in the project's DAG (its
`upstream` rooms: predecessor context reads their ledger entries) and whether it
is closed. A closed room keeps its channel and artifacts, read-only: the channel
lives for "the duration of the room's execution", and the room's work is done.
"""

from __future__ import annotations

import builtins
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstrata import limits
from memstrata.errors import MalformedInput, NotFound, RoomClosed
from memstrata.files.jsondoc import Fields
from memstrata.files.jsonl import BadLine, decode, encode
from memstrata.files.paths import safe_join
from memstrata.index.docs import Doc, Parsed
from memstrata.index.reconcile import SourceSpec
from memstrata.layers.base import Acting, Layer, check_count, check_tags, check_text
from memstrata.layers.mdparse import is_text_file, markdown_spec
from memstrata.layers.walk import walk
from memstrata.model import check_name, check_plain, iso, now_ts, parse_ts
from memstrata.values import value_type

if TYPE_CHECKING:
    from memstrata.store.engine import Engine

MESSAGE_TYPES = ("task", "done", "review", "verdict", "message", "question", "answer")


def parse_channel(data: bytes, base: int, path: str, room: str) -> Parsed:
    dec = decode(data, base, path)
    out = Parsed(bad=dec.bad, consumed=dec.consumed, neighbour_radius=2)
    for off, rec in dec.records:
        try:
            ts = parse_ts(rec.get("ts"))
            body = str(rec["content"])
        except (KeyError, MalformedInput) as exc:
            out.bad.append(
                BadLine(path, off, f"not a channel message: {exc}", json.dumps(rec)[:200])
            )
            continue
        out.docs.append(
            Doc(
                uid=f"channel:{room}:{rec.get('id', off)}",
                layer="channel",
                ts=ts,
                title=f"{rec.get('from', '')} {rec.get('type', '')}".strip(),
                body=body,
                source=path,
                owner=rec.get("from"),
                room=room,
                kind=rec.get("type"),
                tags=tuple(rec.get("tags") or ()),
                thread=room,
                pos=off,
                offset=off,
                meta=rec,
            )
        )
    return out


@value_type(frozen=True)
class RoomInfo:
    name: str
    upstream: tuple[str, ...] = ()
    closed: str | None = None  # when it was closed
    closed_by: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "upstream": list(self.upstream),
            "closed": self.closed,
            "closed_by": self.closed_by,
        }


def room_info_from(data: bytes | None, path: str, name: str) -> RoomInfo:
    """room.json's bytes as a RoomInfo (None, an absent file: no upstream, open);
    MalformedInput if unusable."""
    if data is None:
        return RoomInfo(name)
    raw = _room_json(data, path)
    f = Fields(raw, path)
    return RoomInfo(
        name, f.texts("upstream"), f.text("closed") or None, f.text("closed_by") or None
    )


def _room_json(data: bytes, path: str) -> dict[str, Any]:
    try:
        raw = json.loads(data.decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise MalformedInput(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(raw, dict):
        raise MalformedInput(f'{path}: expected {{"upstream": [room, ...], "closed": ...}}')
    return raw


def read_room_info(engine: Engine, name: str) -> RoomInfo:
    """A room's room.json, read through the store's truth."""
    path = engine.layout.room_info(name)
    found = engine.read(path)
    return room_info_from(found.data if found is not None else None, str(path), name)


class Room(Layer):
    layer = "channel"

    def __init__(self, acting: Acting, name: str) -> None:
        super().__init__(acting, None, name)
        self.name = name
        self.channel_path: Path = acting.engine.layout.channel(name)
        self.artifacts_dir: Path = acting.engine.layout.artifacts(name)

    # -- the room itself: its place in the DAG, open or closed ----------------------
    @property
    def _info_path(self) -> Path:
        return self.engine.layout.room_info(self.name)

    def info(self) -> RoomInfo:
        """Upstream rooms and closed state (readable by every agent but skills)."""
        self.gate.check("read", "artifact", None, self.name)
        return read_room_info(self.engine, self.name)

    def upstream(self) -> tuple[str, ...]:
        return self.info().upstream

    def ancestors(self) -> builtins.list[str]:
        """Every room upstream of this one in the DAG, nearest first (breadth first)."""
        seen: builtins.list[str] = []
        frontier = builtins.list(self.upstream())
        while frontier:
            room = frontier.pop(0)
            if room in seen or room == self.name:
                continue
            seen.append(room)
            frontier.extend(read_room_info(self.engine, room).upstream)
        return seen

    def set_upstream(self, rooms: builtins.list[str] | tuple[str, ...]) -> RoomInfo:
        """Declare the rooms this one follows in the DAG (replacing any earlier list).

        Only the room's agents and admins may; a cycle is refused.
        """
        self._check_room_write()
        ups = tuple(
            dict.fromkeys(
                check_name(r, "room")
                for r in check_count(rooms, "upstream rooms", limits.TAGS_PER_ENTRY)
            )
        )
        if self.name in ups:
            raise MalformedInput(f"room {self.name} cannot be upstream of itself")
        for room in ups:
            if self.name in Room(self.acting, room).ancestors():
                raise MalformedInput(
                    f"{room} is downstream of {self.name}: declaring it upstream "
                    "would make a cycle (rooms form a DAG)"
                )
        return self._edit_info(upstream=builtins.list(ups))

    def close(self) -> RoomInfo:
        """Close the room: its channel and artifacts stay, read-only (idempotent)."""
        self._check_room_write()
        info = read_room_info(self.engine, self.name)
        if info.closed:
            return info
        return self._edit_info(closed=iso(now_ts()), closed_by=self.gate.principal.agent)

    def _check_room_write(self) -> None:
        self.gate.check("write", "channel", None, self.name)

    def _edit_info(self, **changes: Any) -> RoomInfo:
        spec = SourceSpec(self._info_path, "whole", lambda d, b: Parsed(consumed=len(d)))
        with self.engine.editing(spec) as edit:
            where = str(self._info_path)
            info = room_info_from(edit.data if edit.exists else None, where, self.name)
            data = {
                "upstream": builtins.list(info.upstream),
                "closed": info.closed,
                "closed_by": info.closed_by,
                **changes,
            }
            if edit.exists:
                data = {**_room_json(edit.data, where), **data}  # unknown keys are kept
            edit(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        self._write_event(self._info_path, 0, "room")
        return read_room_info(self.engine, self.name)

    def check_open(self) -> None:
        """Raise RoomClosed if the room is closed (channel and artifacts are read-only).

        Readable as `info` is: by every agent but skills."""
        info = self.info()
        if info.closed:
            raise RoomClosed(
                f"room {self.name} was closed at {info.closed}: its channel and "
                "artifacts are kept read-only"
            )

    def _channel_spec(self) -> SourceSpec:
        p, room = str(self.channel_path), self.name
        return SourceSpec(self.channel_path, "append", lambda d, b: parse_channel(d, b, p, room))

    def _artifact_spec(self, path: Path) -> SourceSpec:
        return markdown_spec(self.engine, path, "artifact", room=self.name)

    def _sources(self) -> list[SourceSpec]:
        specs = [self._channel_spec()] if self._stat(self.channel_path) is not None else []
        specs += [
            self._artifact_spec(p) for p in walk(self.engine, self.artifacts_dir) if is_text_file(p)
        ]
        return specs

    def _source_for(self, path: Path, rest: tuple[str, ...]) -> SourceSpec | None:
        """The source `path` is, by its parts `rest` below the room's folder (as `sources`)."""
        if rest == ("channel.jsonl",):
            return self._channel_spec()
        if rest[0] == "artifacts" and len(rest) > 1 and is_text_file(path):
            return self._artifact_spec(path)
        return None

    # -- channel -------------------------------------------------------------
    def post(
        self,
        content: str,
        *,
        type: str = "message",
        to: str | None = None,
        ref: str | None = None,
        tags: list[str] | None = None,
    ) -> dict[str, Any]:
        """Append a message to the room's channel; durable once returned."""
        self._check("write")
        check_text(content, "content", limits.CHANNEL_MESSAGE_BYTES)
        for label, value in (("to", to), ("ref", ref)):
            if value is not None:
                check_plain(value, label, limits.LABEL_CHARS)
        self.check_open()
        content = self._screen(content, "channel message")
        if type not in MESSAGE_TYPES:
            raise MalformedInput(f"unknown message type {type!r}; use {', '.join(MESSAGE_TYPES)}")
        rec = {
            "id": "msg-" + os.urandom(4).hex(),
            "ts": iso(now_ts()),
            "room": self.name,
            "from": self.gate.principal.agent,
            "to": to,
            "type": type,
            "ref": ref,
            "tags": list(check_tags(tags)),
            "content": content,
        }
        data = encode(rec)
        self.engine.append(self._channel_spec(), data)
        self._write_event(self.channel_path, len(data))
        return rec

    def messages(self, last_n: int | None = None) -> list[dict[str, Any]]:
        self._check("read")
        dec = self._records(self.channel_path)
        self._read_event(self.channel_path, dec.consumed)
        recs = [r for _, r in dec.records]
        return recs[-last_n:] if last_n else recs

    # -- artifacts -----------------------------------------------------------
    def write_artifact(self, rel: str, content: str) -> str:
        self.gate.check("write", "artifact", None, self.name)
        path = safe_join(self.artifacts_dir, rel)
        check_text(content, "artifact", limits.ARTIFACT_BYTES, allow_empty=True)
        self.check_open()
        content = self._screen(content, "artifact")
        self.engine.rewrite(self._artifact_spec(path), content)
        self._write_event(path, len(content), "artifact")
        return path.relative_to(self.artifacts_dir.resolve()).as_posix()

    def read_artifact(self, rel: str) -> str:
        self.gate.check("read", "artifact", None, self.name)
        path = safe_join(self.artifacts_dir, rel)
        found = self.engine.read(path)
        if found is None:
            raise NotFound(f"no artifact {rel!r} in room {self.name}")
        text = found.text
        self._read_event(path, len(text), "artifact")
        return text

    def delete_artifact(self, rel: str) -> str:
        """Move an artifact to the room's archive; returns its archive path.

        Soft, as `MemoryFiles.delete` is: nothing is destroyed, the file goes to
        `rooms/<room>/archive/deleted/<ms>/<rel>` (kept on disk, out of search).
        Only the room's agents (and admins) may, and not once the room is closed.
        """
        self.gate.check("write", "artifact", None, self.name)
        path = safe_join(self.artifacts_dir, rel)
        self.check_open()
        relp = path.relative_to(self.artifacts_dir.resolve()).as_posix()
        where = self.engine.rel(self.artifacts_dir / relp)
        entry = self.engine.stat(where)
        if entry is None or entry.is_dir:
            raise NotFound(f"no artifact {rel!r} in room {self.name}")
        deleted = self.engine.layout.room(self.name) / "archive" / "deleted"
        stamp = int(now_ts() * 1000)
        while self.engine.stat(deleted / str(stamp) / relp) is not None:
            stamp += 1
        dest = self.engine.rel(deleted / str(stamp) / relp)
        self.engine.move(where, dest)
        self.engine.index_file(self._artifact_spec(self.artifacts_dir / relp))
        self._write_event(path, -entry.size, "artifact")
        return dest

    def artifacts(self) -> list[str]:
        self.gate.check("read", "artifact", None, self.name)
        return [
            p.relative_to(self.artifacts_dir).as_posix()
            for p in walk(self.engine, self.artifacts_dir)
        ]
