"""Seed 001's context compaction policy as a deterministic digest, in bullets.

    Keeps: active phase, unresolved blockers, approved decisions, safety constraints.
    Drops: verbose intermediate tool output already summarized.
    Emits: compact summary in deterministic bullets before proceeding.

Every line of what is compacted (LOG entries, transcript messages) becomes a
`Record`; line rules, not a model, put each in one category, and the bullets
come out in this order, each on one line:

    Objective / Phase   NOW.md's objective and phase, else the latest "Objective:" / "Phase ..." line
    Blocker             NOW.md's blockers; "Blocker: ...", "blocked by/on" lines no later line resolved
    Decision            "Decision: ...", "approved ...", "we decided / chose / agreed ..."
    Constraint          "Safety: / Constraint: / Warning: / Important: ...", "never ...", "must not ..."
    Errors              ERROR entries: a count and the last one
    Tool use            tool executions: calls per tool and their outcomes, never their output
    Earlier             the header of each earlier compaction (where its entries went)
    (narrative)         everything else, summarised into the room left

Tool output is never classified by its text (a pytest "warning" is not a safety
constraint); metadata `{"kind": "decision" | "constraint" | "blocker" | "phase"}`
overrides the text rules. A previous digest's bullets are read back into their
categories, so decisions survive any number of compactions. When the budget
binds, the narrative goes first, then the later categories, with a marker saying
how many items only the archive still holds. Same input, same output.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memstrata.layers.hot import NowState
    from memstrata.llm.base import Summarizer
    from memstrata.model import LogEntry, SessionMessage

PINNED = ("objective", "phase", "blocker", "decision", "constraint")
LABELS = {"objective": "Objective", "phase": "Phase", "blocker": "Blocker",
          "decision": "Decision", "constraint": "Constraint", "preference": "Preference"}
PLACEHOLDER_OBJECTIVES = frozenset({"", "(none)", "no active objective yet"})
ITEM_CHARS = 240

_LEAD = r"^\s*(?:(?:[-*+]|\d+[.)])\s+|>\s*)*(?:\*\*|__)?"
_SEP = r"\s*(?:\*\*|__)?\s*[:\-\u2013]\s*"
_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("objective", re.compile(_LEAD + r"(?:objective|goal|current task)" + _SEP + r"\S", re.I)),
    ("phase", re.compile(_LEAD + r"phase\b(?:\s+\w+(?:\s+of\s+\w+)?)?" + _SEP + r"\S", re.I)),
    ("blocker", re.compile(_LEAD + r"(?:blocker|blocked|blocking)\b", re.I)),
    ("blocker", re.compile(r"\bblocked (?:by|on)\b", re.I)),
    ("decision", re.compile(_LEAD + r"(?:decision|decided|approved|agreed)\b", re.I)),
    ("decision", re.compile(
        r"\b(?:we|i|the user|user|team)\s+(?:have\s+|has\s+)?(?:decided|chose|agreed|approved|"
        r"settled on|went with|opted)\b", re.I)),
    ("constraint", re.compile(
        _LEAD + r"(?:safety(?: constraint)?|constraint|warning|caution|important|security|rule)"
        + _SEP + r"\S", re.I)),
    ("constraint", re.compile(
        _LEAD + r"(?:never|do not|don't|must not|must never|mustn't|under no circumstances)\b", re.I)),
    ("constraint", re.compile(r"\b(?:must never|must not|is forbidden|not allowed to)\b", re.I)),
    ("preference", re.compile(
        r"\b(?:i|the user|user)\s+(?:always\s+)?(?:prefer|prefers|like|likes)\b|\balways use\b|"
        r"\bmy (?:name|preferred)\b", re.I)),
)
_RESOLVED = re.compile(r"\b(?:resolved|unblocked|fixed|no longer blocked|solved|cleared)\b", re.I)
_BULLET = re.compile(r"^- (Objective|Phase|Blocker|Decision|Constraint|Preference): (.+)$")
_EARLIER = re.compile(r"^(?:- Earlier: |LOG compacted: )(.+)$")
_TOOL_LINE = re.compile(r"^- (?:Tool use|Errors)(?: \(earlier\))?: ")
_FAILED = re.compile(r"\b(?:failed|failure|error|exception|traceback|denied|timed? ?out)\b", re.I)
_PASSED = re.compile(r"\b(?:passed|ok|success|succeeded|done|0 failed)\b", re.I)
_WORD = re.compile(r"[^\W_]{3,}")


@dataclass(frozen=True)
class Record:
    """One thing that happened: `kind` is "text", "tool", "error" or "digest" (an earlier one)."""

    kind: str
    text: str
    tool: str | None = None
    outcome: str | None = None
    category: str | None = None  # forced by metadata


def one_line(text: str, limit: int = ITEM_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def classify(line: str) -> str | None:
    """The pinned category of one line of text, or None (narrative)."""
    for category, rule in _RULES:
        if rule.search(line):
            return category
    return None


def _outcome(meta: dict[str, Any], text: str) -> str:
    if meta.get("outcome") in ("ok", "error"):
        return str(meta["outcome"])
    if meta.get("ok") is not None:
        return "ok" if meta["ok"] else "error"
    for key in ("exit_code", "returncode", "exit_status"):
        if isinstance(meta.get(key), int):
            return "ok" if meta[key] == 0 else "error"
    head = "\n".join(text.splitlines()[-3:])  # tool output states its verdict at the end
    if _FAILED.search(head) and not re.search(r"\b0 failed\b", head):
        return "error"
    return "ok" if _PASSED.search(head) else "done"


def _tool_name(meta: dict[str, Any], text: str) -> str:
    name = meta.get("tool") or meta.get("tool_name") or meta.get("name")
    if isinstance(name, str) and name.strip():
        return one_line(name, 40)
    first = (text.strip().split(None, 1) or ["tool"])[0]
    return one_line(re.split(r"[:(]", first)[0] or "tool", 40)


def log_records(entries: Iterable[LogEntry]) -> list[Record]:
    """LOG entries (or archived ones) as digest records."""
    out: list[Record] = []
    for e in entries:
        meta = e.metadata or {}
        forced = meta.get("kind") if meta.get("kind") in (*PINNED, "preference") else None
        if e.entry_type == "TOOL_USE" and forced is None:
            out.append(Record("tool", e.content, _tool_name(meta, e.content), _outcome(meta, e.content)))
        elif e.entry_type == "ERROR" and forced is None:
            out.append(Record("error", e.content))
        elif meta.get("compacted") or meta.get("archive_id"):
            out.append(Record("digest", e.content))
        else:
            out.append(Record("text", e.content, category=forced))
    return out


def message_records(messages: Iterable[SessionMessage | dict[str, Any]]) -> list[Record]:
    """Transcript messages as digest records (tool calls and results are only counted)."""
    out: list[Record] = []
    for m in messages:
        role = m.role if not isinstance(m, dict) else str(m.get("role"))
        content = m.content if not isinstance(m, dict) else str(m.get("content") or "")
        name = m.name if not isinstance(m, dict) else m.get("name")
        if role == "tool_call":
            out.append(Record("tool", content, one_line(str(name or "tool"), 40), "called"))
        elif role == "tool_result":
            out.append(Record("tool", content, "tool results", _outcome({}, content)))
        elif role == "summary":
            out.append(Record("digest", content))
        else:
            out.append(Record("text", content))
    return out


@dataclass
class _Sorted:
    pinned: dict[str, list[str]]
    narrative: list[str]
    tools: Counter[tuple[str, str]]
    tool_order: list[str]
    errors: list[str]
    earlier: list[str]


def _sort(records: Sequence[Record]) -> _Sorted:
    s = _Sorted({c: [] for c in (*PINNED, "preference")}, [], Counter(), [], [], [])
    for r in records:
        if r.kind == "tool":
            name = r.tool or "tool"
            if name not in s.tool_order:
                s.tool_order.append(name)
            s.tools[(name, r.outcome or "done")] += 1
        elif r.kind == "error":
            s.errors.append(one_line(r.text))
        elif r.kind == "digest":
            for line in r.text.splitlines():
                line = line.strip()
                bullet = _BULLET.match(line)
                earlier = _EARLIER.match(line)
                if bullet:
                    s.pinned[bullet.group(1).lower()].append(bullet.group(2))
                elif earlier:
                    s.earlier.append(one_line(earlier.group(1)))
                elif _TOOL_LINE.match(line):
                    s.earlier.append(one_line(line[2:]))
                elif line and not line.startswith("- ("):
                    s.narrative.append(line[2:] if line.startswith("- ") else line)
        elif r.category is not None:
            s.pinned[r.category].append(one_line(r.text))
        else:
            for line in r.text.splitlines():
                if not line.strip():
                    continue
                category = classify(line)
                if category is None:
                    s.narrative.append(line.strip())
                else:
                    s.pinned[category].append(one_line(line.strip()))
    return s


def _unresolved(blockers: list[str], later: list[str]) -> list[str]:
    """Blockers no later narrative line marks resolved (sharing two of its words)."""
    out = []
    for i, b in enumerate(blockers):
        words = {w.lower() for w in _WORD.findall(b)} - {"blocker", "blocked", "blocking"}
        resolved = any(
            _RESOLVED.search(x) and len(words & {w.lower() for w in _WORD.findall(x)}) >= 2
            for x in [*blockers[i + 1:], *later]
        )
        if not resolved:
            out.append(b)
    return out


def _dedupe(items: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for item in items:
        key = " ".join(item.lower().split())
        if key and key not in seen:
            seen.add(key)
            out.append(item)
    return out


_OWN_LABELS = {**{c: re.escape(label) for c, label in LABELS.items()},
               "constraint": r"(?:safety constraint|safety|constraint)"}


def _strip_label(category: str, text: str) -> str:
    """'Decision: x' -> 'x' under the Decision bullet (other labels, like 'Warning:', stay)."""
    label = re.compile(_LEAD + _OWN_LABELS[category] + _SEP, re.I)
    return label.sub("", text, count=1).strip() or text


def pinned_bullets(records: Sequence[Record], now: NowState | None = None) -> tuple[list[str], list[str]]:
    """(bullets in policy order, narrative lines) for `records`; `now` supplies the live state."""
    s = _sort(records)
    resolutions = [x for x in s.narrative if _RESOLVED.search(x)]
    groups: dict[str, list[str]] = {}
    objective = now.objective.strip() if now else ""
    if objective.lower() not in PLACEHOLDER_OBJECTIVES:
        groups["objective"] = [one_line(objective)]
    elif s.pinned["objective"]:
        groups["objective"] = [s.pinned["objective"][-1]]  # the active one is the latest
    if now and now.phase:
        groups["phase"] = [one_line(now.phase)]
    elif s.pinned["phase"]:
        groups["phase"] = [s.pinned["phase"][-1]]
    live = list(now.blockers) if now else []
    groups["blocker"] = _dedupe([*live, *_unresolved(s.pinned["blocker"], resolutions)])
    groups["decision"] = _dedupe(s.pinned["decision"])
    groups["constraint"] = _dedupe(s.pinned["constraint"])
    bullets: list[str] = []
    for category in PINNED:
        for item in groups.get(category, []):
            bullets.append(f"- {LABELS[category]}: {_strip_label(category, item)}")
    if s.errors:
        bullets.append(f"- Errors: {len(s.errors)}; last: {one_line(s.errors[-1], 160)}")
    if s.tools:
        total = sum(s.tools.values())
        parts = []
        for name in s.tool_order:
            counts = {o: n for (t, o), n in s.tools.items() if t == name}
            detail = ", ".join(f"{n} {o}" for o, n in sorted(counts.items()))
            parts.append(f"{name} ×{sum(counts.values())} ({detail})")
        bullets.append(f"- Tool use: {total} call(s): {'; '.join(parts)}")
    bullets.extend(f"- Earlier: {e}" for e in _dedupe(s.earlier))
    narrative = [*s.narrative, *(f"Preference: {p}" for p in _dedupe(s.pinned["preference"]))]
    return bullets, narrative


def durable_items(records: Sequence[Record]) -> list[str]:
    """What a pre-compaction flush keeps for long-term memory: decisions, constraints, preferences."""
    s = _sort(records)
    out = []
    for category in ("decision", "constraint", "preference"):
        for item in _dedupe(s.pinned[category]):
            out.append(f"- {LABELS[category]}: {_strip_label(category, item)}")
    return out


def _fit(bullets: list[str], budget: int) -> list[str]:
    """Keep bullets in order within `budget` chars; say how many did not fit."""
    kept: list[str] = []
    used = 0
    for i, b in enumerate(bullets):
        marker = f"- ({len(bullets) - i} more item(s) are only in the archive)"
        reserve = 0 if i == len(bullets) - 1 else len(marker) + 1
        if used + len(b) + 1 + reserve > budget:
            if used + len(marker) + 1 <= budget:
                kept.append(marker)
            return kept
        kept.append(b)
        used += len(b) + 1
    return kept


def digest(
    records: Sequence[Record],
    *,
    now: NowState | None = None,
    narrative: Summarizer | None = None,
    max_chars: int = 2000,
    bulletize: bool = True,
) -> str:
    """The compaction summary of `records` under seed 001's policy (see module docstring).

    Args:
        now: NOW.md's state: the active objective, phase and blockers lead the digest.
        narrative: Summarises the unclassified lines into the room left (default:
            the extractive summariser); `bulletize=False` keeps its text as written
            (a model's prose), else each of its lines becomes a bullet.

    Example:
        >>> print(digest([Record("text", "Decision: use SQLite"),
        ...               Record("tool", "12 passed", "pytest", "ok")]))
        - Decision: use SQLite
        - Tool use: 1 call(s): pytest ×1 (1 ok)
    """
    bullets, lines = pinned_bullets(records, now)
    head = _fit(bullets, max_chars)
    room = max_chars - sum(len(b) + 1 for b in head)
    if not lines or room < 40 or len(head) < len(bullets):
        return "\n".join(head)
    if narrative is None:
        from memstrata.llm.extractive import ExtractiveSummarizer

        narrative = ExtractiveSummarizer()
    if bulletize:
        text = narrative.summarize(lines, max_chars=max(40, room - room // 10))
        tail = [f"- {one_line(x)}" for x in text.splitlines() if x.strip()]
        tail = _fit(tail, room) if tail else []
        tail = [t for t in tail if not t.startswith("- (")]  # dropped narrative needs no marker
    else:
        text = (narrative.summarize(lines, max_chars=room) or "").strip()
        tail = [text[:room]] if text else []
    return "\n".join([*head, *tail])
