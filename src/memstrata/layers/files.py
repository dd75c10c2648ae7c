"""Free-form memory files (the file tools; MEMORY.md; session scratch).

Paths are relative to the agent's memory directory (`/memories/...` accepted).
Every rewrite is atomic and made under the file's lock; `write` can be told the
content hash the caller last read, and refuses (StaleWrite) if someone else
changed the file meanwhile. `delete` never destroys: the file moves to the
agent's archive. Listing copes with a folder that changes meanwhile and never
follows a symlink out of the memory folder. LOG.md is append-only and cannot be written here.

`repo/` is the repo-persistent layer's `/memories/repo/`: durable codebase facts, where "only
create is supported, no inline edits". A file there is created once, holding one
cited fact of 1-2 sentences that is no save exclusion (`Citations: ...` line;
`layers.durable.repo_file_problem`); writing it again, replacing or inserting in
it, or renaming into or out of `repo/` is refused. Deleting it (archived) stays
possible, as `forget` does for a fact.
"""

from __future__ import annotations

import builtins
from pathlib import Path
from typing import TYPE_CHECKING

from memstrata import limits
from memstrata.errors import (
    AlreadyExists,
    EntryTooLarge,
    MalformedInput,
    NotFound,
    NotUnique,
    Refused,
    ReservedFile,
)
from memstrata.files.paths import safe_join
from memstrata.layers.archives import archive_spec
from memstrata.layers.base import Acting, Layer, check_text
from memstrata.layers.durable import repo_file_problem
from memstrata.layers.mdparse import markdown_spec
from memstrata.layers.walk import memory_layer_of
from memstrata.model import iso, now_ts
from memstrata.policy.secrets import restore_withheld
from memstrata.store.editing import sha256_text
from memstrata.values import value_type

if TYPE_CHECKING:
    from memstrata.files.truth import Entry
    from memstrata.index.reconcile import SourceSpec

MAX_FILE_BYTES = limits.MEMORY_FILE_BYTES
RESERVED = frozenset({"LOG.md"})
REPO_DIR = "repo"  # /memories/repo/: create-only durable facts


def in_repo(relp: str) -> bool:
    return relp == REPO_DIR or relp.startswith(REPO_DIR + "/")


def _no_edit(relp: str) -> Refused:
    return Refused(
        f"{relp} is a repo-persistent fact: only create is supported, no inline "
        "edits; delete it and create it again, or create a new file"
    )


@value_type(frozen=True)
class FileInfo:
    """One file of a memory folder as listed: path, size, modification time."""

    path: str
    size: int
    modified: str
    is_dir: bool = False
    sha256: str | None = None


class MemoryFiles(Layer):
    """read / write / replace / insert / list / delete / rename inside one memory dir."""

    layer = "file"

    def __init__(self, acting: Acting, owner: str) -> None:
        super().__init__(acting, owner)
        self.root: Path = acting.engine.layout.memory_dir(owner)

    # -- helpers -------------------------------------------------------------
    def _path(self, rel: str, *, writing: bool = False) -> tuple[Path, str]:
        path = safe_join(self.root, rel)
        relp = path.relative_to(self.root.resolve()).as_posix()
        if writing and relp in RESERVED:
            raise ReservedFile(f"{relp} is append-only: use the log (append_log / log_activity)")
        return path, relp

    def _where(self, relp: str) -> str:
        """The store-relative path of a memory file (the truth's name for it)."""
        return f"{self.engine.rel(self.root)}/{relp}" if relp else self.engine.rel(self.root)

    def _spec_for(self, path: Path, relp: str) -> SourceSpec:
        assert self.owner is not None
        return markdown_spec(self.engine, path, memory_layer_of(relp), owner=self.owner)

    def _info(self, relp: str, entry: Entry, text: str | None = None) -> FileInfo:
        return FileInfo(
            relp,
            entry.size,
            iso(entry.mtime),
            entry.is_dir,
            sha256_text(text) if text is not None else None,
        )

    def _text(self, relp: str) -> tuple[str, Entry]:
        try:
            found = self.engine.read(self._where(relp))
        except MalformedInput:
            raise MalformedInput(f"{relp!r} is a directory") from None
        if found is None:
            raise NotFound(f"no memory file {relp!r}")
        try:
            return found.data.decode("utf-8"), found.entry
        except UnicodeDecodeError:
            raise MalformedInput(f"{relp!r} is not UTF-8 text") from None

    # -- operations ----------------------------------------------------------
    def read(self, rel: str) -> str:
        self._check("read")
        path, relp = self._path(rel)
        text, _ = self._text(relp)
        self._read_event(path, len(text))
        return text

    def stat(self, rel: str) -> FileInfo:
        self._check("read")
        _, relp = self._path(rel)
        text, entry = self._text(relp)
        return self._info(relp, entry, text)

    def exists(self, rel: str) -> bool:
        self._check("read")
        _, relp = self._path(rel)
        entry = self.engine.stat(self._where(relp))
        return entry is not None and not entry.is_dir

    def write(self, rel: str, content: str, *, expected_sha: str | None = None) -> FileInfo:
        """Create or overwrite a file atomically."""
        self._check("write")
        check_text(content, "content", MAX_FILE_BYTES, allow_empty=True)
        path, relp = self._path(rel, writing=True)
        content = self._screen(self._unwithheld(relp, content), relp)
        old = self.engine.stat(self._where(relp))
        if old is not None and old.is_dir:
            raise MalformedInput(f"{relp!r} is a directory")
        if in_repo(relp):
            if old is not None:
                raise AlreadyExists(f"{relp} exists: {_no_edit(relp)}")
            problem = repo_file_problem(content)
            if problem is not None:
                raise Refused(f"{relp}: {problem}")
        before = old.size if old is not None else 0
        self.engine.rewrite(
            self._spec_for(path, relp),
            content,
            expected_sha=expected_sha,
            by=self.gate.principal,
        )
        self._write_event(path, len(content.encode("utf-8")) - before)
        return self._info(relp, self._entry(relp), content)

    def _unwithheld(self, relp: str, text: str) -> str:
        """`text` with the secrets a withheld view of the file showed as `[withheld: <kind>]`
        put back (`policy.secrets.restore_withheld`): an edit from an agent's or a page's view
        keeps them."""
        if "[withheld: " not in text:
            return text
        try:
            current = self._text(relp)[0]
        except (NotFound, MalformedInput):
            return text
        return restore_withheld(text, current)

    def _entry(self, relp: str) -> Entry:
        entry = self.engine.stat(self._where(relp))
        if entry is None:
            raise NotFound(f"no memory file {relp!r}")  # deleted again meanwhile
        return entry

    def _modify(self, rel: str, change: object) -> FileInfo:
        self._check("write")
        path, relp = self._path(rel, writing=True)
        if in_repo(relp):
            raise _no_edit(relp)
        spec = self._spec_for(path, relp)
        with self.engine.editing(spec, by=self.gate.principal) as edit:
            if not edit.exists:
                raise NotFound(f"no memory file {relp!r}")
            text = edit.text
            new = change(text, relp)  # type: ignore[operator]
            if len(new.encode("utf-8")) > MAX_FILE_BYTES:
                raise EntryTooLarge(f"{relp} would exceed {MAX_FILE_BYTES} bytes")
            edit(new)
        self._write_event(path, len(new) - len(text))
        return self._info(relp, self._entry(relp), new)

    def replace(self, rel: str, old: str, new: str) -> FileInfo:
        """Replace the one occurrence of `old` (it must be a unique match)."""
        check_text(old, "old text", MAX_FILE_BYTES)
        check_text(new, "new text", MAX_FILE_BYTES, allow_empty=True)
        new = self._screen(new, "new text")

        def change(text: str, relp: str) -> str:
            seen = restore_withheld(old, text)  # both as a withheld view showed them
            count = text.count(seen)
            if count != 1:
                where = "not found" if count == 0 else f"found {count} times"
                raise NotUnique(f"text to replace {where} in {relp}; it must match exactly once")
            return text.replace(seen, restore_withheld(new, seen), 1)

        return self._modify(rel, change)

    def insert(self, rel: str, line: int, text: str) -> FileInfo:
        """Insert `text` after line `line` (0 = at the top)."""
        check_text(text, "text", MAX_FILE_BYTES)
        text = self._screen(text, "inserted text")
        if not isinstance(line, int) or isinstance(line, bool):
            raise MalformedInput("line must be an integer")

        def change(old: str, relp: str) -> str:
            lines = old.split("\n")
            if old.endswith("\n"):
                lines.pop()
            if line < 0 or line > len(lines):
                raise MalformedInput(f"line {line} is out of range: {relp} has {len(lines)} lines")
            lines[line:line] = text.rstrip("\n").split("\n")
            return "\n".join(lines) + "\n"

        return self._modify(rel, change)

    def list(self, rel: str = "") -> builtins.list[FileInfo]:
        """Every file and folder below `rel`, sorted; LOG.md included (read-only).

        The folder may change while it is listed: an entry another process
        deletes meanwhile is left out, and so is a symlink that dangles or leads
        out of the memory folder (never followed out, not even for a size).
        """
        self._check("read")
        base = safe_join(self.root, rel, allow_root=True)
        root = self.root.resolve()
        relp = "" if base == root else base.relative_to(root).as_posix()
        entry = self.engine.stat(self._where(relp))
        if entry is None:
            if not relp:
                return []  # an agent with no memory files yet: reading creates nothing
            raise NotFound(f"no memory folder {rel!r}")
        # One listing of the whole memory folder: symlinks are followed only inside it.
        cut = len(self._where("")) + 1
        found = [
            FileInfo(e.path[cut:], e.size, iso(e.mtime), e.is_dir)
            for e in self.engine.listing(self._where(""))
        ]
        if not entry.is_dir:
            match = [f for f in found if f.path == relp]
            if not match:
                raise NotFound(f"no memory file {rel!r}")
            return match
        return sorted(
            (f for f in found if not relp or f.path.startswith(f"{relp}/")), key=lambda f: f.path
        )

    def delete(self, rel: str) -> str:
        """Move a file (or folder) to the archive; returns its archive path.

        Soft: nothing is destroyed, it goes to `archive/deleted/<ms>/<path>` (the
        same path below a folder per deletion, so any path that could be written
        can be archived) and stays searchable there. `memstrata.operations.purge.purge_file`
        removes a file and every archived copy.
        """
        self._check("write")
        path, relp = self._path(rel, writing=True)
        entry = self.engine.stat(self._where(relp))
        if entry is None:
            raise NotFound(f"no memory file {relp!r}")
        assert self.owner is not None
        deleted = self.engine.layout.archive_dir(self.owner) / "deleted"
        stamp = int(now_ts() * 1000)
        while self.engine.stat(deleted / str(stamp) / relp) is not None:
            stamp += 1
        dest = deleted / str(stamp) / relp
        self.engine.move(self._where(relp), dest)
        self.engine.index_file(self._spec_for(path, relp))
        if not entry.is_dir:
            self.engine.index_file(archive_spec(self.engine, dest, self.owner))
        self._write_event(path, -entry.size if not entry.is_dir else 0)
        return self.engine.rel(dest)

    def rename(self, old: str, new: str) -> FileInfo:
        self._check("write")
        dst, relp = self._path(new, writing=True)  # the caller's new name is checked first
        src, old_relp = self._path(old, writing=True)
        if in_repo(relp) or in_repo(old_relp):
            raise _no_edit(old_relp if in_repo(old_relp) else relp)
        if self.engine.stat(self._where(old_relp)) is None:
            raise NotFound(f"no memory file {old!r}")
        if self.engine.stat(self._where(relp)) is not None:
            raise AlreadyExists(f"{relp!r} already exists")
        self.engine.move(self._where(old_relp), self._where(relp))
        self.engine.index_file(self._spec_for(src, old))
        self.engine.index_file(self._spec_for(dst, relp))
        self._write_event(dst, 0)
        return self._info(relp, self._entry(relp))
