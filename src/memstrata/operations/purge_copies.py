"""Purge's second pass: the purged text where memstrata itself copied it.

Compaction summaries, session-compaction and hook entries and auto-logged tool
calls (in LOG.md and its archives), `compactions.jsonl`, transcripts' summary
messages and the memory-flush sections of CONTEXT.md / MEMORY.md are derived
text: memstrata wrote them from other memories, quoting, cutting short ("…"),
collapsing whitespace and dropping labels as it went. After a purge's main
rewrite, each such unit of the owner's is searched for the purged text and every
quote of it is replaced by `[purged]`:

    fragment   any stretch of at least FRAGMENT characters that the purged text
               also holds (case and whitespace runs ignored), grown to whole words:
               a quote cut short, a sentence the extractive summariser picked, a
               label stripped
    whole      a purged text shorter than that (at least MIN_WHOLE characters),
               as a whole word or phrase, any case

A stretch is found through GRAM-character pieces of the purged text taken every
STRIDE characters (any common stretch of FRAGMENT characters holds one), then
grown both ways as far as both texts agree: memory stays linear in the purged
text (at most MAX_NEEDLE_CHARS of it), time linear in the text searched.

Text a person or an agent wrote itself (a plain LOG entry, a note) is not
derived and is left alone: purge it by its own id. A summary a model wrote in its
own words quotes nothing verbatim and cannot be found this way.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from memstrata.files.jsonl import encode
from memstrata.files.versions import history_folder  # versions: `purge_versions`
from memstrata.layers.log import RESERVED_META, _metadata, _unescape, encode_entry
from memstrata.layers.logblocks import split_blocks
from memstrata.model import LogEntry

if TYPE_CHECKING:
    from memstrata.store.view import Store

PURGED = "[purged]"
FRAGMENT = 24
GRAM = 16
STRIDE = FRAGMENT - GRAM + 1
MIN_WHOLE = 4
MAX_NEEDLE_CHARS = 4 * 1024 * 1024
MAX_HITS = 8  # needle places remembered per piece (repeated text has many)
# Footer metadata of the LOG entries memstrata writes from other memories: a
# compaction summary, a session compaction, a hook or user-intent capture, a tool call.
DERIVED_LOG_KEYS = ("compacted", "archive_id", "flush", "event", "args")
_FLUSH_HEAD = re.compile(r"^### .*\(session .*, memory flush\)\s*$")
_SPACE = re.compile(r"\s+")

Edit = Callable[[bytes], bytes]


def _flat(text: str) -> str:
    return _fold(_SPACE.sub(" ", text).strip())


def _fold(text: str) -> str:
    """Lower case, one character for one (so positions still line up)."""
    low = text.lower()
    return (
        low
        if len(low) == len(text)
        else "".join(c.lower() if len(c.lower()) == 1 else c for c in text)
    )


class Quotes:
    """Finds and blanks out quotes of some texts (the purged ones) in other texts.

    Example:
        >>> q = Quotes(["the vault passphrase is Quokka-Marmot-Heron"])
        >>> q.scrub("- Decision: the vault\\npassphrase is Quokka-Marmot-Heron")
        '- Decision: [purged]'
        >>> q.scrub("- Decision: The vault passphrase is Quokka-Mar…")
        '- Decision: [purged]…'
    """

    def __init__(self, texts: Iterable[str]) -> None:
        self.needles: list[str] = []
        short: list[str] = []
        budget = MAX_NEEDLE_CHARS
        for text in sorted({_flat(t) for t in texts if isinstance(t, str)}, key=len):
            if len(text) < MIN_WHOLE:
                continue
            if len(text) < FRAGMENT:
                short.append(text)
            elif budget > 0:
                self.needles.append(text[:budget])
                budget -= len(text)
        self.pieces: dict[str, list[tuple[int, int]]] = {}
        for j, needle in enumerate(self.needles):
            for off in range(0, len(needle) - GRAM + 1, STRIDE):
                hits = self.pieces.setdefault(needle[off : off + GRAM], [])
                if len(hits) < MAX_HITS:
                    hits.append((j, off))
        self.short = (
            re.compile(
                "|".join(
                    (r"(?<!\w)" if t[0].isalnum() or t[0] == "_" else "")
                    + re.escape(t)
                    + (r"(?!\w)" if t[-1].isalnum() or t[-1] == "_" else "")
                    for t in sorted(short, key=len, reverse=True)
                )
            )
            if short
            else None
        )

    def __bool__(self) -> bool:
        return bool(self.needles) or self.short is not None

    def scrub(self, text: str) -> str:
        """`text` with every quote replaced by PURGED (the same object if none)."""
        if not self or not text:
            return text
        flat, where = _flatten(text)
        flat = _fold(flat)
        spans = self._fragments(flat)
        if self.short is not None:
            spans += [m.span() for m in self.short.finditer(flat)]
        if not spans:
            return text
        out, pos = [], 0
        for start, end in _merge(where, flat, spans):
            out += [text[pos:start], PURGED]
            pos = end
        out.append(text[pos:])
        return "".join(out)

    def _fragments(self, flat: str) -> list[tuple[int, int]]:
        spans: list[tuple[int, int]] = []
        i, m = 0, len(flat)
        while i <= m - GRAM:
            hits = self.pieces.get(flat[i : i + GRAM])
            if not hits:
                i += 1
                continue
            start, end = i, i + GRAM
            for j, off in hits:
                needle = self.needles[j]
                left = 0
                while left < min(i, off) and flat[i - left - 1] == needle[off - left - 1]:
                    left += 1
                right = 0
                while (
                    i + GRAM + right < m
                    and off + GRAM + right < len(needle)
                    and flat[i + GRAM + right] == needle[off + GRAM + right]
                ):
                    right += 1
                start, end = min(start, i - left), max(end, i + GRAM + right)
            if end - start >= FRAGMENT:
                spans.append((start, end))
            i = max(i + 1, end - GRAM + 1)
        return spans

    def scrub_json(self, value: Any) -> Any:
        """Every string in a JSON value scrubbed (keys kept)."""
        if isinstance(value, str):
            return self.scrub(value)
        if isinstance(value, dict):
            return {k: self.scrub_json(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.scrub_json(v) for v in value]
        return value


def _flatten(text: str) -> tuple[str, list[int]]:
    """`text` with whitespace runs as one space, and where each character came from."""
    chars: list[str] = []
    where: list[int] = []
    pos = 0
    for m in _SPACE.finditer(text):
        chars.append(text[pos : m.start()])
        where.extend(range(pos, m.start()))
        chars.append(" ")
        where.append(m.start())
        pos = m.end()
    chars.append(text[pos:])
    where.extend(range(pos, len(text)))
    return "".join(chars), where


def _merge(where: list[int], flat: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Spans of `flat`, trimmed of edge spaces and grown to whole words, as merged spans
    of the original text (a quote cut mid-word leaves no piece of the word)."""
    out: list[tuple[int, int]] = []
    for s, e in sorted(spans):
        while s < e and flat[s] == " ":
            s += 1
        while e > s and flat[e - 1] == " ":
            e -= 1
        if s >= e:
            continue
        while s > 0 and flat[s - 1].isalnum() and flat[s].isalnum():
            s -= 1
        while e < len(flat) and flat[e].isalnum() and flat[e - 1].isalnum():
            e += 1
        start, end = where[s], where[e - 1] + 1
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


# -- the derived units of one agent's memory ----------------------------------------------


def derived_edits(store: Store, owner: str, quotes: Quotes) -> list[tuple[str, Edit]]:
    """(store-relative source, edit) for every source of `owner` that may hold derived text."""
    agent = store.layout.agent(owner)
    listed = sorted(
        e.path for e in store.engine.listing(agent, skip=history_folder) if not e.is_dir
    )
    return [
        (rel, change)
        for rel in listed
        if (change := derived_edit(store, owner, rel, quotes)) is not None
    ]


def derived_edit(store: Store, owner: str, rel: str, quotes: Quotes) -> Edit | None:
    """The edit that scrubs `rel` (a store-relative path of `owner`'s), if it may hold
    derived text: LOG.md and its archives, compactions.jsonl, transcripts (their
    summary messages), CONTEXT.md / MEMORY.md (their memory-flush sections)."""
    layout = store.layout
    archive = store.rel(layout.archive_dir(owner))
    if rel == store.rel(layout.log_file(owner)) or (
        rel.startswith(archive + "/LOG-")
        and rel.endswith(".md")
        and rel.count("/") == archive.count("/") + 1
    ):
        return _log_edit(quotes)
    if rel == store.rel(layout.compactions(owner)):
        return _jsonl_edit(quotes, lambda r: True)
    if rel.startswith(
        (store.rel(layout.sessions_dir(owner)) + "/", archive + "/sessions/")
    ) and rel.endswith(".jsonl"):
        return _jsonl_edit(quotes, lambda r: r.get("role") == "summary")
    contexts = {
        store.rel(layout.context_file(owner)),
        store.rel(layout.agent(owner) / "MEMORY.md"),
        *(store.rel(layout.memory_dir(owner) / n) for n in ("CONTEXT.md", "MEMORY.md")),
    }
    if rel in contexts:
        return _context_edit(quotes)
    return None


def _log_edit(quotes: Quotes) -> Edit:
    """Re-encode each derived LOG entry whose text or metadata quotes a purged text."""

    def edit(data: bytes) -> bytes:
        out, pos = [], 0
        for b in split_blocks(data, final=True).blocks:
            if b.kind != "entry" or b.entry_id is None:
                continue
            meta, bad = _metadata(b.meta_json)
            if bad or not any(meta.get(k) for k in DERIVED_LOG_KEYS):
                continue
            meta.pop(RESERVED_META, None)
            content = _unescape(b.lines)
            new_content, new_meta = quotes.scrub(content), quotes.scrub_json(meta)
            if new_content == content and new_meta == meta:
                continue
            entry = LogEntry(
                b.entry_id, b.ts or "", b.entry_type or "SYSTEM", new_content, new_meta
            )
            out += [data[pos : b.start], encode_entry(entry)]
            pos = b.end
        return b"".join([*out, data[pos:]]) if out else data

    return edit


def _jsonl_edit(quotes: Quotes, derived: Callable[[dict[str, Any]], bool]) -> Edit:
    """Scrub every string of the derived records of a JSON Lines file."""

    def line_edit(line: bytes) -> bytes:
        try:
            rec = json.loads(line)
        except (ValueError, UnicodeDecodeError):
            return line
        if not isinstance(rec, dict) or not derived(rec):
            return line
        new = quotes.scrub_json(rec)
        return line if new == rec else encode(new)

    def edit(data: bytes) -> bytes:
        return b"".join(line_edit(x) for x in data.splitlines(keepends=True))

    return edit


def _context_edit(quotes: Quotes) -> Edit:
    """Scrub the memory-flush subsections of CONTEXT.md / MEMORY.md (to the next heading)."""

    def edit(data: bytes) -> bytes:
        lines = data.decode("utf-8", "surrogateescape").splitlines(keepends=True)
        inside = False
        for n, line in enumerate(lines):
            if line.startswith("#"):
                inside = _FLUSH_HEAD.match(line.rstrip("\r\n")) is not None
            elif inside:
                lines[n] = quotes.scrub(line)
        return "".join(lines).encode("utf-8", "surrogateescape")

    return edit
