"""The session and task-episodic layers.

* `Scratch`: `memory/session/`, conversation scratch. Not auto-loaded; list
  before reading; `clear()` at conversation end moves the files to the archive
  (cleared from view, never destroyed).
* `Episodes`: `episodes/<task-slug>/`, one folder per task (slug = kebab-case
  title) holding revision history, verified items (`verified_items.md`, one
  section per iteration), phase reports and the gate event log
  `observability/<task-id>.ndjson` (indexed as layer `gate`, see `layers.history`).
  Persists beyond the conversation.
"""

from __future__ import annotations

import builtins
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstrata import limits
from memstrata.errors import MalformedInput, NotFound
from memstrata.files.jsonl import decode, encode
from memstrata.files.paths import safe_join
from memstrata.index.reconcile import SourceSpec
from memstrata.layers.archives import archive_spec
from memstrata.layers.base import Acting, Layer, check_count, check_text
from memstrata.layers.history import gate_record, gate_spec
from memstrata.layers.mdparse import is_text_file, markdown_spec
from memstrata.layers.walk import walk
from memstrata.model import check_name, iso, now_ts

if TYPE_CHECKING:
    from memstrata.layers.files import FileInfo, MemoryFiles

VERIFIED_FILE = "verified_items.md"
SESSION_TEMPLATE = """# Session notes

## Current State

## Files and Functions

## Errors & Corrections

## Key Results

## Worklog
"""


def slugify(title: str) -> str:
    """Kebab-case task slug: 'Implement Feature X!' -> 'implement-feature-x'."""
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:64].strip("-")
    if not slug:
        raise MalformedInput(f"cannot make a task slug from {title!r}")
    return slug


class Scratch(Layer):
    """Conversation scratch under `memory/session/` (a view over the memory files)."""

    layer = "scratch"

    def __init__(self, acting: Acting, owner: str, files: MemoryFiles) -> None:
        super().__init__(acting, owner)
        self.files = files
        self.dir: Path = acting.engine.layout.scratch_dir(owner)

    def list(self) -> builtins.list[FileInfo]:
        self._check("read")
        if self._stat(self.dir) is None:
            return []
        return [f for f in self.files.list("session") if not f.is_dir]

    def read(self, name: str) -> str:
        return self.files.read(f"session/{name}")

    def write(self, name: str, content: str) -> FileInfo:
        return self.files.write(f"session/{name}", content)

    def start_notes(self, name: str = "notes.md") -> FileInfo:
        """Create the five-section session notes template if absent."""
        if self.files.exists(f"session/{name}"):
            return self.files.stat(f"session/{name}")
        return self.write(name, SESSION_TEMPLATE)

    def clear(self) -> str | None:
        """Conversation end: move scratch to the archive; returns the archive folder."""
        self._check("write")
        files = self.list()
        if not files:
            return None
        assert self.owner is not None
        dest = (
            self.engine.layout.archive_dir(self.owner) / "scratch" / iso(now_ts()).replace(":", "")
        )
        self.engine.move(self.dir, dest)
        for f in files:
            path = self.files.root / f.path
            self.engine.index_file(self.files._spec_for(path, f.path))
            moved = dest / f.path.removeprefix("session/")
            if moved.suffix == ".md":
                self.engine.index_file(archive_spec(self.engine, moved, self.owner))
        self._write_event(self.dir, -sum(f.size for f in files))
        return self.engine.rel(dest)


class Episodes(Layer):
    layer = "episode"

    def __init__(self, acting: Acting, owner: str) -> None:
        super().__init__(acting, owner)
        self.root: Path = acting.engine.layout.episodes_dir(owner)

    def _spec_for(self, path: Path) -> SourceSpec:
        return markdown_spec(
            self.engine, path, "episode", owner=self.owner, thread=path.parent.name
        )

    def _source_for(self, path: Path) -> SourceSpec | None:
        """The index source a file under `episodes/` is: a gate event log, a task file, or none."""
        if path.suffix == ".ndjson":
            rel = path.relative_to(self.root).parts
            if len(rel) == 3 and rel[1] == "observability":
                assert self.owner is not None
                return gate_spec(path, self.owner, rel[0])
            return None
        return self._spec_for(path) if is_text_file(path) else None

    def _folder(self, slug: str) -> Path:
        check_name(slug, "task slug")
        return self.root / slug

    def create(self, title: str) -> str:
        self._check("write")
        check_text(title, "task title", limits.LABEL_CHARS)
        slug = slugify(title)
        folder = self._folder(slug)
        if self.engine.make_folder(folder):
            self._write_event(folder, 0)
        return slug

    def list(self) -> builtins.list[str]:
        self._check("read")
        return sorted(
            e.path.rsplit("/", 1)[-1]
            for e in self.engine.listing(self.root, recursive=False)
            if e.is_dir
        )

    def files(self, slug: str) -> builtins.list[str]:
        self._check("read")
        folder = self._folder(slug)
        entry = self._stat(folder)
        if entry is None or not entry.is_dir:
            raise NotFound(f"no task folder {slug!r}")
        return [p.relative_to(folder).as_posix() for p in walk(self.engine, folder)]

    def write(self, slug: str, rel: str, content: str) -> str:
        self._check("write")
        folder = self._folder(slug)
        path = safe_join(folder, rel)
        check_text(content, "content", 1024 * 1024, allow_empty=True)
        content = self._screen(content, rel)
        self.engine.rewrite(self._spec_for(path), content)
        self._write_event(path, len(content))
        return self.engine.rel(path)

    def append(self, slug: str, rel: str, text: str) -> str:
        """Append a section to a task file (revision history, verified items...)."""
        self._check("write")
        folder = self._folder(slug)
        path = safe_join(folder, rel)
        check_text(text, "text", 256 * 1024)
        text = self._screen(text, rel)
        with self.engine.editing(self._spec_for(path)) as edit:
            old = edit.text
            sep = (
                "" if not old or old.endswith("\n\n") else ("\n" if old.endswith("\n") else "\n\n")
            )
            edit(old + sep + text.rstrip("\n") + "\n")
        self._write_event(path, len(text))
        return self.engine.rel(path)

    def read(self, slug: str, rel: str) -> str:
        self._check("read")
        path = safe_join(self._folder(slug), rel)
        found = self.engine.read(path)
        if found is None:
            raise NotFound(f"no file {rel!r} in task {slug!r}")
        text = found.text
        self._read_event(path, len(text))
        return text

    def add_verified(
        self,
        slug: str,
        items: builtins.list[str] | tuple[str, ...],
        *,
        iteration: int | None = None,
    ) -> str:
        """Record verified items of one iteration in `verified_items.md` (the
        orchestrator reads them in revision loops for regression tracking)."""
        self._check("write")
        check_count(items, "verified items", limits.TASK_CRITERIA)
        lines = [
            f"- [x] {' '.join(check_text(i, 'verified item', limits.TASK_CRITERION_BYTES).split())}"
            for i in items
        ]
        if not lines:
            raise MalformedInput("no verified items given")
        if iteration is not None and (
            isinstance(iteration, bool) or not isinstance(iteration, int) or iteration < 1
        ):
            raise MalformedInput(f"iteration must be a positive integer, got {iteration!r}")
        head = f"## Iteration {iteration}" if iteration is not None else "## Verified"
        return self.append(slug, VERIFIED_FILE, f"{head} ({iso(now_ts())})\n\n" + "\n".join(lines))

    def verified(self, slug: str) -> builtins.list[tuple[int | None, str]]:
        """Every verified item as (iteration, text), oldest first."""
        try:
            text = self.read(slug, VERIFIED_FILE)
        except NotFound:
            return []
        out: builtins.list[tuple[int | None, str]] = []
        iteration: int | None = None
        for line in text.splitlines():
            m = re.match(r"^##\s+Iteration\s+(\d+)", line)
            if m:
                iteration = int(m.group(1))
            elif line.startswith("## "):
                iteration = None
            item = re.match(r"^\s*[-*]\s+\[[xX]\]\s+(.*\S)", line)
            if item:
                out.append((iteration, item.group(1)))
        return out

    def log_gate_event(self, slug: str, task_id: str, event: dict[str, Any]) -> dict[str, Any]:
        """Append a gate event to `observability/<task-id>.ndjson`; durable and
        searchable (layer `gate`) once returned."""
        self._check("write")
        check_name(task_id, "task id")
        rec = self._screen_json(gate_record(event), "gate event")
        path = self._folder(slug) / "observability" / f"{task_id}.ndjson"
        assert self.owner is not None
        data = encode(rec)
        self.engine.append(gate_spec(path, self.owner, slug), data)
        self._write_event(path, len(data))
        return dict(rec)

    def gate_events(self, slug: str, task_id: str) -> builtins.list[dict[str, Any]]:
        self._check("read")
        path = self._folder(slug) / "observability" / f"{check_name(task_id, 'task id')}.ndjson"
        return [r for _, r in decode(self.engine.read_from(path)).records]
