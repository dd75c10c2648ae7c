"""Warm memory: `LOG.md`, an append-only, timestamped, typed activity log (seed 002).

Each entry is one Markdown block, written with a single durable append:

    ### 2026-11-22T10:30:00.123Z · TOOL_USE
    ran pytest: 12 passed
    <!-- log-1a2b3c4d {"tool": "pytest"} -->
    (blank line)

The footer carries the entry id and its metadata as JSON, invisible when the
Markdown is rendered. Content lines that would read as a header or footer (or
that start with a backslash) are escaped with a leading backslash. A block a
person appended by hand (header, text, no footer) is accepted as an entry; a
block whose footer is cut off by a crash is skipped and reported. The same
format is used by compaction archives, so archived entries stay searchable.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstrata.errors import MalformedInput
from memstrata.files.appendlog import read_from
from memstrata.files.jsonl import BadLine
from memstrata.index.docs import Doc, Parsed
from memstrata.index.reconcile import SourceSpec
from memstrata.layers.base import Layer, check_text
from memstrata.model import LOG_TYPES, LogEntry, iso, now_ts, parse_ts

if TYPE_CHECKING:
    from memstrata.store import Store

LOG_HEADER = "# LOG\n\nAppend-only activity log (warm memory). Newest entries at the bottom.\n\n"
MAX_CONTENT_BYTES = 64 * 1024
_HEAD = re.compile(r"^### (\S+) · ([A-Z_]+)[ \t]*$")
_FOOT = re.compile(r"^<!-- (log-[0-9a-f]{8}) (\{.*\}) -->$")


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
    meta = json.dumps(entry.metadata, ensure_ascii=False, sort_keys=True).replace("-->", "--\\u003e")
    text = f"### {entry.ts} · {entry.entry_type}\n{_escape(entry.content)}\n<!-- {entry.id} {meta} -->\n\n"
    return text.encode("utf-8")


def parse_log(
    data: bytes, base: int, path: str, *, owner: str | None, layer: str = "log", final: bool = False
) -> Parsed:
    """Blocks -> docs. An unfinished last block is left unconsumed unless `final`."""
    text = data.decode("utf-8", "replace")
    out = Parsed()
    lines = text.split("\n")
    # byte offset of each line start
    offsets: list[int] = []
    pos = 0
    for line in lines:
        offsets.append(pos)
        pos += len(line.encode("utf-8")) + 1
    heads = [i for i, line in enumerate(lines) if _HEAD.match(line)]
    out.consumed = len(data) if (not heads or final) else offsets[heads[0]]
    for n, start in enumerate(heads):
        stop = heads[n + 1] if n + 1 < len(heads) else len(lines)
        block = lines[start:stop]
        is_last = n + 1 == len(heads)
        m = _HEAD.match(block[0])
        assert m is not None
        body = block[1:]
        while body and body[-1] == "":
            body.pop()
        complete = (
            not is_last
            or final
            or (stop - start >= 3 and len(lines) >= 2 and lines[-1] == "" and lines[-2] == "")
        )
        if is_last and not complete:
            break
        off = base + offsets[start]
        foot = _FOOT.match(body[-1]) if body else None
        if foot is None and body and body[-1].startswith("<!-- log-"):
            out.bad.append(BadLine(path, off, "torn LOG entry (footer cut off)", "\n".join(block)[:200]))
            out.consumed = offsets[stop] if stop < len(lines) else len(data)
            continue
        try:
            ts = parse_ts(m.group(1))
            meta: dict[str, Any] = json.loads(foot.group(2)) if foot else {}
        except (MalformedInput, json.JSONDecodeError) as exc:
            out.bad.append(BadLine(path, off, f"bad LOG entry: {exc}", "\n".join(block)[:200]))
            out.consumed = offsets[stop] if stop < len(lines) else len(data)
            continue
        entry_id = foot.group(1) if foot else f"log-hand-{off:x}"
        content = _unescape(body[:-1] if foot else body)
        out.docs.append(
            Doc(
                uid=f"{layer}:{owner}:{entry_id}" if layer == "log" else f"{layer}:{path}:{entry_id}",
                layer=layer,
                ts=ts,
                title=m.group(2),
                body=content,
                source=path,
                owner=owner,
                kind=m.group(2),
                line=off,
                thread=path,
                pos=off,
                meta={"id": entry_id, "ts": m.group(1), "entry_type": m.group(2),
                      "content": content, "metadata": meta},
            )
        )
        out.consumed = offsets[stop] if stop < len(lines) else len(data)
    return out


def to_entry(meta: dict[str, Any]) -> LogEntry:
    return LogEntry(meta["id"], meta["ts"], meta["entry_type"], meta["content"], meta.get("metadata") or {})


class Log(Layer):
    """Append to and read one agent's LOG.md."""

    layer = "log"

    def __init__(self, store: Store, owner: str) -> None:
        super().__init__(store, owner)
        self.path: Path = store.layout.log_file(owner)

    def spec(self) -> SourceSpec:
        path, owner = str(self.path), self.owner
        return SourceSpec(self.path, "append", lambda d, b: parse_log(d, b, path, owner=owner))

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
            raise MalformedInput(f"unknown LOG entry type {entry_type!r}; use {', '.join(LOG_TYPES)}")
        check_text(content, "log content", MAX_CONTENT_BYTES)
        if metadata is not None and not isinstance(metadata, dict):
            raise MalformedInput("metadata must be a JSON object")
        try:
            json.dumps(metadata or {})
        except (TypeError, ValueError) as exc:
            raise MalformedInput(f"metadata is not JSON-serialisable: {exc}") from None
        when = now_ts() if ts is None else parse_ts(ts)
        entry = LogEntry("log-" + os.urandom(4).hex(), iso(when), kind, content.strip("\n"), metadata or {})
        if not self.path.exists():
            self._ensure_header()
        data = encode_entry(entry)
        self.store.append(self.spec(), data, blank_line=True)
        self._write_event(self.path, len(data))
        return entry

    def _ensure_header(self) -> None:
        from memstrata.files.atomic import atomic_write_text

        with self.store.locks.hold(str(self.path)):
            if not self.path.exists():
                atomic_write_text(self.path, LOG_HEADER)

    def tail(self, n: int = 20) -> list[LogEntry]:
        """The last `n` entries, oldest first (seed 002: LOG tail read on every call)."""
        self._check("read")
        if not isinstance(n, int) or n < 0:
            raise MalformedInput("n must be a non-negative integer")
        spec = self.spec()
        self.store.fresh(spec)
        with self.store.db.read() as conn:
            rows = conn.execute(
                "SELECT meta FROM docs WHERE source = ? ORDER BY pos DESC LIMIT ?",
                (str(self.path), n),
            ).fetchall()
        entries = [to_entry(json.loads(r[0])) for r in reversed(rows)]
        self._read_event(self.path, sum(len(r[0]) for r in rows))
        return entries

    def entries(self) -> list[LogEntry]:
        """Every entry, straight from the file."""
        self._check("read")
        data = read_from(self.path, 0)
        parsed = parse_log(data, 0, str(self.path), owner=self.owner, final=True)
        self._read_event(self.path, len(data))
        return [to_entry(d.meta or {}) for d in parsed.docs]

    def read_text(self) -> str:
        self._check("read")
        data = read_from(self.path, 0)
        self._read_event(self.path, len(data))
        return data.decode("utf-8", "replace")

    def size(self) -> int:
        try:
            return os.stat(self.path).st_size
        except FileNotFoundError:
            return 0

    def count(self) -> int:
        self.store.fresh(self.spec())
        with self.store.db.read() as conn:
            row = conn.execute("SELECT count(*) FROM docs WHERE source = ?", (str(self.path),))
            return int(row.fetchone()[0])
