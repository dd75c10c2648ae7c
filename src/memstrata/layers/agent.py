"""One agent's memory: every per-agent layer behind one handle.

agent = store.agent("finn")
agent.now.update("Analyzing portfolio data", ["Load CSV", "Report"])
agent.log.append("TOOL_USE", "loaded prices.csv", {"rows": 1200})
agent.facts.set("preferred_currency", "USD", "preference")
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from memstrata.files.versions import history_folder
from memstrata.index.reconcile import SourceSpec
from memstrata.layers.archives import LogArchives
from memstrata.layers.catalog import source_for
from memstrata.layers.decisions import Decisions
from memstrata.layers.episodes import Episodes, Scratch
from memstrata.layers.facts import Facts
from memstrata.layers.files import MemoryFiles
from memstrata.layers.history import CompactionHistory
from memstrata.layers.hot import Context, Identity, Now
from memstrata.layers.log import Log, parse_log
from memstrata.layers.mdparse import is_text_file, markdown_spec
from memstrata.layers.sessions import Sessions
from memstrata.layers.tasks import Tasks
from memstrata.layers.versions import Versions
from memstrata.model import check_name

if TYPE_CHECKING:
    from memstrata.store import Store


class AgentMemory:
    def __init__(self, store: Store, name: str) -> None:
        self.store = store
        self.name = check_name(name, "agent")

    @cached_property
    def now(self) -> Now:
        return Now(self.store, self.name)

    @cached_property
    def context(self) -> Context:
        return Context(self.store, self.name)

    @cached_property
    def identity(self) -> Identity:
        return Identity(self.store, self.name)

    @cached_property
    def log(self) -> Log:
        return Log(self.store, self.name)

    @cached_property
    def archives(self) -> LogArchives:
        return LogArchives(self.store, self.name)

    @cached_property
    def files(self) -> MemoryFiles:
        return MemoryFiles(self.store, self.name)

    @cached_property
    def facts(self) -> Facts:
        return Facts(self.store, self.name)

    @cached_property
    def tasks(self) -> Tasks:
        return Tasks(self.store, self.name)

    @cached_property
    def sessions(self) -> Sessions:
        return Sessions(self.store, self.name)

    @cached_property
    def scratch(self) -> Scratch:
        return Scratch(self.store, self.name, self.files)

    @cached_property
    def episodes(self) -> Episodes:
        return Episodes(self.store, self.name)

    @cached_property
    def decisions(self) -> Decisions:
        """Decisions, constraints and preferences in force (the ledger's records)."""
        return Decisions(self.store, self.name)

    @cached_property
    def compactions(self) -> CompactionHistory:
        return CompactionHistory(self.store, self.name)

    @cached_property
    def versions(self) -> Versions:
        """Earlier contents of NOW, CONTEXT, identity and memory files: history, restore."""
        return Versions(self.store, self.name)

    def _sources(self) -> list[SourceSpec]:
        """Every index source this agent has in the truth."""
        specs: dict[str, SourceSpec] = {}
        for entry in self.store.truth.list(f"agents/{self.name}", skip=history_folder):
            spec = None if entry.is_dir else source_for(self.store, entry.path)
            if spec is not None:
                specs.setdefault(str(spec.path), spec)
        return list(specs.values())

    def _beside_identity(self) -> list[Path]:
        """Long-term memory kept beside AGENT.md (seed 004's `<agent>/MEMORY.md`, or where
        `[memory] path` puts it): indexed as layer `context`."""
        folder = self.store.layout.agent(self.name)
        found = [folder / "MEMORY.md"]
        ctx = self.store.layout.context_file(self.name)
        if ctx.parent == folder and ctx not in found:
            found.append(ctx)
        return found

    def _source_for(self, path: Path, rest: tuple[str, ...]) -> SourceSpec | None:
        """The source `path` is, by its parts `rest` below the agent's folder (as `sources`)."""
        head, tail = rest[0], "/".join(rest[1:])
        if head == "memory" and tail:
            if tail == "LOG.md":
                return self.log._spec()
            return self.files._spec_for(path, tail) if is_text_file(path) else None
        if rest in (("AGENT.md",), ("IDENTITY.md",)):
            return self.identity._spec()
        if len(rest) == 1 and path in self._beside_identity():
            return markdown_spec(self.store, path, "context", owner=self.name)
        if rest == ("facts.jsonl",):
            return self.facts._spec()
        if rest == ("tasks.json",):
            return self.tasks._spec()
        if head == "sessions" and len(rest) == 2 and path.suffix == ".jsonl":
            return self.sessions._spec(check_name(path.stem, "session id"), path)
        if head == "episodes" and len(rest) > 2:
            return self.episodes._source_for(path)
        if rest == ("compactions.jsonl",):
            return self.compactions._spec()
        if head == "archive" and path.suffix == ".md":
            return archive_spec(self.store, path, self.name)
        return None


def archive_spec(store: Store, path: object, owner: str) -> SourceSpec:
    """Cold memory: compacted LOG archives (LOG format) and archived Markdown."""
    assert isinstance(path, Path)
    if path.name.startswith("LOG-") and path.parent == store.layout.archive_dir(owner):
        p, rel = str(path), store.rel(path)

        def when() -> float:
            entry = store.truth.stat(rel)
            return entry.mtime if entry is not None else 0.0

        return SourceSpec(
            path,
            "whole",
            lambda d, b: parse_log(
                d,
                b,
                p,
                owner=owner,
                layer="archive",
                final=True,
                mtime=when,
                neighbour_radius=store.config.log_neighbour_context,
            ),
        )
    return markdown_spec(store, path, "archive", owner=owner)
