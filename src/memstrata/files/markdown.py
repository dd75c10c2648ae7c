"""Markdown helpers: split a document into heading-led chunks with their line numbers."""

from __future__ import annotations

import re

from memstrata.values import value_type

_HEADING = re.compile(r"^#{1,6}\s+(.*\S)\s*$")
MAX_CHUNK_CHARS = 2000


@value_type(frozen=True)
class Chunk:
    """One indexed piece of a Markdown file: its heading, text and first line."""

    title: str
    text: str
    line: int  # 1-based line of the chunk's first line


def chunk_markdown(text: str, max_chars: int = MAX_CHUNK_CHARS) -> list[Chunk]:
    """Split at headings; split long sections at paragraph breaks; never split a line."""
    chunks: list[Chunk] = []
    title = ""
    buf: list[str] = []
    start = 1

    def flush(next_start: int) -> None:
        nonlocal buf, start
        body = "\n".join(buf).strip()
        if body:
            chunks.append(Chunk(title, body, start))
        buf = []
        start = next_start

    for n, line in enumerate(text.splitlines(), start=1):
        m = _HEADING.match(line)
        if m:
            flush(n)
            title = m.group(1)
            buf.append(line)
            continue
        size = sum(len(x) + 1 for x in buf)
        if size + len(line) > max_chars and buf and (not line.strip() or size > max_chars):
            flush(n)
        if not buf:
            start = n
        buf.append(line)
    flush(0)
    return chunks
