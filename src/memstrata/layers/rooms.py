"""Room memory (seed 000 layers 1 and 2): the channel log and the artifacts folder.

`rooms/<room>/channel.jsonl` captures every inter-agent message of a war-room
(task assignments, done reports, reviews, verdicts), appended durably;
`rooms/<room>/artifacts/` holds the room's work product. Only agents of the
room (and admins) may read or write them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstrata import limits
from memstrata.errors import MalformedInput, NotFound
from memstrata.files.jsonl import BadLine, decode, encode
from memstrata.files.paths import safe_join
from memstrata.index.docs import Doc, Parsed
from memstrata.index.reconcile import SourceSpec
from memstrata.layers.base import Layer, check_tags, check_text
from memstrata.layers.catalog import walk
from memstrata.layers.mdparse import is_text_file, markdown_spec
from memstrata.model import check_plain, iso, now_ts, parse_ts

if TYPE_CHECKING:
    from memstrata.store import Store

MESSAGE_TYPES = ("task", "done", "review", "verdict", "message", "question", "answer")


def parse_channel(data: bytes, base: int, path: str, room: str) -> Parsed:
    dec = decode(data, base, path)
    out = Parsed(bad=dec.bad, consumed=dec.consumed, neighbour_radius=2)
    for off, rec in dec.records:
        try:
            ts = parse_ts(rec.get("ts"))
            body = str(rec["content"])
        except (KeyError, MalformedInput) as exc:
            out.bad.append(BadLine(path, off, f"not a channel message: {exc}", json.dumps(rec)[:200]))
            continue
        out.docs.append(
            Doc(uid=f"channel:{room}:{rec.get('id', off)}", layer="channel", ts=ts,
                title=f"{rec.get('from', '')} {rec.get('type', '')}".strip(), body=body,
                source=path, owner=rec.get("from"), room=room, kind=rec.get("type"),
                tags=tuple(rec.get("tags") or ()), thread=room, pos=off, offset=off, meta=rec)
        )
    return out


class Room(Layer):
    layer = "channel"

    def __init__(self, store: Store, name: str) -> None:
        super().__init__(store, None, name)
        self.name = name
        self.channel_path: Path = store.layout.channel(name)
        self.artifacts_dir: Path = store.layout.artifacts(name)

    def channel_spec(self) -> SourceSpec:
        p, room = str(self.channel_path), self.name
        return SourceSpec(self.channel_path, "append", lambda d, b: parse_channel(d, b, p, room))

    def artifact_spec(self, path: Path) -> SourceSpec:
        return markdown_spec(self.store, path, "artifact", room=self.name)

    def sources(self) -> list[SourceSpec]:
        specs = [self.channel_spec()] if self._stat(self.channel_path) is not None else []
        specs += [self.artifact_spec(p) for p in walk(self.store, self.artifacts_dir)
                  if is_text_file(p)]
        return specs

    def source_for(self, path: Path, rest: tuple[str, ...]) -> SourceSpec | None:
        """The source `path` is, by its parts `rest` below the room's folder (as `sources`)."""
        if rest == ("channel.jsonl",):
            return self.channel_spec()
        if rest[0] == "artifacts" and len(rest) > 1 and is_text_file(path):
            return self.artifact_spec(path)
        return None

    # -- channel -------------------------------------------------------------
    def post(self, content: str, *, type: str = "message", to: str | None = None,
             ref: str | None = None, tags: list[str] | None = None) -> dict[str, Any]:
        """Append a message to the room's channel; durable once returned."""
        self._check("write")
        check_text(content, "content", limits.CHANNEL_MESSAGE_BYTES)
        for label, value in (("to", to), ("ref", ref)):
            if value is not None:
                check_plain(value, label, limits.LABEL_CHARS)
        content = self._screen(content, "channel message")
        if type not in MESSAGE_TYPES:
            raise MalformedInput(f"unknown message type {type!r}; use {', '.join(MESSAGE_TYPES)}")
        rec = {"id": "msg-" + os.urandom(4).hex(), "ts": iso(now_ts()), "room": self.name,
               "from": self.store.principal.agent, "to": to, "type": type, "ref": ref,
               "tags": list(check_tags(tags)), "content": content}
        data = encode(rec)
        self.store.append(self.channel_spec(), data)
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
        self.store.gate.check("write", "artifact", None, self.name)
        path = safe_join(self.artifacts_dir, rel)
        check_text(content, "artifact", 4 * 1024 * 1024, allow_empty=True)
        content = self._screen(content, "artifact")
        self.store.rewrite(self.artifact_spec(path), content)
        self._write_event(path, len(content), "artifact")
        return path.relative_to(self.artifacts_dir.resolve()).as_posix()

    def read_artifact(self, rel: str) -> str:
        self.store.gate.check("read", "artifact", None, self.name)
        path = safe_join(self.artifacts_dir, rel)
        found = self.store.read(path)
        if found is None:
            raise NotFound(f"no artifact {rel!r} in room {self.name}")
        text = found.text
        self._read_event(path, len(text), "artifact")
        return text

    def artifacts(self) -> list[str]:
        self.store.gate.check("read", "artifact", None, self.name)
        return [p.relative_to(self.artifacts_dir).as_posix()
                for p in walk(self.store, self.artifacts_dir)]
