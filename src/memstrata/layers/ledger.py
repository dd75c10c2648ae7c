"""The shared cross-agent ledger: `ledger.jsonl`, one entry per line.

Entries are never removed or edited: a new entry may `supersede` an old one, which
then stays in the file for audit but is hidden from every default read (the index
marks it `superseded`). Each room sees the others' entries through filtered views:
an agent in a room gets "all other rooms but not its own" by default (the ledger's
`exclude_room`), and opts in to its own with `include_own_room=True` (or names
its room with `room=`).
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

from memstrata import limits
from memstrata.errors import (
    AlreadySuperseded,
    MalformedInput,
    NotFound,
    UnknownKind,
    UnknownSupersedes,
)
from memstrata.files.jsonl import BadLine, decode, encode
from memstrata.index import overview, queries
from memstrata.index.docs import Doc, Parsed
from memstrata.index.reconcile import SourceSpec
from memstrata.layers.base import Acting, Layer, check_tags, check_text
from memstrata.model import (
    RECORD_KINDS,
    LedgerEntry,
    check_name,
    check_plain,
    iso,
    now_ts,
    parse_ts,
)
from memstrata.policy.secrets import secret_mark

if TYPE_CHECKING:
    from memstrata.layers.base import Find
    from memstrata.search.query import Hit

MAX_REF_CHARS = limits.LABEL_CHARS
MAX_AUTHOR_CHARS = limits.NAME_CHARS
MAX_ID_CHARS = limits.NAME_CHARS
# A purged entry's line keeps the entry format's fields (id, ts, kind, room, author, supersedes)
# with its content emptied: the summary is this marker and the entry is hidden.
PURGED_SUMMARY = "[purged]"

LEDGER_FIELDS = (
    "id",
    "ts",
    "kind",
    "room_id",
    "author_role",
    "ref",
    "tags",
    "summary",
    "detail",
    "supersedes",
)


def parse_ledger(data: bytes, base: int, path: str) -> Parsed:
    dec = decode(data, base, path)
    out = Parsed(bad=dec.bad, consumed=dec.consumed)
    for off, rec in dec.records:
        try:
            entry = LedgerEntry.from_dict(rec)
            ts = parse_ts(entry.ts)
        except (KeyError, MalformedInput) as exc:
            out.bad.append(BadLine(path, off, f"not a ledger entry: {exc}", json.dumps(rec)[:200]))
            continue
        out.docs.append(
            Doc(
                uid=f"ledger:{entry.id}",
                layer="ledger",
                ts=ts,
                title=entry.summary,
                body=entry.detail or "",
                source=path,
                room=entry.room_id,
                kind=entry.kind,
                tags=entry.tags,
                offset=off,
                # A line naming itself (hand-edited, imported) must not hide itself.
                supersedes=(
                    f"ledger:{entry.supersedes}"
                    if entry.supersedes and entry.supersedes != entry.id
                    else None
                ),
                meta=entry.to_dict(),
                secret=secret_mark(entry.summary, entry.detail, entry.ref, " ".join(entry.tags)),
                hidden=entry.summary == PURGED_SUMMARY and not entry.detail,
            )
        )
    return out


class Ledger(Layer):
    """Publish, query and search the shared ledger.

    Example:
        >>> entry = store.ledger.publish("decision", "Chose bcrypt", tags=["auth"])  # doctest: +SKIP
    """

    layer = "ledger"

    def __init__(self, acting: Acting, *, search: Find | None = None) -> None:
        super().__init__(acting, None)
        self.path = acting.engine.layout.ledger
        self._find = search

    def _spec(self) -> SourceSpec:
        path = str(self.path)
        return SourceSpec(self.path, "append", lambda data, base: parse_ledger(data, base, path))

    def publish(
        self,
        kind: str,
        summary: str,
        *,
        tags: list[str] | tuple[str, ...] | None = None,
        detail: str | None = None,
        ref: str | None = None,
        room_id: str | None = None,
        author_role: str | None = None,
        supersedes: str | None = None,
        ts: float | str | None = None,
    ) -> LedgerEntry:
        """Append an entry; acknowledged (returned) only once it is on disk."""
        self._check("write")
        cfg = self.engine.config
        if kind not in cfg.half_lives and kind not in RECORD_KINDS:
            raise UnknownKind(f"unknown kind {kind!r}; known kinds: {', '.join(cfg.kinds)}")
        check_text(summary, "summary", cfg.bounds.summary_bytes)
        if detail is not None:
            check_text(detail, "detail", cfg.bounds.detail_bytes, allow_empty=True)
        summary = self._screen(summary, "summary", shared=True)
        if detail is not None:
            detail = self._screen(detail, "detail", shared=True)
        if ref is not None:
            ref = self._screen(ref, "ref", shared=True)
        tags_t = tuple(self._screen(t, "tag", shared=True) for t in check_tags(tags))
        if room_id is not None:
            check_name(room_id, "room")
        room = self.gate.ledger_room(room_id)
        if ts is not None:
            self.gate.check_backdate()
        if room is not None and self.gate.principal.role != "admin":
            from memstrata.layers.rooms import Room  # (start-up: a context publishes nothing)

            Room(self.acting, room).check_open()  # a closed room publishes nothing more
        if ref is not None:
            check_plain(ref, "ref", MAX_REF_CHARS)
        if author_role is not None:
            check_plain(author_role, "author_role", MAX_AUTHOR_CHARS)
        author = self.gate.author(author_role)
        if supersedes is not None:
            check_plain(supersedes, "supersedes", MAX_ID_CHARS)
        when = now_ts() if ts is None else parse_ts(ts)
        spec = self._spec()
        # The supersede checks and the append happen under the ledger's lock, so two
        # writers can never both supersede the same entry.
        with self.engine.lock(self.engine.rel(self.path)):
            if supersedes is not None:
                self._check_supersede(spec, supersedes)
            entry = LedgerEntry(
                id=self._new_id(avoid=supersedes),
                ts=iso(when),
                kind=kind,
                room_id=room,
                author_role=author,
                ref=ref,
                tags=tags_t,
                summary=summary,
                detail=detail,
                supersedes=supersedes,
            )
            data = encode(entry.to_dict())
            self.engine.append(spec, data)
        self._write_event(self.path, len(data), "ledger")
        return entry

    def _check_supersede(self, spec: SourceSpec, target_id: str) -> None:
        """`target_id` exists, the principal may hide it, and it has no successor yet."""
        self.engine.fresh(spec)  # under the lock: the index now holds every entry
        target = self._lookup(target_id)
        if target is None:
            raise UnknownSupersedes(f"supersedes: no ledger entry with id {target_id!r}")
        self.gate.check_supersede(target)
        head = self._successor(target_id)
        if head is not None:
            raise AlreadySuperseded(
                f"{target_id} is already superseded by {head}: supersede {head} instead "
                "(an entry has at most one live successor)",
                head=head,
            )

    def _lookup(self, entry_id: str) -> LedgerEntry | None:
        row = queries.row_of(self.engine.db, f"ledger:{entry_id}", layer="ledger")
        return LedgerEntry.from_dict(row.record()) if row is not None else None

    def _successor(self, entry_id: str) -> str | None:
        row = queries.successor(self.engine.db, f"ledger:{entry_id}", layer="ledger")
        return str(row.record()["id"]) if row is not None else None

    def _new_id(self, avoid: str | None = None) -> str:
        for _ in range(16):
            candidate = "mem-" + os.urandom(4).hex()
            if candidate != avoid and not self._in_index(candidate):  # never self-superseding
                return candidate
        raise RuntimeError("could not allocate a unique ledger id")  # pragma: no cover

    def _in_index(self, entry_id: str) -> bool:
        return queries.has_uid(self.engine.db, f"ledger:{entry_id}")

    def get(self, entry_id: str) -> LedgerEntry:
        """One entry by id, superseded or not (audit reads may name any id)."""
        self._check("read")
        row = queries.row_of(self.engine.db, f"ledger:{entry_id}")
        if row is None or (row.secret and self.gate.hides_secret(row.room)):
            raise NotFound(f"no ledger entry with id {entry_id!r}")
        self._read_event(self.path, len(row.meta or ""))
        return LedgerEntry.from_dict(row.record())

    def is_superseded(self, entry_id: str) -> bool:
        self._check("read")
        row = queries.row_of(self.engine.db, f"ledger:{entry_id}")
        if row is None:
            raise NotFound(f"no ledger entry with id {entry_id!r}")
        return bool(row.superseded)

    def query(
        self,
        *,
        tags: list[str] | None = None,
        kind: str | None = None,
        last_n: int | None = None,
        in_room: str | None = None,
        exclude_room: str | None = None,
        match: str = "any",
        include_superseded: bool = False,
        include_own_room: bool = False,
        room: str | None = None,
    ) -> list[LedgerEntry]:
        """Structured filters, newest first, at most `bounds.query_max` (50) entries.

        `in_room` keeps one room's entries, `exclude_room` leaves one out (`room` is
        the old name of `in_room`, kept as an alias). An agent in a room sees the other
        rooms' entries, not its own (the ledger's filtered view), unless
        `include_own_room` (or `in_room` names its room).
        """
        self._check("read")
        exclude_room = self._view_excludes(in_room or room, exclude_room, include_own_room)
        cap = self.engine.config.bounds.query_max
        limit = cap if last_n is None else last_n
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            raise MalformedInput(f"last_n must be a positive integer, got {last_n!r}")
        limit = min(limit, cap)
        from memstrata.search.query import SearchQuery  # (start-up: a context queries none)

        q = SearchQuery(  # the same checks as a search's filters
            layers=("ledger",),
            kind=kind,
            tags=check_tags(tags),
            tags_match=match,
            in_room=in_room or room,
            exclude_room=exclude_room,
            include_superseded=include_superseded,
            k=limit,
        )
        known = self.engine.config.half_lives
        if q.kind is not None and q.kind not in known and q.kind not in RECORD_KINDS:
            raise UnknownKind(
                f"unknown kind {q.kind!r}; known kinds: {', '.join(self.engine.config.kinds)}"
            )
        # One filter implementation (`index.queries`), newest first.
        wanted = queries.DocFilter(
            self.gate,
            layers=q.layers,
            kind=q.kind,
            tags=q.tags,
            tags_match=q.tags_match,
            room=q.in_room,
            exclude_room=q.exclude_room,
            live=not q.include_superseded,
        )
        rows = queries.newest(self.engine.db, wanted, q.k)
        out = [LedgerEntry.from_dict(r.record()) for r in rows]
        self._read_event(self.path, sum(len(e.summary) + len(e.detail or "") for e in out))
        return out

    def _view_excludes(
        self, room: str | None, exclude_room: str | None, include_own_room: bool
    ) -> str | None:
        """The room a query leaves out: the one asked for, else the principal's own room
        ("it sees memories from all other rooms but not its own")."""
        if exclude_room is not None or room is not None or include_own_room:
            return exclude_room
        return self.gate.principal.room

    def search(
        self,
        text: str,
        *,
        max_results: int | None = None,
        kind: str | None = None,
        tags: list[str] | None = None,
        exclude_room: str | None = None,
        include_own_room: bool = False,
        include_superseded: bool = False,
    ) -> list[Hit]:
        """Full-text search (`memory_search`): BM25 x per-kind time decay, default
        10 results, at most 50, through the same filtered view as `query`."""
        self._check("read")
        if self._find is None:
            raise MalformedInput("this ledger handle has no search (open it from a store)")
        k = self.engine.config.bounds.search_default if max_results is None else max_results
        from memstrata.search.query import SearchQuery  # (start-up, as `query`)

        q = SearchQuery(
            text=text,
            layers=("ledger",),
            kind=kind,
            tags=check_tags(tags),
            exclude_room=self._view_excludes(None, exclude_room, include_own_room),
            include_superseded=include_superseded,
            k=k,
        )
        return self._find(q)

    def entries(self, *, include_superseded: bool = False) -> list[LedgerEntry]:
        """Every entry straight from the file, in file order (audit view)."""
        self._check("read")
        parsed = parse_ledger(self.engine.read_from(self.path), 0, str(self.path))
        hidden = {d.supersedes for d in parsed.docs if d.supersedes}
        gate = self.gate
        return [
            LedgerEntry.from_dict(d.meta or {})
            for d in parsed.docs
            if (include_superseded or (d.uid not in hidden and not d.hidden))
            and not (d.secret and gate.hides_secret(d.room))
        ]

    def active_rooms(self, n: int = 12, *, scan: int = 5000) -> list[str]:
        """The rooms whose live entries this principal may read, the most recently written
        first, then rooms with a folder but no entry it may read, at most `n` in all. A
        walk of the newest entries (at most `scan` of them), not a pass over the ledger."""
        self._check("read")
        rooms = overview.active_rooms(self.engine.db, self.gate, scan=scan, n=n)
        quiet = [r for r in self.engine.rooms() if r not in rooms]
        return [*rooms, *quiet][:n]
