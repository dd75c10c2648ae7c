"""Pydantic AI over memstrata: its `ConversationStore` in session transcripts, and memory tools.

`MemstrataConversationStore` implements Pydantic AI's storage primitives
(`read_record`, `read_records`, `write_record`, `delete_record`, `read_entry`; the
base class does saving, loading, branching and forking) on memstrata's
session transcripts: conversation `<id>` is `agents/<agent>/sessions/<id>.jsonl`.

* Each message is one transcript line a person reads (user, assistant, tool_call with
  the tool's name, tool_result, system) carrying the message itself, verbatim, with
  its entry id and parent: `{"pydantic-ai": {"entry", "parent", "message"}}`.
* Each save appends its messages and the conversation's record (head, usage, revision,
  branches, scope) in one durable write: the record rides on the save's last message
  (`input["pydantic-ai:record"]`), or on a `system` line of its own when a save adds no
  message (a fork); the newest one is the record. A branch or rewrite leaves the
  earlier lines where they are, as Pydantic AI's log does.
* `delete` appends a line saying the conversation was deleted; its messages stay in
  the file for the record (supersede, don't delete; `memstrata purge session` removes
  them). Entries a fork points into are therefore always still there.
* Saves of one conversation are serialized within a process; the revision check is
  made against the newest record line, so a second process saving the same
  conversation at the same instant is the one limit (its entries stay, unreached).

`memory_toolset(store)` gives an agent recall, save_fact and record_decision
(`memstrata.integrations.memory_tools`) as a `FunctionToolset`.

Example:
    >>> conversations = MemstrataConversationStore(Store(agent="assistant"))  # doctest: +SKIP
    >>> conversation = await conversations.load("chat-1") or Conversation(conversation_id="chat-1")
    >>> result = await agent.run("hi", conversation=conversation)
    >>> await conversations.save(result)
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import TypeAdapter
from pydantic_ai.conversation_store import (
    ConversationConflict,
    ConversationEntry,
    ConversationRecord,
    ConversationStore,
)
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter, ModelResponse
from pydantic_ai.toolsets import FunctionToolset

from memstrata.errors import NotFound
from memstrata.integrations.memory_tools import MemoryTools
from memstrata.integrations.transcripts import text_of

if TYPE_CHECKING:
    from memstrata.layers.sessions import Sessions
    from memstrata.model import SessionMessage
    from memstrata.store.view import Store

TAG = "pydantic-ai"
RECORD = f"{TAG}:record"
DELETED = f"{TAG}:deleted"
_RECORDS: TypeAdapter[ConversationRecord] = TypeAdapter(ConversationRecord)


class _Log:
    """One conversation's transcript, parsed: its entries and its newest record."""

    def __init__(self, messages: list[SessionMessage]) -> None:
        self.entries: dict[str, ConversationEntry] = {}
        self.record: ConversationRecord | None = None
        for m in messages:
            mark = m.input if isinstance(m.input, dict) else {}
            if TAG in mark:
                e = mark[TAG]
                message = ModelMessagesTypeAdapter.validate_python([e["message"]])[0]
                self.entries[e["entry"]] = ConversationEntry(
                    id=e["entry"], parent_id=e["parent"], message=message
                )
            if RECORD in mark:  # on the save's last message, or a line of its own
                self.record = _RECORDS.validate_python(mark[RECORD])
            elif DELETED in mark:
                self.record = None


class MemstrataConversationStore(ConversationStore):
    """Pydantic AI's `ConversationStore` in memstrata session transcripts (see the module).

    Args:
        store: an opened `memstrata.Store`; it acts as its principal.
        agent: whose transcripts (default: the store's agent).
    """

    def __init__(self, store: Store, *, agent: str | None = None) -> None:
        self.store = store
        self.agent = agent
        self._lock = threading.Lock()
        self._where: dict[str, str] = {}  # entry id -> conversation id (read_entry's cache)

    @property
    def _sessions(self) -> Sessions:
        return self.store.agent(self.agent).sessions

    def _log(self, conversation_id: str) -> _Log:
        try:
            log = _Log(self._sessions.messages(conversation_id))
        except NotFound:
            return _Log([])
        self._where.update(dict.fromkeys(log.entries, conversation_id))
        return log

    # -- the five primitives ----------------------------------------------------------
    async def read_record(self, conversation_id: str) -> ConversationRecord | None:
        return await asyncio.to_thread(lambda: self._log(conversation_id).record)

    async def read_records(
        self, *, scope: str | None = None, limit: int | None = None
    ) -> Sequence[ConversationRecord]:
        def read() -> list[ConversationRecord]:
            ids = [s.id for s in self._sessions.list()]
            records = [r for r in (self._log(i).record for i in ids) if r is not None]
            records = [r for r in records if scope is None or r.scope == scope]
            records.sort(key=lambda r: r.updated_at, reverse=True)
            return records[:limit]

        return await asyncio.to_thread(read)

    async def write_record(
        self,
        record: ConversationRecord,
        *,
        new_entries: Sequence[ConversationEntry] = (),
        expected_revision: str | None,
    ) -> None:
        def write() -> None:
            with self._lock:
                cid = record.conversation_id
                stored = self._log(cid).record
                if (stored.revision if stored is not None else None) != expected_revision:
                    raise ConversationConflict(cid)
                new_ids = {e.id for e in new_entries}
                if record.head_id is not None and record.head_id not in new_ids:
                    try:
                        self._entry(record.head_id)
                    except LookupError:
                        raise ConversationConflict(cid) from None
                lines = [_line(e) for e in new_entries]
                saved = _RECORDS.dump_python(record, mode="json")
                if lines:  # the record rides on the save's last message: one durable write
                    lines[-1]["input"][RECORD] = saved
                else:  # a fork, or a branch with nothing new yet
                    head = record.head_id or "-"
                    lines.append(
                        {
                            "role": "system",
                            "content": f"{TAG}: conversation saved (head {head})",
                            "input": {RECORD: saved},
                        }
                    )
                self._sessions.append_many(cid, lines)
                self._where.update(dict.fromkeys(new_ids, cid))

        await asyncio.to_thread(write)

    async def delete_record(self, conversation_id: str, *, expected_revision: str) -> None:
        def delete() -> None:
            with self._lock:
                stored = self._log(conversation_id).record
                if stored is None or stored.revision != expected_revision:
                    raise ConversationConflict(conversation_id)
                self._sessions.append(
                    conversation_id,
                    "system",
                    f"{TAG}: conversation deleted; its messages stay above for the record",
                    input={DELETED: expected_revision},
                )

        await asyncio.to_thread(delete)

    async def read_entry(self, entry_id: str) -> ConversationEntry:
        return await asyncio.to_thread(self._entry, entry_id)

    async def read_history(
        self, head_id: str | None, *, limit: int | None = None
    ) -> list[ConversationEntry]:
        """One transcript read per conversation the history passes through (a fork's
        history starts in the conversation it was forked from)."""

        def walk() -> list[ConversationEntry]:
            out: list[ConversationEntry] = []
            logs: dict[str, _Log] = {}
            entry_id = head_id
            while entry_id is not None and (limit is None or len(out) < limit):
                cid = self._where.get(entry_id)
                if cid is not None and cid not in logs:
                    logs[cid] = self._log(cid)
                entry = logs[cid].entries.get(entry_id) if cid is not None else None
                out.append(entry if entry is not None else self._entry(entry_id))
                entry_id = out[-1].parent_id
            out.reverse()
            return out

        return await asyncio.to_thread(walk)

    def _entry(self, entry_id: str) -> ConversationEntry:
        cid = self._where.get(entry_id)
        if cid is not None:
            found = self._log(cid).entries.get(entry_id)
            if found is not None:
                return found
        for sid in self._sessions.ids():  # written by another process: look everywhere once
            found = self._log(sid).entries.get(entry_id)
            if found is not None:
                return found
        raise KeyError(entry_id)


def _line(entry: ConversationEntry) -> dict[str, Any]:
    """One transcript line for a message: how it reads, and the message itself."""
    role, content, name = _reads_as(entry.message)
    message = ModelMessagesTypeAdapter.dump_python([entry.message], mode="json")[0]
    return {
        "role": role,
        "content": content,
        "name": name,
        "input": {TAG: {"entry": entry.id, "parent": entry.parent_id, "message": message}},
    }


def _reads_as(message: ModelMessage) -> tuple[str, str, str | None]:
    """Role, text and tool name of a message, by its parts (Any: a union of 20+ kinds)."""
    parts: list[Any] = list(message.parts)

    def of(*kinds: str) -> list[Any]:
        return [p for p in parts if getattr(p, "part_kind", "") in kinds]

    if isinstance(message, ModelResponse):
        calls = of("tool-call")
        if calls:
            text = "\n".join(f"{c.tool_name}({c.args_as_json_str()})" for c in calls)
            return "tool_call", text, str(calls[0].tool_name)[:200]
        return "assistant", "\n".join(str(p.content) for p in of("text")), None
    if of("user-prompt"):
        texts = [text_of(p.content) for p in of("user-prompt")]
        return "user", "\n".join(texts) or "(no text)", None
    returns = of("tool-return", "retry-prompt")
    if returns:
        name = str(getattr(returns[0], "tool_name", None) or "")[:200] or None
        return "tool_result", "\n".join(_returned(p) for p in returns), name
    return "system", "\n".join(text_of(getattr(p, "content", "")) for p in parts), None


def _returned(part: Any) -> str:
    content = getattr(part, "content", "")
    return content if isinstance(content, str) else json.dumps(content, default=str)


def memory_toolset(store: Store) -> FunctionToolset[Any]:
    """recall, save_fact and record_decision for `Agent(toolsets=[...])`."""
    core = MemoryTools(store)

    def recall(query: str, max_results: int = 5) -> str:
        """Search long-term memory (facts, notes, activity log, shared decisions).

        Args:
            query: what to look for, in a few words.
            max_results: how many memories to return (1-20).
        """
        return core.recall(query, max_results)

    def save_fact(key: str, value: str, category: str = "general") -> str:
        """Save a fact worth remembering across conversations.

        Args:
            key: a short name for the fact, e.g. "preferred_editor".
            value: the fact itself.
            category: general, preference, personal or config.
        """
        return core.save_fact(key, value, category)

    def record_decision(summary: str, detail: str | None = None) -> str:
        """Record a decision on the shared ledger so other agents find it.

        Args:
            summary: the decision in one sentence.
            detail: why, and what was considered.
        """
        return core.record_decision(summary, detail)

    return FunctionToolset([recall, save_fact, record_decision])


__all__ = ["MemstrataConversationStore", "memory_toolset"]
