"""AgentOS's `MemoryManager`: a thin face over the store for one agent.

    from memstrata import MemoryManager
    m = MemoryManager("finn")
    m.update_now("Analyzing portfolio data", ["Load CSV", "Calculate returns"])
    with m.turn("Summarise the portfolio") as turn:   # automatic logging
        prompt = turn.before_llm_call()
    m.append_log("TOOL_USE", "loaded prices.csv", {"rows": 1200})
    m.save_fact("preferred_currency", "USD", "preference")
    m.get_fact("preferred_currency")        # -> "USD"
    m.record_decision("Use ReportLab for PDFs", replaces="WeasyPrint")  # supersedes it
    m.recall_memory("what stocks did the user ask about?", n_results=3)
    prompt_block = m.format_context_for_prompt()

Everything is a file under the store home (default `./.memstrata`, or
`$MEMSTRATA_HOME`): `agents/finn/memory/NOW.md`, `LOG.md`, `facts.jsonl`...
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from memstrata.assembly.context import assemble_context
from memstrata.errors import MalformedInput, NotFound
from memstrata.lifecycle.compaction import compact_log
from memstrata.lifecycle.flush import flush_session
from memstrata.operations.loop import AgentLoop, writes_allowed
from memstrata.search.query import Hit, SearchQuery
from memstrata.store.view import Store

if TYPE_CHECKING:
    from memstrata.operations.loop import Turn


def initialize_agent_memory(agent_name: str, home: str | os.PathLike[str] | None = None) -> str:
    """AgentOS's `initialize_agent_memory("finn")`: create the agent's memory folder with
    NOW.md (default content) and LOG.md (header) if they are missing; returns the memory
    folder relative to the store home. `memstrata init finn` does the same."""
    with MemoryManager(agent_name, home) as m:
        return m.store.rel(m.memory.files.root)


class MemoryManager:
    """One agent's memory with the method names of AgentOS."""

    def __init__(
        self,
        agent_name: str,
        home: str | os.PathLike[str] | None = None,
        *,
        room: str | None = None,
        role: str | None = None,
        store: Store | None = None,
    ) -> None:
        self.store = store or Store(home, agent=agent_name, room=room, role=role)
        self.agent_name = agent_name
        self.memory = self.store.agent(agent_name, create=True)  # init creates
        self.memory._ensure_files()

    # -- AgentOS methods ----------------------------------------------------
    def update_now(
        self,
        status: str | None = None,
        next_steps: list[str] | None = None,
        *,
        new_status: str | None = None,
        **kw: Any,
    ) -> None:
        """Overwrite hot memory (NOW.md) with a new status and next steps.

        AgentOS writes both `update_now(status, next_steps)` and, in its
        self-annealing example, `update_now(new_status=..., next_steps=...)`:
        either keyword works. `blockers=` and `phase=` pass through.
        """
        if status is not None and new_status is not None and status != new_status:
            raise MalformedInput("give the status once: status= or new_status=, not both")
        chosen = status if status is not None else new_status
        if chosen is None:
            raise MalformedInput("update_now needs a status")
        self.memory.now.update(chosen, next_steps or [], **kw)

    def read_now(self) -> str:
        return self.memory.now.read()

    def append_log(
        self, entry_type: str, content: str, metadata: dict[str, Any] | None = None
    ) -> str:
        """Append to warm memory (LOG.md); returns the entry id once it is on disk."""
        return self.memory.log.append(entry_type, content, metadata).id

    def read_log(self, n: int = 20) -> list[dict[str, Any]]:
        return [
            {
                "id": e.id,
                "ts": e.ts,
                "entry_type": e.entry_type,
                "content": e.content,
                "metadata": e.metadata,
            }
            for e in self.memory.log.tail(n)
        ]

    def save_fact(
        self, key: str, value: str, category: str = "general", *, citations: list[str] | None = None
    ) -> None:
        """Save a fact; user-fact categories upsert, the repo categories (user,
        feedback, project, reference) are create-only and need `citations`."""
        self.memory.facts.set(key, value, category, citations=citations)

    def get_fact(self, key: str) -> str | None:
        try:
            return self.memory.facts.get(key).value
        except NotFound:
            return None

    def record_decision(
        self,
        text: str,
        kind: str = "decision",
        *,
        replaces: str | None = None,
        tags: list[str] | None = None,
        detail: str | None = None,
    ) -> str:
        """Record a decision (or a `constraint`, a `preference`) in one call; `replaces`
        names the one it replaces, by id or by text, which is then never presented as
        current (the ledger's supersede; see `layers.decisions`). Returns the new id.

        Example:
            >>> m.record_decision("Use ReportLab for PDFs", replaces="WeasyPrint")  # doctest: +SKIP
            'mem-...'
        """
        return self.memory.decisions.record(
            text, kind, replaces=replaces, tags=tags, detail=detail
        ).id

    def recall_memory(self, query: str, n_results: int = 5, **kw: Any) -> list[Hit]:
        """Search this agent's memory (all its layers, archives included) plus shared layers."""
        q = SearchQuery(text=query, k=n_results, agent=kw.pop("agent", None), **kw)
        return self.store.search(q)

    def format_context_for_prompt(self, **kw: Any) -> str:
        """The Markdown block injected into the prompt (identity, CONTEXT, NOW, LOG, facts)."""

        return assemble_context(self.store, self.agent_name, **kw).text

    def compact_log(
        self, summary: str | None = None, *, summarizer: Any = None, force: bool = False
    ) -> Any:
        """Compact LOG.md into a summary entry plus a searchable archive."""

        return compact_log(
            self.store, self.agent_name, summary=summary, summarizer=summarizer, force=force
        )

    def conversation_compacted(
        self, session_id: str, *, workspace: str | None = None, budget_chars: int = 12000
    ) -> str:
        """The model's conversation of `session_id` was compacted (Claude Code's PreCompact
        then SessionStart "compact", for your own loop): the durable items of the session's
        current cycle go to CONTEXT.md (`lifecycle.flush`, nothing in agent-controlled mode),
        and the context returned for the model's next call holds the session's last
        messages. LOG.md is not compacted (that is `compact_log`).

        Example:
            >>> text = m.conversation_compacted("s1")  # doctest: +SKIP
            >>> "## This session before the compaction" in text  # doctest: +SKIP
            True
        """
        from memstrata.operations.hooks import resumed_tail  # the hooks: only on this call

        if writes_allowed(self.store) and session_id in self.store.agent().sessions.ids():
            flush_session(self.store, self.agent_name, session_id)
        return assemble_context(
            self.store,
            self.agent_name,
            budget_chars=budget_chars,
            workspace=workspace,
            resumed=resumed_tail(self.store, self.agent_name, session_id, "compact"),
        ).text

    def turn(self, message: str, *, session_id: str | None = None) -> Turn:
        """Automatic memory around one agent turn (see `memstrata.operations.loop`)."""
        return AgentLoop(self).turn(message, session_id=session_id)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> MemoryManager:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
