"""An agent's file versions: history, content, diff and restore, through the scope gate.

Every replace of NOW.md, CONTEXT.md / MEMORY.md, AGENT.md and the memory files
keeps the content it replaced (`files.versions` says how and where). This handle
reads that history and restores from it, for every surface (CLI `history` and
`restore`, the HTTP API, the web history pages, MCP `memory_history`):

    versions = store.agent("finn").versions
    for v in versions.history("CONTEXT.md").versions:      # newest first
        print(v.id, v.ts, v.by, v.size, v.changed)
    print(versions.diff("CONTEXT.md", older_id, "current"))
    versions.restore("CONTEXT.md", older_id, expected_sha=sha_of_what_i_saw)

A file is named as the memory tools name it ("CONTEXT.md", "notes/a.md"), by the
name `History.path` gives ("memory/CONTEXT.md", "AGENT.md"), or by its layer
("now", "context", "identity"). Reading history needs read access to the file's
layer and restoring needs write access (the same gate as reading and writing the
file). A restore writes through the file's own layer (secrets policy, size caps,
the index, the audit trail), so it is itself a new version: the content it
replaced is kept like any other.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstrata.errors import MalformedInput, NotFound
from memstrata.files.versions import (
    FOUND,
    ID_CHARS,
    TOP_FILES,
    FileHistory,
    Record,
    Versioned,
    parse_log,
    sha256,
    surface,
    versioned,
)
from memstrata.layers.base import Acting, Layer
from memstrata.layers.hot import MarkdownLayer
from memstrata.layers.walk import memory_layer_of
from memstrata.model import iso
from memstrata.values import value_type

if TYPE_CHECKING:
    from collections.abc import Iterable

    from memstrata.layers.agent import AgentMemory

CURRENT = "current"  # names the file's content now, wherever a version id is asked for
UNRECORDED = (
    "the file's content now, not recorded yet (changed outside memstrata's write paths: by "
    "hand, by an import or a purge); the next write keeps it"
)
CHANGED_CHARS = 120


@value_type(frozen=True)
class Version:
    """One content a file held. `id` is the first hex digits of its sha256 (one content,
    one id, like a git blob); `current` marks what the file holds now."""

    id: str
    sha256: str
    ts: str  # ISO 8601, UTC
    size: int
    by: str | None  # the agent that wrote it (None: unknown, or the admin at the terminal)
    role: str | None
    surface: str | None  # "cli restore", "mcp memory_write", "web", ...
    note: str | None  # "restore of <id>", or how it was found
    current: bool = False
    kept: bool = True  # its bytes are in the history (False: an unrecorded current content)
    changed: str | None = None  # its first line that differs from the version before it

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@value_type(frozen=True)
class History:
    """A file's versions, newest first."""

    agent: str
    path: str  # below the agent's folder: "memory/CONTEXT.md", "AGENT.md"
    file: str  # store-relative
    layer: str
    exists: bool  # the file exists now
    versions: tuple[Version, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "path": self.path,
            "file": self.file,
            "layer": self.layer,
            "exists": self.exists,
            "versions": [v.to_dict() for v in self.versions],
        }


class Versions(Layer):
    """The versions of one agent's overwritable files (module docstring)."""

    layer = "file"

    def __init__(self, acting: Acting, owner: str, memory: AgentMemory) -> None:
        super().__init__(acting, owner)
        self.memory = memory  # the agent's handles: a restore writes through its file's

    # -- which file --------------------------------------------------------------
    def _versioned(self, path: Path) -> Versioned | None:
        return versioned(self.engine.rel(path), self.engine.config.memory_path)

    def _resolve(self, name: str) -> Versioned:
        """The versioned file `name` names (module docstring), or MalformedInput."""
        if not isinstance(name, str) or not name.strip():
            raise MalformedInput("name a file: e.g. CONTEXT.md, NOW.md, AGENT.md or notes/a.md")
        assert self.owner is not None
        layout, key = self.engine.layout, name.strip()
        layers = {
            "now": layout.now_file,
            "context": layout.context_file,
            "identity": layout.identity,
        }
        if key.lower() in layers:
            found = self._versioned(layers[key.lower()](self.owner))
            assert found is not None
            return found
        files = self.memory.files
        path, _ = files._path(key)  # refuses every way out of the memory folder
        candidates = [self._versioned(path)]
        plain = key.removeprefix("/memories/").strip("/")
        if plain.startswith("memory/") or plain in TOP_FILES:
            candidates.append(self._versioned(layout.agent(self.owner) / plain))
        alias = {
            "NOW.md": layout.now_file,
            "NOTES.md": layout.now_file,
            "CONTEXT.md": layout.context_file,
            "MEMORY.md": layout.context_file,
            "AGENT.md": layout.identity,
            "IDENTITY.md": layout.identity,
        }.get(plain)
        if alias is not None:
            candidates.append(self._versioned(alias(self.owner)))
        real = [c for c in candidates if c is not None]
        if not real:
            raise MalformedInput(f"{name!r} keeps no versions (LOG.md is append-only)")
        engine = self.engine
        for c in real:
            if engine.stat(c.rel) is not None or engine.stat(c.log) is not None:
                return c
        return real[0]

    def _layer_of(self, target: Versioned) -> str:
        layout, owner = self.engine.layout, self.owner
        assert owner is not None
        if target.rel == self.engine.rel(layout.identity(owner)) or target.name in (
            "AGENT.md",
            "IDENTITY.md",
        ):
            return "identity"
        if target.name.startswith("memory/"):
            return memory_layer_of(target.name.removeprefix("memory/"))
        return "context"  # <agent>/MEMORY.md, or where [memory] path puts it

    def _history(self, target: Versioned) -> FileHistory:
        return self.engine.history(target)

    # -- reading ---------------------------------------------------------------------
    def files(self) -> list[dict[str, Any]]:
        """Every file of this agent that has versions you may read: path, file, layer,
        versions (how many), latest (ISO 8601 time of the newest)."""
        self._check("read")
        out = []
        for log in self.engine.histories(self.owner or ""):
            found = self.engine.read(log)
            records = parse_log(found.data) if found is not None else []
            if not records:
                continue
            target = versioned(records[-1].path, self.engine.config.memory_path)
            if target is None or target.agent != self.owner or target.log != log:
                continue
            layer = self._layer_of(target)
            if not self.gate.allows("read", layer, self.owner):
                continue
            out.append(
                {
                    "path": target.name,
                    "file": target.rel,
                    "layer": layer,
                    "versions": len(records),
                    "latest": records[-1].ts,
                }
            )
        return sorted(out, key=lambda d: d["path"])

    def history(self, path: str, *, limit: int | None = None, changes: bool = True) -> History:
        """The versions of `path`, newest first (at most `limit`); `changes` adds each
        one's first changed line (reads their contents).

        Example:
            >>> [v.id for v in agent.versions.history("CONTEXT.md").versions]  # doctest: +SKIP
            ['9f1c2ab04e11', '3d0e8c7a5b21']
        """
        target = self._resolve(path)
        layer = self._layer_of(target)
        self._check("read", layer)
        hist = self._history(target)
        records = hist.records()
        live = self.engine.read(target.rel)
        rows: list[tuple[Record, bool, bool]] = [(r, False, True) for r in records]
        if live is not None:
            live_sha = sha256(live.data)
            if records and records[-1].sha256 == live_sha:
                rows[-1] = (records[-1], True, True)
            else:  # edited by hand (or the writer stopped before its record): shown, unkept
                rec = Record(iso(live.entry.mtime), target.rel, live_sha, len(live.data))
                rows.append((rec, True, False))
        if not rows:
            raise NotFound(f"no versions of {target.name} of {self.owner}")
        rows.reverse()  # newest first
        texts: dict[str, str | None] = {}

        def text(rec: Record, kept: bool) -> str | None:
            if rec.sha256 not in texts:
                data = hist.blob(rec.sha256) if kept else (live.data if live else None)
                texts[rec.sha256] = data.decode("utf-8", "replace") if data is not None else None
            return texts[rec.sha256]

        shown = rows if limit is None else rows[: max(0, limit)]
        out = []
        for n, (rec, current, kept) in enumerate(shown):
            changed, there = None, kept
            if changes:
                before = rows[n + 1] if n + 1 < len(rows) else None
                now_text = text(rec, kept)
                there = now_text is not None
                old_text = "" if before is None else text(before[0], before[2])
                changed = _first_change(old_text, now_text)
            out.append(
                Version(
                    rec.id,
                    rec.sha256,
                    rec.ts,
                    rec.size,
                    rec.by,
                    rec.role,
                    rec.surface,
                    rec.note if kept else UNRECORDED,
                    current,
                    kept and there,
                    changed,
                )
            )
        return History(
            self.owner or "", target.name, target.rel, layer, live is not None, tuple(out)
        )

    def _content(self, target: Versioned, version: str) -> tuple[str, bytes]:
        """(full sha256, bytes) of a version of `target` by id, id prefix or CURRENT."""
        if not isinstance(version, str) or not version.strip():
            raise MalformedInput("name a version: its id (or a prefix of 4+ hex digits)")
        v = version.strip().lower()
        live = self.engine.read(target.rel)
        if v == CURRENT:
            if live is None:
                raise NotFound(f"{target.name} does not exist now")
            return sha256(live.data), live.data
        if len(v) < 4 or v.strip("0123456789abcdef"):
            raise MalformedInput(f"{version!r} is no version id (4 to 64 hex digits)")
        hist = self._history(target)
        shas = {r.sha256 for r in hist.records()}
        if live is not None:
            shas.add(sha256(live.data))
        match = sorted(s for s in shas if s.startswith(v))
        if not match:
            raise NotFound(f"no version {version!r} of {target.name}")
        if len(match) > 1:
            raise MalformedInput(f"{version!r} names {len(match)} versions: give more digits")
        data = hist.blob(match[0])
        if data is None and live is not None and sha256(live.data) == match[0]:
            data = live.data
        if data is None:
            raise NotFound(f"version {match[0][:ID_CHARS]} of {target.name} is no longer kept")
        return match[0], data

    def read(self, path: str, version: str) -> str:
        """The text of one version (`"current"`: the file now)."""
        target = self._resolve(path)
        self._check("read", self._layer_of(target))
        _, data = self._content(target, version)
        return data.decode("utf-8", "replace")

    def texts(self, path: str, ids: Iterable[str]) -> dict[str, str]:
        """The texts of several versions by id (as `history` lists them), the history read
        once (`read` reads it per call); an id whose content is not kept is left out."""
        target = self._resolve(path)
        self._check("read", self._layer_of(target))
        hist = self._history(target)
        records = hist.records()
        wanted = {i.strip().lower() for i in ids}
        out: dict[str, str] = {}
        for rec in records:
            vid = next((i for i in wanted if rec.sha256.startswith(i)), None)
            if vid is None or vid in out:
                continue
            data = rec.text.encode("utf-8") if rec.text is not None else None
            if data is None or sha256(data) != rec.sha256:
                data = hist.blob(rec.sha256)
            if data is not None:
                out[vid] = data.decode("utf-8", "replace")
        return out

    def diff(self, path: str, a: str, b: str = CURRENT, *, context: int = 3) -> str:
        """A unified diff from version `a` to version `b` ('' when they are the same)."""
        target = self._resolve(path)
        self._check("read", self._layer_of(target))
        sha_a, data_a = self._content(target, a)
        sha_b, data_b = self._content(target, b)
        import difflib  # only to show a change (start-up: `memstrata context`)

        lines = difflib.unified_diff(
            data_a.decode("utf-8", "replace").splitlines(keepends=True),
            data_b.decode("utf-8", "replace").splitlines(keepends=True),
            f"{target.name}@{sha_a[:ID_CHARS]}",
            f"{target.name}@{sha_b[:ID_CHARS]}",
            n=context,
        )
        return "".join(
            x if x.endswith("\n") else x + "\n\\ No newline at end of file\n" for x in lines
        )

    def prune(self) -> int:
        """Apply `[versions]` retention to every file of this agent you may write (a
        write does it for its own file); returns how many versions were dropped."""
        self._check("write")
        dropped = 0
        for log in self.engine.histories(self.owner or ""):
            found = self.engine.read(log)
            records = parse_log(found.data) if found is not None else []
            target = (
                versioned(records[-1].path, self.engine.config.memory_path) if records else None
            )
            if target is None or target.agent != self.owner or target.log != log:
                continue
            if self.gate.allows("write", self._layer_of(target), self.owner):
                with self.engine.lock(target.rel):
                    dropped += len(self._history(target).prune(sweep=True))
        return dropped

    # -- restoring ---------------------------------------------------------------------
    def restore(self, path: str, version: str, *, expected_sha: str | None = None) -> History:
        """Make `version` the file's content again, as a new version (the content it
        replaces is kept). `expected_sha` (the sha256 of the content you saw) refuses
        with StaleWrite if the file changed meanwhile. Returns the history after it.
        """
        target = self._resolve(path)
        layer = self._layer_of(target)
        self._check("write", layer)
        sha, data = self._content(target, version)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise MalformedInput(f"version {sha[:ID_CHARS]} is not UTF-8 text") from None
        with surface("", note=f"restore of {sha[:ID_CHARS]}"):
            self._write(target, layer, text, expected_sha)
        return self.history(target.name, limit=2, changes=False)

    def _write(self, target: Versioned, layer: str, text: str, expected_sha: str | None) -> None:
        mem = self.memory
        path = self.engine.home / target.rel
        for handle in (mem.now, mem.context, mem.identity):
            if handle.path == path:
                handle.write(text, expected_sha=expected_sha)
                return
        if target.name.startswith("memory/"):
            mem.files.write(target.name.removeprefix("memory/"), text, expected_sha=expected_sha)
            return
        other = MarkdownLayer(self.acting, self.owner or "", path)
        other.layer = layer
        other.write(text, expected_sha=expected_sha)


def _first_change(before: str | None, after: str | None) -> str | None:
    """The first line of `after` that differs from `before` at its place (a line that
    only `before` has is shown as "(removed) ..."); None if unknown or the same."""
    if after is None or before is None:
        return None
    old, new = before.splitlines(), after.splitlines()
    for i, line in enumerate(new):
        if i >= len(old) or old[i] != line:
            return line.strip()[:CHANGED_CHARS] or "(blank line)"
    if len(old) > len(new):
        return f"(removed) {old[len(new)].strip()[:CHANGED_CHARS]}"
    return None


__all__ = ["CURRENT", "FOUND", "History", "Version", "Versions"]
