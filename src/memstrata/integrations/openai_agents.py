"""The OpenAI Agents SDK over memstrata: a `Session` in a session transcript, and memory tools.

`MemstrataSession` implements the SDK's `Session` protocol (`get_items`, `add_items`,
`pop_item`, `clear_session`, async) on `agents/<agent>/sessions/<session_id>.jsonl`
(episodic memory): every item the runner adds is one transcript line (user,
assistant, tool_call with the tool's name, tool_result, system) that a person reads in
the web app and `memstrata search --layer sessions` finds, and the item itself rides
along verbatim, so `get_items` returns exactly what was added, tool calls included.
`pop_item` and `clear_session` never erase: they append a line saying what no longer
counts (see `memstrata.integrations.transcripts`). Past `[sessions] compaction_threshold`
tokens memstrata compacts the transcript (the full one is archived): older items then
come back as one system message holding the summary.

`memory_tools(store)` gives an agent recall, save_fact and record_decision
(`memstrata.integrations.memory_tools`) as `function_tool`s.

Example:
    >>> from agents import Agent, Runner  # doctest: +SKIP
    >>> store = Store(agent="assistant")
    >>> agent = Agent(name="assistant", tools=memory_tools(store))
    >>> await Runner.run(agent, "hi", session=MemstrataSession("chat-1", store))
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

from agents import FunctionTool, function_tool
from agents.memory.session_settings import SessionSettings, resolve_session_limit

from memstrata.integrations.memory_tools import MemoryTools
from memstrata.integrations.transcripts import Line, Transcript, text_of

if TYPE_CHECKING:
    from agents.items import TResponseInputItem

    from memstrata.model import SessionMessage
    from memstrata.store.view import Store

TAG = "openai-agents"
_ROLES = {"user": "user", "assistant": "assistant", "system": "system", "developer": "system"}


class MemstrataSession:
    """The SDK's `Session`, kept in memstrata's transcript of `session_id`.

    Args:
        session_id: the transcript's name (1-64 letters, digits, `.`, `_`, `-`).
        store: an opened `memstrata.Store`; it acts as its principal.
        agent: whose transcripts (default: the store's agent).
        session_settings: the SDK's settings (`limit` for `get_items`).
    """

    def __init__(
        self,
        session_id: str,
        store: Store,
        *,
        agent: str | None = None,
        session_settings: SessionSettings | None = None,
    ) -> None:
        self.session_id = session_id
        self.session_settings = session_settings
        self.transcript = Transcript(store, session_id, tag=TAG, foreign=_foreign, agent=agent)

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        n = resolve_session_limit(limit, self.session_settings)
        return await asyncio.to_thread(self.transcript.items, n)

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        lines = [_line(dict(item)) for item in items]
        await asyncio.to_thread(self.transcript.add, lines)

    async def pop_item(self) -> TResponseInputItem | None:
        item: TResponseInputItem | None = await asyncio.to_thread(self.transcript.withdraw_last)
        return item

    async def clear_session(self) -> None:
        await asyncio.to_thread(self.transcript.clear)


def _line(item: dict[str, Any]) -> Line:
    """How an SDK input item reads in the transcript."""
    kind = str(item.get("type") or "message")
    if "role" in item and kind == "message":
        role = _ROLES.get(str(item["role"]), "system")
        text = text_of(item.get("content"))
        return Line(item, role, text or ("(no text)" if role == "user" else ""))
    if kind.endswith("_call_output") or kind.endswith("_output"):
        out = item.get("output")
        text = out if isinstance(out, str) else json.dumps(out, ensure_ascii=False)
        return Line(item, "tool_result", text_of(text) if out is not None else "")
    if kind.endswith("_call"):
        name = item.get("name") or kind
        args = item.get("arguments")
        text = args if isinstance(args, str) else json.dumps(args or {}, ensure_ascii=False)
        return Line(item, "tool_call", text, str(name)[:200])
    if kind == "reasoning":
        summary = item.get("summary") or []
        return Line(item, "system", "(reasoning) " + text_of(summary))
    return Line(item, "system", f"({kind})")


def _foreign(m: SessionMessage) -> TResponseInputItem | None:
    """A line someone else wrote (a hook, the CLI, a compaction summary), as an SDK item."""
    if m.role in ("user", "assistant"):
        return {"role": m.role, "content": m.content}  # type: ignore[return-value]
    if m.role == "summary":
        return {"role": "system", "content": f"Summary of the earlier conversation:\n{m.content}"}
    if m.role == "system":
        return {"role": "system", "content": m.content}
    label = f"{m.role} {m.name or ''}".strip()
    return {"role": "system", "content": f"[{label}] {m.content}"}


def memory_tools(store: Store) -> list[FunctionTool]:
    """recall, save_fact and record_decision for an SDK `Agent(tools=...)`."""
    core = MemoryTools(store)

    @function_tool
    def recall(query: str, max_results: int = 5) -> str:
        """Search long-term memory (facts, notes, activity log, shared decisions).

        Args:
            query: what to look for, in a few words.
            max_results: how many memories to return (1-20).
        """
        return core.recall(query, max_results)

    @function_tool
    def save_fact(key: str, value: str, category: str = "general") -> str:
        """Save a fact worth remembering across conversations.

        Args:
            key: a short name for the fact, e.g. "preferred_editor".
            value: the fact itself.
            category: general, preference, personal or config.
        """
        return core.save_fact(key, value, category)

    @function_tool
    def record_decision(summary: str, detail: str | None = None) -> str:
        """Record a decision on the shared ledger so other agents find it.

        Args:
            summary: the decision in one sentence.
            detail: why, and what was considered.
        """
        return core.record_decision(summary, detail)

    return [recall, save_fact, record_decision]


__all__ = ["MemstrataSession", "memory_tools"]
