"""What `bench agent` measures, as pure functions over the texts the agent got back.

Phrases match a text when the text, case-folded with its whitespace collapsed,
contains the phrase folded the same way.

Context noise share: characters on lines that are tool traces or bookkeeping,
over all characters of the context (line lengths, newlines not counted). A line is

    trace        a LOG line of type TOOL_USE ("- 2026-03-02 09:14 TOOL_USE: ...");
                 a tool call written out as `Name(` for a coding agent's tools, any
                 client's (`reading.tools.TOOL_CLASSES`: Claude Code's Read, Edit,
                 Bash..., Cursor's read_file, run_terminal_cmd, Codex's shell,
                 apply_patch...) or an MCP tool (`mcp__server__tool(`);
                 a transcript tool block or role: `[tool_use ...`, `[tool_result]`,
                 `tool_use:`, `tool_result:`, `tool_call:`
    bookkeeping  a capture notice ("stop hook: captured 26 new message(s) of session ...");
                 a line that holds a session id (a UUID or `s-20260302T...`) and, once
                 ids, timestamps, list markers and the words session/id/ended/started
                 are taken out, fewer than 10 letters

and everything else (headings, the frame, NOW, tasks, facts, decisions, prompts,
final responses, errors, digests) counts as content.

Recall: a record answers a question when its full text contains one of the
question's answer phrases and it is not superseded; a record is stale for it when
it contains a stale phrase and no answer phrase. `first_answer` is the rank of
the first answering record (1-based, None if none came back); `stale_above` is
true when a stale record ranks above it (or comes back when no answer does).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from memstrata.reading.tools import EDITOR_TOOLS, TOOL_CLASSES
from memstrata.values import value_type

# Every client's tool names, from the one table (`reading.tools`), longest first.
TOOLS = "|".join(sorted((*TOOL_CLASSES, *EDITOR_TOOLS), key=lambda n: (-len(n), n)))
TRACE_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("log TOOL_USE", re.compile(r"^\s*[-*]?\s*(\d{4}-\d\d-\d\d[ T][\d:.]+Z?\s+)?TOOL_USE\b")),
    ("tool call", re.compile(rf"(?<![\w.])(?:{TOOLS}|mcp__[\w-]+__[\w-]+)\(")),
    (
        "transcript tool block",
        re.compile(r"\[tool_use\b|\[tool_result\]|\b(?:tool_use|tool_result|tool_call):"),
    ),
)
CAPTURE = re.compile(r"\bhook: captured \d+ new message")
SESSION_ID = re.compile(
    r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b|\bs-\d{8}T\d{6}-[0-9a-f]+\b",
    re.IGNORECASE,
)
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\d([ T][\d:.]+Z?)?")
ID_WORDS = re.compile(r"\b(sessions?|ids?|ended|started)\b", re.IGNORECASE)


def fold(text: str) -> str:
    return " ".join(text.casefold().split())


def has(text: str, phrase: str) -> bool:
    return fold(phrase) in fold(text)


def classify_line(line: str) -> str | None:
    """'trace', 'bookkeeping' or None (content), by the rules in the module docstring."""
    for _, rule in TRACE_RULES:
        if rule.search(line):
            return "trace"
    if CAPTURE.search(line):
        return "bookkeeping"
    if SESSION_ID.search(line):
        rest = ID_WORDS.sub("", TIMESTAMP.sub("", SESSION_ID.sub("", line)))
        if sum(c.isalpha() for c in rest) < 10:
            return "bookkeeping"
    return None


@value_type(frozen=True)
class Noise:
    chars: int
    trace: int
    bookkeeping: int

    @property
    def noisy(self) -> int:
        return self.trace + self.bookkeeping


def noise(text: str) -> Noise:
    chars = trace = book = 0
    for line in text.splitlines():
        chars += len(line)
        kind = classify_line(line)
        if kind == "trace":
            trace += len(line)
        elif kind == "bookkeeping":
            book += len(line)
    return Noise(chars, trace, book)


def noisy_lines(text: str) -> list[tuple[str, str]]:
    """(kind, line) of every noisy line: what `--show` prints next to a context."""
    return [(k, line) for line in text.splitlines() if (k := classify_line(line)) is not None]


@value_type(frozen=True)
class Record:
    """One result of a recall list, as the bench judges it."""

    uid: str
    layer: str
    text: str
    superseded: bool = False


def first_answer(records: Sequence[Record], answers: Iterable[str]) -> int | None:
    phrases = list(answers)
    for rank, r in enumerate(records, 1):
        if not r.superseded and any(has(r.text, p) for p in phrases):
            return rank
    return None


def stale_above(records: Sequence[Record], answers: Iterable[str], stale: Iterable[str]) -> bool:
    phrases, old = list(answers), list(stale)
    if not old:
        return False
    top = first_answer(records, phrases)
    for rank, r in enumerate(records, 1):
        if top is not None and rank >= top:
            return False
        if any(has(r.text, p) for p in old) and not any(has(r.text, p) for p in phrases):
            return True
    return False


def share(part: float, whole: float) -> float | None:
    return round(part / whole, 4) if whole else None
