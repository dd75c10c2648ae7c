"""A framework's conversation kept as a memstrata session transcript.

Each framework item is one line of `agents/<agent>/sessions/<session_id>.jsonl`: the
role and text a person (and `memstrata search`) reads, and the item itself, verbatim,
in the message's `input` under the framework's tag, so it comes back exactly:

    {"id": "msg_...", "role": "tool_call", "name": "get_weather",
     "input": {"openai-agents": {"type": "function_call", "call_id": "c1", ...}},
     "content": "{\\"city\\": \\"Paris\\"}", "timestamp": "..."}

Transcripts are append-only, so removing is recorded, never done (supersede, don't
delete): withdrawing the last item appends a `system` line naming it
(`{"<tag>:withdraw": "<message id>"}`), clearing appends a `system` line
(`{"<tag>:clear": true}`) after which the earlier items are no longer handed back; both
stay in the file for the record. Lines written by someone else (a hook, the CLI, the
transcript's compaction summary) are handed back through the framework's `foreign` function.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from memstrata.errors import NotFound
from memstrata.model import check_name
from memstrata.values import value_type

if TYPE_CHECKING:
    from memstrata.layers.sessions import Sessions
    from memstrata.model import SessionMessage
    from memstrata.store.view import Store


@value_type(frozen=True)
class Line:
    """How one framework item is shown in the transcript."""

    item: Any  # JSON: kept verbatim
    role: str  # user, assistant, tool_call, tool_result, system
    content: str  # what a person reads and search finds
    name: str | None = None  # the tool of a tool_call / tool_result


class Transcript:
    """One session's items, replayed from its transcript on every read."""

    def __init__(
        self,
        store: Store,
        session_id: str,
        *,
        tag: str,
        foreign: Callable[[SessionMessage], Any | None],
        agent: str | None = None,
    ) -> None:

        self.store = store
        self.session_id = check_name(session_id, "session id")
        self.tag = tag
        self.foreign = foreign
        self.agent = agent
        self._lock = threading.Lock()  # a withdraw reads then appends

    @property
    def sessions(self) -> Sessions:
        return self.store.agent(self.agent).sessions

    def live(self) -> list[tuple[str, Any]]:
        """(message id, item) of every item handed back, oldest first."""
        try:
            messages = self.sessions.messages(self.session_id)
        except NotFound:
            return []
        out: list[tuple[str, Any]] = []
        for m in messages:
            mark = m.input if isinstance(m.input, dict) else {}
            if self.tag in mark:
                out.append((m.id, mark[self.tag]))
            elif mark.get(f"{self.tag}:clear"):
                out = []
            elif f"{self.tag}:withdraw" in mark:
                gone = mark[f"{self.tag}:withdraw"]
                out = [(i, item) for i, item in out if i != gone]
            elif not any(":" in k for k in mark):  # (another framework's bookkeeping)
                item = self.foreign(m)
                if item is not None:
                    out.append((m.id, item))
        return out

    def items(self, limit: int | None = None) -> list[Any]:
        items = [item for _, item in self.live()]
        if limit is None:
            return items
        return items[-limit:] if limit > 0 else []

    def add(self, lines: Sequence[Line]) -> None:
        if not lines:
            return
        self.sessions.append_many(
            self.session_id,
            [
                {
                    "role": ln.role,
                    "content": ln.content,
                    "name": ln.name,
                    "input": {self.tag: ln.item},
                }
                for ln in lines
            ],
        )

    def withdraw_last(self) -> Any | None:
        """Hand back the newest item and record that it was withdrawn."""
        with self._lock:
            live = self.live()
            if not live:
                return None
            msg_id, item = live[-1]
            self.sessions.append(
                self.session_id,
                "system",
                f"{self.tag}: withdrew {msg_id} (kept above for the record)",
                input={f"{self.tag}:withdraw": msg_id},
            )
            return item

    def clear(self) -> None:
        """Record that the items so far are no longer handed back (they stay in the file)."""
        with self._lock:
            if not self.live():
                return
            self.sessions.append(
                self.session_id,
                "system",
                f"{self.tag}: session cleared; the messages above are kept for the record "
                "and no longer handed to the agent",
                input={f"{self.tag}:clear": True},
            )


def text_of(content: Any) -> str:
    """The readable text of a message's content: a string, or the text of its parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, dict):
                t = part.get("text") or part.get("refusal") or part.get("content")
                texts.append(t if isinstance(t, str) else f"[{part.get('type', 'part')}]")
            elif isinstance(part, str):
                texts.append(part)
        return "\n".join(texts)
    return "" if content is None else str(content)
