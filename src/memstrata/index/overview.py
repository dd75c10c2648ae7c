"""Queries the overview pages ask of the index (the web app's home, sessions and timeline
around a record, an agent's health): each an index walk, never a pass over a layer.

    records, counts = ledger_tally(db, gate, ("decision", "constraint"), room, 6)
    rooms = active_rooms(db, gate, scan=5000, n=12)
    told = transcript(db, "finn", session_id, chars=600)   # Told(messages, tool_calls, ...)

Every query that returns memory takes the principal's gate (`Gate.sql_filter`); the
counts of sources and bad lines of one agent's folder (`agent_sources`) are the index's
bookkeeping, asked after the caller checked it may read that agent.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from memstrata.index.queries import DocFilter, DocRow, _select, where
from memstrata.values import value_type

if TYPE_CHECKING:
    from memstrata.index.db import Database
    from memstrata.policy.scope import Gate


# -- the ledger's records in force ----------------------------------------------------------
def _ledger_where(
    scope: Gate, kinds: list[str], room: str | None, *, live: bool
) -> tuple[str, list[Any]]:
    """The WHERE of the ledger records of `kinds`, room-less or of `room`, that
    `docs_layer_kind` (layer, kind, superseded, room, ts) answers as far as it goes.

    Records in force or replaced alike are asked as `superseded IN (0, 1)` (the column
    holds nothing else) and a room-less principal's as `room IS NULL` (`room = NULL` is
    never true), so that the lookup reaches the room column: a store whose ledger is
    mostly other rooms' is not read through for one agent's few records."""
    scope_sql, scope_params = scope.sql_filter("d")
    marks = ",".join("?" * len(kinds))
    alive = "d.superseded = 0" if live else "d.superseded IN (0, 1)"
    rooms = "d.room IS NULL" if room is None else "(d.room IS NULL OR d.room = ?)"
    return (
        f"d.layer = 'ledger' AND d.kind IN ({marks}) AND {alive} AND {rooms} AND {scope_sql}",
        [*kinds, *([] if room is None else [room]), *scope_params],
    )


def ledger_records(
    db: Database,
    scope: Gate,
    kinds: list[str],
    room: str | None,
    *,
    live: bool = True,
    limit: int | None = None,
) -> list[dict[str, Any]]:
    """The ledger records (their JSON) of `kinds`, room-less or of `room`, newest first
    (`docs_layer_kind`): never the newest entries of every room filtered afterwards.

    All of them (no `limit`) are found through `docs_layer_kind` and then sorted
    (`+d.ts`: SQLite would otherwise walk `docs_layer_ts`, every room's ledger entries
    in time order, to spare the sort); a page walks in time order and stops early."""
    if not kinds:
        return []
    sql, args = _ledger_where(scope, kinds, room, live=live)
    order = "+d.ts" if limit is None else "d.ts"
    with db.read() as conn:
        rows = conn.execute(
            f"SELECT d.meta FROM docs d WHERE {sql} ORDER BY {order} DESC LIMIT ?",
            [*args, -1 if limit is None else limit],
        ).fetchall()
    return [json.loads(r[0]) for r in rows if r[0]]


def ledger_tally(
    db: Database, scope: Gate, kinds: list[str], room: str | None, limit: int
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The first `limit` live records of `kinds` (in the order of `kinds`, newest first
    within a kind) and how many of each kind are live: one count and one page."""
    if not kinds:
        return [], {}
    sql, args = _ledger_where(scope, kinds, room, live=True)
    order = " ".join(f"WHEN ? THEN {n}" for n in range(len(kinds)))
    with db.read() as conn:
        counts = dict(
            conn.execute(f"SELECT d.kind, count(*) FROM docs d WHERE {sql} GROUP BY d.kind", args)
        )
        rows = conn.execute(
            f"SELECT d.meta FROM docs d WHERE {sql} "
            f"ORDER BY CASE d.kind {order} END, d.ts DESC LIMIT ?",
            [*args, *kinds, limit],
        ).fetchall()
    return [json.loads(r[0]) for r in rows if r[0]], {
        k: int(counts[k]) for k in kinds if counts.get(k)
    }


def active_rooms(db: Database, scope: Gate, *, scan: int, n: int) -> list[str]:
    """The rooms of the newest live ledger entries `scope` may read, the most recently
    written first, at most `n` (a walk of at most `scan` entries)."""
    scope_sql, scope_params = scope.sql_filter("d")
    rooms: list[str] = []
    with db.read() as conn:
        rows = conn.execute(
            "SELECT d.room FROM docs d WHERE d.layer = 'ledger' AND d.room IS NOT NULL "
            f"AND d.superseded = 0 AND {scope_sql} ORDER BY d.ts DESC LIMIT ?",
            [*scope_params, scan],
        )
        for (room,) in rows:
            if room not in rooms:
                rooms.append(str(room))
                if len(rooms) == n:
                    break
    return rooms


# -- sessions -------------------------------------------------------------------------------
@value_type(frozen=True)
class Told:
    """What one transcript holds, from the index: counts (a tool call and its result are
    one call), its span, its first user message and last assistant message (cut)."""

    messages: int
    tool_calls: int
    start: float | None
    end: float | None
    first_prompt: str | None
    last_answer: str | None


def latest_thread(db: Database, owner: str | None, layer: str = "session") -> str | None:
    """The thread (session id) of `owner`'s newest record of `layer`, or None."""
    with db.read() as conn:
        row = conn.execute(
            "SELECT thread FROM docs WHERE owner = ? AND layer = ? ORDER BY ts DESC LIMIT 1",
            (owner, layer),
        ).fetchone()
    return str(row[0]) if row and row[0] else None


def threads_between(
    db: Database, owner: str | None, lo: float, hi: float, *, limit: int = 20
) -> list[str]:
    """The sessions of `owner` with a message in [lo, hi], by the (owner, layer, ts) index."""
    with db.read() as conn:
        rows = conn.execute(
            "SELECT thread FROM docs WHERE owner = ? AND layer = 'session' AND ts BETWEEN ? AND ?"
            " AND thread IS NOT NULL GROUP BY thread ORDER BY min(ts) LIMIT ?",
            (owner, lo, hi, limit),
        ).fetchall()
    return [str(r[0]) for r in rows]


def talk(
    db: Database, owner: str | None, thread: str, *, n: int, chars: int, last: bool = False
) -> list[tuple[str, str]]:
    """The first (or, with `last`, the last) `n` user and assistant messages of one
    session as (kind, body cut to `chars`), in the transcript's order."""
    order = "DESC" if last else "ASC"
    with db.read() as conn:
        rows = conn.execute(
            f"SELECT kind, substr(body, 1, {int(chars)}) FROM docs WHERE thread = ?"
            " AND +owner = ? AND +layer = 'session' AND +kind IN ('user', 'assistant')"
            f" ORDER BY pos {order} LIMIT ?",
            (thread, owner, n),
        ).fetchall()
    out = [(str(k), str(b)) for k, b in rows]
    return out[::-1] if last else out


def transcript(db: Database, owner: str | None, thread: str, *, chars: int) -> Told | None:
    """`Told` of one session of `owner` (None: no message indexed). A walk of its messages
    by the thread index (`+owner`, `+layer`: never a scan of all the agent's messages)."""
    mine = "thread = ? AND +owner = ? AND +layer = 'session'"
    with db.read() as conn:
        n, calls, lo, hi = conn.execute(
            "SELECT count(*), sum(kind IN ('tool_call', 'tool_use')), min(ts), max(ts) "
            f"FROM docs WHERE {mine}",
            (thread, owner),
        ).fetchone()
        if not n:
            return None
        said = [
            conn.execute(
                f"SELECT substr(body, 1, {int(chars)}) FROM docs WHERE {mine} "
                f"AND +kind = ? ORDER BY pos {order} LIMIT 1",
                (thread, owner, role),
            ).fetchone()
            for role, order in (("user", "ASC"), ("assistant", "DESC"))
        ]
    return Told(
        int(n),
        int(calls or 0),
        lo,
        hi,
        said[0][0] if said[0] else None,
        said[1][0] if said[1] else None,
    )


def pos_before(db: Database, source: str, thread: str, pos: int, n: int) -> int:
    """The position `n` messages before `pos` in one transcript (-1: fewer than that)."""
    with db.read() as conn:
        rows = conn.execute(
            "SELECT pos FROM docs WHERE thread = ? AND source = ? AND pos < ? "
            "ORDER BY pos DESC LIMIT ?",
            (thread, source, pos, n + 1),
        ).fetchall()
    return int(rows[n][0]) if len(rows) > n else -1


# -- the timeline around a record -----------------------------------------------------------
def place_of(db: Database, scope: Gate, uid: str, owner: str) -> tuple[float, int] | None:
    """(ts, row id) of `owner`'s record `uid`, if `scope` may read it."""
    scope_sql, scope_params = scope.sql_filter("d")
    with db.read() as conn:
        row = conn.execute(
            f"SELECT d.ts, d.id FROM docs d WHERE d.uid = ? AND d.owner = ? AND {scope_sql}",
            [uid, owner, *scope_params],
        ).fetchone()
    return (float(row[0]), int(row[1])) if row else None


def oldest_after(
    db: Database, f: DocFilter, after: tuple[float, int], limit: int, *, body_chars: int
) -> list[DocRow]:
    """At most `limit` rows matching `f` (its `before` unset) at or after the cursor
    `after`, oldest first: the page just newer than one."""
    sql, params = where(f)
    ts, row = after
    with db.read() as conn:
        rows = conn.execute(
            f"SELECT {_select('d', body_chars)} FROM docs d WHERE {sql} "
            "AND (d.ts > ? OR (d.ts = ? AND d.id >= ?)) ORDER BY d.ts ASC, d.id ASC LIMIT ?",
            [*params, ts, ts, row, limit],
        ).fetchall()
    return [DocRow._make(r) for r in rows]


# -- one agent's folder, as indexed ------------------------------------------------------------
@value_type(frozen=True)
class Indexed:
    """What the index holds of the files below one folder: each source's (path, size,
    version), the records of an owner, the first bad lines and how many there are."""

    sources: list[tuple[str, int | None, str | None]]
    docs: int
    bad_lines: list[tuple[str, int, str]]
    problems: int


def agent_sources(db: Database, prefix: str, owner: str, *, show: int) -> Indexed:
    """`Indexed` of the sources whose path starts with `prefix` (ending in '/')."""
    hi = prefix[:-1] + "0"  # '0' follows '/': every path below the folder
    below = "source >= ? AND source < ?"
    with db.read() as conn:
        known = conn.execute(
            "SELECT path, size, version FROM sources WHERE path >= ? AND path < ?",
            (prefix, hi),
        ).fetchall()
        docs = conn.execute("SELECT count(*) FROM docs WHERE owner = ?", (owner,)).fetchone()[0]
        bad = conn.execute(
            f"SELECT source, offset, reason FROM bad_lines WHERE {below} "
            "ORDER BY source, offset LIMIT ?",
            (prefix, hi, show),
        ).fetchall()
        problems = conn.execute(
            f"SELECT count(*) FROM bad_lines WHERE {below}", (prefix, hi)
        ).fetchone()[0]
    return Indexed(
        [(str(p), s, v) for p, s, v in known],
        int(docs),
        [(str(s), int(o), str(r)) for s, o, r in bad],
        int(problems),
    )
