"""Episodic memory (seed 004): one JSONL transcript per session plus a session index.

`sessions/<id>.jsonl` holds messages (user, assistant, tool_call, tool_result,
system, summary) with ids and timestamps, appended durably; `sessions.json` is a
small index (id, title, created, ended, archived) rewritten atomically under its
lock. Message counts and last activity come from the derived index, so appending
a message never rewrites the index file.
"""

from __future__ import annotations

import builtins
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstrata.errors import AlreadyExists, MalformedInput, NotFound
from memstrata.files.jsonl import BadLine, decode, encode, read_records
from memstrata.index.docs import Doc, Parsed
from memstrata.index.reconcile import SourceSpec
from memstrata.layers.base import Layer, check_text
from memstrata.model import SESSION_ROLES, SessionMessage, check_name, iso, now_ts, parse_ts

if TYPE_CHECKING:
    from memstrata.store import Store

MAX_MESSAGE_BYTES = 256 * 1024
NEIGHBOUR_RADIUS = 2  # each message is also found by the words of the 2 around it


@dataclass(frozen=True)
class SessionInfo:
    id: str
    title: str | None
    created: str
    ended: str | None = None
    archived: bool = False
    messages: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "created": self.created,
                "ended": self.ended, "archived": self.archived, "messages": self.messages}


def to_message(rec: dict[str, Any]) -> SessionMessage:
    return SessionMessage(
        id=str(rec.get("id", "")), role=str(rec.get("role", "")),
        content=rec["content"] if isinstance(rec.get("content"), str) else json.dumps(rec.get("content")),
        timestamp=str(rec.get("timestamp", "")), name=rec.get("name"), input=rec.get("input"),
        speaker=rec.get("speaker"),
    )


def parse_session(data: bytes, base: int, path: str, owner: str, sid: str) -> Parsed:
    dec = decode(data, base, path)
    out = Parsed(bad=dec.bad, consumed=dec.consumed, neighbour_radius=NEIGHBOUR_RADIUS)
    for off, rec in dec.records:
        try:
            msg = to_message(rec)
            ts = parse_ts(msg.timestamp)
        except (KeyError, MalformedInput) as exc:
            out.bad.append(BadLine(path, off, f"not a session message: {exc}", json.dumps(rec)[:200]))
            continue
        body = msg.content
        if msg.role == "tool_call":
            body = f"{msg.name or ''} {json.dumps(msg.input, ensure_ascii=False) if msg.input is not None else ''}".strip()
        out.docs.append(
            Doc(uid=f"session:{owner}:{sid}:{off}", layer="session", ts=ts,
                title=msg.speaker or msg.role, body=body, source=path, owner=owner,
                kind=msg.role, thread=sid, pos=off, line=off, meta=rec)
        )
    return out


class Sessions(Layer):
    layer = "session"

    def __init__(self, store: Store, owner: str) -> None:
        super().__init__(store, owner)
        self.dir: Path = store.layout.sessions_dir(owner)
        self.index_path: Path = store.layout.session_index(owner)

    def spec(self, sid: str) -> SourceSpec:
        path = self.store.layout.session(self.owner or "", sid)
        owner, p = self.owner or "", str(path)
        return SourceSpec(path, "append", lambda d, b: parse_session(d, b, p, owner, sid))

    def index_spec(self) -> SourceSpec:
        return SourceSpec(self.index_path, "whole", lambda d, b: Parsed(consumed=len(d)))

    # -- session index -------------------------------------------------------
    def _load_index(self) -> list[dict[str, Any]]:
        try:
            data = json.loads(self.index_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except json.JSONDecodeError as exc:
            raise MalformedInput(f"{self.index_path}: invalid JSON: {exc.msg}") from None
        sessions = data.get("sessions") if isinstance(data, dict) else None
        return [s for s in sessions or [] if isinstance(s, dict) and "id" in s]

    def _update_index(self, sid: str, **fields: Any) -> None:
        with self.store.editing(self.index_spec()) as commit:
            rows = self._load_index()
            for row in rows:
                if row["id"] == sid:
                    row.update(fields)
                    break
            else:
                rows.append({"id": sid, "title": None, "created": iso(now_ts()), "ended": None,
                             "archived": False, **fields})
            commit(json.dumps({"sessions": rows}, indent=2, ensure_ascii=False) + "\n")

    def start(self, session_id: str | None = None, *, title: str | None = None,
              created: str | float | None = None) -> SessionInfo:
        """Register a new session (created implicitly by the first `append` too)."""
        self._check("write")
        sid = check_name(session_id, "session id") if session_id else _new_id()
        if any(r["id"] == sid for r in self._load_index()):
            raise AlreadyExists(f"session {sid!r} already exists")
        when = iso(now_ts() if created is None else parse_ts(created))
        self._update_index(sid, title=title, created=when)
        return SessionInfo(sid, title, when)

    def end(self, session_id: str) -> None:
        self._check("write")
        self._require(session_id)
        self._update_index(session_id, ended=iso(now_ts()))

    def _require(self, sid: str) -> None:
        if not any(r["id"] == sid for r in self._load_index()) and not self.spec(sid).path.exists():
            raise NotFound(f"no session {sid!r}")

    def list(self, *, include_archived: bool = False) -> list[SessionInfo]:
        self._check("read")
        counts: dict[str, int] = {}
        with self.store.db.read() as conn:
            for thread, n in conn.execute(
                "SELECT thread, count(*) FROM docs WHERE layer='session' AND owner=? GROUP BY thread",
                (self.owner,),
            ):
                counts[thread] = n
        out = [
            SessionInfo(r["id"], r.get("title"), r.get("created", ""), r.get("ended"),
                        bool(r.get("archived")), counts.get(r["id"], 0))
            for r in self._load_index()
        ]
        return [s for s in out if include_archived or not s.archived]

    # -- transcripts ---------------------------------------------------------
    def append(self, session_id: str, role: str, content: str, **kw: Any) -> SessionMessage:
        """Durably append one message (seed 004 PERSIST stage)."""
        return self.append_many(session_id, [{"role": role, "content": content, **kw}])[0]

    def append_many(self, session_id: str, messages: Iterable[dict[str, Any]]) -> builtins.list[SessionMessage]:
        """Append several messages in one durable write (one fsync)."""
        self._check("write")
        sid = check_name(session_id, "session id")
        recs = [_message_record(m) for m in messages]
        if not recs:
            return []
        spec = self.spec(sid)
        if not spec.path.exists() and not any(r["id"] == sid for r in self._load_index()):
            self._update_index(sid, created=recs[0]["timestamp"])
        data = b"".join(encode(r) for r in recs)
        self.store.append(spec, data)
        self._write_event(spec.path, len(data))
        return [to_message(r) for r in recs]

    def messages(self, session_id: str) -> builtins.list[SessionMessage]:
        self._check("read")
        self._require(session_id)
        path = self.spec(session_id).path
        dec = read_records(path)
        self._read_event(path, dec.consumed)
        return [to_message(r) for _, r in dec.records if "role" in r]

    def ids(self) -> builtins.list[str]:
        if not self.dir.is_dir():
            return []
        return sorted(p.stem for p in self.dir.glob("*.jsonl"))


def _new_id() -> str:
    return "s-" + iso(now_ts())[:19].replace(":", "").replace("-", "") + "-" + os.urandom(3).hex()


def _message_record(m: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(m, dict):
        raise MalformedInput("each message must be an object")
    role = m.get("role")
    if role not in SESSION_ROLES:
        raise MalformedInput(f"unknown role {role!r}; use {', '.join(SESSION_ROLES)}")
    content = m.get("content", "")
    if not isinstance(content, str):
        try:
            content = json.dumps(content, ensure_ascii=False)
        except (TypeError, ValueError):
            raise MalformedInput("content must be text or JSON") from None
    check_text(content, "message content", MAX_MESSAGE_BYTES, allow_empty=role != "user")
    ts = m.get("timestamp")
    rec: dict[str, Any] = {"id": m.get("id") or "msg_" + os.urandom(4).hex(), "role": role}
    for opt in ("name", "input", "speaker"):
        if m.get(opt) is not None:
            rec[opt] = m[opt]
    rec["content"] = content
    rec["timestamp"] = iso(now_ts() if ts is None else parse_ts(ts))
    try:
        json.dumps(rec)
    except (TypeError, ValueError) as exc:
        raise MalformedInput(f"message is not JSON-serialisable: {exc}") from None
    return rec
