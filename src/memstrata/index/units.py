"""What a memory is embedded as: its units (the record whole, or its chunks).

A sentence embedding model reads a bounded window (all-MiniLM-L6-v2: 256 word
pieces, trained on 128) and averages what it reads into one vector, so one vector
per record works for a chat turn or a fact and fails for an assistant's answer of
thousands of characters: the paragraph that answers a question is averaged away
with the code and prose around it, or cut off past the window. So a record's text
is cut into units:

    units(title, body) = [title + "\\n" + body]            if the body fits in CHUNK_CHARS
                       = [title + "\\n" + chunk_i, ...]     otherwise, at most MAX_UNITS

(no title: the body or its chunks alone).

A Markdown section (CONTEXT.md, MEMORY.md, memory notes, NOW.md: `ITEM_LAYERS`) is
often a list of unrelated statements under one heading ("## Decisions" with the
database, the password hash and the login in three bullets): averaged into one vector,
each of them is diluted by the others. Such a record also gets one unit per list item
(`title + "\n" + item`, when it has two or more), so a question about one bullet finds
its section by that bullet's meaning (the record's dense score is the max over units).

Chunks follow the text's own boundaries: paragraphs (blank lines) packed greedily
up to CHUNK_CHARS, a longer paragraph cut at sentence ends, then at spaces. Each
chunk repeats the record's title (a speaker, a ledger summary, a fact key) so it
keeps the context the title gives. Past MAX_UNITS chunks the rest of a record is
found by its words only (FTS5 indexes all of it): that bounds what one record can
cost in vectors (MAX_UNITS x dim x 4 bytes).

Pure functions, no I/O. The unit texts are what the vector index hashes: a record
whose units did not change is never embedded again, and a changed one gets new
vectors for the units that changed only.
"""

from __future__ import annotations

import re

CHUNK_CHARS = 600
MAX_UNITS = 32
ITEM_LAYERS = frozenset({"context", "file", "now", "identity", "scratch"})
_ITEM = re.compile(
    r"^[ \t]*(?:[-*+]|\d{1,3}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?(.+?)[ \t]*$", re.MULTILINE
)
_PARAGRAPHS = re.compile(r"\n[ \t]*\n")
_SENTENCE_END = re.compile(r"[.!?;:][)\"'\]]*\s")


def unit_texts(title: str, body: str, *, size: int = CHUNK_CHARS, items: bool = False) -> list[str]:
    """The texts a record with this `title` and `body` is embedded as (see the module doc);
    `items`: also one unit per list item (a Markdown section, `ITEM_LAYERS`).

    Example:
        >>> unit_texts("Caroline", "I went to a support group yesterday.")
        ['Caroline\\nI went to a support group yesterday.']
        >>> unit_texts("Decisions", "- Postgres\\n- argon2id", items=True)[1:]
        ['Decisions\\nPostgres', 'Decisions\\nargon2id']
    """
    head = f"{title}\n" if title else ""
    whole = [head + body] if len(body) <= size else [head + c for c in chunks(body, size)]
    listed = list_items(body) if items else []
    if len(listed) < 2:
        listed = []
    return (whole + [head + x for x in listed])[:MAX_UNITS]


def list_items(text: str) -> list[str]:
    """The texts of the list items in Markdown `text` (bullets, numbered, task boxes)."""
    return [m.group(1) for m in _ITEM.finditer(text) if m.group(1).strip()]


def chunks(text: str, size: int = CHUNK_CHARS) -> list[str]:
    """`text` cut into pieces of at most about `size` characters on its own boundaries.

    Paragraphs are packed greedily; a paragraph longer than `size` is cut at the last
    sentence end in its first `size` characters (if past half of it), else at the last
    space, else hard. Whitespace at the cuts is dropped; nothing else is.
    """
    if size < 1:
        raise ValueError("chunk size must be at least 1")
    out: list[str] = []
    current = ""
    for para in (p.strip() for p in _PARAGRAPHS.split(text)):
        if not para:
            continue
        while len(para) > size:
            cut = _cut(para, size)
            if current:
                out.append(current)
                current = ""
            out.append(para[:cut].strip())
            para = para[cut:].strip()
        if not para:
            continue
        if current and len(current) + 2 + len(para) > size:
            out.append(current)
            current = para
        else:
            current = f"{current}\n\n{para}" if current else para
    if current:
        out.append(current)
    return out or [text.strip()]


def _cut(para: str, size: int) -> int:
    """Where to cut a paragraph longer than `size`: a sentence end, a space, or `size`."""
    ends = [m.end() for m in _SENTENCE_END.finditer(para, 0, size + 1)]
    if ends and ends[-1] > size // 2:
        return ends[-1]
    space = para.rfind(" ", 0, size)
    return space if space > size // 2 else size
