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

A source file that disappeared takes its docs with it.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
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


def index_append(
    db: Database,
    spec: SourceSpec,
    start: int,
    end: int,
    own: Parsed,
    ino: int | None = None,
) -> None:
    """Index a record a writer just appended at [start, end), catching up any gap first."""
    path = str(spec.path)
    with db.write() as conn:
        row = conn.execute("SELECT offset, ino FROM sources WHERE path = ?", (path,)).fetchone()
        offset = row[0] if row else 0
        if row is not None and ino is not None and row[1] is not None and row[1] != ino:
            offset = 0  # the file was replaced (compaction) since we last looked
            delete_source(conn, path)
        if offset < start:
            gap = read_from(spec.path, offset)[: start - offset]
            parsed = spec.parse(gap, offset)
            # Appends are serialised by the file lock and a torn tail is newline-
            # terminated before the next append, so the gap holds only whole lines.
            apply_parsed(conn, parsed)
        apply_parsed(conn, own)
        new_offset = max(offset, end)
        _set_source(
            conn, path, "append", ino, None, None, new_offset, _read_anchor(spec.path, new_offset)
        )


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
) -> None:
    conn.execute(
        """
        INSERT INTO sources(path, mode, ino, size, mtime_ns, offset, anchor)
        VALUES (?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT(path) DO UPDATE SET mode=excluded.mode,
            ino=COALESCE(excluded.ino, sources.ino), size=excluded.size,
            mtime_ns=excluded.mtime_ns, offset=excluded.offset, anchor=excluded.anchor
        """,
        (path, mode, ino, size, mtime_ns, offset, anchor),
    )


def index_whole(db: Database, spec: SourceSpec, *, force: bool = False) -> bool:
    """Re-parse a whole-file source if it changed (or `force`). Returns True if re-parsed."""
    path = str(spec.path)
    try:
        st = os.stat(spec.path)
    except FileNotFoundError:
        with db.write() as conn:
            delete_source(conn, path)
            conn.execute("DELETE FROM sources WHERE path = ?", (path,))
        return True
    with db.write() as conn:
        if not force:
            row = conn.execute(
                "SELECT ino, size, mtime_ns FROM sources WHERE path = ?", (path,)
            ).fetchone()
            if row == (st.st_ino, st.st_size, st.st_mtime_ns):
                return False
        data = read_from(spec.path, 0)
        parsed = spec.parse(data, 0)
        replace_source_docs(conn, path, parsed)
        _set_source(conn, path, "whole", st.st_ino, st.st_size, st.st_mtime_ns, len(data), None)
    return True


def catch_up_append(db: Database, spec: SourceSpec, report: SyncReport, force: bool) -> None:
    path = str(spec.path)
    try:
        st = os.stat(spec.path)
    except FileNotFoundError:
        _drop(db, path, report)
        return
    with db.write() as conn:
        row = conn.execute(
            "SELECT offset, ino, anchor FROM sources WHERE path = ?", (path,)
        ).fetchone()
        offset, ino, anchor = row if row else (0, None, None)
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
            offset = 0
        if st.st_size == offset and not rewritten:
            if row is not None and ino is None:
                _set_source(conn, path, "append", st.st_ino, st.st_size, None, offset, anchor)
            return
        data = read_from(spec.path, offset)
        parsed = spec.parse(data, offset)
        apply_parsed(conn, parsed)
        new_offset = offset + parsed.consumed
        _set_source(
            conn, path, "append", st.st_ino, st.st_size, None, new_offset,
            _read_anchor(spec.path, new_offset) if new_offset else b"",
        )
        report.docs_written += len(parsed.docs)
        report.bad_lines += len(parsed.bad)
        (report.reparsed if rewritten else report.appended).append(path)


def _drop(db: Database, path: str, report: SyncReport) -> None:
    with db.write() as conn:
        if conn.execute("SELECT 1 FROM sources WHERE path = ?", (path,)).fetchone():
            delete_source(conn, path)
            conn.execute("DELETE FROM sources WHERE path = ?", (path,))
            report.removed.append(path)


def sync_sources(
    db: Database, specs: Iterable[SourceSpec], *, root: Path, force: bool = False
) -> SyncReport:
    """Bring the index up to date with every listed source; drop sources no longer present."""
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
    prefix = str(root)
    for path in known:
        if path.startswith(prefix) and path not in seen:
            _drop(db, path, report)
    return report
