"""Small contracts for the language-model side: summarise, extract, count usage.

memstrata works without any LLM: the defaults are deterministic (an extractive
summariser and a rule-based extractor, see `memstrata.llm.extractive`). An
OpenAI-compatible chat endpoint can stand in for either behind the same
Protocol, so callers never know which one they hold.

`ItemDraft` is what an extractor proposes, not yet a stored memory: the caller
decides what to keep. It validates itself on construction, so an extractor that
returns drafts has, by construction, returned well-formed ones.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Literal, Protocol, get_args, runtime_checkable

from memstrata.errors import MalformedInput
from memstrata.values import field, value_type

ItemType = Literal["entity", "claim", "task", "decision", "note"]
ITEM_TYPES: frozenset[str] = frozenset(get_args(ItemType))
MAX_TITLE = 200
MAX_CONTENT = 4000


@value_type(frozen=True)
class ItemDraft:
    """One memory item proposed by an extractor.

    Attributes:
        type: One of entity, claim, task, decision, note.
        title: Short one-line label (1..200 chars).
        content: The statement itself (up to 4000 chars; may equal title).
        line_number: 1-based line in the source text the item comes from.
        confidence: How sure the extractor is, in [0, 1].

    Raises:
        MalformedInput: if any field is out of range or of the wrong type.
    """

    type: ItemType
    title: str
    content: str
    line_number: int
    confidence: float

    def __post_init__(self) -> None:
        if self.type not in ITEM_TYPES:
            raise MalformedInput(
                f"item type must be one of {sorted(ITEM_TYPES)}, got {self.type!r}"
            )
        if not isinstance(self.title, str) or not self.title.strip() or "\n" in self.title:
            raise MalformedInput(f"item title must be a non-empty single line, got {self.title!r}")
        if len(self.title) > MAX_TITLE:
            raise MalformedInput(f"item title longer than {MAX_TITLE} chars")
        if not isinstance(self.content, str) or len(self.content) > MAX_CONTENT:
            raise MalformedInput(f"item content must be a string of at most {MAX_CONTENT} chars")
        if (
            not isinstance(self.line_number, int)
            or isinstance(self.line_number, bool)
            or self.line_number < 1
        ):
            raise MalformedInput(f"item line_number must be an int >= 1, got {self.line_number!r}")
        c = self.confidence
        if isinstance(c, bool) or not isinstance(c, int | float) or not 0.0 <= c <= 1.0:
            raise MalformedInput(f"item confidence must be a number in [0, 1], got {c!r}")
        object.__setattr__(self, "confidence", float(c))


@value_type
class Usage:
    """Token accounting for one client, updated after every successful call.

    Attributes:
        calls: Successful requests.
        prompt_tokens: Sum of `usage.prompt_tokens` reported by the server.
        completion_tokens: Sum of `usage.completion_tokens` reported by the server.
    """

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def record(self, prompt_tokens: int = 0, completion_tokens: int = 0) -> None:
        with self._lock:
            self.calls += 1
            self.prompt_tokens += prompt_tokens
            self.completion_tokens += completion_tokens

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@runtime_checkable
class Summarizer(Protocol):
    def summarize(self, texts: Sequence[str], *, max_chars: int) -> str:
        """Summarise `texts` into at most `max_chars` characters."""
        ...


LINE_KINDS: frozenset[str] = frozenset({"objective", "phase", "blocker", "decision", "constraint"})


@runtime_checkable
class LineClassifier(Protocol):
    def classify_lines(self, lines: Sequence[str]) -> list[str | None]:
        """One label per line: one of `LINE_KINDS`, or None (narrative).

        The compaction digest asks only about the lines its own rules left as
        narrative, so a model can add kept items but never remove one.
        """
        ...


@runtime_checkable
class Extractor(Protocol):
    def extract(self, source_file: str, text: str) -> list[ItemDraft]:
        """Propose memory items found in `text` (the content of `source_file`)."""
        ...


__all__ = [
    "ITEM_TYPES",
    "LINE_KINDS",
    "Extractor",
    "ItemDraft",
    "ItemType",
    "LineClassifier",
    "Summarizer",
    "Usage",
]
