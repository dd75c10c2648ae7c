"""File changes for `memstrata setup`: planned from the files on disk, shown as a diff,
applied atomically, undone by the same plan with `remove=True`.

A plan is computed first and written only if something changes, so a second setup leaves
every file untouched (and says so), `--dry-run` shows exactly what would be written, and a
removal that empties a file memstrata created deletes it (and its folder, if empty), so
setup followed by removal leaves the project as it was.
"""

from __future__ import annotations

import difflib
import os
import sys
from pathlib import Path

from memstrata.agentconfig.clients import Client, Target
from memstrata.agentconfig.jsonedit import parse, render
from memstrata.errors import MalformedInput, NotFound
from memstrata.files.atomic import atomic_write_bytes, fsync_dir
from memstrata.values import field, value_type


@value_type
class FileChange:
    """One file: its text before (None: absent) and after (None: deleted), and what changed."""

    path: Path
    rel: str
    before: str | None
    after: str | None
    changes: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.before != self.after

    @property
    def action(self) -> str:
        """unchanged, created, updated or deleted."""
        if not self.changed:
            return "unchanged"
        if self.before is None:
            return "created"
        return "deleted" if self.after is None else "updated"

    def diff(self) -> str:
        old = (self.before or "").splitlines(keepends=True)
        new = (self.after or "").splitlines(keepends=True)
        a = f"a/{self.rel}" if self.before is not None else "/dev/null"
        b = f"b/{self.rel}" if self.after is not None else "/dev/null"
        return "".join(difflib.unified_diff(old, new, a, b))

    def apply(self, project: Path) -> None:
        if not self.changed:
            return
        if self.after is not None:
            # a symlinked settings file (a dotfiles repo) is written where it points, and
            # keeps its permissions
            path = self.path.resolve() if self.path.is_symlink() else self.path
            mode = path.stat().st_mode & 0o777 if path.exists() else None
            atomic_write_bytes(path, self.after.encode("utf-8"))
            if mode is not None:
                os.chmod(path, mode)
            return
        self.path.unlink()
        folder = self.path.parent
        fsync_dir(folder)
        if folder != project and not any(folder.iterdir()):  # a folder setup created
            folder.rmdir()


def plan(
    client: Client, project: Path, target: Target, *, remove: bool = False
) -> list[FileChange]:
    """What setup (or its removal) changes in each of the client's files under `project`."""
    if not project.is_dir():
        raise NotFound(f"no project folder {project}")
    out = []
    for cfg in client.files:
        path = project / cfg.path
        before = path.read_text(encoding="utf-8") if path.exists() else None
        doc = parse(before, cfg.path).value if before is not None and before.strip() else {}
        if not isinstance(doc, dict):
            raise MalformedInput(f"{cfg.path} holds a JSON {type(doc).__name__}, not an object")
        new, changes = (cfg.remove if remove else cfg.add)(doc, target)
        after = before
        if changes:
            emptied = remove and not new and not path.is_symlink()  # a file setup created
            after = None if emptied else render(new, before, cfg.path)
        out.append(FileChange(path, cfg.path, before, after, changes))
    return out


def this_program() -> tuple[str, ...]:
    """The memstrata a client should start: this very program, by absolute path (a client
    starts it with its own PATH, which need not hold the user's virtualenv). A symlink is
    kept as such, so upgrading the tool behind it keeps working."""
    argv0 = Path(sys.argv[0])
    if argv0.name in ("memstrata", "memstrata.exe") and argv0.is_file():
        return (str(argv0.absolute()),)
    beside = Path(sys.executable).parent / ("memstrata.exe" if os.name == "nt" else "memstrata")
    if beside.is_file():
        return (str(beside),)
    return (sys.executable, "-m", "memstrata")
