"""Keep the index caught up with the files, whoever wrote them.

Two kinds of source:

* **append** sources (ledger, LOG.md, channels, transcripts, facts) are indexed
  incrementally. `sources.offset` is how far the file has been indexed. A writer
  that appends bytes [start, end) indexes, in one transaction, any gap
  [offset, start) left by a writer that died before indexing, then its own
  record, then moves offset to max(offset, end). Opening a store parses
  [offset, size) of every append source. A file whose inode changed, which
  shrank, or whose bytes just before `offset` differ from the stored anchor was
  rewritten (compaction, hand edit): it is re-parsed whole.
* **whole** sources (NOW.md, CONTEXT.md, memory files, tasks.json, items.json)
  are re-parsed whenever inode, size or mtime changed.

A source file that disappeared takes its docs with it. Every catch-up looks
before it writes: a source that did not change costs a `stat` and one indexed
read, never a write transaction. `sources.lines` counts the lines before
`offset`, so records parsed incrementally still get their 1-based line numbers.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from memstrata.files.appendlog import read_from
from memstrata.index.db import Database
from memstrata.index.docs import Parsed, apply_parsed, delete_source, replace_source_docs

ANCHOR_BYTES = 32

Parser = Callable[[bytes, int], Parsed]


@dataclass(frozen=True)
class SourceSpec:
    """A file some layer owns, how it grows, and the parser that turns bytes into docs."""

    path: Path
    mode: str  # "append" | "whole"
    parse: Parser


@dataclass
class SyncReport:
    scanned: int = 0
    reparsed: list[str] = field(default_factory=list)
    appended: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    bad_lines: int = 0
    docs_written: int = 0


def number_lines(parsed: Parsed, data: bytes, base: int, base_line: int) -> Parsed:
    """Give each doc that has a byte `offset` its 1-based line number.

    `data` starts at byte `base` of the file, which has `base_line` lines before it:
    line(doc) = base_line + (newlines in data before doc.offset) + 1.
    """
    if not any(d.offset is not None for d in parsed.docs):
        return parsed
    order = sorted((d.offset - base, i) for i, d in enumerate(parsed.docs) if d.offset is not None)
    docs = list(parsed.docs)
    seen, counted = 0, base_line
    for rel, i in order:
        counted += data.count(b"\n", seen, max(seen, rel))
        seen = max(seen, rel)
        docs[i] = replace(docs[i], line=counted + 1)
    parsed.docs = docs
    return parsed


def _lines_before(path: Path, offset: int, stored: int | None) -> int:
    """Lines before `offset` (the stored count, or counted from the file if unknown)."""
    if stored is not None or offset == 0:
        return stored or 0
    return read_from(path, 0)[:offset].count(b"\n")


def index_append(db: Database, spec: SourceSpec, start: int, data: bytes, ino: int) -> None:
    """Index a record a writer just appended at [start, start+len(data)), catching up
    any gap first."""
    path = str(spec.path)
    end = start + len(data)
    with db.write() as conn:
        row = conn.execute(
            "SELECT offset, ino, lines FROM sources WHERE path = ?", (path,)
        ).fetchone()
        offset, lines = (row[0], _lines_before(spec.path, row[0], row[2])) if row else (0, 0)
        if row is not None and row[1] is not None and row[1] != ino:
            offset, lines = 0, 0  # the file was replaced (compaction) since we last looked
            delete_source(conn, path)
        if offset >= end:
            return  # another process's catch-up already indexed this record
        if offset < start:
            gap = read_from(spec.path, offset)[: start - offset]
            # Appends are serialised by the file lock and a torn tail is newline-
            # terminated before the next append, so the gap holds only whole lines.
            apply_parsed(conn, number_lines(spec.parse(gap, offset), gap, offset, lines))
            lines += gap.count(b"\n")
        apply_parsed(conn, number_lines(spec.parse(data, start), data, start, lines))
        _set_source(conn, path, "append", ino, None, None, end, _read_anchor(spec.path, end),
                    lines + data.count(b"\n"))


def _read_anchor(path: Path, offset: int) -> bytes:
    start = max(0, offset - ANCHOR_BYTES)
    with open(path, "rb") as fh:
        fh.seek(start)
        return fh.read(offset - start)


def _set_source(
    conn: sqlite3.Connection,
    path: str,
    mode: str,
    ino: int | None,
    size: int | None,
    mtime_ns: int | None,
    offset: int,
    anchor: bytes | None,
    lines: int | None,
) -> None:
    conn.execute(
        """
        INSERT INTO sources(path, mode, ino, size, mtime_ns, offset, anchor, lines)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT(path) DO UPDATE SET mode=excluded.mode,
            ino=COALESCE(excluded.ino, sources.ino), size=excluded.size,
            mtime_ns=excluded.mtime_ns, offset=excluded.offset, anchor=excluded.anchor,
            lines=excluded.lines
        """,
        (path, mode, ino, size, mtime_ns, offset, anchor, lines),
    )


def index_whole(db: Database, spec: SourceSpec, *, force: bool = False) -> bool:
    """Re-parse a whole-file source if it changed (or `force`). Returns True if re-parsed."""
    path = str(spec.path)
    try:
        st = os.stat(spec.path)
    except FileNotFoundError:
        with db.read() as conn:
            known = conn.execute("SELECT 1 FROM sources WHERE path = ?", (path,)).fetchone()
        if known is None and not force:
            return False
        with db.write() as conn:
            delete_source(conn, path)
            conn.execute("DELETE FROM sources WHERE path = ?", (path,))
        return True
    held = (st.st_ino, st.st_size, st.st_mtime_ns)
    if not force and _whole_row(db, path) == held:
        return False
    with db.write() as conn:
        if not force and _whole_row(db, path, conn) == held:
            return False  # another process re-parsed it meanwhile
        data = read_from(spec.path, 0)
        parsed = number_lines(spec.parse(data, 0), data, 0, 0)
        replace_source_docs(conn, path, parsed)
        _set_source(conn, path, "whole", st.st_ino, st.st_size, st.st_mtime_ns, len(data), None,
                    data.count(b"\n"))
    return True


def _whole_row(
    db: Database, path: str, conn: sqlite3.Connection | None = None
) -> tuple[int, int, int] | None:
    sql = "SELECT ino, size, mtime_ns FROM sources WHERE path = ?"
    if conn is not None:
        row = conn.execute(sql, (path,)).fetchone()
    else:
        with db.read() as c:
            row = c.execute(sql, (path,)).fetchone()
    return None if row is None else (row[0], row[1], row[2])


def _append_current(db: Database, spec: SourceSpec, st: os.stat_result) -> bool:
    """True when an append source's index row already covers the file as it is."""
    with db.read() as conn:
        row = conn.execute(
            "SELECT offset, ino, anchor FROM sources WHERE path = ?", (str(spec.path),)
        ).fetchone()
    if row is None:
        return st.st_size == 0
    offset, ino, anchor = row
    return (
        st.st_size == offset
        and ino == st.st_ino
        and (offset == 0 or _read_anchor(spec.path, offset) == (anchor or b""))
    )


def catch_up_append(db: Database, spec: SourceSpec, report: SyncReport, force: bool) -> None:
    path = str(spec.path)
    try:
        st = os.stat(spec.path)
    except FileNotFoundError:
        _drop(db, path, report)
        return
    if not force and _append_current(db, spec, st):
        return
    with db.write() as conn:
        row = conn.execute(
            "SELECT offset, ino, anchor, lines FROM sources WHERE path = ?", (path,)
        ).fetchone()
        offset, ino, anchor, lines = row if row else (0, None, None, 0)
        rewritten = force or (
            row is not None
            and (
                (ino is not None and ino != st.st_ino)
                or st.st_size < offset
                or (offset > 0 and _read_anchor(spec.path, offset) != (anchor or b""))
            )
        )
        if rewritten:
            delete_source(conn, path)
            offset, lines = 0, 0
        if st.st_size == offset and not rewritten:
            if row is not None and ino is None:
                _set_source(conn, path, "append", st.st_ino, st.st_size, None, offset, anchor,
                            lines)
            return
        lines = _lines_before(spec.path, offset, lines)
        data = read_from(spec.path, offset)
        parsed = number_lines(spec.parse(data, offset), data, offset, lines)
        apply_parsed(conn, parsed)
        new_offset = offset + parsed.consumed
        _set_source(
            conn, path, "append", st.st_ino, st.st_size, None, new_offset,
            _read_anchor(spec.path, new_offset) if new_offset else b"",
            lines + data.count(b"\n", 0, parsed.consumed),
        )
        report.docs_written += len(parsed.docs)
        report.bad_lines += len(parsed.bad)
        (report.reparsed if rewritten else report.appended).append(path)


def is_current(db: Database, spec: SourceSpec) -> bool:
    """True when the index already holds `spec`'s file as it is (read-only check)."""
    try:
        st = os.stat(spec.path)
    except FileNotFoundError:
        with db.read() as conn:
            row = conn.execute("SELECT 1 FROM sources WHERE path = ?", (str(spec.path),))
            return row.fetchone() is None
    if spec.mode == "append":
        return _append_current(db, spec, st)
    return _whole_row(db, str(spec.path)) == (st.st_ino, st.st_size, st.st_mtime_ns)


def refresh(db: Database, specs: Iterable[SourceSpec], report: SyncReport) -> None:
    """Catch the given sources up with their files (a watcher said they changed), in
    one write transaction, taken only if one of them really changed."""
    stale = [s for s in specs if not is_current(db, s)]
    if not stale:
        return
    with db.write():
        for spec in stale:
            if spec.mode == "append":
                catch_up_append(db, spec, report, False)
            elif index_whole(db, spec):
                report.reparsed.append(str(spec.path))


def _drop(db: Database, path: str, report: SyncReport) -> None:
    with db.read() as conn:
        if conn.execute("SELECT 1 FROM sources WHERE path = ?", (path,)).fetchone() is None:
            return
    with db.write() as conn:
        if conn.execute("SELECT 1 FROM sources WHERE path = ?", (path,)).fetchone():
            delete_source(conn, path)
            conn.execute("DELETE FROM sources WHERE path = ?", (path,))
            report.removed.append(path)


def sync_sources(
    db: Database, specs: Iterable[SourceSpec], *, root: Path | list[Path], force: bool = False
) -> SyncReport:
    """Bring the index up to date with every listed source; drop sources no longer present
    under `root` (the store folder, and any indexed project folder)."""
    report = SyncReport()
    seen: set[str] = set()
    for spec in specs:
        seen.add(str(spec.path))
        report.scanned += 1
        if spec.mode == "append":
            catch_up_append(db, spec, report, force)
        elif index_whole(db, spec, force=force):
            report.reparsed.append(str(spec.path))
    with db.read() as conn:
        known = [r[0] for r in conn.execute("SELECT path FROM sources")]
    prefixes = tuple(str(r) for r in (root if isinstance(root, list) else [root]))
    for path in known:
        if path.startswith(prefixes) and path not in seen:
            _drop(db, path, report)
    return report
