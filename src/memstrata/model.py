"""Value types shared by every layer: frozen dataclasses, no behaviour beyond (de)serialising."""

from __future__ import annotations

import re
import time
import unicodedata
from datetime import UTC, datetime
from typing import Any, Literal

from memstrata.errors import EntryTooLarge, MalformedInput
from memstrata.values import field, value_type

Role = Literal["admin", "project", "skill"]
# The agent every surface acts as when none is named (--agent, $MEMSTRATA_AGENT): the CLI,
# the hooks, `memstrata mcp` and the /mcp endpoint of `memstrata serve`. One name, so one
# user's memory is never split between two agents without a word (issue 19).
DEFAULT_AGENT = "agent"
ROLES: tuple[str, ...] = ("admin", "project", "skill")
# The `ref` of a record `lifecycle.reversal` wrote from the user's change of plan (its
# `detail` says when and what it replaced: bookkeeping, not a reason; `search.reasons`).
USER_REF = "stated by the user"

# `fullmatch`, never `match` with `$`: `$` also matches before a final newline, which
# let `finn\n` through as a folder name.
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
# C0 and C1 control characters, DEL, and the Unicode line and paragraph separators.
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
# Bidirectional formatting characters (marks, embeddings, overrides, isolates): they make
# a name display as another one (`invoice\u202egpj.md` shows as `invoicedm.jpg`).
_BIDI_RE = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# What an undecodable byte of a file name or command-line argument becomes in Python
# (surrogateescape), and what a JSON `"\udcff"` escape gives: no UTF-8 encodes it.
_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def name_problem(value: str) -> str | None:
    """Why `value` cannot be a name that becomes a path or a key, or None if it can.

    The one rule for every such name (memory files, facts, artifacts, archive members,
    and the files a store already holds): valid UTF-8 (no lone surrogate), no control
    character, no bidirectional formatting character, Unicode NFC (so two names that
    look the same are the same name).

    Example:
        >>> name_problem("notes/plan.md") is None
        True
        >>> name_problem("a\u202egpj.md")
        'holds the bidirectional formatting character U+202E (it makes a name display as another)'
    """
    if (m := _SURROGATE_RE.search(value)) is not None:
        return f"is not valid UTF-8 (an undecodable byte at character {m.start() + 1})"
    if has_control(value):
        return "holds a control character (newline, tab, ...)"
    if (m := _BIDI_RE.search(value)) is not None:
        return (
            f"holds the bidirectional formatting character U+{ord(m.group()):04X} "
            "(it makes a name display as another)"
        )
    if not unicodedata.is_normalized("NFC", value):
        return f"is not in Unicode NFC form (write it as {unicodedata.normalize('NFC', value)!r})"
    return None


def check_utf8(value: str, what: str) -> str:
    """`value`, or MalformedInput if it holds a lone surrogate: text that no UTF-8 encodes
    (an undecodable byte of an argument, a JSON `"\\udcff"`) is refused, never stored."""
    if (m := _SURROGATE_RE.search(value)) is not None:
        raise MalformedInput(
            f"{what} is not valid UTF-8 (an undecodable byte at character {m.start() + 1})"
        )
    return value


def check_unicode_name(value: str, what: str) -> str:
    """`value`, or MalformedInput saying why it cannot be a name (`name_problem`)."""
    problem = name_problem(value)
    if problem is not None:
        raise MalformedInput(f"invalid {what} {shown(value)}: it {problem}")
    return value


def shown(value: str) -> str:
    """`value` quoted for a message, an undecodable byte shown as the byte (`'n\\xff.md'`)."""
    return re.sub(r"\\udc([89a-f][0-9a-f])", r"\\x\1", repr(value))


def check_name(value: str, what: str) -> str:
    """Agent, room, session, task-id and slug names become file names: keep them plain.

    Example:
        >>> check_name("finn", "agent")
        'finn'
    """
    if not isinstance(value, str) or not _NAME_RE.fullmatch(value) or value in (".", ".."):
        raise MalformedInput(
            f"invalid {what} {value!r}: use 1-64 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return value


def has_control(value: str) -> bool:
    """True if `value` holds a control character (newline, tab, NUL, DEL, C1, U+2028/9)."""
    return _CONTROL_RE.search(value) is not None


def check_plain(value: object, what: str, max_chars: int) -> str:
    """A one-line label (fact key, tag, milestone, author, ref): a non-empty string of at
    most `max_chars` characters that is a valid name (`name_problem`: valid UTF-8, no
    control or bidirectional formatting character, NFC). Length is checked first."""
    if not isinstance(value, str):
        raise MalformedInput(f"{what} must be a string, got {type(value).__name__}")
    if len(value) > max_chars:
        raise EntryTooLarge(f"{what} is {len(value)} characters; the limit is {max_chars}")
    if not value.strip():
        raise MalformedInput(f"{what} must not be empty")
    return check_unicode_name(value, what)


def now_ts() -> float:
    return time.time()


def iso(ts: float) -> str:
    """Epoch seconds -> '2026-11-22T10:30:00.123Z' (UTC, millisecond precision)."""
    dt = datetime.fromtimestamp(ts, UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def parse_ts(value: str | float | int | None) -> float:
    """ISO 8601 (with Z or offset, date-only allowed) or epoch seconds -> epoch seconds."""
    if value is None:
        raise MalformedInput("missing timestamp")
    if isinstance(value, bool):
        raise MalformedInput(f"invalid timestamp {value!r}")
    if isinstance(value, int | float):
        return float(value)
    text = str(value).strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        raise MalformedInput(f"invalid timestamp {value!r}: expected ISO 8601") from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()


@value_type(frozen=True)
class Principal:
    """Who is reading or writing: an agent name, its role (a row of the scope table in `policy.scope`) and room."""

    agent: str | None = None
    role: Role = "admin"
    room: str | None = None


@value_type(frozen=True)
class LedgerEntry:
    """One line of `ledger.jsonl`, with exactly the fields of the shared ledger's entry format."""

    id: str
    ts: str
    kind: str
    room_id: str | None
    author_role: str | None
    ref: str | None
    tags: tuple[str, ...]
    summary: str
    detail: str | None
    supersedes: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "ts": self.ts,
            "kind": self.kind,
            "room_id": self.room_id,
            "author_role": self.author_role,
            "ref": self.ref,
            "tags": list(self.tags),
            "summary": self.summary,
            "detail": self.detail,
            "supersedes": self.supersedes,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> LedgerEntry:
        tags = d.get("tags") or []
        if not isinstance(tags, list):
            raise MalformedInput("tags must be a list")
        return cls(
            id=str(d["id"]),
            ts=str(d["ts"]),
            kind=str(d["kind"]),
            room_id=d.get("room_id"),
            author_role=d.get("author_role"),
            ref=d.get("ref"),
            tags=tuple(str(t) for t in tags),
            summary=str(d.get("summary", "")),
            detail=d.get("detail"),
            supersedes=d.get("supersedes"),
        )


# What an agent records as standing (DESIGN-recall's vocabulary): ledger kinds accepted
# whatever `[kinds]` says (`layers.decisions` explains why they live in the ledger).
RECORD_KINDS: tuple[str, ...] = ("decision", "constraint", "preference")

FACT_CATEGORIES: tuple[str, ...] = (
    "general",
    "preference",
    "personal",
    "config",
    "user",
    "feedback",
    "project",
    "reference",
)  # the user-fact categories, then the durable-fact taxonomy
DURABLE_CATEGORIES: tuple[str, ...] = ("user", "feedback", "project", "reference")  # repo facts

LOG_TYPES: tuple[str, ...] = ("TOOL_USE", "THOUGHT", "USER_FEEDBACK", "ERROR", "SYSTEM")


def estimate_tokens(text: str) -> int:
    """Tokens of `text` as memstrata counts them everywhere: characters / 4, rounded up.

    The same rule as the context budget (`budget_tokens * 4` characters); no
    tokenizer is needed, so counts are the same on every machine and model.
    """
    return (len(text) + 3) // 4


@value_type(frozen=True)
class LogEntry:
    """One entry of LOG.md (warm memory).

    `content_hash`, `token_count` and `compacted` are the entry's `log_metadata`:
    the writer records hash and tokens in the entry's footer; `compacted` is true
    for entries read from a compaction archive; `edited` marks an entry whose text
    no longer matches the hash its writer recorded (a hand edit).
    """

    id: str
    ts: str
    entry_type: str
    content: str
    metadata: dict[str, Any] = field(default_factory=dict)
    content_hash: str = ""
    token_count: int = 0
    compacted: bool = False
    edited: bool = False


@value_type(frozen=True)
class Fact:
    """A key/value fact (user_facts; durable facts use the taxonomy categories)."""

    key: str
    value: str
    category: str
    created_at: str
    updated_at: str
    citations: tuple[str, ...] = ()


SESSION_ROLES: tuple[str, ...] = (
    "user",
    "assistant",
    "tool_call",
    "tool_result",
    "system",
    "summary",
)


@value_type(frozen=True)
class SessionMessage:
    """One line of `sessions/<id>.jsonl` (episodic memory)."""

    id: str
    role: str
    content: str
    timestamp: str
    name: str | None = None
    input: Any = None
    speaker: str | None = None
    is_error: bool = False  # a tool_result of a call that failed (Claude Code's name)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"id": self.id, "role": self.role}
        if self.name is not None:
            d["name"] = self.name
        if self.input is not None:
            d["input"] = self.input
        if self.speaker is not None:
            d["speaker"] = self.speaker
        if self.is_error:
            d["is_error"] = True
        d["content"] = self.content
        d["timestamp"] = self.timestamp
        return d


TASK_STATUSES: tuple[str, ...] = ("pending", "in_progress", "blocked", "done", "cancelled")


@value_type(frozen=True)
class Task:
    """One task of `tasks.json` (task memory)."""

    id: str
    milestone: str | None
    priority: int
    status: str
    description: str
    acceptance_criteria: tuple[str, ...]
    created: str
    completed: str | None
    blocked_by: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "milestone": self.milestone,
            "priority": self.priority,
            "status": self.status,
            "description": self.description,
            "acceptance_criteria": list(self.acceptance_criteria),
            "created": self.created,
            "completed": self.completed,
            "blocked_by": list(self.blocked_by),
        }


ITEM_TYPES: tuple[str, ...] = ("entity", "claim", "task", "decision", "note")


@value_type(frozen=True)
class Item:
    """One extracted knowledge item of `items.json`."""

    id: str
    type: str
    title: str
    content: str
    sourceFile: str
    lineNumber: int
    confidence: float
    extractedAt: str
    # The project the item was extracted from (the extraction design keeps one `<project>/items.json`
    # per project; memstrata keeps one items.json and names the project in each item).
    # "" for items extracted before projects were recorded, or written by an admin.
    project: str = ""

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "id": self.id,
            "type": self.type,
            "title": self.title,
            "content": self.content,
            "sourceFile": self.sourceFile,
            "lineNumber": self.lineNumber,
            "confidence": self.confidence,
            "extractedAt": self.extractedAt,
        }
        if self.project:
            d["project"] = self.project
        return d
