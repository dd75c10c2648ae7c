"""Queries on the index, in one place: everything but the search engine's ranking.

Layers, browsing pages, doctor and purge ask the index the same few questions:
rows of a source, one row by uid, the newest rows matching a filter one page at a
time, counts. They ask here, so the SQL on `docs` and `sources` lives in `index/`
and reads by name (`DocRow`), never by position.

A `DocFilter` is the one value that says which rows: layers, owner, kind, rooms,
time range, tags, the principal's scope (`Gate.sql_filter`, added to every
statement it builds) and a keyset cursor. `where` turns it into a WHERE clause
with bound parameters; `newest` pages through it newest first:

    f = DocFilter(gate, layers=("ledger",), exclude_room="room-042", live=True)
    rows = newest(db, f, 50)                 # DocRow(id, uid, ..., meta, ...)
    next_page = cursor(rows[-1].ts, rows[-1].id)

Cursors are `"<ts>:<row id>"` of the last row shown, so a row written meanwhile
never shifts a page.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from memstrata.errors import MalformedInput
from memstrata.index.docs import delete_source
from memstrata.values import value_type

if TYPE_CHECKING:
    from memstrata.index.db import Database
    from memstrata.policy.scope import Gate

ROW_COLUMNS = (
    "id",
    "uid",
    "layer",
    "owner",
    "room",
    "kind",
    "tags",
    "ts",
    "title",
    "body",
    "source",
    "line",
    "superseded",
    "meta",
    "thread",
    "pos",
    "secret",
    "context",
    "supersedes",
)


class DocRow(NamedTuple):
    """One memory as the index holds it (a row of `docs`)."""

    id: int
    uid: str
    layer: str
    owner: str | None
    room: str | None
    kind: str | None
    tags: str
    ts: float
    title: str
    body: str
    source: str
    line: int | None
    superseded: int
    meta: str | None
    thread: str | None
    pos: int | None
    secret: str | None
    context: str
    supersedes: str | None

    def record(self) -> dict[str, Any]:
        """The layer's own JSON record of this memory (`meta`), or {}."""
        return json.loads(self.meta) if self.meta else {}


def _select(alias: str = "d", body_chars: int | None = None) -> str:
    cols = [f"{alias}.{c}" for c in ROW_COLUMNS]
    if body_chars is not None:
        cols[ROW_COLUMNS.index("body")] = f"substr({alias}.body, 1, {int(body_chars)})"
    return ", ".join(cols)


# -- cursors -------------------------------------------------------------------------


def cursor(ts: float, row: int) -> str:
    """The cursor of a page that ended at (ts, row)."""
    return f"{ts!r}:{row}"


def parse_cursor(text: str) -> tuple[float, int]:
    ts, sep, row = text.partition(":")
    try:
        if not sep:
            raise ValueError(text)
        return float(ts), int(row)
    except ValueError:
        raise MalformedInput(
            f"invalid cursor {text!r}: use the `next` of a previous page"
        ) from None


# -- the filter ------------------------------------------------------------------------


@value_type(frozen=True)
class DocFilter:
    """Which rows of `docs`: every field narrows (None / empty: no condition).

    `scope` is the principal's gate (its SQL filter is always added); `live` leaves
    superseded entries out; `first_chunk` keeps one row per whole file (its first);
    `before` is a cursor (rows strictly older than it).
    """

    scope: Gate
    layers: Sequence[str] = ()
    exclude_layers: Sequence[str] = ()
    owner: str | None = None
    kind: str | None = None
    room: str | None = None
    rooms: Sequence[str] = ()
    exclude_room: str | None = None
    since: float | None = None
    until: float | None = None
    tags: Sequence[str] = ()
    tags_match: str = "any"
    live: bool = False
    context: str | None = None
    project: str | None = None
    first_chunk: bool = False
    before: tuple[float, int] | None = None


def where(f: DocFilter, alias: str = "d") -> tuple[str, list[Any]]:
    """The WHERE clause (without the keyword) and its parameters."""
    d = alias
    scope_sql, scope_params = f.scope.sql_filter(d)
    parts, params = [scope_sql], list(scope_params)

    def add(sql: str, *values: Any) -> None:
        parts.append(sql)
        params.extend(values)

    if f.live:
        add(f"{d}.superseded = 0")
    if len(f.layers) == 1:
        add(f"{d}.layer = ?", f.layers[0])
    elif f.layers:
        add(f"{d}.layer IN ({','.join('?' for _ in f.layers)})", *f.layers)
    if f.exclude_layers:
        add(f"{d}.layer NOT IN ({','.join('?' for _ in f.exclude_layers)})", *f.exclude_layers)
    if f.owner is not None:
        add(f"{d}.owner = ?", f.owner)
    if f.kind is not None:
        add(f"{d}.kind = ?", f.kind)
    if f.room is not None:
        add(f"{d}.room = ?", f.room)
    if f.rooms:
        add(f"{d}.room IN ({','.join('?' for _ in f.rooms)})", *f.rooms)
    if f.exclude_room is not None:
        add(f"({d}.room IS NULL OR {d}.room != ?)", f.exclude_room)
    if f.since is not None:
        add(f"{d}.ts >= ?", f.since)
    if f.until is not None:
        add(f"{d}.ts <= ?", f.until)
    if f.tags:
        joiner = " OR " if f.tags_match == "any" else " AND "
        like = joiner.join(f"(' ' || {d}.tags || ' ') LIKE ?" for _ in f.tags)
        add(f"({like})", *(f"% {t} %" for t in f.tags))
    if f.context is not None:
        add(f"{d}.context = ?", f.context)
    if f.project is not None:
        add(f"coalesce({d}.thread, '') = ?", f.project)
    if f.first_chunk:
        add(f"coalesce({d}.pos, 0) = 0")
    if f.before is not None:
        ts, row = f.before
        add(f"({d}.ts < ? OR ({d}.ts = ? AND {d}.id < ?))", ts, ts, row)
    return " AND ".join(parts), params


def newest(
    db: Database, f: DocFilter, limit: int, *, body_chars: int | None = None
) -> list[DocRow]:
    """At most `limit` rows matching `f`, newest first (ties: the later row first)."""
    sql, params = where(f)
    with db.read() as conn:
        rows = conn.execute(
            f"SELECT {_select('d', body_chars)} FROM docs d WHERE {sql} "
            "ORDER BY d.ts DESC, d.id DESC LIMIT ?",
            [*params, limit],
        ).fetchall()
    return [DocRow._make(r) for r in rows]


# -- one memory ---------------------------------------------------------------------


def row_of(db: Database, uid: str, *, layer: str | None = None) -> DocRow | None:
    """The row with `uid` (of `layer`, when given), whoever may read it."""
    sql = f"SELECT {_select()} FROM docs d WHERE d.uid = ?"
    params: list[Any] = [uid]
    if layer is not None:
        sql += " AND d.layer = ?"
        params.append(layer)
    with db.read() as conn:
        row = conn.execute(sql, params).fetchone()
    return DocRow._make(row) if row is not None else None


def has_uid(db: Database, uid: str) -> bool:
    with db.read() as conn:
        return conn.execute("SELECT 1 FROM docs WHERE uid = ?", (uid,)).fetchone() is not None


def successor(db: Database, uid: str, *, layer: str, scope: Gate | None = None) -> DocRow | None:
    """The first row (oldest) of `layer` that supersedes `uid`; within `scope` if given."""
    sql = f"SELECT {_select()} FROM docs d WHERE d.supersedes = ? AND d.layer = ?"
    params: list[Any] = [uid, layer]
    if scope is not None:
        scope_sql, scope_params = scope.sql_filter("d")
        sql += f" AND {scope_sql}"
        params += scope_params
    with db.read() as conn:
        row = conn.execute(sql + " ORDER BY d.ts LIMIT 1", params).fetchone()
    return DocRow._make(row) if row is not None else None


def visible(db: Database, uid: str, scope: Gate, *, layer: str) -> DocRow | None:
    """The row with `uid` of `layer`, if the principal of `scope` may read it."""
    scope_sql, scope_params = scope.sql_filter("d")
    with db.read() as conn:
        row = conn.execute(
            f"SELECT {_select()} FROM docs d WHERE d.uid = ? AND d.layer = ? AND {scope_sql} "
            "ORDER BY d.ts LIMIT 1",
            [uid, layer, *scope_params],
        ).fetchone()
    return DocRow._make(row) if row is not None else None


def successors_of(db: Database, uids: Iterable[str], scope: Gate, *, layer: str) -> list[DocRow]:
    """The rows of `layer` that supersede any of `uids` (visible in `scope`), newest first."""
    wanted = list(uids)
    if not wanted:
        return []
    scope_sql, scope_params = scope.sql_filter("d")
    with db.read() as conn:
        rows = conn.execute(
            f"SELECT {_select()} FROM docs d WHERE d.layer = ? AND d.supersedes IN "
            f"({','.join('?' for _ in wanted)}) AND {scope_sql} ORDER BY d.ts DESC",
            [layer, *wanted, *scope_params],
        ).fetchall()
    return [DocRow._make(r) for r in rows]


# -- the rows of one source -----------------------------------------------------------


def of_source(
    db: Database, source: str, *, layer: str | None = None, kind: str | None = None
) -> list[DocRow]:
    """Every row of one source file (of `layer`, of `kind`), by title."""
    sql = f"SELECT {_select()} FROM docs d WHERE d.source = ?"
    params: list[Any] = [source]
    if layer is not None:
        sql += " AND d.layer = ?"
        params.append(layer)
    if kind is not None:
        sql += " AND d.kind = ?"
        params.append(kind)
    with db.read() as conn:
        rows = conn.execute(sql + " ORDER BY d.title", params).fetchall()
    return [DocRow._make(r) for r in rows]


def last_of_source(db: Database, source: str, n: int) -> list[DocRow]:
    """The last `n` rows of a source in file order, oldest first."""
    with db.read() as conn:
        rows = conn.execute(
            f"SELECT {_select()} FROM docs d WHERE d.source = ? ORDER BY d.pos DESC LIMIT ?",
            (source, n),
        ).fetchall()
    return [DocRow._make(r) for r in reversed(rows)]


def after_pos(db: Database, source: str, thread: str, after: int, n: int) -> list[DocRow]:
    """At most `n` rows of one thread of a source past position `after`, in order."""
    with db.read() as conn:
        rows = conn.execute(
            f"SELECT {_select()} FROM docs d WHERE d.thread = ? AND d.source = ? AND d.pos > ? "
            "ORDER BY d.pos LIMIT ?",
            (thread, source, after, n),
        ).fetchall()
    return [DocRow._make(r) for r in rows]


def held_before(db: Database, source: str, before: int, uids: Sequence[str]) -> set[str]:
    """Which of `uids` a row of `source` before byte `before` already holds."""
    held: set[str] = set()
    with db.read() as conn:
        for n in range(0, len(uids), 500):
            chunk = uids[n : n + 500]
            rows = conn.execute(
                f"SELECT uid FROM docs WHERE source = ? AND pos < ? AND uid IN "
                f"({','.join('?' * len(chunk))})",
                (source, before, *chunk),
            )
            held.update(r[0] for r in rows)
    return held


def uids_of(db: Database, source: str) -> set[str]:
    """The uids of every row of one source."""
    with db.read() as conn:
        return {str(r[0]) for r in conn.execute("SELECT uid FROM docs WHERE source = ?", (source,))}


def texts_of(db: Database, sources: Iterable[str]) -> dict[str, str]:
    """uid -> indexed text (body, then the neighbour context) of every row of `sources`."""
    out: dict[str, str] = {}
    with db.read() as conn:
        for source in sources:
            out.update(
                (str(uid), f"{body}\n{context}")
                for uid, body, context in conn.execute(
                    "SELECT uid, body, context FROM docs WHERE source = ?", (source,)
                )
            )
    return out


def bad_lines(db: Database, source: str) -> list[tuple[int, str]]:
    """(byte offset, reason) of what the index could not read cleanly in a source."""
    with db.read() as conn:
        return [
            (int(offset), str(reason))
            for offset, reason in conn.execute(
                "SELECT offset, reason FROM bad_lines WHERE source = ? ORDER BY offset",
                (source,),
            )
        ]


def file_head(db: Database, uid: str, scope: Gate, *, chars: int, chunks: int) -> list[str]:
    """The first `chunks` chunks (each cut to `chars`) of the file the row `uid` is from."""
    scope_sql, scope_params = scope.sql_filter("d")
    with db.read() as conn:
        rows = conn.execute(
            f"SELECT substr(d.body, 1, {int(chars)}) FROM docs d WHERE d.source = "
            f"(SELECT source FROM docs WHERE uid = ?) AND {scope_sql} ORDER BY d.pos LIMIT ?",
            [uid, *scope_params, chunks],
        ).fetchall()
    return [r[0] for r in rows]


# -- counts ---------------------------------------------------------------------------


def doc_count(db: Database, *, source: str | None = None) -> int:
    """How many rows (of one source), whoever may read them."""
    with db.read() as conn:
        if source is None:
            row = conn.execute("SELECT count(*) FROM docs").fetchone()
        else:
            row = conn.execute("SELECT count(*) FROM docs WHERE source = ?", (source,)).fetchone()
    return int(row[0])


def thread_counts(db: Database, *, layer: str, owner: str | None) -> dict[str, int]:
    """Rows per thread of one owner's layer (messages per session)."""
    with db.read() as conn:
        return {
            str(thread): int(n)
            for thread, n in conn.execute(
                "SELECT thread, count(*) FROM docs WHERE layer = ? AND owner = ? GROUP BY thread",
                (layer, owner),
            )
        }


def threads(db: Database, *, layer: str) -> list[str]:
    """The distinct threads of a layer ('' for rows with none), sorted."""
    with db.read() as conn:
        rows = conn.execute(
            "SELECT DISTINCT coalesce(thread, '') FROM docs WHERE layer = ?", (layer,)
        ).fetchall()
    return sorted(str(r[0]) for r in rows)


# -- sources below a folder -----------------------------------------------------------


def sources_below(db: Database, prefix: str) -> list[str]:
    """The index sources whose path starts with `prefix` (a folder and a separator)."""
    with db.read() as conn:
        return [
            str(r[0])
            for r in conn.execute("SELECT path FROM sources WHERE path LIKE ?", (f"{prefix}%",))
        ]


def drop_sources_below(db: Database, prefix: str) -> int:
    """Forget every source below `prefix` and its rows; returns how many sources."""
    with db.write() as conn:
        paths = [
            str(r[0])
            for r in conn.execute("SELECT path FROM sources WHERE path LIKE ?", (f"{prefix}%",))
        ]
        for p in paths:
            delete_source(conn, p, superseding=False)
            conn.execute("DELETE FROM sources WHERE path = ?", (p,))
    return len(paths)


# -- what doctor compares ---------------------------------------------------------------


def texts_by_uid(db: Database, source: str) -> dict[str, tuple[str, str]]:
    """uid -> (title, body) of every row of one source."""
    with db.read() as conn:
        return {
            str(uid): (str(title), str(body))
            for uid, title, body in conn.execute(
                "SELECT uid, title, body FROM docs WHERE source = ?", (source,)
            )
        }


def rows_by_source(db: Database) -> dict[str, int]:
    """How many rows each source has."""
    with db.read() as conn:
        return {
            str(source): int(n)
            for source, n in conn.execute("SELECT source, count(*) FROM docs GROUP BY source")
        }


def superseded_uids(db: Database) -> set[str]:
    with db.read() as conn:
        return {str(r[0]) for r in conn.execute("SELECT uid FROM docs WHERE superseded = 1")}


def layer_uids(db: Database, layer: str) -> set[str]:
    with db.read() as conn:
        return {str(r[0]) for r in conn.execute("SELECT uid FROM docs WHERE layer = ?", (layer,))}


def every_bad_line(db: Database) -> list[tuple[str, int, str]]:
    """(source, byte offset, reason) of everything the index could not read cleanly."""
    with db.read() as conn:
        return [
            (str(source), int(offset), str(reason))
            for source, offset, reason in conn.execute(
                "SELECT source, offset, reason FROM bad_lines"
            )
        ]


def source_versions(db: Database) -> dict[str, str]:
    """The truth's version of each source when the index last caught up with it."""
    with db.read() as conn:
        return {
            str(path): str(version)
            for path, version in conn.execute(
                "SELECT path, version FROM sources WHERE version IS NOT NULL"
            )
        }


def integrity(db: Database) -> list[str]:
    """SQLite's integrity check (["ok"] when sound)."""
    with db.read() as conn:
        return [str(r[0]) for r in conn.execute("PRAGMA integrity_check")]


def fts_integrity(db: Database) -> str:
    """FTS5's integrity check of the full-text index: "ok", or what it found."""
    try:
        with db.write() as conn:
            conn.execute("INSERT INTO docs_fts(docs_fts, rank) VALUES ('integrity-check', 1)")
    except sqlite3.DatabaseError as exc:
        return str(exc)
    return "ok"
