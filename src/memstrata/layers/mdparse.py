"""Whole-file Markdown/text sources -> index docs, one per heading-led chunk.

Used for NOW.md, CONTEXT.md, AGENT.md, free-form memory files, scratch notes,
task-episodic files, room artifacts and LOG archives' plain parts. A doc's uid
is the file's store-relative path plus the chunk number, so re-parsing a file
replaces its docs.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from memstrata.files.markdown import chunk_markdown
from memstrata.index.docs import Doc, Parsed
from memstrata.index.reconcile import SourceSpec
from memstrata.layers.starters import is_untouched_starter

if TYPE_CHECKING:
    from memstrata.store.engine import Engine

TEXT_SUFFIXES = frozenset(
    {
        ".md",
        ".markdown",
        ".txt",
        ".rst",
        ".py",
        ".js",
        ".ts",
        ".json",
        ".yaml",
        ".yml",
        ".toml",
        ".ini",
        ".cfg",
        ".sh",
        ".sql",
        ".html",
        ".css",
        ".go",
        ".rs",
        ".java",
        ".c",
        ".h",
        ".cpp",
        ".ndjson",
        ".jsonl",
        ".csv",
    }
)
MAX_INDEXED_BYTES = 512 * 1024


def is_text_file(path: Path) -> bool:
    return path.suffix.lower() in TEXT_SUFFIXES


def markdown_spec(
    engine: Engine,
    path: Path,
    layer: str,
    *,
    owner: str | None = None,
    room: str | None = None,
    thread: str | None = None,
) -> SourceSpec:
    rel = engine.rel(path)

    def parse(data: bytes, base: int) -> Parsed:
        entry = engine.stat(rel)  # a chunk is dated by its file's last change
        mtime = entry.mtime if entry is not None else 0.0
        text = data[:MAX_INDEXED_BYTES].decode("utf-8", "replace")
        if is_untouched_starter(text, layer, owner):  # init's boilerplate holds no memory
            return Parsed(consumed=len(data))
        docs = [
            Doc(
                uid=f"md:{rel}#{n}",
                layer=layer,
                ts=mtime,
                title=chunk.title or rel.rsplit("/", 1)[-1],
                body=chunk.text,
                source=str(path),
                owner=owner,
                room=room,
                line=chunk.line,
                thread=thread or rel,
                pos=n,
                meta={"path": rel, "line": chunk.line},
            )
            for n, chunk in enumerate(chunk_markdown(text))
        ]
        return Parsed(docs=docs, consumed=len(data))

    return SourceSpec(path, "whole", parse)
