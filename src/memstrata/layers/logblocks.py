"""The LOG.md block grammar, tolerant of what a person's editor does to the file.

A LOG is a preamble, then entries. An entry is a header line
(`### <timestamp> · <TYPE>`), content lines, and a footer comment with its id
and metadata (`<!-- log-1a2b3c4d {...} -->`). Our writer always appends a
whole entry, footer included, in one write. A person may not, so:

* CRLF or mixed line endings and a UTF-8 byte-order mark are accepted; byte
  offsets stay exact (lines are split on raw bytes).
* An entry without a footer, the last one included, is an entry.
* Text after a footer and before the next header (or text in the preamble) is
  a `text` block, kept and indexed like an entry, never folded into a
  neighbour or dropped.
* A footer cut short (a writer killed mid-append) or with unreadable metadata
  leaves the entry in place, with a `problem` for `doctor` to report.

Incremental indexing reads a growing file from an offset, so the block at the
end may still be growing. A block is *closed* when the next header follows it,
when its footer line is complete, or (text) when all its lines are complete;
an open block is left unconsumed unless the caller says the bytes are
`final` (nothing more will be written to that block). Pure functions on bytes.
"""

from __future__ import annotations

import re

from memstrata.values import field, value_type

HEAD = re.compile(r"^### (\S+) · ([A-Za-z_]+)[ \t]*$")
FOOT = re.compile(r"^<!-- (log-[0-9a-f]{8}) (\{.*\}) -->$")
_FOOT_START = "<!-- log-"


@value_type
class Block:
    """One entry or text block: byte range [start, end) of the file, and its parts."""

    kind: str  # "entry" | "text"
    start: int
    end: int = 0
    ts: str | None = None  # header timestamp as written
    entry_type: str | None = None
    entry_id: str | None = None  # footer id; None when there is no (readable) footer
    meta_json: str | None = None
    lines: list[str] = field(default_factory=list)  # content lines, as written
    problem: str | None = None
    closed: bool = False
    preamble: bool = False  # text before the first entry of the file

    @property
    def has_footer(self) -> bool:
        return self.entry_id is not None


@value_type
class Split:
    """The entry blocks of a run of LOG.md bytes, and how many bytes they cover."""

    blocks: list[Block]
    consumed: int  # bytes of `data` covered by the blocks returned (closed or final)


def _lines(data: bytes, base: int) -> list[tuple[int, int, str, bool]]:
    """(start, end, text without its line ending, terminated) for every line of `data`."""
    out: list[tuple[int, int, str, bool]] = []
    pos = 0
    raw_lines = data.split(b"\n")
    # one decode when bytes and characters coincide; else per line, so offsets stay exact
    texts = data.decode("ascii").split("\n") if data.isascii() else None
    for n, raw in enumerate(raw_lines):
        terminated = n < len(raw_lines) - 1
        if not terminated and not raw:
            break
        text = texts[n] if texts is not None else raw.decode("utf-8", "replace")
        if text.endswith("\r"):
            text = text[:-1]
        if base == 0 and n == 0 and text.startswith("\ufeff"):
            text = text[1:]
        end = pos + len(raw) + (1 if terminated else 0)
        out.append((pos, end, text, terminated))
        pos = end
    return out


def split_blocks(data: bytes, base: int = 0, *, final: bool = False) -> Split:
    """Entries and text blocks of `data` (bytes of a LOG file starting at offset `base`).

    Offsets are relative to `data`. Without `final`, only closed blocks are
    returned and `consumed` stops where the first open block starts, so a block
    still being written is read again, whole, next time.
    """
    blocks: list[Block] = []
    cur: Block | None = None
    entries = 0
    lines = _lines(data, base)
    for start, end, text, terminated in lines:
        head = HEAD.match(text) if text.startswith("### ") and (terminated or final) else None
        if head is not None:
            if cur is not None:
                cur.closed = True
            cur = Block("entry", start, ts=head.group(1), entry_type=head.group(2).upper())
            blocks.append(cur)
            entries += 1
        elif cur is not None and cur.kind == "entry" and cur.entry_id is None:
            foot = FOOT.match(text) if text.startswith(_FOOT_START) else None
            if foot is not None:
                cur.entry_id, cur.meta_json = foot.group(1), foot.group(2)
                cur.closed = terminated
            else:
                cur.lines.append(text)
        elif not text.strip():
            if cur is not None and cur.kind == "text":
                cur.lines.append(text)
        else:
            if cur is None or cur.kind != "text":
                if cur is not None:
                    cur.closed = True  # an entry with its footer ends at the footer
                cur = Block("text", start, preamble=base == 0 and not entries)
                blocks.append(cur)
            cur.lines.append(text)
            cur.closed = terminated  # text no writer of ours produces: done once its line is
        if cur is not None:
            cur.end = end
    for b in blocks:
        _finish(b)
    if final:
        return Split(blocks, len(data))
    done: list[Block] = []
    for b in blocks:
        if not b.closed:
            return Split(done, b.start)
        done.append(b)
    if lines and not lines[-1][3]:
        return Split(done, lines[-1][0])  # an unterminated blank tail: read it again later
    return Split(done, len(data))


def _finish(b: Block) -> None:
    while b.lines and not b.lines[-1].strip():
        b.lines.pop()
    if b.kind == "entry" and not b.has_footer and b.lines and b.lines[-1].startswith(_FOOT_START):
        b.problem = "footer cut short (a writer stopped mid-append?); kept as an entry"
        b.lines.pop()
