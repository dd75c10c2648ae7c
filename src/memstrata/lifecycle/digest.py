"""The context compaction policy as a deterministic digest, in bullets.

    Keeps: active phase, unresolved blockers, approved decisions, safety constraints.
    Drops: verbose intermediate tool output already summarized.
    Emits: compact summary in deterministic bullets before proceeding.

Every line of what is compacted (LOG entries, transcript messages) becomes a
`Record`; `reading.classify` reads each line's speech act (an approval, a
prohibition, a dependency on someone else ...; a user's own words weigh more) and
puts it in one category. The bullets always come out in this order, each on one
line, each category in the order things happened:

    Objective / Phase   NOW.md's objective and phase, else the latest objective / phase line
    Blocker             NOW.md's blockers; blocker lines no later line resolved
    Decision            approved decisions ("signed off on", "we'll go with", "LGTM" ...)
    Constraint          safety constraints and warnings ("keep your hands off prod" ...)
    Errors              ERROR entries: a count and the last one
    Tool use            tool executions: calls per tool and their outcomes, never their output
    Earlier             the header of each earlier compaction (where its entries went)
    (narrative)         everything else, repeats folded into one line ("... (x200 similar)"),
                        summarised into the room left

Tool output is never classified by its text (a pytest "warning" is not a safety
constraint), nor is tool text a transcript holds (`tool_call` / `tool_result` messages,
and the "[tool_use ...]" / "[tool_result] ..." lines earlier captures folded into
messages); hook bookkeeping (capture notices) is dropped; a final response is read
without its "Final response:" label, so it is a decision only when it states one; the
objective is the user's goal (NOW.md's, with `AgentLoop`'s "Task complete: " and the
recovery status read back to the goal they carry; a question asked is no goal: then the
latest objective line, else the latest goal the user's prompts set, else the question). Metadata `{"kind": "decision" |
"constraint" | "blocker" | "phase"}`
overrides the text rules, and an optional `LineClassifier` (a model, see
`llm.base`) may label lines the rules left as narrative. A previous digest's
bullets are read back into their categories, so decisions survive any number of
compactions. A kept item is never dropped silently: when the budget binds, each
category keeps its most recent items and says what it left, "- +3 more decisions
(see archive arc-1a2b3c4d)"; the narrative goes first. Same input, same output.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from memstrata.errors import ProviderError
from memstrata.lifecycle.activity import final_text, is_bookkeeping, is_final_response
from memstrata.lifecycle.outcome import previous_goal
from memstrata.lifecycle.statements import goal_of, sentences
from memstrata.llm.extractive import ExtractiveSummarizer
from memstrata.reading.classify import classify_line, prohibits
from memstrata.reading.english import strip_filler
from memstrata.values import value_type

if TYPE_CHECKING:
    from memstrata.layers.hot import NowState
    from memstrata.llm.base import LineClassifier, Summarizer
    from memstrata.model import LogEntry, SessionMessage

PINNED = ("objective", "phase", "blocker", "decision", "constraint")
LABELS = {
    "objective": "Objective",
    "phase": "Phase",
    "blocker": "Blocker",
    "decision": "Decision",
    "constraint": "Constraint",
    "preference": "Preference",
}
PLURALS = {"blocker": "blockers", "decision": "decisions", "constraint": "constraints"}
PLACEHOLDER_OBJECTIVES = frozenset({"", "(none)", "no active objective yet"})
ITEM_CHARS = 240

_LEAD = r"^\s*(?:(?:[-*+]|\d+[.)])\s+|>\s*)*(?:\*\*|__)?"
_SEP = r"\s*(?:\*\*|__)?\s*[:\-\u2013]\s*"
_PREFERENCE = re.compile(
    r"\b(?:i|the user|user)\s+(?:always\s+)?(?:prefer|prefers|like|likes)\b|\balways use\b|"
    r"\bmy (?:name|preferred)\b",
    re.I,
)
_RESOLVED = re.compile(r"\b(?:resolved|unblocked|fixed|no longer blocked|solved|cleared)\b", re.I)
_BULLET = re.compile(r"^- (Objective|Phase|Blocker|Decision|Constraint|Preference): (.+)$")
_EARLIER = re.compile(r"^(?:- Earlier: |LOG compacted: )(.+)$")
_MORE = re.compile(r"^- (\+\d+ (?:more|earlier) .+\(see (?:archive|the archive).*\))$")
_TOOL_LINE = re.compile(r"^- (?:Tool use|Errors)(?: \(earlier\))?: ")
_FAILED = re.compile(r"\b(?:failed|failure|error|exception|traceback|denied|timed? ?out)\b", re.I)
_PASSED = re.compile(r"\b(?:passed|ok|success|succeeded|done|0 failed)\b", re.I)
_WORD = re.compile(r"[^\W_]{3,}")
_TOOL_TEXT = ("[tool_use ", "[tool_result]")
# Words that carry no content of their own in a durable item ("yes, go ahead", "LGTM").
_CONSENT_WORDS = frozenset(
    [
        "yes",
        "yep",
        "yeah",
        "sure",
        "ok",
        "okay",
        "alright",
        "right",
        "fine",
        "good",
        "great",
        "perfect",
        "sounds",
        "looks",
        "go",
        "ahead",
        "do",
        "it",
        "please",
        "thanks",
        "thank",
        "you",
        "lgtm",
        "ship",
        "proceed",
        "agreed",
        "approved",
        "that",
        "works",
        "for",
        "me",
        "let",
        "us",
        "let's",
        "the",
        "this",
        "one",
        "option",
    ]
)
_SHAPE = re.compile(r"\d+")


@value_type(frozen=True)
class Record:
    """One thing that happened: `kind` is "text", "tool", "error" or "digest" (an earlier one)."""

    kind: str
    text: str
    tool: str | None = None
    outcome: str | None = None
    category: str | None = None  # forced by metadata
    speaker: str | None = None  # "user": the user's own words weigh more


def one_line(text: str, limit: int = ITEM_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def classify(line: str, speaker: str | None = None) -> str | None:
    """The category of one line of text ("decision", "constraint", "blocker", "phase",
    "objective", "preference"), or None (narrative). See `reading.classify`."""
    if "?" in line:  # "... can we go to 192 kbps? We have 300 listeners.": asked, not decided
        told = [x for x in sentences(line) if not x.rstrip(" \"')").endswith("?")]
        if not told:
            return None
        line = " ".join(told)
    kind = classify_line(line, speaker)
    if _PREFERENCE.search(line) and (
        kind is None or (kind == "constraint" and not prohibits(line, speaker))
    ):
        # "I prefer httpx to requests, and please keep type hints everywhere": a taste the
        # user states (with a request beside it) is a preference; "..., never X" a rule.
        return "preference"
    return kind


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
    """LOG entries (or archived ones) as digest records (bookkeeping left out)."""

    out: list[Record] = []
    for e in entries:
        meta = e.metadata or {}
        forced = meta.get("kind") if meta.get("kind") in (*PINNED, "preference") else None
        if is_bookkeeping(e):
            continue
        if is_final_response(e) and forced is None:
            out.append(Record("text", final_text(e)))  # its label is no decision
        elif e.entry_type == "TOOL_USE" and forced is None:
            out.append(
                Record("tool", e.content, _tool_name(meta, e.content), _outcome(meta, e.content))
            )
        elif e.entry_type == "ERROR" and forced is None:
            out.append(Record("error", e.content))
        elif meta.get("compacted") or meta.get("archive_id"):
            out.append(Record("digest", e.content))
        else:
            speaker = "user" if e.entry_type == "USER_FEEDBACK" else None
            out.append(Record("text", e.content, category=forced, speaker=speaker))
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
        elif role in ("user", "assistant"):
            said = [x for x in content.splitlines() if not x.startswith(_TOOL_TEXT)]
            tools = len(content.splitlines()) - len(said)
            if tools:  # an earlier capture folded tool blocks into the message: counted
                out.extend(Record("tool", "", "tool calls", "done") for _ in range(tools))
            text = "\n".join(said).strip()
            if text:
                out.append(Record("text", text, speaker="user" if role == "user" else None))
        # "system" (the harness's own notes in a transcript) states nothing of the work
    return out


@value_type
class _Sorted:
    pinned: dict[str, list[str]]
    narrative: list[tuple[str, str | None]]  # (line, speaker)
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
                more = _MORE.match(line)
                if bullet:
                    s.pinned[bullet.group(1).lower()].append(bullet.group(2))
                elif earlier:
                    s.earlier.append(one_line(earlier.group(1)))
                elif more:
                    s.earlier.append(one_line(more.group(1)))
                elif _TOOL_LINE.match(line):
                    s.earlier.append(one_line(line[2:]))
                elif line and not line.startswith("- ("):
                    s.narrative.append((line[2:] if line.startswith("- ") else line, None))
        elif r.category is not None:
            s.pinned[r.category].append(one_line(strip_filler(r.text)))
        else:
            for line in r.text.splitlines():
                if not line.strip():
                    continue
                category = classify(line, r.speaker)
                if category is None:
                    s.narrative.append((line.strip(), r.speaker))
                else:
                    s.pinned[category].append(one_line(strip_filler(line)))
    return s


def _ask(s: _Sorted, classifier: LineClassifier | None) -> None:
    """Let `classifier` label the lines the rules left as narrative (never the reverse)."""
    if classifier is None or not s.narrative:
        return
    lines = [line for line, _ in s.narrative]
    labels = list(classifier.classify_lines(lines))
    if len(labels) != len(lines):
        raise ProviderError(f"line classifier returned {len(labels)} labels for {len(lines)} lines")
    kept = []
    for (line, speaker), label in zip(s.narrative, labels, strict=True):
        if label in s.pinned:
            s.pinned[label].append(one_line(strip_filler(line)))
        else:
            kept.append((line, speaker))
    s.narrative = kept


def fold_repeats(lines: Sequence[str]) -> list[str]:
    """Lines that differ only in their numbers become the first one, with a count.

    Example:
        >>> fold_repeats(["read billing_1.py", "ok", "read billing_2.py"])
        ['read billing_1.py (×2 similar)', 'ok']
    """
    counts: Counter[str] = Counter(_SHAPE.sub("#", x.lower()) for x in lines)
    seen: set[str] = set()
    out = []
    for x in lines:
        shape = _SHAPE.sub("#", x.lower())
        if shape in seen:
            continue
        seen.add(shape)
        if counts[shape] > 1:  # the count must survive the bullet's length limit
            x = f"{one_line(x, ITEM_CHARS - 16)} (×{counts[shape]} similar)"
        out.append(x)
    return out


def _unresolved(blockers: list[str], later: list[str]) -> list[str]:
    """Blockers no later narrative line marks resolved (sharing two of its words)."""
    out = []
    for i, b in enumerate(blockers):
        words = {w.lower() for w in _WORD.findall(b)} - {"blocker", "blocked", "blocking"}
        resolved = any(
            _RESOLVED.search(x) and len(words & {w.lower() for w in _WORD.findall(x)}) >= 2
            for x in [*blockers[i + 1 :], *later]
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


_OWN_LABELS = {
    **{c: re.escape(label) for c, label in LABELS.items()},
    "constraint": r"(?:safety constraint|safety|constraint)",
}


def _strip_label(category: str, text: str) -> str:
    """'Decision: x' -> 'x' under the Decision bullet (other labels, like 'Warning:', stay)."""
    label = re.compile(_LEAD + _OWN_LABELS[category] + _SEP, re.I)
    return label.sub("", text, count=1).strip() or text


def _goal(now: NowState | None) -> str:
    """The user's goal NOW.md states (not "Task complete: ...", not the recovery status)."""

    return (previous_goal(now) or "") if now is not None else ""


def _only_asked(text: str) -> bool:
    """A question asked ("How should Brook word its messages?"), not work asked for ("Can
    you rework both?"): `AgentLoop`'s "Task complete: <prompt>" after a question turn."""
    return text.rstrip(" \"')").endswith("?") and goal_of(text) is None


def _users_goal(records: Sequence[Record]) -> str:
    """The latest goal the user's own words set (`statements.goal_of`), or ""."""
    said = (goal_of(r.text) for r in reversed(records) if r.kind == "text" and r.speaker == "user")
    return next((g for g in said if g), "")


@value_type(frozen=True)
class Sections:
    """A digest before it is fitted to a budget: each part in policy order."""

    heads: list[str]  # "- Objective: ...", "- Phase: ..."
    kept: dict[str, list[str]]  # blocker / decision / constraint items, oldest first
    counts: list[str]  # "- Errors: ...", "- Tool use: ..."
    earlier: list[str]  # "- Earlier: ..." (where earlier compactions put their entries)
    narrative: list[str]  # everything else, in order


def sections(
    records: Sequence[Record], now: NowState | None = None, classifier: LineClassifier | None = None
) -> Sections:
    """Sort `records` into the policy's sections; `now` supplies the live state."""
    s = _sort(records)
    _ask(s, classifier)
    narrative = [line for line, _ in s.narrative]
    resolutions = [x for x in [*narrative, *s.pinned["decision"]] if _RESOLVED.search(x)]
    heads: list[str] = []
    objective = _goal(now)
    asked = objective if _only_asked(objective) else ""  # a goal only when nothing else is
    if objective.lower() not in PLACEHOLDER_OBJECTIVES and not asked:
        heads.append(one_line(objective))
    elif s.pinned["objective"]:
        heads.append(s.pinned["objective"][-1])  # the active one is the latest
    elif goal := _users_goal(records) or asked:
        heads.append(one_line(goal))
    heads = [f"- Objective: {_strip_label('objective', h)}" for h in heads]
    if now and now.phase:
        heads.append(f"- Phase: {one_line(now.phase)}")
    elif s.pinned["phase"]:
        heads.append(f"- Phase: {_strip_label('phase', s.pinned['phase'][-1])}")
    live = [one_line(b) for b in now.blockers] if now else []
    kept = {
        "blocker": _dedupe([*live, *_unresolved(s.pinned["blocker"], resolutions)]),
        "decision": _dedupe(s.pinned["decision"]),
        "constraint": _dedupe(s.pinned["constraint"]),
    }
    kept = {c: [_strip_label(c, x) for x in items] for c, items in kept.items()}
    counts: list[str] = []
    if s.errors:
        counts.append(f"- Errors: {len(s.errors)}; last: {one_line(s.errors[-1], 160)}")
    if s.tools:
        total = sum(s.tools.values())
        parts = []
        for name in s.tool_order:
            tally = {o: n for (t, o), n in s.tools.items() if t == name}
            detail = ", ".join(f"{n} {o}" for o, n in sorted(tally.items()))
            parts.append(f"{name} ×{sum(tally.values())} ({detail})")
        counts.append(one_line(f"- Tool use: {total} call(s): {'; '.join(parts)}", 2 * ITEM_CHARS))
    earlier = [f"- Earlier: {e}" for e in _dedupe(s.earlier)]
    prefs = [f"Preference: {p}" for p in _dedupe(s.pinned["preference"])]
    return Sections(heads, kept, counts, earlier, [*narrative, *prefs])


def _says_something(item: str) -> bool:
    """False for an item that is only consent or filler ("ok", "yes, go ahead"): with its
    context gone it tells long-term memory nothing."""
    words = [w.lower() for w in re.findall(r"[^\W_]+", item)]
    return len([w for w in words if w not in _CONSENT_WORDS]) >= 2


def durable_items(records: Sequence[Record]) -> list[str]:
    """What a pre-compaction flush keeps for long-term memory: decisions, constraints,
    preferences that say something on their own."""
    s = _sort(records)
    out = []
    for category in ("decision", "constraint", "preference"):
        for item in _dedupe(s.pinned[category]):
            text = _strip_label(category, item)
            if _says_something(text):
                out.append(f"- {LABELS[category]}: {text}")
    return out


def _where(archive: str | None) -> str:
    return f"see archive {archive}" if archive else "see the archive"


def _fit_kept(sec: Sections, room: int, archive: str | None) -> tuple[list[str], int]:
    """Blockers, decisions and constraints within `room` chars, none dropped silently.

    Each category keeps its most recent items that fit, taken in turn so one long
    category cannot crowd out another, printed oldest first; what it leaves out is
    counted in a "- +N more decisions (see archive ...)" line after them.
    """
    cats = [c for c in ("blocker", "decision", "constraint") if sec.kept[c]]
    lines = {c: [f"- {LABELS[c]}: {x}" for x in sec.kept[c]] for c in cats}

    def marker(c: str, n: int) -> str:
        return f"- +{n} more {PLURALS[c] if n > 1 else c} ({_where(archive)})"

    reserve = {c: len(marker(c, len(lines[c]))) + 1 for c in cats}
    room -= sum(reserve.values())
    shown: dict[str, list[str]] = {c: [] for c in cats}
    open_ = list(cats)
    while open_:
        for c in list(open_):
            nxt = lines[c][len(lines[c]) - len(shown[c]) - 1]
            if len(nxt) + 1 > room:
                open_.remove(c)  # the rest of this category goes to the marker
                continue
            shown[c].insert(0, nxt)
            room -= len(nxt) + 1
            if len(shown[c]) == len(lines[c]):
                open_.remove(c)
    out: list[str] = []
    for c in cats:
        out.extend(shown[c])
        hidden = len(lines[c]) - len(shown[c])
        if hidden:
            out.append(marker(c, hidden))
        else:
            room += reserve[c]
    return out, room


def _fit(bullets: list[str], budget: int, what: str, archive: str | None) -> list[str]:
    """Keep bullets in order within `budget` chars; a last line says how many did not fit."""
    kept: list[str] = []
    used = 0
    for i, b in enumerate(bullets):
        marker = f"- +{len(bullets) - i} more {what} ({_where(archive)})"
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
    classifier: LineClassifier | None = None,
    archive: str | None = None,
) -> str:
    """The compaction summary of `records` under the compaction policy (see module docstring).

    Args:
        now: NOW.md's state: the active objective, phase and blockers lead the digest.
        narrative: Summarises the unclassified lines into the room left (default:
            the extractive summariser); `bulletize=False` keeps its text as written
            (a model's prose), else each of its lines becomes a bullet.
        classifier: Optional model that labels lines the rules left as narrative.
        archive: Where the compacted entries go (an archive id), named in the
            "+N more ..." lines when the budget binds.

    Example:
        >>> print(digest([Record("text", "Decision: use SQLite"),
        ...               Record("tool", "12 passed", "pytest", "ok")]))
        - Decision: use SQLite
        - Tool use: 1 call(s): pytest ×1 (1 ok)
    """
    sec = sections(records, now, classifier)
    fixed = [*sec.heads, *sec.counts]
    room = max_chars - sum(len(b) + 1 for b in fixed)
    kept, room = _fit_kept(sec, room, archive)
    earlier = _fit(sec.earlier, room, "earlier compactions", archive) if room > 0 else []
    room -= sum(len(b) + 1 for b in earlier)
    head = [*sec.heads, *kept, *sec.counts, *earlier]
    lines = sec.narrative
    if not lines or room < 40:
        return "\n".join(head)
    if narrative is None:
        narrative = ExtractiveSummarizer()
    if bulletize:  # whole lines picked: repeats folded first, so 200 alike take one line
        text = narrative.summarize(fold_repeats(lines), max_chars=max(40, room - room // 10))
        tail = [f"- {one_line(x)}" for x in text.splitlines() if x.strip()]
        tail = _fit(tail, room, "lines", archive) if tail else []
        tail = [t for t in tail if not t.startswith("- +")]  # dropped narrative needs no marker
    else:
        text = (narrative.summarize(lines, max_chars=room) or "").strip()
        tail = [text[:room]] if text else []
    return "\n".join([*head, *tail])
