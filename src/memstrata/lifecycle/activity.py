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
`open_errors(entries)` lists the failures nothing later resolved: a failed tool is
resolved by a later successful call of the same tool on the same target (the same
command, file or path, or the failed command run again with more arguments, not as a
dry run, alone or in the `&&` chain of a shell line that succeeded: `lifecycle.shell`),
another error by a later final response or a passing test run; either by
the agent's note, before the user's next prompt, that it fixed it, naming something of
it (`noted_fixed`);
repeats of one failure are one line with a count. Pure functions over `LogEntry` values.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from memstrata.lifecycle.shell import succeeded_parts
from memstrata.reading.patterns import FIXED_SAID, LazyPattern
from memstrata.values import field, value_type

if TYPE_CHECKING:
    from memstrata.model import LogEntry

READ_TOOLS = frozenset(
    {"Read", "Grep", "Glob", "LS", "NotebookRead", "WebFetch", "WebSearch", "read_file"}
)
EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit", "write_file", "edit_file"})
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
    args = (e.metadata or {}).get("args")
    if isinstance(args, dict):
        return args
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
    for key in ("file_path", "path", "notebook_path", "pattern", "url", "query", "args"):
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
    """'read', 'edit', 'test' or 'other' for a tool call (a trace or a failed call)."""
    tool = tool_of(e) or ""
    if tool in READ_TOOLS:
        return "read"
    if tool in EDIT_TOOLS:
        return "edit"
    command = _args(e).get("command")
    if isinstance(command, str) and _TEST_RUN.search(command):
        return "test"
    return "other"


def failed(e: LogEntry) -> bool:
    if e.entry_type == "ERROR" or (e.metadata or {}).get("outcome") == "error":
        return True
    call = _call(e)
    said = (call.group(3) or "") if call is not None else ""
    return "outcome" not in (e.metadata or {}) and said.lower().startswith(("error", "failed"))


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


def _echo_detail(entries: Sequence[LogEntry], i: int) -> str:
    """What the ERROR echoing entry `i` (a failed call) says went wrong, if there is one."""
    if i + 1 < len(entries) and echoed(entries, i + 1):
        echo = entries[i + 1]
        return str((echo.metadata or {}).get("error") or echo.content)
    return ""


def sessions(entries: Sequence[LogEntry]) -> list[Session]:
    """The entries grouped by session (see module docstring), oldest group first."""
    groups: dict[str, Session] = {}
    order: list[str] = []
    last = "t:0"  # an entry naming no session belongs with the one before it
    before: str | None = None  # the last prompt's goal (or words): what "it" points to
    for i, e in enumerate(entries):
        if is_bookkeeping(e) or (e.metadata or {}).get("compacted") or echoed(entries, i):
            continue
        named = (e.metadata or {}).get("session")
        if (
            not named
            and (
                e.entry_type == "USER_FEEDBACK"  # a turn of a loop without sessions starts here
                or (
                    not last.startswith("s:")
                    and last in groups
                    and groups[last].start[:10] < e.ts[:10]
                )
            )
        ):
            last = f"t:{i}"  # and an agent without sessions or turns: one group a day
        key = last = _session_key(e, last)
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
                g.failed.append((e, _echo_detail(entries, i)))
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


# Options that make a run of a command a look, not the work: a later dry run succeeding
# does not mean the failed command would now succeed.
_LOOK_ONLY = frozenset(
    {"--check", "--dry-run", "--dryrun", "-n", "--help", "-h", "--version", "--list", "--plan"}
)


def _command(e: LogEntry) -> list[str] | None:
    """A call's command line (or, for a call logged by hand as `tool(a, b)`, its argument
    list) as words; None for a call on a file, path or URL."""
    args = _args(e)
    command, listed = args.get("command"), args.get("args")
    if isinstance(command, str) and command.strip():
        return command.split()
    if isinstance(listed, str) and listed.strip() and len(args) == 1:
        return [w for w in re.split(r"[\s,]+", listed) if w]
    return None


def _extends(later: LogEntry, error: LogEntry) -> bool:
    """`later` runs the failed command again with more arguments, not as a dry run
    (`fetch.py cnn14` failed on a dead link, `fetch.py cnn14 --url <new link>` worked; an
    agent's own `fetch_url(api/x) -> error 429`, then `fetch_url(api/x, retry) -> ok`)."""
    failed_words, later_words = _command(error), _command(later)
    return failed_words is not None and later_words is not None and _more(later_words, failed_words)


def _more(later_words: list[str], failed_words: list[str]) -> bool:
    if len(later_words) <= len(failed_words):
        return False
    added = later_words[len(failed_words) :]
    return later_words[: len(failed_words)] == failed_words and not _LOOK_ONLY & set(added)


def _stem(words: list[str]) -> list[str]:
    """A command line up to its first option (`-m module` kept): what it runs."""
    out: list[str] = []
    for i, w in enumerate(words):
        if w.startswith("-") and not (w == "-m" and i + 1 < len(words)):
            break
        out.append(w)
    return out


def _same_run(later: LogEntry, error: LogEntry) -> bool:
    """`later` runs what failed again with other options, not as a dry run (pipeline-
    harvest: `python -m harvest.ingest --day 2026-05-02` was refused by the SFTP server;
    once the key was added, `python -m harvest.ingest --since 2026-04-01` downloaded 412
    files). A program alone (`curl -s URL`) is not what ran: its target says that."""
    failed_words, later_words = _command(error), _command(later)
    if failed_words is None or later_words is None or "command" not in _args(error):
        return False
    return _rerun(later_words, failed_words)


def _rerun(later_words: list[str], failed_words: list[str]) -> bool:
    stem = _stem(failed_words)
    return (
        len(stem) >= 2
        and len(stem) < len(failed_words)
        and _stem(later_words) == stem
        and not _LOOK_ONLY & set(later_words)
    )


def _listed(e: LogEntry) -> list[str] | None:
    """A non-command call's arguments in order (a listed `tool(a, b)` or named ones)."""
    args = _args(e)
    if "command" in args:
        return None
    listed = args.get("args")
    if isinstance(listed, str) and len(args) == 1:
        return [w.strip() for w in listed.split(",") if w.strip()]
    return [f"{k}={v}" for k, v in sorted(args.items())] or None


def _corrects(later: LogEntry, error: LogEntry) -> bool:
    """`later` is the failed call again with one argument corrected (research-scooters:
    `zotero_export(scooters, chicago-note-bibliography) -> error 500`, then `zotero_export(
    scooters, chicago-fullnote-bibliography) -> ok`): the same arguments but one, and that
    one spelled alike (another file or page is another target, not a correction)."""
    was, now = _listed(error), _listed(later)
    if was is None or now is None or len(was) != len(now) or len(was) < 2:
        return False
    changed = [(a, b) for a, b in zip(was, now, strict=True) if a != b]
    if len(changed) != 1:
        return False
    from difflib import SequenceMatcher  # only when a failed call was retried (start-up)

    return SequenceMatcher(None, *changed[0]).ratio() >= 0.75


def _resolves(later: LogEntry, error: LogEntry) -> bool:
    if tool_of(error) is None:  # an error of the work itself: a turn ended, or tests pass
        return is_final_response(later) or (
            is_trace(later) and not failed(later) and kind_of_call(later) == "test"
        )
    return (
        is_trace(later)
        and not failed(later)
        and tool_of(later) == tool_of(error)
        and (
            target(later) == target(error)
            or _extends(later, error)
            or _corrects(later, error)
            or (kind_of_call(error) != "test" and _same_run(later, error))
            or _chained(later, error)
        )
    )


# A variable a failure says is missing ("MOTHERDUCK_TOKEN is not set", "missing
# environment variable: STRIPE_KEY"), and a command line that sets it.
_UNSET = LazyPattern(
    r"\b([A-Z][A-Z0-9]*_[A-Z0-9_]+)\b(?: (?:is|was|has not been|has never been))? "
    r"(?:not set|unset|missing|empty|not defined|undefined)\b|\bmissing (?:required )?"
    r"(?:environment variable|env var|secret|variable)s?:? `?\$?([A-Z][A-Z0-9]*_[A-Z0-9_]+)"
)


def _supplies(later: LogEntry, error: LogEntry, failure: str) -> bool:
    """`later`, a call of the same tool that succeeded, sets the variable the failure
    (its text: `failure`) said was not set (analytics-kestrel: the Evidence build failed
    with "MOTHERDUCK_TOKEN is not set in the build environment"; `netlify env:set
    MOTHERDUCK_TOKEN *** && netlify deploy --prod`, logged by hand as `shell(netlify deploy
    with MOTHERDUCK_TOKEN) -> ok`, then worked): `NAME=`, or `set`, `export`, `env:set`,
    `secret set`, `with`... `NAME`."""
    if not (is_trace(later) and not failed(later) and tool_of(later) == tool_of(error)):
        return False
    names = {a or b for a, b in _UNSET.findall(failure)}
    args = _args(later)
    command = args.get("command") or args.get("args")
    return isinstance(command, str) and any(
        re.search(rf"\b{n}=|\b(?:set|export|add|put|with)\s+(?:-\S+\s+)*\$?{n}\b", command)
        for n in names
    )


def _chained(later: LogEntry, error: LogEntry) -> bool:
    """`later`, a shell line that succeeded, ran the failed command in its `&&` chain,
    again or with more arguments (support-marlin: `go get golang.org/x/crypto@v0.27.0`
    needed Go 1.23; `go mod edit -go=1.23 && go get golang.org/x/crypto@v0.27.0` worked).
    Only a part whose success the line's shows counts (`succeeded_parts`)."""
    failed_words, command = _command(error), _args(later).get("command")
    if failed_words is None or not isinstance(command, str) or "command" not in _args(error):
        return False
    parts = succeeded_parts(command) if any(c in command for c in "&;|\n") else []
    rerun = kind_of_call(error) != "test"
    return any(
        p == failed_words or _more(p, failed_words) or (rerun and _rerun(p, failed_words))
        for p in parts
    )


_GIST = LazyPattern(
    r"\b[A-Z]\w*(?:Error|Exception|Denied|Refused)\b|\bFAILED\b|\berror:|\bfatal:|^E\s{2,}|"
    r"\bHTTP \d{3}\b|\bpermission denied\b|\bnot found\b",
    re.I,
)
_EXIT = LazyPattern(r"^(?:exit (?:code|status)|returned|exited with)\s*:?\s*-?\d+\.?$", re.I)


ERROR_CHARS = 200  # an open error's telling line in the context (both ends kept past it)


def gist(detail: str, limit: int = 160) -> str:
    """The telling line of an error's text (the exception, the FAILED line, the HTTP status),
    one line; a bare "Exit code 1" only when nothing else is said."""
    lines = [x.strip() for x in detail.splitlines() if x.strip()]
    said = [x for x in lines if not _EXIT.match(x)] or lines
    told = next((x for x in said if _GIST.search(x)), said[0] if said else "")
    return ends(told, limit)


def ends(text: str, limit: int) -> str:
    """One line of at most `limit` characters keeping both ends of a long one: an error
    line states where it failed first and its innermost cause last (`FAILED! => {... 401:
    unauthorized: key restricted to bucket web}`), so the middle goes. Pure.

    >>> ends("fatal: host FAILED! msg: init failed: create failed: 401: key restricted to web", 50)
    'fatal: host … failed: 401: key restricted to web'
    """
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    head = flat[: limit // 3].rsplit(" ", 1)[0]
    tail = flat[-(limit - len(head) - 3) :]
    tail = tail.split(" ", 1)[1] if " " in tail else tail
    return f"{head} … {tail}"


def failure_line(e: LogEntry, detail: str = "") -> str:
    """'Bash (pytest -q) failed: OSError: ...' for a failed call; an error's own text."""
    tool, where = tool_of(e), target(e)
    said = (e.metadata or {}).get("error") or detail
    if tool is None:
        return one_line(e.content, 240)
    what = f"{tool} ({one_line(where, 60)})" if where else tool
    return f"{what} failed" + (f": {gist(str(said), ERROR_CHARS)}" if said else "")


@value_type(frozen=True)
class OpenError:
    """A failure nothing later resolved, told once however often it happened."""

    entry: LogEntry  # the latest occurrence
    count: int
    detail: str = ""  # what went wrong, when the entry itself does not say
    ids: tuple[str, ...] = ()  # every occurrence's entry id

    def line(self) -> str:
        e = self.entry
        text = failure_line(e, self.detail)
        times = f" (×{self.count})" if self.count > 1 else ""
        return f"- {e.ts[:16].replace('T', ' ')} {text}{times}"


# An agent's note that says it fixed something ("...; fixed with keep rules for ...").
_FIXED = LazyPattern(FIXED_SAID, re.I)
_NAME = LazyPattern(r"[a-z][a-z0-9_]{4,}", re.I)
# Words of any failure report: sharing one says nothing about which failure a note fixed.
_GENERIC_WORDS = (
    "error errors failed failure fails fatal exception exit code command build builds built "
    "could cannot because after before which there their these about while found running "
    "crashed crash launch start started stack trace"
)
_GENERIC = frozenset(_GENERIC_WORDS.split())


def _names(text: str) -> set[str]:
    return {w.lower() for w in _NAME.findall(text)} - _GENERIC


def _is_prompt(e: LogEntry) -> bool:
    return e.entry_type == "USER_FEEDBACK" and (e.metadata or {}).get("event") == "user_intent"


def noted_fixed(note: LogEntry, failure: str) -> bool:
    """`note` is the agent's THOUGHT saying it fixed what `failure` (a failed call's or
    an error's text) reports, naming something of it (mobile-fernway: `adb logcat` showed
    `ClassNotFoundException: org.maplibre.android.maps.MapView`; the agent noted "R8
    stripped the MapLibre classes; fixed with keep rules for org.maplibre.**"). Nothing
    reran the failed call, yet the failure is over."""
    return (
        note.entry_type == "THOUGHT"
        and bool(_FIXED.search(note.content))
        and bool(_names(note.content) & _names(failure))
    )


def open_errors(entries: Sequence[LogEntry]) -> list[OpenError]:
    """Failures nothing later resolved, each once (its latest occurrence and a count)."""
    out: dict[tuple[str | None, str, str], OpenError] = {}
    for i, e in enumerate(entries):
        if not (e.entry_type == "ERROR" or (is_trace(e) and failed(e))) or echoed(entries, i):
            continue
        detail = _echo_detail(entries, i)
        failure = f"{e.content}\n{(e.metadata or {}).get('error') or ''}\n{detail}"
        later = entries[i + 1 :]
        turn = next((k for k, x in enumerate(later) if _is_prompt(x)), len(later))
        if any(_resolves(x, e) or _supplies(x, e, failure) for x in later) or any(
            noted_fixed(x, failure)
            for x in later[:turn]  # noted while handling it
        ):
            continue
        key = (tool_of(e), target(e), "" if tool_of(e) else e.content)
        seen = out.pop(key, None)
        ids = (*(seen.ids if seen else ()), e.id)
        out[key] = OpenError(e, (seen.count if seen else 0) + 1, detail, ids)
    return list(out.values())
