"""The memory tools an agent framework hands its model: recall, save a fact, record a decision.

Framework-neutral: each method takes plain arguments and returns the text the model
reads. The framework modules wrap them (`openai_agents.memory_tools`,
`pydantic_ai.memory_toolset`). A memstrata error comes back as text starting with its
code (`scope_denied: ...`, `unknown_kind: ...`), as MCP tool errors do, so the model can
act on it instead of the run failing.

    recall           Store.search (every layer the agent may read, memstrata's ranking)
    save_fact        agents/<agent>/facts.jsonl (user facts; upsert for general ones)
    record_decision  ledger.jsonl, kind "decision", in the store's room

Example:
    >>> tools = MemoryTools(Store(agent="assistant"))  # doctest: +SKIP
    >>> tools.save_fact("editor", "vim", "preference")
    'saved editor = vim (preference)'
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from memstrata.errors import MemstrataError
from memstrata.search.query import SearchQuery

if TYPE_CHECKING:
    from memstrata.store.view import Store

RECALL_MAX = 20


class MemoryTools:
    """recall / save_fact / record_decision over one store, acting as its principal."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def recall(self, query: str, max_results: int = 5) -> str:
        """Search memory (facts, notes, the log, the ledger, ...) for what the query asks."""

        try:
            k = min(max(int(max_results), 1), RECALL_MAX)
            hits = self.store.search(SearchQuery(text=query, k=k))
        except MemstrataError as exc:
            return _error(exc)
        if not hits:
            return f"nothing in memory matches {query!r}"
        lines = []
        for n, h in enumerate(hits, 1):
            where = self.store.rel(Path(h.source)) + (f":{h.line}" if h.line else "")
            text = " ".join((h.text or h.snippet).split())
            if len(text) > 300:
                text = text[:297] + "..."
            label = f"{h.layer} {h.kind}" if h.kind else h.layer
            lines.append(f"{n}. [{label}] {h.title}: {text} ({where})")
        return "\n".join(lines)

    def save_fact(self, key: str, value: str, category: str = "general") -> str:
        """Save a durable fact under a key (a general fact with the same key is replaced)."""
        try:
            fact = self.store.agent().facts.set(key, value, category)
        except MemstrataError as exc:
            return _error(exc)
        return f"saved {fact.key} = {fact.value} ({fact.category})"

    def record_decision(
        self, summary: str, detail: str | None = None, tags: list[str] | None = None
    ) -> str:
        """Record a decision on the shared ledger, where other agents and rooms find it."""
        try:
            entry = self.store.ledger.publish("decision", summary, detail=detail, tags=tags)
        except MemstrataError as exc:
            return _error(exc)
        return f"recorded decision {entry.id} (room {entry.room_id or '-'})"


def _error(exc: MemstrataError) -> str:
    return f"{exc.code}: {exc}"
