"""The session-start context's sections by value (issue 19): what stands, then what happened.

    open tasks        status, priority, what blocks them
    decisions         decisions and constraints in force (`layers.decisions`: never a
                      superseded one), each with its id, so `record_decision` can replace it
    preferences       the user's preferences in force
    open errors       failures nothing later resolved, each once (`lifecycle.activity`)
    activity          one line per session: when, the user's goal(s), counts of reads,
                      edits and test runs (and failures), the outcome; under it the
                      agent's own notes. Never a raw tool trace, UUID or capture notice.

Each builder returns plain lines for `assembly.context`, which fits them to the budget.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from memstrata.errors import MemstrataError
from memstrata.layers.decisions import RULE_KINDS
from memstrata.layers.hot import parse_now
from memstrata.lifecycle.activity import (
    NOTE_CHARS,
    OUTCOME_CHARS,
    clip,
    failure_line,
    is_trace,
    one_line,
    sessions,
)
from memstrata.lifecycle.resolved import OpenError, open_errors
from memstrata.model import parse_ts

if TYPE_CHECKING:
    from memstrata.layers.agent import AgentMemory
    from memstrata.model import LedgerEntry, LogEntry, Task

MAX_SESSIONS = 12
MAX_NOTES = 5
MAX_FAILURES = 2  # what a session ran into, told under its line
_ORDER = {"in_progress": 0, "blocked": 1, "pending": 2}


def recent_entries(mem: AgentMemory, n: int) -> list[LogEntry]:
    """The last `n` LOG entries, after the entries of the latest compaction archive when
    LOG.md starts with its summary: a compaction must not cut a session in two (its goal
    on one side, its outcome on the other) nor hide a failure nothing resolved yet."""
    tail = mem.log.tail(n) if n else []
    latest = next((e for e in reversed(tail) if (e.metadata or {}).get("compacted")), None)
    archive = (latest.metadata or {}).get("archive_id") if latest is not None else None
    if not isinstance(archive, str):
        return tail

    try:
        before = mem.archives.entries(archive)
    except MemstrataError:
        return tail  # a missing or unreadable archive costs its part of the summary only
    return [*before[-n:], *tail]


def task_line(t: Task) -> str:
    first = t.description.splitlines()[0] if t.description else ""
    line = f"- {t.id} [{t.status}] (P{t.priority}) {first}"
    if t.blocked_by:
        line += f" (blocked by {', '.join(t.blocked_by)})"
    return line


def open_tasks(tasks: list[Task]) -> list[Task]:
    """Tasks not done or cancelled: in progress first, then blocked, then pending."""
    live = [t for t in tasks if t.status in _ORDER]
    return sorted(live, key=lambda t: _ORDER[t.status])  # stable: priority order kept


def record_line(e: LedgerEntry, *, kinds: tuple[str, ...] = ("decision",)) -> str:
    """`- <text> (<id>, <day>)`, prefixed by the record's kind unless the section is of
    that kind (`kinds`): "constraint: ..." among decisions, not "preference: ..." under
    Preferences."""
    kind = "" if e.kind in kinds else f"{e.kind}: "
    room = f", room {e.room_id}" if e.room_id else ""
    return f"- {kind}{one_line(e.summary, 400)} ({e.id}, {e.ts[:10]}{room})"


def decision_lines(
    mem: AgentMemory, later: Callable[[], list[LedgerEntry]] | None = None
) -> list[str]:
    """Decisions and constraints in force: constraints (rules) first, then decisions. A
    warning a later record fixed or dropped (`lifecycle.retired`; `later` gives the live
    ledger records of every room this agent reads) is no longer in force: it is left
    out, and one line at the end says which record retired it."""
    rules = mem.decisions.in_force(("constraint", *RULE_KINDS))
    decisions = mem.decisions.in_force(("decision",))
    retired: list[str] = []
    if later is not None and any(e.kind == "warning" for e in rules):
        from memstrata.lifecycle.retired import fixed_each  # start-up: only with a warning

        warnings = [e for e in rules if e.kind == "warning"]
        fixed = dict(zip((e.id for e in warnings), fixed_each(warnings, later()), strict=True))
        kept = []
        for e in rules:
            by = fixed.get(e.id)
            if by is None:
                kept.append(e)
            else:
                room = f", room {by.room_id}" if by.room_id else ""
                retired.append(f"{e.id} ({one_line(e.summary, 60)}): out of date by {by.id}{room}")
        rules = kept
    lines = [record_line(e) for e in [*rules, *decisions]]
    if retired:
        lines.append("- no longer in force (history keeps them): warning " + "; ".join(retired))
    return lines


def preference_lines(mem: AgentMemory) -> list[str]:
    return [record_line(e, kinds=("preference",)) for e in mem.decisions.in_force(("preference",))]


def _told(outcome: str, history: list[tuple[LedgerEntry, str | None]] | None) -> str:
    """A past session's outcome without a decision replaced since (`lifecycle.retired`,
    its statement readers, imported only when some record was replaced: start-up)."""
    if not outcome or not history or all(by is None for _, by in history):
        return outcome
    from memstrata.lifecycle.retired import without_replaced

    return without_replaced(outcome, history)


def records_history(mem: AgentMemory) -> list[tuple[LedgerEntry, str | None]]:
    """Every decision and constraint with what replaced it, for `moot` errors; none when
    the ledger cannot be read (its own sections say so): errors are then shown as open."""
    try:
        return mem.decisions.history(("decision", "constraint", *RULE_KINDS))
    except MemstrataError:
        return []


def unresolved(
    entries: list[LogEntry], history: list[tuple[LedgerEntry, str | None]]
) -> tuple[list[OpenError], dict[str, tuple[LedgerEntry, str]]]:
    """The open errors, and by error entry id the record in force that made one moot and
    why (`lifecycle.moot`: a later decision dropped what it was about, or decided in the
    error's session how to go on with what it used)."""
    still, moot = [], {}
    errors = open_errors(entries)
    if errors and history:  # start-up: the moot rules only with an open error
        from memstrata.lifecycle.moot import moot_why
    ends: dict[str, str] = {}  # error entry id -> the end of its session
    if errors and history:
        for s in sessions(entries):
            ends.update((e.id, s.end) for e, _ in s.failed)
    for err in errors:
        why = moot_why(err.entry, history, ends.get(err.entry.id)) if history else None
        if why is None:
            still.append(err)
        else:
            moot.update(dict.fromkeys(err.ids, why))
    return still, moot


def error_lines(
    entries: list[LogEntry], history: list[tuple[LedgerEntry, str | None]] | None = None
) -> list[str]:
    return [err.line() for err in unresolved(entries, history or [])[0]]


# What an agent's own transcript says of a stretch of LOG.md that names no session:
# (goals, what the user asked, the outcome).
Told = Callable[[str, str], tuple[list[str], list[str], str]]
TOLD_MARGIN = 1800.0  # seconds around a LOG stretch in which its transcript's messages count


def _bullets(text: str) -> str:
    """An answer given as bullets, as one line: "a; b; c"."""
    lines = [x.strip() for x in text.splitlines() if x.strip()]
    if len(lines) > 1 and all(x[:2] in ("- ", "* ", "• ") for x in lines):
        return "; ".join(x[2:].strip() for x in lines)
    return " ".join(x.lstrip("-*• ") if i == 0 else x for i, x in enumerate(lines))


def transcript_told(mem: AgentMemory) -> Told:
    """Goal and outcome of an agent whose LOG.md holds no prompt or final response (an MCP
    agent logging its calls and notes, keeping its own transcript with `session_append`):
    the transcripts with messages in the stretch's span (give or take `TOLD_MARGIN`), the
    goal from their first prompts that set one ("continue" and "ignore memory" asides
    set none), the outcome from the last answer that is not the answer to an aside."""

    def told(start: str, end: str) -> tuple[list[str], list[str], str]:
        goals: list[str] = []
        asked: list[str] = []
        outcome = ""
        try:
            found = mem.sessions.active_between(
                parse_ts(start) - TOLD_MARGIN, parse_ts(end) + TOLD_MARGIN
            )
            if found:  # the ignore-memory rules cost ~15 ms to load: only when there is talk
                from memstrata.assembly.ignore import asks_to_ignore_memory
                from memstrata.lifecycle.statements import goal_of, is_continuation
            for t in found:
                for role, said in mem.sessions.talk(t.id):
                    if role != "user" or not said or asks_to_ignore_memory(said):
                        continue
                    goal = goal_of(said)
                    if goal:
                        goals.append(goal)
                        break
                    if not is_continuation(said):
                        asked.append(said)
                        break
                answer, aside = "", False
                for role, said in mem.sessions.talk(t.id, last=True):
                    if role == "user":
                        aside = asks_to_ignore_memory(said)  # its answer is no outcome
                    elif not aside:
                        answer = said
                outcome = answer or outcome
            if not (goals or asked or outcome):  # no transcript, or one without talk
                goals, outcome = now_set(parse_ts(start), parse_ts(end) + TOLD_MARGIN)
        except MemstrataError:
            pass  # an unreadable session index costs the goal, never the line
        outcome = _bullets(outcome)
        return goals, asked, clip(outcome, OUTCOME_CHARS) if outcome else ""

    versions: list[tuple[float, str]] = []
    texts: dict[str, str] = {}  # version id -> NOW.md's text then (each read once)
    asked: set[str] = set()  # version ids whose text was asked for (kept or not)

    def objectives(vids: list[str]) -> list[str]:
        """The objectives set by the versions `vids` that are kept, in order."""
        missing = [vid for vid in vids if vid not in asked]
        if missing:
            texts.update(mem.versions.texts("now", missing))
            asked.update(missing)
        said = [parse_now(texts[vid]).objective.strip() for vid in vids if vid in texts]
        return [x for x in said if x.lower() not in ("", "(none)", "no active objective yet")]

    def now_set(lo: float, hi: float) -> tuple[list[str], str]:
        """Without a transcript: the last objective the agent set in NOW.md in the span is
        the outcome, the first one (when it moved on since) the goal (NOW.md's versions).
        Those two are all it tells: the versions between are read only when an end of the
        span sets no objective (a NOW.md updated 60 times in a session: 2 texts, not 60)."""
        if not versions:
            kept = [v for v in mem.versions.history("now", changes=False).versions if v.kept]
            versions.extend((parse_ts(v.ts), v.id) for v in reversed(kept))
        span = [vid for ts, vid in versions if lo <= ts <= hi]
        ends = list(dict.fromkeys(span[:1] + span[-1:]))
        said = objectives(ends)
        if len(said) < len(ends):
            said = objectives(span)
        if not said:
            return [], ""
        if len(said) == 1 or said[-1] == said[0]:  # set once: where the session got to
            return [], f"NOW: {said[-1]}"
        return [one_line(said[0], 160)], f"NOW: {said[-1]}"

    return told


def _when(start: str, end: str) -> str:
    day, first, last = start[:10], start[11:16], end[11:16]
    if end[:10] != day:
        return f"{day} {first} to {end[:10]} {last}"
    return f"{day} {first}" + (f"-{last}" if last != first else "")


def _compaction(e: LogEntry) -> str:
    meta = e.metadata or {}
    objective = next((x[2:] for x in e.content.splitlines() if x.startswith("- Objective: ")), None)
    where = f"archive {meta['archive_id']}" if meta.get("archive_id") else "the archive"
    told = f"; {objective}" if objective else ""
    when = e.ts[:16].replace("T", " ")
    return f"- before {when}: {meta.get('entries', '?')} entries compacted into {where}{told}"


def activity_lines(
    entries: list[LogEntry],
    history: list[tuple[LedgerEntry, str | None]] | None = None,
    transcript: Told | None = None,
) -> list[str]:
    """One line per session (and under it the agent's notes and what failed, unless it is
    still an open error: told once; an error a later decision made moot says which),
    oldest first; a compaction whose archived entries are among `entries`
    (`recent_entries`) is told by them."""
    errors, moot = unresolved(entries, history or [])
    still_open = {i for err in errors for i in err.ids}
    summaries = [e for e in entries if (e.metadata or {}).get("compacted")]
    own = [e for e in summaries if not e.compacted]  # LOG.md's own summary entries
    expanded = own[-1] if own and any(e.compacted for e in entries) else None
    lines = [_compaction(e) for e in summaries if e is not expanded]
    for s in sessions(entries)[-MAX_SESSIONS:]:
        parts = [_when(s.start, s.end)]
        if transcript is not None and not (s.goals or s.asked or s.outcome):
            s.goals, s.asked, s.outcome = transcript(s.start, s.end)
        if s.goals:
            parts.append("goal: " + " / then: ".join(clip(g, 160) for g in s.goals[:3]))
        elif s.asked:
            parts.append("user: " + clip(s.asked[0], 160))  # what opened it
        counts = s.summary()
        if counts:
            parts.append(counts)
        outcome = _told(s.outcome, history)
        if outcome:  # a past answer's account, without a decision replaced since
            parts.append(f"outcome: {outcome}")
        if len(parts) == 1 and not s.notes and not s.failed:
            continue
        lines.append("- " + "; ".join(parts))
        for note in s.notes[-MAX_NOTES:]:
            label = "TOOL_USE" if is_trace(note) else note.entry_type
            lines.append(f"  - {note.ts[11:16]} {label}: {one_line(note.content, NOTE_CHARS)}")
        told: set[str] = set()
        for e, detail in s.failed:
            said = failure_line(e, detail)
            if e.id in still_open or said in told or len(told) == MAX_FAILURES:
                continue
            told.add(said)
            by = moot.get(e.id)
            why = f" (no longer open: {by[0].id} {by[1]})" if by else ""
            lines.append(f"  - {e.ts[11:16]} {said}{why}")
    return lines
