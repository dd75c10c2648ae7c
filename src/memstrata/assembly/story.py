"""An agent's timeline told as a story: one line per thing that happened, by session.

    story = tell(store, "finn", kinds=("conversation", "calls"))
    for group in story.groups:               # newest session first
        group.title, group.goal, group.outcome, group.counts
        for part in group.parts:             # in the order things happened
            part.folded, part.summary, [line.title for line in part.lines]

A page of `search.timeline` is records, and one event leaves several: a tool call is the
PostToolUse hook's LOG TOOL_USE entry (or the ERROR entry of a failed call) plus the
transcript's tool_use and tool_result messages the Stop hook captures; a prompt or a final
answer is a LOG entry plus the transcript message saying the same text. Here each event
is one line: a call's records are grouped as recall groups them (`search.toolcalls`: by
the call's id, else by session, tool, argument and time), a prompt or answer is the LOG
entry and the message of one session with the same text. A call's line says what it did
("Read app/auth.py", "Bash pytest -q: failed: ..."), its input and result folded under it.

Lines are grouped by session (a LOG entry's `session`, a transcript's id); a record of no
session (a fact, a task, a file's change, a note) between two records of one session
belongs to it, else to a group of its own. A group's heading is the session's first prompt,
its goal(s) and outcome (`lifecycle.activity`, as the session-start context tells them),
its span and its calls counted by sort. Within a group, runs of successful calls (and
bookkeeping) are folded into one part a person opens with one click; prompts, answers,
notes, errors and failed calls stay in view. Pure assembly over the timeline's records;
the only reads are the timeline page and the sessions' summaries.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from memstrata.assembly.timeline import (
    MAX_PAGE,
    TimelineItem,
    TimelinePage,
    above,
    at_or_above,
    cursor_of,
    newer_cursor,
    newer_items,
    position_of,
    timeline,
)
from memstrata.errors import MalformedInput
from memstrata.lifecycle.activity import (
    final_text,
    is_bookkeeping,
    is_final_response,
    is_trace,
    kind_of_call,
    one_line,
    target,
)
from memstrata.lifecycle.statements import goal_of
from memstrata.model import LogEntry, iso
from memstrata.reading.failure import gist
from memstrata.search.query import Hit
from memstrata.search.toolcalls import TRANSCRIPT_TOOL, clues_of, group_calls
from memstrata.values import replace, value_type

if TYPE_CHECKING:
    from memstrata.store.view import Store

# What a person filters by -> (the timeline types it reads, the line kinds it shows).
_TALK = ("log", "session", "archive")
KINDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "conversation": (_TALK, ("prompt", "answer")),
    "calls": (_TALK, ("call",)),
    "errors": (_TALK, ("error",)),  # and failed calls
    "notes": (("log", "archive"), ("note",)),
    "facts": (("fact",), ("fact",)),
    "tasks": (("task",), ("task",)),
    "files": (("now", "context", "identity", "file", "archive"), ("file",)),
    "compactions": (("compaction",), ("compaction",)),
}
RECORDS = 150  # timeline records read for one page of the story
LOOKAHEAD = 12  # records read below a page for the rest of an event the cut split
AROUND = 30  # records shown above the one a link points at (the rest of its session)
TITLE_CHARS = 160
DETAIL_CHARS = 1200
SORT_WORDS = (("read", "read"), ("edit", "edit"), ("test", "test run"), ("other", "other call"))


@value_type(frozen=True)
class StoryLine:
    """One event: a prompt, an answer, a tool call, a note, a fact change..."""

    kind: str  # prompt, answer, call, error, note, fact, task, file, compaction
    ts: float
    title: str
    detail: str  # what is folded under the line (a call's input and result, a long text)
    uid: str  # the record it stands for (the LOG entry of a call, when there is one)
    uids: tuple[str, ...]  # every record it tells
    badge: str  # a call's sort (read, edit, test, other), an entry's type, a layer
    session: str | None = None
    failed: bool = False
    folded: bool = False  # a successful call or bookkeeping: folded with its neighbours
    source: str = ""

    @property
    def time(self) -> str:
        return iso(self.ts)


@value_type(frozen=True)
class StoryPart:
    """Lines shown as they are, or a run of folded lines under one summary."""

    lines: tuple[StoryLine, ...]
    folded: bool = False
    summary: str = ""

    def holds(self, uid: str | None) -> bool:
        """True when one of its lines tells the record `uid`."""
        return uid is not None and any(uid in line.uids for line in self.lines)


@value_type(frozen=True)
class StoryGroup:
    """The lines of one session (or of no session), oldest first, with its heading."""

    session: str | None
    title: str
    start: float
    end: float
    lines: tuple[StoryLine, ...]
    goal: str = ""
    outcome: str = ""
    counts: str = ""
    messages: int = 0  # in the whole session (its transcript), not only on this page

    @property
    def parts(self) -> list[StoryPart]:
        out: list[StoryPart] = []
        run: list[StoryLine] = []
        for line in (*self.lines, None):
            if line is not None and line.folded:
                run.append(line)
                continue
            if run:
                out.append(StoryPart(tuple(run), True, calls_summary(run)))
                run = []
            if line is not None:
                out.append(StoryPart((line,)))
        return out


@value_type(frozen=True)
class Story:
    groups: tuple[StoryGroup, ...]
    next: str | None  # cursor of the older page
    newer: str | None  # where this page starts, for `tell(newer=...)`; None at the top
    records: int  # timeline records this page tells
    at: str | None = None  # the uid the page was opened at, when it was

    @property
    def lines(self) -> list[StoryLine]:
        return [line for g in self.groups for line in g.lines]


def tell(
    store: Store,
    agent: str,
    *,
    kinds: tuple[str, ...] | list[str] = (),
    since: float | str | None = None,
    until: float | str | None = None,
    before: str | None = None,
    newer: str | None = None,
    at: str | None = None,
    limit: int = RECORDS,
) -> Story:
    """A page of `agent`'s story, newest session first (every kind when `kinds` is empty).

    `before` is the `next` of the older page's predecessor; `newer` the `newer` of a page:
    the page above it (found when asked for, so a page costs no look upwards); `at` a
    record's uid: the page then starts a few records above it, so the record is seen among
    its neighbours.

    Raises:
        MalformedInput: an unknown kind or a bad cursor. NotFound: `at` names no record of
        `agent` this principal may read.
    """
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise MalformedInput(f"unknown kind {unknown[0]!r}; kinds are {', '.join(KINDS)}")
    chosen = tuple(kinds) or tuple(KINDS)
    types = tuple(dict.fromkeys(t for k in chosen for t in KINDS[k][0]))
    shown = {kind for k in chosen for kind in KINDS[k][1]}
    window: dict[str, Any] = {"types": types, "since": since, "until": until}
    if at is not None:
        here = position_of(store, agent, at)
        before = newer_cursor(store, agent, here, AROUND, **window) or here
    elif newer is not None:
        up = _start_above(store, agent, newer, limit, **window)
        if up is None:
            newer = None  # nothing above the page starting there: the top page
        else:
            before = up or None  # "": the page above is the top one
    if newer is not None:
        # The page just above the one starting at `newer`: every record from `before` down
        # to `newer` (fact changes and compactions between come along), and none below it:
        # those are on the page the person came from.
        page = timeline(store, agent, limit=MAX_PAGE, before=before, **window)
        records, after = _whole_events(store, agent, page, **window)
        kept = [r for r in records if at_or_above(r, newer)]
        if len(kept) < len(records):
            records, after = kept, newer
    else:
        page = timeline(store, agent, limit=limit, before=before, **window)
        records, after = _whole_events(store, agent, page, **window)
    lines = [
        line
        for line in lines_of(records)
        if line.kind in shown or ("errors" in chosen and line.failed)
    ]
    groups = _headed(store, agent, _grouped(lines))
    return Story(tuple(groups), after, before, len(records), at)


# -- records -> lines --------------------------------------------------------------------
def _entry(item: TimelineItem) -> LogEntry:
    meta = dict(item.meta or {})
    entry_type = str(meta.pop("entry_type", None) or item.kind or "")
    entry_id = str(meta.pop("entry_id", None) or item.uid)
    return LogEntry(entry_id, iso(item.ts), entry_type, item.text, meta)


def _session_of(item: TimelineItem) -> str | None:
    if item.layer == "session":
        return item.thread
    meta = item.meta or {}
    sid = meta.get("session") or meta.get("sessionId")
    return sid if isinstance(sid, str) and sid else None


def _role(item: TimelineItem) -> str:
    """What one record is, before records of one event are joined."""
    if item.layer in ("log", "archive") and item.meta is not None:
        e = _entry(item)
        if is_bookkeeping(e):
            return "bookkeeping"
        if e.entry_type == "TOOL_USE":
            return "call" if is_trace(e) else "note"  # a hand-written one says what it says
        if e.entry_type == "ERROR":
            return "call" if (item.meta or {}).get("tool") else "error"
        if e.entry_type == "USER_FEEDBACK":
            return "prompt"
        if is_final_response(e):
            return "answer"
        return "note"
    if item.layer == "session":
        role = item.kind or ""
        if role in ("tool_call", "tool_use", "tool_result") or TRANSCRIPT_TOOL.match(item.text):
            return "call"
        return {"user": "prompt", "assistant": "answer"}.get(role, "note")
    return {
        "fact": "fact",
        "task": "task",
        "compaction": "compaction",
    }.get(item.type, "file")


def _said(item: TimelineItem, role: str) -> str:
    """What a prompt or an answer says, as the LOG entry and the message both say it."""
    text = final_text(_entry(item)) if item.layer != "session" and role == "answer" else item.text
    return " ".join(text.split())[:200].lower()


def _hit(item: TimelineItem) -> Hit:
    meta: dict[str, Any] = dict(item.meta or {})
    if item.layer != "session":
        meta = {"metadata": meta}
    return Hit(
        item.uid, item.layer, 0.0, item.title, item.text, "", item.ts, item.source,
        kind=item.kind, meta=meta,
    )  # fmt: skip


def lines_of(items: tuple[TimelineItem, ...] | list[TimelineItem]) -> list[StoryLine]:
    """The records of a timeline page as lines, each event once, newest first."""
    roles = [_role(i) for i in items]
    joined = _events(items, roles)
    out: list[StoryLine] = []
    done: set[int] = set()
    for n in range(len(items)):
        if n in done:
            continue
        members = joined.get(n, [n])
        done.update(members)
        out.append(_line([items[m] for m in members], roles[n]))
    return out


def _events(items: Sequence[TimelineItem], roles: list[str]) -> dict[int, list[int]]:
    """Position -> the positions of the records of its event (the records of one tool call,
    a prompt's or answer's LOG entry and message), for records that are not alone."""
    clues = []
    for n, (item, role) in enumerate(zip(items, roles, strict=True)):
        if role == "call":
            signal = "error" if item.kind == "ERROR" else "tool"
            c = clues_of(n, _hit(item), signal)
            if c is not None:
                clues.append(c)
    joined: dict[int, list[int]] = {}
    for members in group_calls(clues):
        for m in members:
            joined[m] = members
    said: dict[tuple[str | None, str, str], list[int]] = {}
    for n, (item, role) in enumerate(zip(items, roles, strict=True)):
        if role in ("prompt", "answer"):
            said.setdefault((_session_of(item), role, _said(item, role)), []).append(n)
    for members in said.values():
        logged = [m for m in members if items[m].layer != "session"]
        told = [m for m in members if items[m].layer == "session"]
        for a, b in zip(logged, told, strict=False):  # one LOG entry, one message: one line
            joined[a] = joined[b] = [a, b]
    return joined


def _whole_events(
    store: Store, agent: str, page: TimelinePage, **window: Any
) -> tuple[list[TimelineItem], str | None]:
    """The page's records and its `next` cursor, moved past the records just below the cut
    that belong to an event on the page (a tool call's tool_use, older than its result and
    LOG entry): a page never splits an event, so the next one never repeats half of it."""
    items = list(page.items)
    if page.next is None:
        return items, None
    look = LOOKAHEAD
    while True:
        below = timeline(store, agent, before=page.next, limit=look, **window)
        both = items + list(below.items)
        joined = _events(both, [_role(i) for i in both])
        # Up to the lowest record of an event the page holds (records of other events
        # between come along: records written in one millisecond may be indexed in another
        # order).
        taken, grew = 0, True
        while grew:
            grew = False
            for n in range(len(items) + taken, len(both)):
                if any(m < len(items) + taken for m in joined.get(n, [])):
                    taken, grew = n - len(items) + 1, True
        # Taken to the last record read: the event may go on below them (many records of
        # one millisecond between its records), so read further.
        if taken < len(below.items) or below.next is None or look == MAX_PAGE:
            break
        look = min(2 * look, MAX_PAGE)
    if not taken:
        return items, page.next
    items += below.items[:taken]
    rest = taken < len(below.items) or below.next is not None
    return items, cursor_of(items[-1]) if rest else None


def _start_above(store: Store, agent: str, newer: str, limit: int, **window: Any) -> str | None:
    """Where the page just above the one `newer` starts begins: `limit` records up, moved
    past the records just above them that belong to an event they hold (a call's result
    and LOG entry, newer than its tool_use), so that page never splits an event at its top
    either. "" when that is the top page (nothing newer remains), None when nothing is
    newer than `newer` at all."""
    wanted = limit + LOOKAHEAD
    while True:
        up = newer_items(store, agent, newer, wanted, **window)  # oldest first
        if not up:
            return None
        joined = _events(up, [_role(i) for i in up])
        taken, grew = min(limit, len(up)), True
        while grew:
            grew = False
            for n in range(taken, len(up)):
                if any(m < taken for m in joined.get(n, [])):
                    taken, grew = n + 1, True
        # Taken to the last record read: the event may go on above them, so read further.
        if taken < len(up) or len(up) < wanted:
            break
        wanted *= 2
    return "" if taken == len(up) < wanted else above(up[taken - 1])


def _line(records: list[TimelineItem], role: str) -> StoryLine:
    uids = tuple(r.uid for r in records)
    first = min(records, key=lambda r: r.ts)
    logged = next((r for r in records if r.layer != "session"), None)
    main = logged or first
    session = next((s for s in map(_session_of, records) if s), None)
    base = StoryLine(role, first.ts, "", "", main.uid, uids, "", session, source=main.source)
    if role == "call":
        return _call_line(records, logged, base)
    if role in ("prompt", "answer", "note", "error", "bookkeeping"):
        entry = _entry(logged) if logged is not None and logged.meta is not None else None
        text = final_text(entry) if entry is not None and role == "answer" else main.text
        badge = {"prompt": "you asked", "answer": "answer"}.get(role) or (
            entry.entry_type.lower() if entry is not None else (main.kind or main.layer)
        )
        kind = "note" if role == "bookkeeping" else role
        title = one_line(text, TITLE_CHARS) or main.title
        detail = text if len(" ".join(text.split())) > TITLE_CHARS else ""
        folded = role == "bookkeeping"
        return replace(base, kind=kind, title=title, detail=detail, badge=badge, folded=folded)
    title = main.title
    if role == "fact":  # "editor = helix", "editor forgotten" (the journal's set and forget)
        value = main.text.rsplit("\n\n(", 1)[0]
        title = f"{main.title} forgotten" if main.kind == "forget" else f"{main.title} = {value}"
    if role == "task":  # "TASK-003: Release notes for 1.4"
        said = next((x.strip() for x in main.text.splitlines() if x.strip()), "")
        title = f"{main.title}: {said}" if said and said != main.title else main.title
    return replace(
        base, ts=main.ts, title=one_line(title, TITLE_CHARS), detail=main.text, badge=main.type
    )


def _call_line(
    records: list[TimelineItem], logged: TimelineItem | None, base: StoryLine
) -> StoryLine:
    call = next((r for r in records if r.layer == "session" and r.kind != "tool_result"), None)
    result = next((r for r in records if r.layer == "session" and r.kind == "tool_result"), None)
    meta = dict((logged.meta if logged is not None else None) or {})
    name = meta.get("tool") or ((call.meta or {}).get("name") if call is not None else None)
    args = meta.get("args")
    if args is None and call is not None:
        args = (call.meta or {}).get("input")
    if name is None and call is not None:  # an earlier capture: "[tool_use Read] {...}"
        m = TRANSCRIPT_TOOL.match(call.text)
        name = (m.group(1) or "").strip() if m else None
    entry = LogEntry(
        "", iso(base.ts), "ERROR" if logged is not None and logged.kind == "ERROR" else "TOOL_USE",
        logged.text if logged is not None else "",
        {"tool": name or "tool", "args": args if isinstance(args, dict) else {}},
    )  # fmt: skip
    outcome = meta.get("outcome")
    said = result.text if result is not None else ""
    failed = entry.entry_type == "ERROR" or outcome == "error" or said.lower().startswith("error")
    what = target(entry)
    if isinstance(args, dict) and isinstance(args.get("pattern"), str) and args.get("path"):
        what = f"{args['pattern']} in {args['path']}"  # Grep(pattern, path): what, then where
    title = f"{name or 'tool'} {one_line(what, 100)}".strip()
    if failed:
        why = meta.get("error") or (said.removeprefix("error:").strip() if said else "")
        why = why or (logged.text if logged is not None else "")
        title += f": failed: {gist(str(why), 100)}" if why else ": failed"
    parts = []
    if args:
        parts.append("input: " + json.dumps(args, ensure_ascii=False)[:DETAIL_CHARS])
    if said:
        parts.append("result: " + said[:DETAIL_CHARS])
    elif logged is not None:
        parts.append(logged.text[:DETAIL_CHARS])
    sort = kind_of_call(entry)
    return replace(
        base, title=title, detail="\n".join(parts), badge=sort, failed=failed, folded=not failed
    )


def calls_summary(lines: list[StoryLine] | tuple[StoryLine, ...]) -> str:
    """'3 tool calls: 1 read, 1 edit, 1 test run' (bookkeeping told apart)."""
    calls = [x for x in lines if x.kind == "call"]
    other = len(lines) - len(calls)
    said = []
    if calls:
        word = "tool call" if len(calls) == 1 else "tool calls"
        said.append(f"{len(calls)} {word}: {count_calls(calls)}")
    if other:
        said.append(f"{other} bookkeeping {'entry' if other == 1 else 'entries'}")
    return "; ".join(said)


def count_calls(lines: list[StoryLine] | tuple[StoryLine, ...]) -> str:
    """'2 reads, 1 edit, 2 test runs (1 failed)' over the call lines among `lines`."""
    parts = []
    for sort, word in SORT_WORDS:
        these = [x for x in lines if x.kind == "call" and x.badge == sort]
        if these:
            bad = sum(x.failed for x in these)
            noun = word if len(these) == 1 else word + "s"
            parts.append(f"{len(these)} {noun}" + (f" ({bad} failed)" if bad else ""))
    return ", ".join(parts)


# -- lines -> sessions -------------------------------------------------------------------
def _grouped(lines: list[StoryLine]) -> list[list[StoryLine]]:
    """Lines by session, newest group first, each oldest first (see module doc).

    `lines` come newest first, as the timeline pages them (ties in time broken by their
    place in the file): reversed before the stable sort, two events of one millisecond
    keep the order they happened in."""
    groups: list[list[StoryLine]] = []
    pending: list[StoryLine] = []
    for line in sorted(reversed(lines), key=lambda x: x.ts):
        if line.session is None:
            pending.append(line)
            continue
        current = groups[-1] if groups else None
        if current is not None and current[-1].session == line.session:
            current += [*pending, line]
        else:
            if pending:
                groups.append(pending)
            groups.append([line])
        pending = []
    if pending:
        groups.append(pending)
    return groups[::-1]


def _goals(prompts: list[StoryLine], most: int = 3) -> list[str]:
    """The user's goals among a group's first prompts (`statements.goal_of`), at most `most`."""
    goals: list[str] = []
    for x in prompts[: 2 * most]:
        goal = goal_of(x.detail or x.title)
        if goal and goal not in goals:
            goals.append(goal)
        if len(goals) == most:
            break
    return goals


def _headed(store: Store, agent: str, groups: list[list[StoryLine]]) -> list[StoryGroup]:
    ids = {g[-1].session for g in groups if g[-1].session}
    told = store.agent(agent).sessions.transcripts(ids) if ids else {}
    out = []
    for lines in groups:
        sid = next((x.session for x in lines if x.session), None)
        t = told.get(sid) if sid else None
        prompts = [x for x in lines if x.kind == "prompt"]
        answers = [x for x in lines if x.kind == "answer"]
        goals = _goals(prompts)
        first = (t.first_prompt if t else None) or (prompts[0].title if prompts else None)
        title = "Outside any session" if sid is None else (first or f"Session {sid[:8]}")
        goal = " / then: ".join(one_line(g, 120) for g in goals[:3])
        if goal and first and " ".join(goal.split()).lower() in first.lower():
            goal = ""  # the title says it
        outcome = answers[-1].title if answers else ((t.last_answer or "") if t else "")
        start = t.start if t is not None and t.start is not None else lines[0].ts
        end = t.end if t is not None and t.end is not None else lines[-1].ts
        out.append(
            StoryGroup(
                sid,
                title,
                min(start, lines[0].ts),
                max(end, lines[-1].ts),
                tuple(lines),
                goal=goal,
                outcome=one_line(outcome.removeprefix("Final response:").strip(), 200),
                counts=count_calls(lines),
                messages=t.messages if t else 0,
            )
        )
    return out


__all__ = [
    "KINDS",
    "Story",
    "StoryGroup",
    "StoryLine",
    "StoryPart",
    "calls_summary",
    "count_calls",
    "lines_of",
    "tell",
]
