"""Keep the index caught up with the truth, whoever wrote it.

Every read goes through the store's `files.truth.Truth` (the files of a folder,
or PostgreSQL), by store-relative path; the index keys a source by its path
below the store's home. Two kinds of source:

* **append** sources (ledger, LOG.md, channels, transcripts, facts) are indexed
  incrementally. `sources.offset` is how far the source has been indexed. A
  writer that appends bytes [start, end) indexes, in one transaction, any gap
  [offset, start) left by a writer that died before indexing, then its own
  record, then moves offset to max(offset, end). Opening a store parses
  [offset, size) of every append source. A source whose generation changed
  (an inode, for files), which shrank, or whose bytes just before `offset`
  differ from the stored anchor was rewritten (compaction, hand edit): it is
  re-parsed whole. So is one edited in place without changing its length (an
  editor that saves over the file): its size and generation are the indexed
  ones but its version is not, and `sources.prefix_crc`, a CRC-32 of the
  indexed bytes [0, offset) kept up to date as records are indexed (CRC-32
  continues from a stored value, so no append re-reads the prefix), no longer
  matches. Only that case reads the whole prefix; a pure append never does.
  (An in-place edit followed by an append before any catch-up saw the edit is
  not detected until `reindex`: checking every append would read every prefix.)
* **whole** sources (NOW.md, CONTEXT.md, memory files, tasks.json, items.json)
  are re-parsed whenever their version changed.

A source that disappeared takes its docs with it. Every catch-up looks before it
writes: a source whose version is the one indexed costs a `stat` and one indexed
read, never a write transaction nor a read of its bytes. `sources.lines` counts
the lines before `offset`, so records parsed incrementally still get their
1-based line numbers.
"""

from __future__ import annotations

import sqlite3
import zlib
from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from typing import Any

from memstrata.files.local import LocalTruth
from memstrata.files.locks import LockTable
from memstrata.files.truth import Content, Entry, Truth
from memstrata.index.db import Database
from memstrata.index.docs import Parsed, apply_parsed, delete_source, replace_source_docs
from memstrata.values import field, value_type

ANCHOR_BYTES = 32
PREFIX_CHUNK = 1 << 20  # bytes read at a time when checking an indexed prefix

Parser = Callable[[bytes, int], Parsed]


@value_type(frozen=True)
class SourceSpec:
    """A file some layer owns, how it grows, and the parser that turns bytes into docs."""

    path: Path
    mode: str  # "append" | "whole"
    parse: Parser


def counted_sources(
    specs: list[SourceSpec], progress: Callable[[int, int], None]
) -> list[SourceSpec]:
    """The same sources, each calling `progress(done, total)` once parsed (0 first)."""
    total, done = len(specs), 0
    progress(0, total)

    def counted(spec: SourceSpec) -> SourceSpec:
        def parse(data: bytes, base: int) -> Parsed:
            nonlocal done
            out = spec.parse(data, base)
            done += 1
            progress(done, total)
            return out

        return SourceSpec(spec.path, spec.mode, parse)

    return [counted(s) for s in specs]


@value_type(frozen=True)
class Origin:
    """Where sources are read from (the truth) and the home their index keys hang under.

    A source outside the home is a project file indexed as the `sources` search scope:
    no store data, read where it is through a truth rooted at its folder. A sync whose
    origin has `with_home=False` (a sync of the project folders alone) leaves the
    store's own sources alone when it drops what it did not see.
    """

    truth: Truth
    home: Path
    with_home: bool = True

    def _where(self, spec: SourceSpec) -> tuple[Truth, str]:
        path, home = str(spec.path), str(self.home)
        if path.startswith(home) and path[len(home) : len(home) + 1] == "/":
            return self.truth, path[len(home) + 1 :]  # (pathlib's relative_to costs more)
        if not spec.path.is_absolute():
            return self.truth, spec.path.as_posix()

        folder = spec.path.parent  # read-only use: its lock table is never opened
        return LocalTruth(folder, LockTable(folder / ".locks")), spec.path.name

    def rel(self, spec: SourceSpec) -> str:
        return self._where(spec)[1]

    def stat(self, spec: SourceSpec) -> Entry | None:
        truth, rel = self._where(spec)
        return truth.stat(rel)

    def read(self, spec: SourceSpec) -> Content | None:
        truth, rel = self._where(spec)
        return truth.read(rel)

    def read_from(self, spec: SourceSpec, offset: int, length: int | None = None) -> bytes:
        truth, rel = self._where(spec)
        return truth.read_from(rel, offset, length)

    def owns(self, path: str) -> bool:
        """True if a sync through this origin may drop the index key `path` unseen."""
        home = str(self.home)
        if path.startswith(home) and path[len(home) : len(home) + 1] == "/":
            return self.with_home
        return True  # a project file (only `sources` keys lie outside the home)


@value_type
class SyncReport:
    """What one catch-up of the index did: sources looked at, re-read, appended to, dropped."""

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
        docs[i] = docs[i].but(line=counted + 1)
    parsed.docs = docs
    return parsed


def _lines_before(origin: Origin, spec: SourceSpec, offset: int, stored: int | None) -> int:
    """Lines before `offset` (the stored count, or counted from the source if unknown)."""
    if stored is not None or offset == 0:
        return stored or 0
    return origin.read_from(spec, 0, offset).count(b"\n")


def index_append(
    db: Database,
    origin: Origin,
    spec: SourceSpec,
    start: int,
    data: bytes,
    generation: int,
    version: str | None = None,
) -> int:
    """Index a record a writer just appended at [start, start+len(data)), catching up
    any gap first. `version` is the source's right after that append. Returns the
    docs the index holds of the source then (in the same transaction: what a check
    of its size, e.g. the LOG's compaction trigger, needs without another read)."""
    path = str(spec.path)
    end = start + len(data)
    with db.write() as conn:
        row = conn.execute(
            "SELECT offset, ino, lines, prefix_crc FROM sources WHERE path = ?", (path,)
        ).fetchone()
        offset, lines, crc = (
            (row[0], _lines_before(origin, spec, row[0], row[2]), row[3]) if row else (0, 0, 0)
        )
        if row is not None and row[1] is not None and row[1] != generation:
            offset, lines, crc = 0, 0, 0  # the source was replaced (compaction) since we looked
            delete_source(conn, path)
        if offset >= end:
            return _docs_of(conn, path)  # another process's catch-up already indexed it
        if offset < start:
            gap = origin.read_from(spec, offset, start - offset)
            # Appends are serialised by the source's lock and a torn tail is newline-
            # terminated before the next append, so the gap holds only whole lines.
            apply_parsed(conn, number_lines(spec.parse(gap, offset), gap, offset, lines))
            lines += gap.count(b"\n")
            crc = _extend(crc, gap)
        elif offset > start:
            crc = None  # part of the record was indexed already: the prefix CRC is lost
        apply_parsed(conn, number_lines(spec.parse(data, start), data, start, lines))
        _set_source(
            conn,
            path,
            "append",
            generation,
            end,
            offset=end,
            anchor=data[-ANCHOR_BYTES:]
            if len(data) >= ANCHOR_BYTES
            else _read_anchor(origin, spec, end),
            lines=lines + data.count(b"\n"),
            version=version,
            crc=_extend(crc, data),
        )
        return _docs_of(conn, path)


def _docs_of(conn: sqlite3.Connection, path: str) -> int:
    return int(conn.execute("SELECT count(*) FROM docs WHERE source = ?", (path,)).fetchone()[0])


def _extend(crc: int | None, data: bytes) -> int | None:
    """The CRC-32 of a prefix followed by `data` (None stays unknown)."""
    return None if crc is None else zlib.crc32(data, crc)


def _prefix_changed(origin: Origin, spec: SourceSpec, offset: int, crc: int | None) -> bool:
    """True unless the bytes [0, offset) still have the CRC they were indexed with
    (an unknown CRC counts as changed: re-parsing stores one)."""
    if crc is None:
        return True
    now, pos = 0, 0
    while pos < offset:
        chunk = origin.read_from(spec, pos, min(PREFIX_CHUNK, offset - pos))
        if not chunk:
            return True  # shorter than the indexed prefix
        now = zlib.crc32(chunk, now)
        pos += len(chunk)
    return now != crc


def _read_anchor(origin: Origin, spec: SourceSpec, offset: int) -> bytes:
    start = max(0, offset - ANCHOR_BYTES)
    return origin.read_from(spec, start, offset - start)


def _set_source(
    conn: sqlite3.Connection,
    path: str,
    mode: str,
    ino: int | None,
    size: int | None,
    *,
    offset: int,
    anchor: bytes | None,
    lines: int | None,
    version: str | None,
    crc: int | None = None,
) -> None:
    conn.execute(
        """
        INSERT INTO sources(path, mode, ino, size, mtime_ns, offset, anchor, lines, version,
                            prefix_crc)
        VALUES (?, ?, ?, ?, NULL, ?, ?, ?, ?, ?)
        ON CONFLICT(path) DO UPDATE SET mode=excluded.mode,
            ino=COALESCE(excluded.ino, sources.ino), size=excluded.size,
            mtime_ns=NULL, offset=excluded.offset, anchor=excluded.anchor,
            lines=excluded.lines, version=excluded.version, prefix_crc=excluded.prefix_crc
        """,
        (path, mode, ino, size, offset, anchor, lines, version, crc),
    )


def index_whole(db: Database, origin: Origin, spec: SourceSpec, *, force: bool = False) -> bool:
    """Re-parse a whole-file source if it changed (or `force`). Returns True if re-parsed."""
    path = str(spec.path)
    entry = origin.stat(spec)
    if entry is None or entry.is_dir:
        with db.read() as conn:
            known = conn.execute("SELECT 1 FROM sources WHERE path = ?", (path,)).fetchone()
        if known is None and not force:
            return False
        with db.write() as conn:
            delete_source(conn, path)
            conn.execute("DELETE FROM sources WHERE path = ?", (path,))
        return True
    if not force and _version(db, path) == entry.version:
        return False
    with db.write() as conn:
        if not force and _version(db, path, conn) == entry.version:
            return False  # another process re-parsed it meanwhile
        content = origin.read(spec)
        if content is None:  # deleted since the stat: the next catch-up drops it
            return False
        data = content.data
        parsed = number_lines(spec.parse(data, 0), data, 0, 0)
        replace_source_docs(conn, path, parsed)
        _set_source(
            conn,
            path,
            "whole",
            content.entry.generation,
            len(data),
            offset=len(data),
            anchor=None,
            lines=data.count(b"\n"),
            version=content.entry.version,
        )
    return True


def _version(db: Database, path: str, conn: sqlite3.Connection | None = None) -> str | None:
    sql = "SELECT version FROM sources WHERE path = ?"
    if conn is not None:
        row = conn.execute(sql, (path,)).fetchone()
    else:
        with db.read() as c:
            row = c.execute(sql, (path,)).fetchone()
    return None if row is None else row[0]


def _append_current(db: Database, origin: Origin, spec: SourceSpec, entry: Entry) -> bool:
    """True when an append source's index row already covers the source as it is.

    A new version of the same size and generation is never current here: it may be
    an in-place edit, which the write path checks against the prefix CRC.
    """
    with db.read() as conn:
        row = conn.execute(
            "SELECT offset, ino, anchor, version, size FROM sources WHERE path = ?",
            (str(spec.path),),
        ).fetchone()
    if row is None:
        return entry.size == 0
    offset, ino, anchor, version, size = row
    if version is not None:
        if version == entry.version:
            return bool(offset == entry.size)
        if size == entry.size and ino == entry.generation:
            return False  # same length, new version: edited in place?
    return (
        entry.size == offset
        and ino == entry.generation
        and (offset == 0 or _read_anchor(origin, spec, offset) == (anchor or b""))
    )


def _edited_in_place(origin: Origin, spec: SourceSpec, entry: Entry, row: tuple[Any, ...]) -> bool:
    """The source kept its size and generation under a new version, and the prefix
    the index holds is no longer what the source holds."""
    offset, ino, _anchor, _lines, crc, size, version = row
    return (
        version is not None
        and version != entry.version
        and size == entry.size
        and ino == entry.generation
        and _prefix_changed(origin, spec, offset, crc)
    )


def catch_up_append(
    db: Database, origin: Origin, spec: SourceSpec, report: SyncReport, force: bool
) -> None:
    path = str(spec.path)
    entry = origin.stat(spec)
    if entry is None or entry.is_dir:
        _drop(db, path, report)
        return
    if not force and _append_current(db, origin, spec, entry):
        return
    with db.write() as conn:
        # Looked at again under the index's write lock: another thread or process may
        # have indexed appends made after the look above, and a size from before them
        # reads as a source that shrank below the indexed offset (a rewrite). It would be
        # re-parsed up to that old size only, and those appends would be out of the index
        # until this source's next catch-up, which may never come (a LOG gone quiet).
        entry = origin.stat(spec)
        if entry is None or entry.is_dir:
            _drop(db, path, report)
            return
        row = conn.execute(
            "SELECT offset, ino, anchor, lines, prefix_crc, size, version FROM sources "
            "WHERE path = ?",
            (path,),
        ).fetchone()
        offset, ino, anchor, lines, crc = row[:5] if row else (0, None, None, 0, 0)
        rewritten = force or (
            row is not None
            and (
                (ino is not None and ino != entry.generation)
                or entry.size < offset
                or (offset > 0 and _read_anchor(origin, spec, offset) != (anchor or b""))
                or _edited_in_place(origin, spec, entry, row)
            )
        )
        if rewritten:
            delete_source(conn, path)
            offset, lines, crc = 0, 0, 0
        if entry.size == offset and not rewritten:
            if row is not None:
                _set_source(
                    conn,
                    path,
                    "append",
                    entry.generation,
                    entry.size,
                    offset=offset,
                    anchor=anchor,
                    lines=lines,
                    version=entry.version,
                    crc=crc,
                )
            return
        lines = _lines_before(origin, spec, offset, lines)
        data = origin.read_from(spec, offset, max(0, entry.size - offset))
        parsed = number_lines(spec.parse(data, offset), data, offset, lines)
        apply_parsed(conn, parsed)
        new_offset = offset + parsed.consumed
        consumed = data[: parsed.consumed]
        _set_source(
            conn,
            path,
            "append",
            entry.generation,
            entry.size,
            offset=new_offset,
            anchor=(
                consumed[-ANCHOR_BYTES:]
                if len(consumed) >= ANCHOR_BYTES
                else _read_anchor(origin, spec, new_offset)
            )
            if new_offset
            else b"",
            lines=lines + data.count(b"\n", 0, parsed.consumed),
            version=entry.version,
            crc=_extend(crc, consumed),
        )
        report.docs_written += len(parsed.docs)
        report.bad_lines += len(parsed.bad)
        (report.reparsed if rewritten else report.appended).append(path)


def is_current(db: Database, origin: Origin, spec: SourceSpec) -> bool:
    """True when the index already holds `spec`'s source as it is (read-only check)."""
    entry = origin.stat(spec)
    if entry is None or entry.is_dir:
        with db.read() as conn:
            row = conn.execute("SELECT 1 FROM sources WHERE path = ?", (str(spec.path),))
            return row.fetchone() is None
    if spec.mode == "append":
        return _append_current(db, origin, spec, entry)
    return _version(db, str(spec.path)) == entry.version


def refresh(db: Database, origin: Origin, specs: Iterable[SourceSpec], report: SyncReport) -> None:
    """Catch the given sources up with the truth (a watcher said they changed), in
    one write transaction, taken only if one of them really changed."""
    stale = [s for s in specs if not is_current(db, origin, s)]
    if not stale:
        return
    with db.write():
        for spec in stale:
            if spec.mode == "append":
                catch_up_append(db, origin, spec, report, False)
            elif index_whole(db, origin, spec):
                report.reparsed.append(str(spec.path))


def known_below(db: Database, prefix: str) -> list[str]:
    """The index keys of the sources starting with `prefix` (a folder's path and a slash)."""
    with db.read() as conn:
        rows = conn.execute(
            "SELECT path FROM sources WHERE substr(path, 1, ?) = ?", (len(prefix), prefix)
        ).fetchall()
    return [r[0] for r in rows]


def knows_outside(db: Database, prefix: str) -> bool:
    """True if the index holds a source not starting with `prefix` (a project file)."""
    with db.read() as conn:
        return (
            conn.execute(
                "SELECT 1 FROM sources WHERE substr(path, 1, ?) <> ? LIMIT 1", (len(prefix), prefix)
            ).fetchone()
            is not None
        )


def _drop(db: Database, path: str, report: SyncReport) -> None:
    with db.read() as conn:
        if conn.execute("SELECT 1 FROM sources WHERE path = ?", (path,)).fetchone() is None:
            return
    with db.write() as conn:
        if conn.execute("SELECT 1 FROM sources WHERE path = ?", (path,)).fetchone():
            delete_source(conn, path)
            conn.execute("DELETE FROM sources WHERE path = ?", (path,))
            report.removed.append(path)


def indexed_sources(db: Database) -> set[str]:
    """The index keys of every source the index holds (see `sync_sources`' `known`)."""
    with db.read() as conn:
        return {str(r[0]) for r in conn.execute("SELECT path FROM sources")}


def sync_sources(
    db: Database,
    origin: Origin,
    specs: Iterable[SourceSpec],
    *,
    force: bool = False,
    known: Collection[str] | None = None,
) -> SyncReport:
    """Bring the index up to date with every listed source; drop sources no longer present
    where `origin` reads (the store, and any indexed project folder).

    Dropped are the sources of `known` that `specs` did not list: give what the index
    held before the truth was listed (`indexed_sources`) when others may write meanwhile.
    A source made after the listing (a compaction's new archive, a new transcript) is
    indexed by its writer, perhaps while this sync runs; it is not one the listing
    missed, and dropping it would hide it from every read until it changes again
    (an archive never does). None: what the index holds at the end (nobody else writes:
    a new generation being built)."""
    report = SyncReport()
    seen: set[str] = set()
    for spec in specs:
        seen.add(str(spec.path))
        report.scanned += 1
        if spec.mode == "append":
            catch_up_append(db, origin, spec, report, force)
        elif index_whole(db, origin, spec, force=force):
            report.reparsed.append(str(spec.path))
    if known is None:
        known = indexed_sources(db)
    for path in sorted(known):
        if path not in seen and origin.owns(path):
            _drop(db, path, report)
    return report
