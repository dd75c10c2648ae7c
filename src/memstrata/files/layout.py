"""Where every layer lives on disk. The folder listing of a store is its documentation:

<home>/                       $MEMSTRATA_HOME, else .memstrata found upward (`find_home`)
  config.toml                 optional settings (kinds, roles, thresholds)
  ledger.jsonl                shared cross-agent ledger
  items.json                  extracted knowledge
  events.jsonl                memory events audit trail, rotated by size
  purged.jsonl                tombstones of purges: id, who, when, why (no content)
  index/                      derived SQLite index: delete the folder and nothing is lost
    CURRENT                   names the live generation; a rebuild swaps in a new one
    <generation>.db           the index (with its own -wal and -shm)
  .imports/                   imports being staged (finished or discarded on open)
  rooms/<room>/channel.jsonl  per-room conversation (room layer 1)
  rooms/<room>/artifacts/     room artifacts (room layer 2)
  rooms/<room>/room.json      the room's upstream rooms (its place in the DAG), closed
  agents/<name>/
    AGENT.md | IDENTITY.md    identity, first in every prompt
    MEMORY.md                 the place for long-term memory (beside AGENT.md),
                              used when memory/ has no CONTEXT.md or MEMORY.md
    memory/                   the agent's memory directory (the memory file tools work here)
      CONTEXT.md | MEMORY.md  auto-loaded long-term memory
      NOW.md | NOTES.md       hot state
      LOG.md                  warm append-only log
      session/                conversation scratch (session layer)
      *.md                    free-form memory files
    archive/                  cold: compacted LOG archives, cleared scratch, old sessions
    facts.jsonl               key/value and durable typed facts
    tasks.json                task memory
    compactions.jsonl         compaction history
    episodes/<task-slug>/     task-episodic memory
    sessions/sessions.json    session index; sessions/<id>.jsonl transcripts
    versions/<file>.<hash8>/  earlier contents of NOW, CONTEXT, identity and memory
                              files: log.jsonl and one blob per content (`files.versions`)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from memstrata.model import check_name
from memstrata.values import field, value_type

if TYPE_CHECKING:
    from memstrata.files.truth import Truth

DEFAULT_HOME = ".memstrata"

# Two designs name one layer twice; the first name is the one memstrata creates.
ALIASES: dict[str, tuple[str, ...]] = {
    "CONTEXT.md": ("CONTEXT.md", "MEMORY.md"),
    "NOW.md": ("NOW.md", "NOTES.md"),
    "AGENT.md": ("AGENT.md", "IDENTITY.md"),  # AGENT.md, or IDENTITY.md beside memory/
}


# A folder holding one of these is a project's root: the walk up for a store stops there.
PROJECT_MARKERS = (".git", ".hg", ".claude")


def resolve_home(home: str | os.PathLike[str] | None = None) -> Path:
    """The store home: `home`, else `$MEMSTRATA_HOME`, else `find_home` from
    `$CLAUDE_PROJECT_DIR` (Claude Code names the project to its hooks and servers) or
    the working directory."""
    if home is not None:
        return Path(home).expanduser().absolute()
    env = os.environ.get("MEMSTRATA_HOME")
    if env:
        return Path(env).expanduser().absolute()
    project = os.environ.get("CLAUDE_PROJECT_DIR")
    start = Path(project) if project and os.path.isdir(project) else None
    return find_home(start)


def find_home(start: str | os.PathLike[str] | None = None) -> Path:
    """The project's store, found the way git finds its repository.

    From `start` (default: the working directory) up: the first folder holding a
    `.memstrata` folder wins. The walk stops at a project root (a folder holding
    `.git`, `.hg` or `.claude`), at the filesystem root, and before `$HOME` (a
    store in the home folder is not every project's store; it is found only from
    `$HOME` itself). With no store found, the store is created at the project
    root if there is one, else in `start`. So a hook fired from `proj/app` uses
    `proj/.memstrata`, never a second, empty store in `proj/app`.

    Example:
        >>> find_home("/srv/proj/app")  # doctest: +SKIP
        PosixPath('/srv/proj/.memstrata')
    """
    here = Path(start if start is not None else os.getcwd()).expanduser().absolute()
    user = os.environ.get("HOME")
    ceiling = Path(user).absolute() if user else None
    folder = here
    while True:
        if (folder / DEFAULT_HOME).is_dir():
            return folder / DEFAULT_HOME
        if any(os.path.lexists(folder / marker) for marker in PROJECT_MARKERS):
            return folder / DEFAULT_HOME  # the project's root: its store goes here
        parent = folder.parent
        if parent in (folder, ceiling):
            return here / DEFAULT_HOME
        folder = parent


@value_type(frozen=True)
class Layout:
    """Paths of every layer below `home`; which alias exists, and which agents and rooms,
    is asked of `truth` (the store's sources, wherever they are kept)."""

    home: Path
    # MemoryConfig memoryPath (`[memory] path`), relative to the agent's folder: pins the
    # long-term memory file. None: the first of memory/CONTEXT.md, memory/MEMORY.md,
    # <agent>/MEMORY.md that exists (memory/CONTEXT.md when none does).
    memory_path: str | None = None
    truth: Truth | None = field(default=None, compare=False, repr=False)

    def _exists(self, path: Path) -> bool:
        if self.truth is None:
            return path.exists()
        return self.truth.stat(path.relative_to(self.home).as_posix()) is not None

    def _folders(self, top: str) -> list[str]:
        if self.truth is None:
            root = self.home / top
            try:
                return sorted(p.name for p in root.iterdir() if p.is_dir())
            except FileNotFoundError:
                return []
        return sorted(
            e.path.rsplit("/", 1)[-1] for e in self.truth.list(top, recursive=False) if e.is_dir
        )

    @property
    def ledger(self) -> Path:
        return self.home / "ledger.jsonl"

    @property
    def items(self) -> Path:
        return self.home / "items.json"

    @property
    def events(self) -> Path:
        return self.home / "events.jsonl"

    @property
    def index_dir(self) -> Path:
        return self.home / "index"

    @property
    def locks(self) -> Path:
        return self.home / ".locks"

    @property
    def config(self) -> Path:
        return self.home / "config.toml"

    def room(self, room: str) -> Path:
        return self.home / "rooms" / check_name(room, "room")

    def channel(self, room: str) -> Path:
        return self.room(room) / "channel.jsonl"

    def artifacts(self, room: str) -> Path:
        return self.room(room) / "artifacts"

    def room_info(self, room: str) -> Path:
        return self.room(room) / "room.json"

    def agent(self, agent: str) -> Path:
        return self.home / "agents" / check_name(agent, "agent")

    def memory_dir(self, agent: str) -> Path:
        return self.agent(agent) / "memory"

    def identity(self, agent: str) -> Path:
        """AGENT.md, or IDENTITY.md when only that one exists."""
        folder = self.agent(agent)
        for name in ALIASES["AGENT.md"]:
            if self._exists(folder / name):
                return folder / name
        return folder / "AGENT.md"

    def aliased(self, agent: str, canonical: str) -> Path:
        """The existing file among a layer's names, else the canonical one."""
        folder = self.memory_dir(agent)
        for name in ALIASES[canonical]:
            candidate = folder / name
            if self._exists(candidate):
                return candidate
        return folder / canonical

    def context_file(self, agent: str) -> Path:
        if self.memory_path is not None:
            return self.agent(agent) / self.memory_path
        chosen = self.aliased(agent, "CONTEXT.md")
        if not self._exists(chosen):
            beside = self.agent(agent) / "MEMORY.md"  # the long-term memory file's place
            if self._exists(beside):
                return beside
        return chosen

    def now_file(self, agent: str) -> Path:
        return self.aliased(agent, "NOW.md")

    def log_file(self, agent: str) -> Path:
        return self.memory_dir(agent) / "LOG.md"

    def scratch_dir(self, agent: str) -> Path:
        return self.memory_dir(agent) / "session"

    def archive_dir(self, agent: str) -> Path:
        return self.agent(agent) / "archive"

    def facts(self, agent: str) -> Path:
        return self.agent(agent) / "facts.jsonl"

    def tasks(self, agent: str) -> Path:
        return self.agent(agent) / "tasks.json"

    def compactions(self, agent: str) -> Path:
        return self.agent(agent) / "compactions.jsonl"

    def episodes_dir(self, agent: str) -> Path:
        return self.agent(agent) / "episodes"

    def sessions_dir(self, agent: str) -> Path:
        return self.agent(agent) / "sessions"

    def session_index(self, agent: str) -> Path:
        return self.sessions_dir(agent) / "sessions.json"

    def session(self, agent: str, session_id: str) -> Path:
        return self.sessions_dir(agent) / f"{check_name(session_id, 'session id')}.jsonl"

    def agents(self) -> list[str]:
        return self._folders("agents")

    def rooms(self) -> list[str]:
        return self._folders("rooms")
