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

from memstrata.index.reconcile import SourceSpec
from memstrata.layers.archives import LogArchives, archive_spec
from memstrata.layers.decisions import Decisions
from memstrata.layers.episodes import Episodes, Scratch
from memstrata.layers.facts import Facts
from memstrata.layers.files import MemoryFiles
from memstrata.layers.history import CompactionHistory
from memstrata.layers.hot import Context, Identity, Now
from memstrata.layers.log import Log
from memstrata.layers.mdparse import is_text_file, markdown_spec
from memstrata.layers.sessions import Sessions
from memstrata.layers.tasks import Tasks
from memstrata.layers.versions import Versions
from memstrata.model import check_name

if TYPE_CHECKING:
    from memstrata.layers.base import Acting


class AgentMemory:
    def __init__(self, acting: Acting, name: str) -> None:
        self.acting = acting
        self.engine = acting.engine
        self.name = check_name(name, "agent")

    @cached_property
    def now(self) -> Now:
        return Now(self.acting, self.name)

    @cached_property
    def context(self) -> Context:
        return Context(self.acting, self.name)

    @cached_property
    def identity(self) -> Identity:
        return Identity(self.acting, self.name)

    @cached_property
    def log(self) -> Log:
        return Log(self.acting, self.name)

    @cached_property
    def archives(self) -> LogArchives:
        return LogArchives(self.acting, self.name)

    @cached_property
    def files(self) -> MemoryFiles:
        return MemoryFiles(self.acting, self.name)

    @cached_property
    def facts(self) -> Facts:
        return Facts(self.acting, self.name)

    @cached_property
    def tasks(self) -> Tasks:
        return Tasks(self.acting, self.name)

    @cached_property
    def sessions(self) -> Sessions:
        return Sessions(self.acting, self.name)

    @cached_property
    def scratch(self) -> Scratch:
        return Scratch(self.acting, self.name, self.files)

    @cached_property
    def episodes(self) -> Episodes:
        return Episodes(self.acting, self.name)

    @cached_property
    def decisions(self) -> Decisions:
        """Decisions, constraints and preferences in force (the ledger's records)."""
        return Decisions(self.acting, self.name)

    @cached_property
    def compactions(self) -> CompactionHistory:
        return CompactionHistory(self.acting, self.name)

    def _ensure_files(self) -> None:
        """Initialising an agent creates NOW.md with default content and LOG.md
        with a header (not in agent-controlled mode: a blank slate), each only
        if the principal may write it and it is missing."""
        if not self.engine.config.automatic_writes:
            return
        gate = self.acting.gate
        if gate.allows("write", "now", self.name) and not self.now.exists():
            self.now.update("No active objective yet", [])
        if gate.allows("write", "log", self.name) and not self.engine.exists(self.log.path):
            self.log._ensure_header()

    @cached_property
    def versions(self) -> Versions:
        """Earlier contents of NOW, CONTEXT, identity and memory files: history, restore."""
        return Versions(self.acting, self.name, self)

    def _beside_identity(self) -> list[Path]:
        """Long-term memory kept beside AGENT.md (`<agent>/MEMORY.md`, or where
        `[memory] path` puts it): indexed as layer `context`."""
        folder = self.engine.layout.agent(self.name)
        found = [folder / "MEMORY.md"]
        ctx = self.engine.layout.context_file(self.name)
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
            return markdown_spec(self.engine, path, "context", owner=self.name)
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
            return archive_spec(self.engine, path, self.name)
        return None
