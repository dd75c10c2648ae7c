"""What the index stores: one `Doc` per searchable memory, plus fact rows; and the writes."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from typing import Any

from memstrata.files.jsonl import BadLine
from memstrata.index.masked import indexed
from memstrata.values import field, value_type


@value_type(frozen=True)
class Doc:
    """One searchable memory, whatever layer it comes from.

    `uid` is stable across reindexing (derived from the file, never from row ids
    or line numbers), so re-parsing a source replaces its docs instead of
    duplicating them. `line` is the 1-based line where the memory starts. Parsers
    of line-oriented sources give the record's byte `offset` instead, and the
    index turns it into a line number (`reconcile.number_lines`), because an
    incremental parse does not know how many lines precede its first byte.
    """

    uid: str
    layer: str
    ts: float
    body: str
    source: str
    owner: str | None = None
    room: str | None = None
    kind: str | None = None
    tags: tuple[str, ...] = ()
    title: str = ""
    context: str = ""
    line: int | None = None
    thread: str | None = None
    pos: int | None = None
    supersedes: str | None = None
    meta: dict[str, Any] | None = None
    secret: str | None = None  # kinds of secret the text looks like it holds (policy.secrets)
    hidden: bool = False  # never shown by default reads (a purged ledger entry's stub)
    offset: int | None = None

    def but(self, **changes: Any) -> Doc:
        """A copy with `changes` (`dataclasses.replace` without its per-field work, which
        was a fifth of indexing a store: two copies of every transcript message)."""
        if not changes.keys() <= self.__dict__.keys():
            raise TypeError(f"Doc has no field {sorted(changes.keys() - self.__dict__.keys())}")
        new = object.__new__(Doc)
        new.__dict__.update(self.__dict__, **changes)
        return new


@value_type
class Parsed:
    """What a layer's parser found in a byte range of one of its files."""

    docs: list[Doc] = field(default_factory=list)
    bad: list[BadLine] = field(default_factory=list)
    consumed: int = 0
    deletes: list[str] = field(default_factory=list)  # uids retracted (facts forgotten)
    # Transcript-like sources: give each doc the text of its thread neighbours within
    # this many positions (and its date) as `context`, re-computed as messages arrive.
    neighbour_radius: int = 0


_UPSERT = """
INSERT INTO docs (uid, layer, owner, room, kind, tags, ts, title, body, context, source,
                  line, thread, pos, supersedes, superseded, meta, secret)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
        EXISTS(SELECT 1 FROM docs d2 WHERE d2.supersedes = ?) OR ?, ?, ?)
ON CONFLICT(uid) DO UPDATE SET
    layer=excluded.layer, owner=excluded.owner, room=excluded.room, kind=excluded.kind,
    tags=excluded.tags, ts=excluded.ts, title=excluded.title, body=excluded.body,
    context=excluded.context, source=excluded.source, line=excluded.line,
    thread=excluded.thread, pos=excluded.pos, supersedes=excluded.supersedes, meta=excluded.meta,
    secret=excluded.secret, superseded=superseded OR excluded.superseded
"""


def tags_text(tags: Iterable[str]) -> str:
    return " ".join(tags)


def upsert_docs(conn: sqlite3.Connection, docs: Iterable[Doc]) -> int:
    rows = []
    superseding: list[str] = []
    for d in docs:
        rows.append(
            (
                d.uid,
                d.layer,
                d.owner,
                d.room,
                d.kind,
                tags_text(d.tags),
                d.ts,
                d.title,
                d.body,
                d.context,
                d.source,
                d.line,
                d.thread,
                d.pos,
                d.supersedes,
                d.uid,
                d.hidden,
                json.dumps(d.meta, ensure_ascii=False) if d.meta is not None else None,
                d.secret,
            )
        )
        if d.supersedes:
            superseding.append(d.supersedes)
    if len(rows) >= BULK_DOCS and len({r[0] for r in rows}) == len(rows):
        _upsert_bulk(conn, rows)
    elif rows:
        conn.executemany(_UPSERT, rows)
    if superseding:
        conn.executemany(
            "UPDATE docs SET superseded = 1 WHERE uid = ?", [(u,) for u in superseding]
        )
    return len(rows)


# A batch of at least this many docs (a transcript, a ledger caught up) fills FTS5 with
# one statement after its rows instead of one trigger call per row (`_upsert_bulk`).
BULK_DOCS = 64
_FTS_FROM_DOCS = (
    "INSERT INTO docs_fts(rowid, title, body, tags, context) "
    "SELECT id, title, body, tags, context FROM docs WHERE id > ?"
)


def _upsert_bulk(conn: sqlite3.Connection, rows: list[tuple[Any, ...]]) -> None:
    """`_UPSERT` of many rows of distinct uids, their FTS rows written after them.

    The insert trigger (`docs_ai`) made FTS5 take each new row in its own trigger
    program: at 100k entries half of the SQL time of indexing a store. Here the trigger
    is dropped, the rows written, the new rows (ids above the largest before, which is
    how SQLite numbers them) copied into `docs_fts` in one `INSERT ... SELECT`, and the
    trigger made again from its own text, all in the caller's write transaction (inside a
    savepoint): no other connection ever sees docs without their FTS rows or the table
    without its trigger, and a failure rolls all of it back. A row whose uid is already indexed is
    updated in place and its update trigger (`docs_au`) replaces its FTS row as before;
    the uids are distinct, so no row inserted here is updated before its FTS row exists.
    Outside a transaction (never the case in the store) the plain upsert runs.
    """
    trigger = conn.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'docs_ai'"
    ).fetchone()
    if trigger is None or not conn.in_transaction:
        conn.executemany(_UPSERT, rows)
        return
    conn.execute("SAVEPOINT bulk_docs")  # all or nothing, even if a caller goes on
    try:
        top = conn.execute("SELECT coalesce(max(id), 0) FROM docs").fetchone()[0]
        conn.execute("DROP TRIGGER docs_ai")
        conn.executemany(_UPSERT, rows)
        conn.execute(_FTS_FROM_DOCS, (top,))
        conn.execute(trigger[0])
    except BaseException:
        conn.execute("ROLLBACK TO bulk_docs")
        conn.execute("RELEASE bulk_docs")
        raise
    conn.execute("RELEASE bulk_docs")


def record_bad(conn: sqlite3.Connection, bad: Iterable[BadLine]) -> None:
    conn.executemany(
        "INSERT OR REPLACE INTO bad_lines(source, offset, reason, text) VALUES (?, ?, ?, ?)",
        [(b.path, b.offset, b.reason, b.text) for b in bad],
    )


def delete_source(conn: sqlite3.Connection, source: str, *, superseding: bool = True) -> None:
    """Forget everything indexed from one source file (before re-parsing it whole).

    `superseding=False` skips un-hiding entries this source superseded: only
    append sources (the ledger) ever supersede.
    """
    if superseding:
        conn.execute(
            "UPDATE docs SET superseded = 0 WHERE uid IN "
            "(SELECT supersedes FROM docs WHERE source = ? AND supersedes IS NOT NULL)",
            (source,),
        )
    conn.execute("DELETE FROM docs WHERE source = ?", (source,))
    conn.execute("DELETE FROM bad_lines WHERE source = ?", (source,))


def apply_parsed(conn: sqlite3.Connection, parsed: Parsed) -> None:
    """Write a parse's docs, their searchable text masked (`index.masked`: the index never
    holds a secret's text), then its deletes and bad lines."""
    _apply(conn, parsed, [indexed(d) for d in parsed.docs])


def _apply(conn: sqlite3.Connection, parsed: Parsed, docs: list[Doc]) -> None:
    if parsed.neighbour_radius and docs:
        docs = with_neighbour_context(conn, docs, parsed.neighbour_radius)
    upsert_docs(conn, docs)
    if parsed.deletes:
        conn.executemany("DELETE FROM docs WHERE uid = ?", [(u,) for u in parsed.deletes])
    if parsed.bad:
        record_bad(conn, parsed.bad)


# Neighbour context is for chat turns: a message of at most this many characters takes
# the words of the neighbours that are that short too; a longer message (an assistant's
# answer with code) carries its own context, and a long neighbour's words would drown a
# short message's own. On the long technical-conversation dev set, full neighbour text
# lowered lexical r@10 from 0.820 (none) to 0.690; short-with-short gives 0.773 there and
# leaves LoCoMo dev, where almost every turn is short, as it was (0.779).
SHORT_MESSAGE_CHARS = 600


def neighbour_context(texts: list[str], i: int, radius: int, date: str) -> str:
    """The text of the short neighbours of a short item `i` within `radius` positions,
    then its date (a long item: its date only)."""
    if len(texts[i]) > SHORT_MESSAGE_CHARS:
        return date
    lo, hi = max(0, i - radius), min(len(texts), i + radius + 1)
    parts = [texts[j] for j in range(lo, hi) if j != i and len(texts[j]) <= SHORT_MESSAGE_CHARS]
    return " ".join([*parts, date]).strip()


def _date_words(ts: float) -> str:
    from datetime import UTC, datetime

    dt = datetime.fromtimestamp(ts, UTC)
    return f"{dt.day} {dt:%B %Y}"


def with_neighbour_context(conn: sqlite3.Connection, docs: list[Doc], radius: int) -> list[Doc]:
    """Give each new thread doc its neighbours' text (radius either side) and its date as
    `context`, and refresh the already-indexed docs just before them, whose right-hand
    neighbours just arrived. A reply is then found by the words of the question it
    answers, and "when" questions match the day a message was written.
    """
    groups: dict[tuple[str, str], list[int]] = {}
    for i, d in enumerate(docs):
        if d.thread is not None and d.pos is not None:
            groups.setdefault((d.source, d.thread), []).append(i)
    out = list(docs)
    for (source, thread), idx in groups.items():
        idx.sort(key=lambda i: docs[i].pos or 0)
        first = docs[idx[0]].pos
        prev = conn.execute(
            "SELECT id, body, ts, context FROM docs WHERE source = ? AND thread = ? AND pos < ? "
            "ORDER BY pos DESC LIMIT ?",
            (source, thread, first, 2 * radius),
        ).fetchall()[::-1]
        texts = [r[1] for r in prev] + [docs[i].body for i in idx]
        updates = []
        for j in range(max(0, len(prev) - radius), len(prev)):
            ctx = neighbour_context(texts, j, radius, _date_words(prev[j][2]))
            if ctx != prev[j][3]:
                updates.append((ctx, prev[j][0]))
        if updates:
            conn.executemany("UPDATE docs SET context = ? WHERE id = ?", updates)
        for n, i in enumerate(idx):
            ctx = neighbour_context(texts, len(prev) + n, radius, _date_words(docs[i].ts))
            out[i] = docs[i].but(context=ctx)
    return out


def replace_source_docs(conn: sqlite3.Connection, source: str, parsed: Parsed) -> None:
    """Make a whole-file source's docs exactly `parsed.docs`, touching only what changed.

    Rewriting NOW.md usually changes one of its chunks: unchanged chunks keep
    their FTS rows (an FTS delete + insert is the expensive part of a rewrite);
    only their position, time and metadata columns are refreshed.
    """
    have = {
        uid: (title, body, tags, context)
        for uid, title, body, tags, context in conn.execute(
            "SELECT uid, title, body, tags, context FROM docs WHERE source = ?", (source,)
        )
    }
    new = {d.uid for d in parsed.docs}
    gone = [u for u in have if u not in new]
    if gone:
        conn.executemany("DELETE FROM docs WHERE uid = ?", [(u,) for u in gone])
    changed = []
    same = []
    for d in map(indexed, parsed.docs):
        if have.get(d.uid) == (d.title, d.body, tags_text(d.tags), d.context):
            same.append(
                (
                    d.ts,
                    d.line,
                    d.pos,
                    d.kind,
                    json.dumps(d.meta, ensure_ascii=False) if d.meta is not None else None,
                    d.uid,
                )
            )
        else:
            changed.append(d)
    if same:
        conn.executemany(
            "UPDATE docs SET ts = ?, line = ?, pos = ?, kind = ?, meta = ? WHERE uid = ?", same
        )
    conn.execute("DELETE FROM bad_lines WHERE source = ?", (source,))
    _apply(conn, parsed, changed)
