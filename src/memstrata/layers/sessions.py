"""Episodic memory: one JSONL transcript per session plus a session index.

`sessions/<id>.jsonl` holds messages (user, assistant, tool_call, tool_result,
system, summary) with ids and timestamps, appended durably; `sessions.json` is a
small index (id, title, created, ended, archived) rewritten atomically under its
lock, keeping what it does not understand; if it is damaged it is rebuilt from
the transcripts, so it never blocks a new session. Message counts and last activity come from the derived index, so appending
a message never rewrites the index file.
"""

from __future__ import annotations

import builtins
import contextlib
import json
import os
from collections.abc import Callable, Iterable, Sized
from pathlib import Path
from typing import Any

from memstrata import limits
from memstrata.errors import AlreadyExists, EntryTooLarge, MalformedInput, NotFound
from memstrata.files.jsondoc import Fields, RecordList
from memstrata.files.jsonl import BadLine, decode, encode
from memstrata.index import overview, queries
from memstrata.index.docs import Doc, Parsed
from memstrata.index.reconcile import SourceSpec
from memstrata.layers.base import Acting, Layer, check_json, check_text
from memstrata.model import (
    SESSION_ROLES,
    SessionMessage,
    check_name,
    check_plain,
    iso,
    now_ts,
    parse_ts,
)
from memstrata.store.signals import SessionGrew
from memstrata.values import value_type

MAX_MESSAGE_BYTES = limits.SESSION_MESSAGE_BYTES
NEIGHBOUR_RADIUS = 2  # each message is also found by the words of the 2 around it
SUMMARY_CHARS = 600  # of a first prompt or last answer read for a session's summary
SAID_CHARS = 160  # ... and kept, as one line


@value_type(frozen=True)
class SessionInfo:
    """A session as `sessions.json` lists it, with what its transcript says (`Transcript`)."""

    id: str
    title: str | None
    created: str
    ended: str | None = None
    archived: bool = False
    messages: int = 0
    first_prompt: str | None = None  # the user's first message: what the session was for
    last_active: str | None = None  # its last message's time (a session is rarely "ended")
    tool_calls: int = 0

    @property
    def heading(self) -> str:
        """What to call it: its title, else its first prompt, else its id."""
        return self.title or self.first_prompt or self.id

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "created": self.created,
            "ended": self.ended,
            "archived": self.archived,
            "messages": self.messages,
            "first_prompt": self.first_prompt,
            "last_active": self.last_active,
            "tool_calls": self.tool_calls,
        }


@value_type(frozen=True)
class Transcript:
    """What one session's transcript holds, from the index: its first prompt, last answer,
    span and counts (a tool call and its result count as one call)."""

    id: str
    messages: int = 0
    tool_calls: int = 0
    start: float | None = None
    end: float | None = None
    first_prompt: str | None = None
    last_answer: str | None = None


def to_message(rec: dict[str, Any]) -> SessionMessage:
    return SessionMessage(
        id=str(rec.get("id", "")),
        role=str(rec.get("role", "")),
        content=rec["content"]
        if isinstance(rec.get("content"), str)
        else json.dumps(rec.get("content")),
        timestamp=str(rec.get("timestamp", "")),
        name=rec.get("name"),
        input=rec.get("input"),
        speaker=rec.get("speaker"),
        is_error=rec.get("is_error") is True,
    )


def parse_session(data: bytes, base: int, path: str, owner: str, sid: str) -> Parsed:
    dec = decode(data, base, path)
    out = Parsed(bad=dec.bad, consumed=dec.consumed, neighbour_radius=NEIGHBOUR_RADIUS)
    for off, rec in dec.records:
        try:
            msg = to_message(rec)
            ts = parse_ts(msg.timestamp)
        except (KeyError, MalformedInput) as exc:
            out.bad.append(
                BadLine(path, off, f"not a session message: {exc}", json.dumps(rec)[:200])
            )
            continue
        body = msg.content
        if msg.is_error and not body.lower().startswith("error"):
            body = f"error: {body}"  # as the Stop hook captures a failed result
        if msg.role == "tool_call":
            body = f"{msg.name or ''} {json.dumps(msg.input, ensure_ascii=False) if msg.input is not None else ''}".strip()
        out.docs.append(
            Doc(
                uid=f"session:{owner}:{sid}:{off}",
                layer="session",
                ts=ts,
                title=msg.speaker or msg.role,
                body=body,
                source=path,
                owner=owner,
                kind=msg.role,
                thread=sid,
                pos=off,
                offset=off,
                meta=rec,
            )
        )
    return out


class Sessions(Layer):
    layer = "session"

    def __init__(self, acting: Acting, owner: str) -> None:
        super().__init__(acting, owner)
        self.dir: Path = acting.engine.layout.sessions_dir(owner)
        self.index_path: Path = acting.engine.layout.session_index(owner)

    def _spec(self, sid: str, path: Path | None = None) -> SourceSpec:
        """The transcript of session `sid` (at `path`, when the caller knows it)."""
        path = path or self.engine.layout.session(self.owner or "", sid)
        owner, p = self.owner or "", str(path)
        return SourceSpec(path, "append", lambda d, b: parse_session(d, b, p, owner, sid))

    def _index_spec(self) -> SourceSpec:
        return SourceSpec(self.index_path, "whole", lambda d, b: Parsed(consumed=len(d)))

    # -- session index ---------------------------------------------------------
    # sessions.json only lists sessions: the transcripts are the truth. If a hand
    # edit breaks it, reads list the sessions rebuilt from the transcripts, and the
    # next write moves the broken file aside (kept, and reported) and writes the
    # rebuilt index: a damaged index never blocks a new session.
    def _read_index(self) -> RecordList:
        try:
            return self._document(self.index_path, key="sessions")
        except MalformedInput:
            return self._rebuilt()

    def _rebuilt(self) -> RecordList:
        """The index rebuilt from the transcripts, live and archived (titles are lost)."""
        rows: builtins.list[dict[str, Any]] = [
            {
                "id": sid,
                "title": None,
                "created": self._first_timestamp(self._spec(sid).path),
                "ended": None,
                "archived": False,
            }
            for sid in self.ids()
        ]
        known = {r["id"] for r in rows}
        archived = self.engine.layout.archive_dir(self.owner or "") / "sessions"
        for path in self._files_in(archived, ".jsonl"):
            sid = path.stem.rsplit("-", 1)[0]
            if sid not in known:
                known.add(sid)
                rows.append(
                    {
                        "id": sid,
                        "title": None,
                        "created": self._first_timestamp(path),
                        "ended": None,
                        "archived": True,
                        "archive": self.engine.rel(path),
                    }
                )
        return RecordList(str(self.index_path), "sessions", {}, rows)

    def _edit_index(self, change: Callable[[RecordList], None]) -> None:
        with self.engine.editing(self._index_spec()) as edit:
            try:
                doc = RecordList.parse(edit.data, str(self.index_path), key="sessions")
            except MalformedInput:
                aside = self.index_path.with_name(f"{self.index_path.name}.broken-{_new_id()[2:]}")
                self.engine.move(self.index_path, aside, lock=False)  # (ours: held)
                edit.current = None  # the index is written anew
                doc = self._rebuilt()
            change(doc)
            edit(doc.dumps())

    def _update_index(self, sid: str, **fields: Any) -> None:
        def change(doc: RecordList) -> None:
            row = doc.find(sid)
            if row is not None:
                row.update(fields)
            else:
                doc.append(
                    {
                        "id": sid,
                        "title": None,
                        "created": iso(now_ts()),
                        "ended": None,
                        "archived": False,
                        **fields,
                    }
                )

        self._edit_index(change)

    def mark_archived(self, archives: dict[str, str]) -> None:
        """Record that each session id in `archives` moved to its archive path."""
        now = iso(now_ts())

        def change(doc: RecordList) -> None:
            for sid, archive in archives.items():
                row = doc.find(sid)
                if row is None:
                    row = {"id": sid, "title": None, "created": None, "ended": None}
                    doc.append(row)
                row.update(archived=True, archived_at=now, archive=archive)

        self._check("write")
        self._edit_index(change)
        self._write_event(self.index_path, len(archives))

    def problems(self) -> builtins.list[str]:
        """What a person should look at: an unreadable index (and copies set aside), rows
        kept but not understood."""
        self._check("read")
        out = [
            f"{self.index_path}: was unreadable and was rebuilt from the transcripts; the "
            f"damaged copy is kept as {p.name}"
            for p in self._files_in(self.dir, "")
            if p.name.startswith("sessions.json.broken-")
        ]
        try:
            doc = self._document(self.index_path, key="sessions")
        except MalformedInput as exc:
            return [*out, f"{exc} (sessions are listed from the transcripts)"]
        out += doc.problems()
        for row in doc.records():
            try:
                _info(row, doc.path, None)
            except MalformedInput as exc:
                out.append(str(exc))
        return out

    def start(
        self,
        session_id: str | None = None,
        *,
        title: str | None = None,
        created: str | float | None = None,
    ) -> SessionInfo:
        """Register a new session (created implicitly by the first `append` too)."""
        self._check("write")
        sid = check_name(session_id, "session id") if session_id else _new_id()
        if self._read_index().find(sid) is not None:
            raise AlreadyExists(f"session {sid!r} already exists")
        when = iso(now_ts() if created is None else parse_ts(created))
        self._update_index(sid, title=title, created=when)
        self._write_event(self.index_path, 1)
        return SessionInfo(sid, title, when)

    def end(self, session_id: str) -> None:
        self._check("write")
        self._require(session_id)
        self._update_index(session_id, ended=iso(now_ts()))
        self._write_event(self.index_path, 0)

    def _require(self, sid: str) -> None:
        if self._read_index().find(sid) is None and self._stat(self._spec(sid).path) is None:
            raise NotFound(f"no session {sid!r}")

    def list(self, *, include_archived: bool = False) -> list[SessionInfo]:
        """The sessions of `sessions.json`, each with its transcript's first prompt, last
        activity and counts."""
        self._check("read")
        doc = self._read_index()
        rows = [r for r in doc.records() if include_archived or not r.get("archived")]
        told = self.transcripts([str(r.get("id")) for r in rows])
        out = []
        for row in rows:
            with contextlib.suppress(MalformedInput):  # named by problems()
                out.append(_info(row, doc.path, told.get(str(row.get("id")))))
        return out

    def latest(self) -> Transcript | None:
        """The session with the newest message (from the index), or None."""
        self._check("read")
        sid = overview.latest_thread(self.engine.db, self.owner)
        return self.transcripts([sid]).get(sid) if sid else None

    def transcripts(self, ids: Iterable[str]) -> dict[str, Transcript]:
        """What the index holds of each session in `ids` (those with messages): counts,
        span, first prompt and last answer (`index.overview.transcript`)."""
        self._check("read")
        out: dict[str, Transcript] = {}
        for sid in sorted({i for i in ids if isinstance(i, str)}):
            told = overview.transcript(self.engine.db, self.owner, sid, chars=SUMMARY_CHARS)
            if told is not None:
                out[sid] = Transcript(
                    sid,
                    told.messages,
                    told.tool_calls,
                    told.start,
                    told.end,
                    _said(told.first_prompt),
                    _said(told.last_answer),
                )
        return out

    def active_between(self, start: float, end: float) -> builtins.list[Transcript]:
        """The sessions with a message between `start` and `end` (epoch seconds), oldest
        first, each as `transcripts` tells it (the LOG's activity summary asks this of an
        agent whose LOG names no sessions: an MCP agent keeping its own transcript)."""
        self._check("read")
        ids = overview.threads_between(self.engine.db, self.owner, start, end)
        told = self.transcripts(ids)
        return [told[i] for i in ids if i in told]

    def talk(
        self, session_id: str, n: int = 6, *, last: bool = False
    ) -> builtins.list[tuple[str, str]]:
        """The first (or last) `n` user and assistant messages of a session, from the
        index, as (role, text cut to `SUMMARY_CHARS`), in order."""
        self._check("read")
        said = overview.talk(
            self.engine.db, self.owner, session_id, n=n, chars=SUMMARY_CHARS, last=last
        )
        return [(role, x.strip()) for role, x in said]

    # -- transcripts ---------------------------------------------------------
    def append(self, session_id: str, role: str, content: str, **kw: Any) -> SessionMessage:
        """Durably append one message (the PERSIST stage)."""
        return self.append_many(session_id, [{"role": role, "content": content, **kw}])[0]

    def append_many(
        self, session_id: str, messages: Iterable[dict[str, Any]]
    ) -> builtins.list[SessionMessage]:
        """Append several messages in one durable write (one fsync)."""
        self._check("write")
        sid = check_name(session_id, "session id")
        too_many = EntryTooLarge(
            f"more than {limits.SESSION_MESSAGES_PER_APPEND} messages "
            "in one append; append them in batches"
        )
        if isinstance(messages, Sized) and len(messages) > limits.SESSION_MESSAGES_PER_APPEND:
            raise too_many
        recs: builtins.list[dict[str, Any]] = []
        total = 0
        for m in messages:  # a generator is bounded as it goes, refused at its first excess
            if len(recs) == limits.SESSION_MESSAGES_PER_APPEND:
                raise too_many
            recs.append(_message_record(m))
            total += len(recs[-1]["content"])
            if total > limits.SESSION_APPEND_BYTES:
                raise EntryTooLarge(
                    f"one append carries more than {limits.SESSION_APPEND_BYTES} "
                    "bytes of messages; append them in batches"
                )
        for r in recs:
            r["content"] = self._screen(r["content"], "message content")
            if "input" in r:
                r["input"] = self._screen_json(r["input"], "tool input")
        if not recs:
            return []
        spec = self._spec(sid)
        if self._stat(spec.path) is None and self._read_index().find(sid) is None:
            self._update_index(sid, created=recs[0]["timestamp"])
        data = b"".join(encode(r) for r in recs)
        self.engine.append(spec, data)
        self._write_event(spec.path, len(data))
        # a flush or compaction past the transcript thresholds follows (`lifecycle.triggers`)
        self.engine.signals.announce(SessionGrew(self.gate.principal, self.owner or "", sid))
        return [to_message(r) for r in recs]

    def messages(self, session_id: str) -> builtins.list[SessionMessage]:
        self._check("read")
        self._require(session_id)
        path = self._spec(session_id).path
        dec = self._records(path)
        self._read_event(path, dec.consumed)
        return [to_message(r) for _, r in dec.records if "role" in r]

    def page(
        self, session_id: str, *, after: int = -1, limit: int = 100
    ) -> tuple[builtins.list[SessionMessage], int | None]:
        """A page of one transcript's messages in order, from the index: `after` is the
        cursor a previous page returned (-1: from the start); returns the messages and the
        next cursor (None at the end). A page costs the same at 100 or 100,000 messages."""
        found, nxt = self.numbered(session_id, after=after, limit=limit)
        return [m for _, m in found], nxt

    def numbered(
        self, session_id: str, *, after: int = -1, limit: int = 100
    ) -> tuple[builtins.list[tuple[int, SessionMessage]], int | None]:
        """`page`, each message with its position (a message's place in the transcript: the
        cursor that follows it, and what a search hit's uid ends with)."""
        self._check("read")
        self._require(session_id)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 500:
            raise MalformedInput(f"limit must be an integer from 1 to 500, got {limit!r}")
        if isinstance(after, bool) or not isinstance(after, int):
            raise MalformedInput("after must be an integer (a cursor from a previous page)")
        spec = self._spec(session_id)
        self.engine.fresh(spec)
        rows = queries.after_pos(self.engine.db, str(spec.path), session_id, after, limit + 1)
        msgs = [(int(r.pos or 0), to_message(r.record())) for r in rows[:limit]]
        self._read_event(spec.path, sum(len(m.content) for _, m in msgs))
        return msgs, (rows[limit - 1].pos if len(rows) > limit else None)

    def cursor_before(self, session_id: str, pos: int, n: int = 3) -> int:
        """The `after` cursor of the page that shows `n` messages before the one at `pos`
        first (a message among its neighbours); -1 when that is the transcript's start."""
        self._check("read")
        self._require(session_id)
        spec = self._spec(session_id)
        return overview.pos_before(self.engine.db, str(spec.path), session_id, pos, n)

    def ids(self) -> builtins.list[str]:
        """The ids of the transcripts on disk."""
        self._check("read")
        return self._transcript_ids()

    def _transcript_ids(self) -> builtins.list[str]:
        """Index machinery (`AgentMemory.sources`): the same list without a scope check,
        since the derived index covers every agent whoever opened the store."""
        return [p.stem for p in self._files_in(self.dir, ".jsonl")]

    def _files_in(self, folder: Path, suffix: str) -> builtins.list[Path]:
        """The sources directly in `folder` whose name ends in `suffix`, sorted."""
        return [
            self.engine.home / e.path
            for e in self.engine.listing(folder, recursive=False)
            if not e.is_dir and e.path.endswith(suffix)
        ]

    def _first_timestamp(self, path: Path) -> str:
        """When a transcript started: its first message's timestamp, else the file's mtime."""
        rel = self.engine.rel(path)
        head = self.engine.read_from(rel, 0, MAX_MESSAGE_BYTES + 4096)
        try:
            first = json.loads(head.split(b"\n", 1)[0])
            return iso(parse_ts(first["timestamp"]))
        except (ValueError, KeyError, TypeError, MalformedInput):
            entry = self.engine.stat(rel)
            return iso(entry.mtime) if entry is not None else ""


def _info(row: dict[str, Any], path: str, told: Transcript | None) -> SessionInfo:
    f = Fields(row, f"{path}: session {row.get('id')!r}")
    told = told or Transcript(str(row.get("id")))
    return SessionInfo(
        f.text("id"),
        f.optional_text("title"),
        f.text("created"),
        f.optional_text("ended"),
        f.flag("archived"),
        told.messages,
        told.first_prompt,
        iso(told.end) if told.end is not None else None,
        told.tool_calls,
    )


def _said(body: str | None) -> str | None:
    """A message as one line (a heading, an outcome), or None when it says nothing."""
    flat = " ".join((body or "").split())
    if not flat:
        return None
    return flat if len(flat) <= SAID_CHARS else flat[: SAID_CHARS - 1].rsplit(" ", 1)[0] + "…"


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
        check_json(content, "message content", MAX_MESSAGE_BYTES)
        content = json.dumps(content, ensure_ascii=False)
    check_text(content, "message content", MAX_MESSAGE_BYTES, allow_empty=role != "user")
    ts = m.get("timestamp")
    msg_id = m.get("id")
    if msg_id is not None:
        check_plain(msg_id, "message id", limits.SESSION_LABEL_CHARS)
    rec: dict[str, Any] = {"id": msg_id or "msg_" + os.urandom(4).hex(), "role": role}
    for label in ("name", "speaker"):
        if m.get(label) is not None:
            rec[label] = check_plain(m[label], f"message {label}", limits.SESSION_LABEL_CHARS)
    if m.get("input") is not None:
        check_json(m["input"], "tool call input", limits.SESSION_INPUT_BYTES)
        rec["input"] = m["input"]
    if m.get("is_error") not in (None, False):
        if m["is_error"] is not True or role != "tool_result":
            raise MalformedInput("is_error is true or false, and only on a tool_result")
        rec["is_error"] = True  # absent when false: the line reads as it always did
    rec["content"] = content
    rec["timestamp"] = iso(now_ts() if ts is None else parse_ts(ts))
    return rec
