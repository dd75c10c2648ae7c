"""Warm memory: `LOG.md`, an append-only, timestamped, typed activity log.

Each entry is one Markdown block, written with a single durable append:

    ### 2026-11-22T10:30:00.123Z · TOOL_USE
    ran pytest: 12 passed
    <!-- log-1a2b3c4d {"tool": "pytest"} -->
    (blank line)

The footer carries the entry id and its metadata as JSON, invisible when the
Markdown is rendered; under the reserved key `_log` the writer records the
entry's `log_metadata` (`content_hash`, `token_count`), so a later hand edit of
the text shows as `edited`. Content lines that would read as a header or footer (or
that start with a backslash) are escaped with a leading backslash. The same
format is used by compaction archives, so archived entries stay searchable. With `[log] neighbour_context = N` each entry
is also indexed with the text of the N entries on either side (and its date), as
transcript messages are; off by default (see `config` for what it measured).

LOG.md is also a file people edit. Whatever they save stays visible
(`logblocks` has the grammar): CRLF endings, entries without a footer (the
last one included: once no writer of ours is appending, a block without a
footer is a hand entry), text between entries (its own block), copied footer
ids (each copy keeps a uid of its own). What cannot be read cleanly is kept
and reported as a bad line, which `doctor` lists.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstrata import limits
from memstrata.errors import LockTimeout, MalformedInput, StaleWrite
from memstrata.files.jsonl import BadLine
from memstrata.files.truth import MISSING, Appended
from memstrata.index import queries
from memstrata.index.docs import Doc, Parsed
from memstrata.index.reconcile import SourceSpec
from memstrata.layers.base import Layer, check_json, check_text
from memstrata.layers.logblocks import split_blocks
from memstrata.model import LOG_TYPES, LogEntry, estimate_tokens, iso, now_ts, parse_ts
from memstrata.store.signals import LogAppended

if TYPE_CHECKING:
    from memstrata.layers.base import Acting

LOG_HEADER = "# LOG\n\nAppend-only activity log (warm memory). Newest entries at the bottom.\n\n"
MAX_CONTENT_BYTES = limits.LOG_CONTENT_BYTES
_HEADER_LINES = frozenset(LOG_HEADER.splitlines())
RESERVED_META = "_log"  # footer key holding the writer's log_metadata record


def content_hash(content: str) -> str:
    """'sha256:<16 hex>' of an entry's text (line endings normalised)."""
    digest = hashlib.sha256(content.replace("\r\n", "\n").encode("utf-8")).hexdigest()
    return "sha256:" + digest[:16]


def log_metadata(content: str, footer: dict[str, Any], *, layer: str) -> dict[str, Any]:
    """The `log_metadata` of one parsed entry (pops the writer's record from `footer`)."""
    recorded = footer.pop(RESERVED_META, None)
    actual = content_hash(content)
    out: dict[str, Any] = {
        "content_hash": actual,
        "token_count": estimate_tokens(content),
        "compacted": layer == "archive",
    }
    if isinstance(recorded, dict) and recorded.get("content_hash") not in (None, actual):
        out["edited"] = True
    return out


def _escape(content: str) -> str:
    out = []
    for line in content.split("\n"):
        if line.startswith(("### ", "<!-- log-", "\\")):
            line = "\\" + line
        out.append(line)
    return "\n".join(out)


def _unescape(lines: list[str]) -> str:
    return "\n".join(line[1:] if line.startswith("\\") else line for line in lines).strip("\n")


def encode_entry(entry: LogEntry) -> bytes:
    record = {
        "content_hash": content_hash(entry.content),
        "token_count": estimate_tokens(entry.content),
    }
    footer = {**entry.metadata, RESERVED_META: record}
    meta = json.dumps(footer, ensure_ascii=False, sort_keys=True).replace("-->", "--\\u003e")
    text = f"### {entry.ts} · {entry.entry_type}\n{_escape(entry.content)}\n<!-- {entry.id} {meta} -->\n\n"
    return text.encode("utf-8")


# Preamble lines our writers produce (LOG.md's header, a compaction archive's head):
# not memories. Any other text before the first entry is kept as a text block.
_OWN_PREAMBLE = re.compile(
    r"^(# LOG( archive arc-[0-9a-f]+)?|\d+ entries compacted out of LOG\.md at \S+ Same format as "
    r"LOG\.md\.)$"
)
Taken = Callable[[list[str], int], set[str]]


def parse_log(
    data: bytes,
    base: int,
    path: str,
    *,
    owner: str | None,
    layer: str = "log",
    final: bool = False,
    taken: Taken | None = None,
    mtime: Callable[[], float] | None = None,
    neighbour_radius: int = 0,
    name: str | None = None,
) -> Parsed:
    """Entries and text blocks -> docs (grammar in `logblocks`).

    A LOG.md entry's uid is `log:<owner>:<id>`; an archived one's is
    `archive:<name>:<id>`, `name` being the archive's store-relative path (default `path`):
    a uid never carries where the store lives on a disk.

    An open last block is left unconsumed unless `final`. Every block becomes a
    doc, problems included (they are also reported as bad lines for `doctor`).
    A footer id already held by an earlier entry (in `data`, or before `base`
    according to `taken(uids, base)`) gets a uid of its own, `<id>@<offset>`,
    so a copied footer never replaces the entry it was copied from. A block with
    no time of its own before any entry is dated by `mtime()` (the file's).
    `neighbour_radius` > 0 gives each doc its neighbours' text as index context.
    """
    split = split_blocks(data, base, final=final)
    out = Parsed(consumed=split.consumed, neighbour_radius=neighbour_radius)
    prefix = f"log:{owner}:" if layer == "log" else f"{layer}:{name or path}:"
    own = [prefix + b.entry_id for b in split.blocks if b.entry_id]
    held = taken(own, base) if taken is not None and base > 0 and own else set()
    seen: set[str] = set()
    last_ts: float | None = None
    meta: dict[str, Any]
    for b in split.blocks:
        off = base + b.start
        problems = [b.problem] if b.problem else []
        if b.kind == "text":
            lines = [x for x in b.lines if not (b.preamble and _own_preamble(x))]
            content = "\n".join(lines).strip()
            if not content:
                continue
            entry_id, kind, ts_text, meta = f"log-text-{off:x}", "TEXT", None, {}
        else:
            content, kind, ts_text = _unescape(b.lines), b.entry_type or "", b.ts
            meta, bad_meta = _metadata(b.meta_json)
            problems += bad_meta
            entry_id = b.entry_id or f"log-hand-{off:x}"
        uid = prefix + entry_id
        if b.entry_id and (uid in seen or uid in held):
            uid = f"{uid}@{off:x}"
            problems.append(
                f"duplicate entry id {entry_id} (an earlier entry has it); "
                f"indexed as {uid.removeprefix(prefix)}"
            )
        seen.add(uid)
        ts = _block_ts(ts_text, last_ts, mtime, problems)
        last_ts = ts if b.kind == "entry" else last_ts
        for reason in problems:
            out.bad.append(BadLine(path, off, f"LOG entry: {reason}", content[:200]))
        info = log_metadata(content, meta, layer=layer)
        out.docs.append(
            Doc(
                uid=uid,
                layer=layer,
                ts=ts,
                title=kind,
                body=content,
                source=path,
                owner=owner,
                kind=kind,
                offset=off,
                thread=path,
                pos=off,
                meta={
                    "id": entry_id,
                    "ts": ts_text or iso(ts),
                    "entry_type": kind,
                    "content": content,
                    "metadata": meta,
                    **info,
                },
            )
        )
    return out


def _own_preamble(line: str) -> bool:
    return line in _HEADER_LINES or _OWN_PREAMBLE.match(line) is not None


def _metadata(raw: str | None) -> tuple[dict[str, Any], list[str]]:
    if raw is None:
        return {}, []
    try:
        meta = json.loads(raw)
    except json.JSONDecodeError as exc:
        return {}, [f"footer metadata is not JSON ({exc.msg}); entry kept without it"]
    if not isinstance(meta, dict):
        return {}, ["footer metadata is not a JSON object; entry kept without it"]
    return meta, []


def _block_ts(
    text: str | None, last: float | None, mtime: Callable[[], float] | None, problems: list[str]
) -> float:
    """The header's time; else (bad header, text block) the entry before's, else the file's."""
    if text is not None:
        try:
            return parse_ts(text)
        except MalformedInput as exc:
            problems.append(f"{exc}; entry kept, dated by its neighbours")
    if last is not None:
        return last
    return mtime() if mtime is not None else 0.0


def to_entry(meta: dict[str, Any]) -> LogEntry:
    content = meta["content"]
    return LogEntry(
        meta["id"],
        meta["ts"],
        meta["entry_type"],
        content,
        meta.get("metadata") or {},
        meta.get("content_hash") or content_hash(content),
        int(meta.get("token_count") or estimate_tokens(content)),
        bool(meta.get("compacted")),
        bool(meta.get("edited")),
    )


class Log(Layer):
    """Append to and read one agent's LOG.md."""

    layer = "log"

    def __init__(self, acting: Acting, owner: str) -> None:
        super().__init__(acting, owner)
        self.path: Path = acting.engine.layout.log_file(owner)
        self.rel = acting.engine.rel(self.path)

    def _spec(self) -> SourceSpec:
        return SourceSpec(self.path, "append", self._parse)

    def _mtime(self) -> float:
        entry = self.engine.stat(self.rel)
        return entry.mtime if entry is not None else 0.0

    def _parse(self, data: bytes, base: int) -> Parsed:
        path, radius = str(self.path), self.engine.config.log_neighbour_context
        out = parse_log(
            data,
            base,
            path,
            owner=self.owner,
            taken=self._taken,
            mtime=self._mtime,
            neighbour_radius=radius,
        )
        if out.consumed < len(data) and self._settled(data, base + len(data)):
            out = parse_log(
                data,
                base,
                path,
                owner=self.owner,
                final=True,
                taken=self._taken,
                mtime=self._mtime,
                neighbour_radius=radius,
            )
        return out

    def _settled(self, data: bytes, end: int) -> bool:
        """Is the open block that ends `data` (at file offset `end`) finished?

        Yes if the next block already starts at `end`, or if no writer of ours
        is appending (ours hold the file's lock for the whole write, and always
        write a footer) and the file still ends at `end`: a block without a
        footer that is not growing was written by hand (or by a writer that
        died). No while an append is under way: its writer indexes the block
        right after its own write.
        """
        engine = self.engine
        after = engine.read_from(self.rel, end, 4)
        if after:
            return after == b"### " and data.endswith(b"\n")
        try:
            with engine.lock(self.rel, timeout=0):
                entry = engine.stat(self.rel)
                return entry is not None and entry.size == end
        except LockTimeout:
            return False

    def _taken(self, uids: list[str], before: int) -> set[str]:
        """Which of `uids` an entry of this LOG before byte `before` already holds."""
        return queries.held_before(self.engine.db, str(self.path), before, uids)

    def append(
        self,
        entry_type: str,
        content: str,
        metadata: dict[str, Any] | None = None,
        *,
        ts: float | str | None = None,
    ) -> LogEntry:
        """Durably append one entry; returns it once it is on disk."""
        self._check("write")
        kind = entry_type.upper() if isinstance(entry_type, str) else entry_type
        if kind not in LOG_TYPES:
            raise MalformedInput(
                f"unknown LOG entry type {entry_type!r}; use {', '.join(LOG_TYPES)}"
            )
        check_text(content, "log content", MAX_CONTENT_BYTES)
        if metadata is not None and not isinstance(metadata, dict):
            raise MalformedInput("metadata must be a JSON object")
        if metadata and RESERVED_META in metadata:
            raise MalformedInput(f"metadata key {RESERVED_META!r} is reserved for log_metadata")
        check_json(metadata or {}, "metadata", limits.LOG_METADATA_BYTES)
        content = self._screen(content, "log content")
        metadata = self._screen_json(metadata, "log metadata")
        when = now_ts() if ts is None else parse_ts(ts)
        text = content.strip("\n")
        entry = LogEntry(
            "log-" + os.urandom(4).hex(),
            iso(when),
            kind,
            text,
            metadata or {},
            content_hash(text),
            estimate_tokens(text),
        )
        if self._stat(self.path) is None:
            self._ensure_header()
        data = encode_entry(entry)
        principal, owner, signals = self.gate.principal, self.owner or "", self.engine.signals

        def indexed(landed: Appended, docs: int | None) -> None:
            # what follows (a compaction past the limits) is not the layer's business
            signals.announce(LogAppended(principal, owner, landed.end, docs))

        self.engine.append(self._spec(), data, blank_line=True, then=indexed)
        self._write_event(self.path, len(data))
        return entry

    def _ensure_header(self) -> None:
        with contextlib.suppress(StaleWrite):  # another writer made it first
            self.engine.put(self.rel, LOG_HEADER.encode(), expected=MISSING)

    def tail(self, n: int = 20) -> list[LogEntry]:
        """The last `n` entries, oldest first (the LOG tail read on every call)."""
        self._check("read")
        if not isinstance(n, int) or n < 0:
            raise MalformedInput("n must be a non-negative integer")
        spec = self._spec()
        self.engine.fresh(spec)
        rows = queries.last_of_source(self.engine.db, str(self.path), n)
        entries = [to_entry(r.record()) for r in rows]
        self._read_event(self.path, sum(len(r.meta or "") for r in rows))
        return entries

    def entries(self) -> list[LogEntry]:
        """Every entry, straight from the file."""
        self._check("read")
        data = self.engine.read_from(self.rel)
        parsed = parse_log(data, 0, str(self.path), owner=self.owner, final=True, mtime=self._mtime)
        self._read_event(self.path, len(data))
        return [to_entry(d.meta or {}) for d in parsed.docs]

    def problems(self) -> list[str]:
        """Blocks of LOG.md kept but not read cleanly (torn footer, bad metadata or time,
        copied id): each is still an entry."""
        self._check("read")
        self.engine.fresh(self._spec())
        return self._index_problems(self.path)

    def read_text(self) -> str:
        self._check("read")
        data = self.engine.read_from(self.rel)
        self._read_event(self.path, len(data))
        return data.decode("utf-8", "replace")

    def size(self) -> int:
        self._check("read")
        entry = self.engine.stat(self.rel)
        return entry.size if entry is not None else 0

    def count(self) -> int:
        self._check("read")
        self.engine.fresh(self._spec())
        return queries.doc_count(self.engine.db, source=str(self.path))
