"""What LOG.md says happened, told by meaning: sessions, goals, outcomes, counts, open errors.

LOG.md holds three sorts of entries. Tool traces are what the hooks, `AgentLoop` and the
MCP auto-log write for every tool call (`loop.describe_tool`: metadata `tool` and
`outcome`, text like `Read(file_path="a.py") -> ok, 120 chars`), and TOOL_USE entries an
agent writes by hand in the same shape: they are counted, never shown. Bookkeeping (the capture notices earlier versions wrote, "stop hook: captured 26
new message(s) of session <uuid>", and anything tagged `bookkeeping`) is dropped.
Everything else is meaning and is kept: the user's prompts, the final responses, the
agent's own THOUGHT entries and hand-written entries, errors, compaction summaries.

`sessions(entries)` groups the entries by the session they name (metadata `session`; an
entry without one, such as the agent's own `log_activity` note, joins the group of the
entry before it, a user prompt without one starts a turn, and an agent that names
neither gets one group a day) and gives each
group its goals (`statements.goal_of` of its prompts), its outcome (the last final
response), counts of reads, edits and test runs (and failures) and its notes. A turn
that asked to ignore memory ("ignore memory, unrelated: ...", metadata `ignore_memory`)
is an aside: neither its prompt nor its answer is the session's goal or outcome.
`open_errors` (in `lifecycle.resolved`) lists the failures nothing later resolved.
Pure functions over `LogEntry` values.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from memstrata.reading.failure import gist, told
from memstrata.reading.patterns import LazyPattern
from memstrata.reading.tools import TARGET_KEYS, normal_args, tool_class
from memstrata.values import field, value_type

if TYPE_CHECKING:
    from memstrata.model import LogEntry

_TEST_RUN = LazyPattern(
    r"\b(?:pytest|py\.test|unittest|tox|nox|jest|vitest|mocha|rspec|phpunit|ctest|"
    r"(?:npm|pnpm|yarn|bun)(?: run)? test|go test|cargo test|make (?:test|check)|"
    r"mvn test|gradle(?:w)? test|dotnet test)\b"
)
_CAPTURE = LazyPattern(r"^[\w-]+ hook: captured \d+ new message")
BOOKKEEPING = "bookkeeping"
OUTCOME_CHARS = 200
NOTE_CHARS = 300


def one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rsplit(" ", 1)[0] + "…"


_SENTENCE_END = re.compile(r"[.!?](?=\s)")


def clip(text: str, limit: int) -> str:
    """One line of at most `limit` characters that ends where a sentence ends when one
    ends in its first fifth or later ("The app team wants the model this week. …"), else
    at a word; `…` says more was said.

    >>> clip("The app team wants the model this week. Their limits: 20 MB and 300 ms.", 60)
    'The app team wants the model this week. …'
    """
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    ends = [m.end() for m in _SENTENCE_END.finditer(flat, 0, limit - 1)]
    if ends and ends[-1] >= limit // 5:
        return flat[: ends[-1]] + " …"
    return one_line(flat, limit)


# A TOOL_USE entry written in the shape of a call, `Bash(command="pytest") -> ok, ...`,
# whoever wrote it (the harness's `describe_tool`, or an agent imitating it by hand).
_CALL = LazyPattern(r"^\s*([A-Za-z_][\w.:-]*)\((.*?)\)\s*->\s*(\S[^\n]*)?$", re.S)
_PARAM = LazyPattern(r'(\w+)="((?:[^"\\]|\\.)*)"')


def _call(e: LogEntry) -> re.Match[str] | None:
    return _CALL.match(e.content) if e.entry_type == "TOOL_USE" else None


def is_trace(e: LogEntry) -> bool:
    """A tool call as the harness logs it, or in its shape (counted, never shown)."""
    meta = e.metadata or {}
    if e.entry_type != "TOOL_USE":
        return False
    return ("tool" in meta and "outcome" in meta) or _call(e) is not None


def is_bookkeeping(e: LogEntry) -> bool:
    meta = e.metadata or {}
    tags = meta.get("tags")
    if isinstance(tags, list) and BOOKKEEPING in tags:
        return True
    return e.entry_type == "SYSTEM" and (
        bool(_CAPTURE.match(e.content)) or (meta.get("captured") is not None and "event" in meta)
    )


def is_final_response(e: LogEntry) -> bool:
    return (e.metadata or {}).get("event") == "final_response"


def final_text(e: LogEntry) -> str:
    return e.content.removeprefix("Final response:").strip()


def _args(e: LogEntry) -> dict[str, Any]:
    """A call's arguments in one shape whichever client made it (`reading.tools`)."""
    args = (e.metadata or {}).get("args")
    if isinstance(args, dict):
        return normal_args(tool_of(e), args)
    call = _call(e)
    if call is None:
        return {}
    named = dict(_PARAM.findall(call.group(2)))
    return named or ({"args": call.group(2).strip()} if call.group(2).strip() else {})


def call_args(e: LogEntry) -> dict[str, Any]:
    """A tool call's arguments: as the harness logged them, or read from `tool(a="x")`."""
    return _args(e)


def target(e: LogEntry) -> str:
    """What a tool call acted on: its command (a test run of another file is another
    target), or its file, path or pattern."""
    args = _args(e)
    command = args.get("command")
    if isinstance(command, str) and command.strip():
        return one_line(command, 80)
    for key in TARGET_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


def tool_of(e: LogEntry) -> str | None:
    tool = (e.metadata or {}).get("tool")
    if isinstance(tool, str) and tool:
        return tool
    call = _call(e)
    return call.group(1) if call is not None else None


def kind_of_call(e: LogEntry) -> str:
    """'read', 'edit', 'test' or 'other' for a tool call (a trace or a failed call): by
    the one table of tool names (`reading.tools`: a search counts as a read, a run of a
    test runner as a test run), whichever client named the tool."""
    args = _args(e)
    kind = tool_class(tool_of(e), args)
    if kind in ("read", "search"):
        return "read"
    if kind == "edit":
        return "edit"
    if kind not in ("run", None):
        return "other"
    command = args.get("command")
    if isinstance(command, str) and _TEST_RUN.search(command):
        return "test"
    return "other"


# What a call logged by hand says of its outcome when it failed: "-> error: lock held",
# "-> apply staging failed: AccessDenied", "-> 214 errors: role does not exist" (an MCP
# agent's own words), not "-> ok, 0 failed" or "-> no errors".
_FAILED_SAID = LazyPattern(
    r"^(?:error|failed)|(?<!\b0 )(?<!\bno )(?<!without )(?<!\bzero )\b(?:failed|errors?|denied|refused|timed out|"
    r"exception|panicked)\b",
    re.I,
)


def failed(e: LogEntry) -> bool:
    if e.entry_type == "ERROR" or (e.metadata or {}).get("outcome") == "error":
        return True
    call = _call(e)
    said = (call.group(3) or "") if call is not None else ""
    return "outcome" not in (e.metadata or {}) and bool(_FAILED_SAID.search(said.strip()))


def is_call(e: LogEntry) -> bool:
    """A tool call: a trace, or the ERROR entry a failed call leaves (it names its tool)."""
    return is_trace(e) or (e.entry_type == "ERROR" and tool_of(e) is not None)


@value_type
class Session:
    """One session's (or, without sessions, one turn's) entries, told by meaning."""

    key: str
    start: str
    end: str
    goals: list[str] = field(default_factory=list)
    asked: list[str] = field(default_factory=list)
    outcome: str = ""
    counts: dict[str, int] = field(default_factory=dict)  # read/edit/test/other
    failures: dict[str, int] = field(default_factory=dict)
    others: dict[str, int] = field(default_factory=dict)  # "other" calls by tool name
    notes: list[LogEntry] = field(default_factory=list)
    failed: list[tuple[LogEntry, str]] = field(default_factory=list)  # failures, what went wrong
    aside: bool = False  # the turn under way asked to ignore memory (an aside)

    def summary(self) -> str:
        def n(word: str, count: int, plural: str | None = None) -> str:
            return f"{count} {word if count == 1 else plural or word + 's'}"

        parts = []
        names = (("read", "read"), ("edit", "edit"), ("test", "test run"), ("other", "other call"))
        for key, word in names:
            count = self.counts.get(key, 0)
            if count:
                bad = self.failures.get(key, 0)
                said = [f"{bad} failed"] if bad else []
                if key == "other":
                    ranked = sorted(self.others.items(), key=lambda kv: -kv[1])
                    said.append(", ".join(t + (f" ×{c}" if c > 1 else "") for t, c in ranked[:4]))
                parts.append(n(word, count) + (f" ({'; '.join(said)})" if said else ""))
        return ", ".join(parts)


def _session_key(e: LogEntry, current: str) -> str:
    sid = (e.metadata or {}).get("session")
    return f"s:{sid}" if isinstance(sid, str) and sid else current


def echoed(entries: Sequence[LogEntry], i: int) -> bool:
    """An ERROR entry repeating the failed TOOL_USE just before it (stores written before
    a failed tool became one ERROR entry; an agent logging a failure twice): counted and
    shown once, as the trace, with the ERROR's text as what went wrong."""
    e = entries[i]
    if e.entry_type != "ERROR" or i == 0:
        return False
    before = entries[i - 1]
    ids = [(x.metadata or {}).get("tool_use_id") for x in (e, before)]
    return (
        is_trace(before)
        and failed(before)
        and tool_of(e) in (None, tool_of(before))  # an agent's own ERROR names no tool
        and (None in ids or ids[0] == ids[1])
    )


def echo_detail(entries: Sequence[LogEntry], i: int) -> str:
    """What the ERROR echoing entry `i` (a failed call) says went wrong, if there is one."""
    if i + 1 < len(entries) and echoed(entries, i + 1):
        echo = entries[i + 1]
        return str((echo.metadata or {}).get("error") or echo.content)
    return ""


def session_keys(entries: Sequence[LogEntry]) -> list[str | None]:
    """Each entry's session group (see module docstring; None for an entry no group
    holds: bookkeeping, a compaction summary, an echoed error), in the entries' order."""
    keys: list[str | None] = []
    starts: dict[str, str] = {}  # a group -> the time of its first entry
    last = "t:0"  # an entry naming no session belongs with the one before it
    for i, e in enumerate(entries):
        if is_bookkeeping(e) or (e.metadata or {}).get("compacted") or echoed(entries, i):
            keys.append(None)
            continue
        named = (e.metadata or {}).get("session")
        if (
            not named
            and (
                e.entry_type == "USER_FEEDBACK"  # a turn of a loop without sessions starts here
                or (not last.startswith("s:") and last in starts and starts[last][:10] < e.ts[:10])
            )
        ):
            last = f"t:{i}"  # and an agent without sessions or turns: one group a day
        last = _session_key(e, last)
        starts.setdefault(last, e.ts)
        keys.append(last)
    return keys


def sessions(entries: Sequence[LogEntry]) -> list[Session]:
    """The entries grouped by session (see module docstring), oldest group first."""
    groups: dict[str, Session] = {}
    order: list[str] = []
    before: str | None = None  # the last prompt's goal (or words): what "it" points to
    for i, (e, key) in enumerate(zip(entries, session_keys(entries), strict=True)):
        if key is None:
            continue
        g = groups.get(key)
        if g is None:
            g = groups[key] = Session(key, e.ts, e.ts)
            order.append(key)
        g.end = e.ts
        if is_call(e):
            kind = kind_of_call(e)
            g.counts[kind] = g.counts.get(kind, 0) + 1
            if kind == "other":
                name = one_line(tool_of(e) or "tool", 40)
                g.others[name] = g.others.get(name, 0) + 1
            if failed(e):
                g.failures[kind] = g.failures.get(kind, 0) + 1
                g.failed.append((e, echo_detail(entries, i)))
        elif e.entry_type == "USER_FEEDBACK":
            g.aside = bool((e.metadata or {}).get("ignore_memory"))
            if g.aside:
                continue  # "ignore memory, unrelated: ...": not what the session was about
            from memstrata.lifecycle.statements import goal_of, is_continuation  # (start-up)

            goal = goal_of(e.content, before)
            if goal and goal not in g.goals:
                g.goals.append(goal)
            elif goal is None and not is_continuation(e.content) and e.content.strip():
                g.asked.append(clip(e.content, 160))
            if goal or not is_continuation(e.content):
                before = goal or e.content
        elif is_final_response(e):
            if not g.aside:  # the answer to an aside is not the session's outcome
                g.outcome = clip(final_text(e), OUTCOME_CHARS)
        elif e.entry_type == "ERROR":
            g.failed.append((e, ""))  # told once: an open error, or what the session ran into
        elif (e.metadata or {}).get("flush") and (e.metadata or {}).get("sessionId"):
            continue  # a transcript compaction's record: its summary is the transcript's
        else:
            g.notes.append(e)
    return [groups[k] for k in order]


ERROR_CHARS = 200  # an open error's telling line in the context (both ends kept past it)


def failure_line(e: LogEntry, detail: str = "") -> str:
    """'Bash (pytest -q) failed: OSError: ...' for a failed call; an error's own text."""
    tool, where = tool_of(e), target(e)
    said = (e.metadata or {}).get("error") or detail
    if tool is None:  # an output pasted as an error tells its failure, not its banner
        text = e.content.strip()
        return told(text, 240) if "\n" in text else one_line(text, 240)
    what = f"{tool} ({one_line(where, 60)})" if where else tool
    return f"{what} failed" + (f": {gist(str(said), ERROR_CHARS)}" if said else "")
