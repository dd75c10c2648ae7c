"""When a failure is over: the open errors of LOG.md, each told once.

`open_errors(entries)` lists the failures nothing later resolved. A failed tool call is
resolved by a later successful call that does what failed again:

    same target     the same tool (or, for a command line, any client's shell:
                    `reading.tools`) on the same command, file or path
    more arguments  the failed command run again with more arguments, not as a dry run,
                    alone or in the `&&` chain of a shell line that succeeded
                    (`lifecycle.shell`); or with one argument corrected
    other flags     the same program on the same words with other options
                    (`terraform plan -generate-config-out` held by a lock, then
                    `terraform plan`; `pg_dump | pg_restore` refused on ownership, then
                    `pg_restore --no-owner --role=app`), not a dry run, not a test run
    a sibling tool  a tool of the same family acting on the same target that is not a
                    look (an MCP agent's `gh_run_view(123) -> failed`, then
                    `gh_run_rerun(123) -> ok`)
    the fix         a later call that sets the variable the failure said was unset

an ERROR naming no tool logged right after a call is that call's failure: a later success
of the same tool in its session or the next closes it (`_retried`). Another error (no
tool) by a later final response or a passing test run; either by the
agent's note that it fixed it (fixed, released, granted, unlocked..., or did the work
another way: "sent it through the list instead"), naming something
of it: before the user's next prompt one shared name is enough, later three
(`noted_fixed`). A session's end bounds the turn too: an MCP agent's prompts never reach
LOG.md, and a note days later sharing a word with an old failure does not close it. Repeats of one failure are one line with a count. Pure functions over
`LogEntry` values.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from memstrata.lifecycle.activity import (
    call_args,
    echo_detail,
    echoed,
    failed,
    failure_line,
    is_final_response,
    is_trace,
    kind_of_call,
    session_keys,
    target,
    tool_of,
)
from memstrata.lifecycle.shell import succeeded_parts
from memstrata.reading.patterns import FIXED_SAID, LazyPattern
from memstrata.reading.tools import tool_class
from memstrata.values import value_type

if TYPE_CHECKING:
    from memstrata.model import LogEntry


# Options that make a run of a command a look, not the work: a later dry run succeeding
# does not mean the failed command would now succeed.
_LOOK_ONLY = frozenset(
    {"--check", "--dry-run", "--dryrun", "-n", "--help", "-h", "--version", "--list", "--plan"}
)


def _command(e: LogEntry) -> list[str] | None:
    """A call's command line (or, for a call logged by hand as `tool(a, b)`, its argument
    list) as words; None for a call on a file, path or URL."""
    args = call_args(e)
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
    if failed_words is None or later_words is None or "command" not in call_args(error):
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
    args = call_args(e)
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
    if not is_trace(later) or failed(later):
        return False
    if not _same_tool(later, error):
        return _sibling(later, error)
    return (
        target(later) == target(error)
        or _extends(later, error)
        or _corrects(later, error)
        or (kind_of_call(error) != "test" and (_same_run(later, error) or _reflagged(later, error)))
        or _chained(later, error)
    )


def _same_tool(later: LogEntry, error: LogEntry) -> bool:
    """The same tool, or two clients' shells (`Bash`, `run_terminal_cmd`, `shell`...):
    a command line is what ran, whichever tool ran it."""
    a, b = tool_of(later), tool_of(error)
    return a == b or (tool_class(a) == "run" and tool_class(b) == "run")


def _reflagged(later: LogEntry, error: LogEntry) -> bool:
    """`later` runs a program of the failed line on no word it did not name, with other
    options (infra-saltmarsh: `terraform plan -generate-config-out` held by a stale
    lock, once released `terraform plan` worked; `pg_dump | pg_restore to staging` failed
    on ownership, `pg_restore --no-owner --role=booking_app` worked). Another file, host
    or subcommand is another run, not this one with other flags."""
    failed_words, later_words = _command(error), _command(later)
    if not failed_words or not later_words or later_words == failed_words:
        return False
    words = [w for w in later_words if not w.startswith("-")]
    return (
        bool(words)
        and words[0] in failed_words
        and set(words) <= set(failed_words)
        and not _LOOK_ONLY & set(later_words)
    )


# The last word of a tool's name that says it only looks (`gh_run_view`, `list_runs`).
_LOOKS = frozenset(
    [
        "view",
        "list",
        "show",
        "get",
        "describe",
        "status",
        "read",
        "logs",
        "log",
        "diff",
        "watch",
        "search",
        "find",
        "ls",
        "cat",
    ]
)


def _family(tool: str | None) -> tuple[str, str] | None:
    """`gh_run_view` -> ("gh_run", "view"): a tool's family and its verb, for names of
    at least two `_`-separated words; None otherwise."""
    words = (tool or "").rsplit("__", 1)[-1].split("_")
    return ("_".join(words[:-1]), words[-1].lower()) if len(words) >= 2 else None


def _sibling(later: LogEntry, error: LogEntry) -> bool:
    """`later` is another tool of the failed one's family that acts, not looks, on the
    same target (infra-saltmarsh, an MCP agent: `gh_run_view(11873402117) -> apply
    failed: AccessDenied`, then `gh_run_rerun(11873402117) -> staging apply ok`)."""
    a, b = _family(tool_of(later)), _family(tool_of(error))
    return (
        a is not None
        and b is not None
        and a[0] == b[0]
        and a[1] not in _LOOKS
        and bool(target(error))
        and target(later) == target(error)
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
    args = call_args(later)
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
    failed_words, command = _command(error), call_args(later).get("command")
    if failed_words is None or not isinstance(command, str) or "command" not in call_args(error):
        return False
    parts = succeeded_parts(command) if any(c in command for c in "&;|\n") else []
    rerun = kind_of_call(error) != "test"
    return any(
        p == failed_words or _more(p, failed_words) or (rerun and _rerun(p, failed_words))
        for p in parts
    )


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
# An agent's note that it ended a failure: "fixed with ...", "Fixed the staging deploy:
# granted ...", "... so we released it with force-unlock": a remedy verb said as done, at
# the head of a clause or after its subject, not an adjective ("at a fixed hour").
_FIXED = LazyPattern(
    FIXED_SAID + r"|(?:^|[.;:!]\s+|,\s+|\b(?:i|we|and|then|was|were|been|has|have|got)\s+)"
    r"(?:fixed|released|granted|unlocked|rotated|reverted|restored|worked around)\b|"
    # the work done another way: "...; sent the call-out through the mailing list instead"
    r"(?:^|[.;:!]\s+|\b(?:i|we|so|and)\s+)(?:sent|used|posted|booked|ran|fetched|took|went "
    r"with|switched to)\b[^.;!?]*\binstead\b",
    re.I,
)
LATER_NAMES = 3  # names a note after the user's next prompt shares with the failure
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


def _turn_end(later: Sequence[LogEntry], keys: Sequence[str | None], own: str | None) -> int:
    """Where the failure's turn ends among `later`: the user's next prompt, or the end of
    its session (an MCP agent's prompts never reach LOG.md: its sessions bound the turn)."""
    return next(
        (
            k
            for k, (x, key) in enumerate(zip(later, keys, strict=True))
            if _is_prompt(x) or (key is not None and key != own)
        ),
        len(later),
    )


def noted_fixed(note: LogEntry, failure: str, names: int = 1) -> bool:
    """`note` is the agent's THOUGHT saying it fixed what `failure` (a failed call's or
    an error's text) reports, naming something of it (mobile-fernway: `adb logcat` showed
    `ClassNotFoundException: org.maplibre.android.maps.MapView`; the agent noted "R8
    stripped the MapLibre classes; fixed with keep rules for org.maplibre.**"). Nothing
    reran the failed call, yet the failure is over."""
    return (
        note.entry_type == "THOUGHT"
        and bool(_FIXED.search(note.content))
        and len(_names(note.content) & _names(failure)) >= names
    )


def _call_of(entries: Sequence[LogEntry], i: int, keys: Sequence[str | None]) -> LogEntry | None:
    """The call an ERROR naming no tool reports: the trace logged just before it in its
    session (an MCP agent logs `portal_book(3 rooms) -> 409 conflict`, then the error's
    text as an ERROR: the call's result says no failure word, the ERROR is its failure)."""
    if not 0 < i < len(entries):
        return None
    e = entries[i]
    if e.entry_type != "ERROR" or tool_of(e) is not None:
        return None
    before = entries[i - 1]
    same = keys[i - 1] is not None and keys[i] in (None, keys[i - 1])
    return before if same and is_trace(before) and not failed(before) else None


def _retried(
    entries: Sequence[LogEntry], i: int, call: LogEntry, keys: Sequence[str | None]
) -> bool:
    """A later call of `call`'s tool succeeded (no ERROR right after it), in the failure's
    session or the next one (events-heronsgate: `eventbrite_api(create event) -> 401`, the
    user reconnected the account, `eventbrite_api(create event) -> draft 8712...`). Later
    than the next session, a success of the tool says nothing of this failure."""
    order = list(dict.fromkeys(k for k in keys if k is not None))
    own = keys[i] if keys[i] is not None else keys[i - 1]
    at = order.index(own) if own is not None and own in order else -1
    bound = set(order[at : at + 2]) if at >= 0 else set()
    for k in range(i + 1, len(entries)):
        x, key = entries[k], keys[k]
        if key is None or key not in bound:
            if key is not None and order.index(key) > at + 1:
                break
            continue
        if (
            is_trace(x)
            and not failed(x)
            and tool_of(x) == tool_of(call)
            and _call_of(entries, k + 1, keys) is not x
        ):
            return True
    return False


def open_errors(entries: Sequence[LogEntry]) -> list[OpenError]:
    """Failures nothing later resolved, each once (its latest occurrence and a count)."""
    out: dict[tuple[str | None, str, str], OpenError] = {}
    keys: list[str | None] | None = None  # each entry's session group, read once if needed
    for i, e in enumerate(entries):
        if not (e.entry_type == "ERROR" or (is_trace(e) and failed(e))) or echoed(entries, i):
            continue
        detail = echo_detail(entries, i)
        failure = f"{e.content}\n{(e.metadata or {}).get('error') or ''}\n{detail}"
        later = entries[i + 1 :]
        keys = keys if keys is not None else session_keys(entries)
        turn = _turn_end(later, keys[i + 1 :], keys[i])
        call = _call_of(entries, i, keys)
        if call is not None and _retried(entries, i, call, keys):
            continue
        if any(_resolves(x, e) or _supplies(x, e, failure) for x in later) or any(
            # noted while handling it, or later saying more of it
            noted_fixed(x, failure, 1 if k < turn else LATER_NAMES)
            for k, x in enumerate(later)
        ):
            continue
        key = (tool_of(e), target(e), "" if tool_of(e) else e.content)
        seen = out.pop(key, None)
        ids = (*(seen.ids if seen else ()), e.id)
        out[key] = OpenError(e, (seen.count if seen else 0) + 1, detail, ids)
    return list(out.values())
