"""Errors a later decision made moot: the failure is about something the work dropped.

ml-wrensong: `uv run wandb login` failed (the proxy blocks api.wandb.ai); the next
decision replaced "Track experiments in Weights & Biases" with "... the lab's MLflow
server; no W&B". Nothing retried the login, and nothing should: the error is no longer
open, though it stays in LOG.md and under its session's line as what the session ran into.

An error is moot when a decision or constraint in force, recorded after it, drops the
error's subject:

* the error's subject: the program of a failed command (`uv run wandb login` -> wandb,
  runners such as `uv run`, `python -m`, `sudo` skipped), the host of a failed fetch and
  the hosts its message names (`api.wandb.ai` -> wandb), a file's name;
* what a record drops: the names it negates ("no W&B", "instead of WeasyPrint", "without
  Redis", "drop pandas") in its text or its reason, and the names of what the record it
  replaces decided (its text, not its reason) that it does not say itself, anywhere and in
  any case ("...; Warsaw becomes a sidebar" keeps Warsaw) unless it says it is gone
  ("WeasyPrint is out") (a name: a
  capitalised word or acronym not opening the sentence, a word with a digit, dot or `&`,
  or the initials of "Weights & Biases"). support-marlin: "Build linux/arm/v7 release
  archives again" replaced "Drop linux/arm/v7 (32-bit ARM) ...", whose reason said "11
  downloads of the armv7 archive for v0.8.2": v0.8.2 is a passing mention, not dropped,
  and the fact `latest_release` ("v0.8.2, tagged ...") stays current;
* names match written loosely: lower case, `&` read as "and", punctuation dropped, so
  "W&B", "Weights & Biases" and `wandb` are one name.

An error is also answered, not open, when the agent decided how to go on after it: a
decision or constraint in force, recorded after the error and before its session ended
(`until`), that names what the failed call used (its program, package or host, in any
case: "certbot's DNS-01 challenge" after `certbot renew` failed with the standalone
authenticator). A failure of the same call after that decision is a new, open error.

Pure functions over `LogEntry` and `LedgerEntry` values.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from memstrata.lifecycle.activity import call_args, kind_of_call, tool_of
from memstrata.reading.patterns import LazyPattern

if TYPE_CHECKING:
    from memstrata.model import LedgerEntry, LogEntry

# Words that run a program rather than name it, and words that name nothing in particular.
_RUNNERS = LazyPattern(
    r"(?:uvx?|run|python3?|py|-m|npx|pnpm|yarn|npm|bunx?|poetry|pipenv|sudo|env|exec|bash|sh|"
    r"zsh|time|nice|nohup|conda|mamba|pixi|hatch|pdm|rye)"
)
_INSTALL = frozenset({"install", "add", "i"})
_GENERIC = LazyPattern(
    r"(?:api|www|app|web|com|org|net|io|ai|dev|local|internal|lab|the|and|https?|localhost|"
    r"main|master|src|tests?|data|files?|server)"
)
_HOST = LazyPattern(
    r"\b(?:[a-z0-9-]+\.)+(?:com|org|net|io|ai|dev|app|co|uk|de|fr|nl|es|eu|us|edu|gov|"
    r"internal|local|lan|cloud|sh|me|info|xyz|example)\b"
)
_NEGATED = LazyPattern(
    r"\b(?:no longer(?: use| using)?|no|not|without|instead of|rather than|drop(?:s|ped|ping)?|"
    r"away from|stop using|off)\s+(?:the |a |an |using |our |any |in |on |with |from )?"
    r"((?:[A-Z][\w-]*\s*&\s*[A-Z][\w-]*)|[\w.&+#-]{2,})",
)
# A name said to be gone after it: "WeasyPrint is out", "Redis was dropped".
_GONE = LazyPattern(
    r"((?:[A-Z][\w-]*\s*&\s*[A-Z][\w-]*)|[\w.&+#-]{2,})\s+(?:is|are|was|were|has been|have been|"
    r"gets|got)\s+(?:now\s+|also\s+)?(?:out|gone|dropped|removed|retired|deprecated|abandoned)\b"
)
_AMPERSAND = LazyPattern(r"\b([A-Z])[\w-]*\s*&\s*([A-Z])[\w-]*")
_WORD = LazyPattern(r"[\w.&+#-]+")


def norm(name: str) -> str:
    """A name written loosely: "W&B" -> "wandb", "Weights & Biases" (its initials) too."""
    return re.sub(r"[^a-z0-9]", "", name.lower().replace("&", "and"))


def _names(text: str) -> set[str]:
    """The names a text uses (see module docstring), written loosely."""
    out = {norm(f"{a}&{b}") for a, b in _AMPERSAND.findall(text)}
    for sentence in re.split(r"(?<=[.;:!?])\s+|\n", text):
        for i, w in enumerate(_WORD.findall(sentence)):
            w = w.strip(".-")
            named = (i > 0 and w[:1].isupper()) or re.search(r"[\d&]|\w\.\w", w)
            if named and len(w) >= 2:
                out.add(norm(w))
    return {n for n in out if len(n) >= 3 and not _GENERIC.fullmatch(n)}


def subject(error: LogEntry) -> set[str]:
    """What a failed call or error is about: its program, hosts and file (loosely written)."""
    found: set[str] = set()
    args = call_args(error)
    command = args.get("command")
    if isinstance(command, str) and kind_of_call(error) != "test":  # a test run: the code
        words = [w.strip("'\"") for w in command.split() if not w.startswith("-") or w == "-m"]
        if words[:1] == ["ssh"]:  # `ssh host 'docker start icecast'`: the remote command
            words = words[2:]
        words = words[: words.index("-m")] if "-m" in words else words  # the project's code
        at = next((i for i, w in enumerate(words) if w.lower() in _INSTALL), None)
        if at is not None:  # `pip install weasyprint`: the packages
            found.update(norm(w.split("==")[0].split("[")[0]) for w in words[at + 1 :])
        else:
            program = next((w for w in words if not _RUNNERS.fullmatch(w.lower())), "")
            if not program.endswith(".py"):  # a script of the project is no tool to drop
                found.add(norm(program.rsplit("/", 1)[-1].split(".", 1)[0]))
    for key in ("file_path", "path", "notebook_path"):
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            found.add(norm(value.rsplit("/", 1)[-1].split(".", 1)[0]))
    said = " ".join(
        str(x) for x in (error.content, (error.metadata or {}).get("error"), args.get("url")) if x
    )
    for host in _HOST.findall(said):
        labels = [x for x in host.lower().split(".")[:-1] if not _GENERIC.fullmatch(x)]
        found.update(norm(x) for x in labels[-1:])
    if tool_of(error) is None and not found:
        found.update(norm(x) for x in re.findall(r"`([^`]{3,40})`", error.content))
    return {n for n in found if len(n) >= 3 and not _GENERIC.fullmatch(n)}


def dropped(record: LedgerEntry, replaced: Sequence[LedgerEntry]) -> set[str]:
    """The names `record` drops: those it negates, and those of what it replaces decided
    (its summary) that it does not name itself."""
    said = f"{record.summary}\n{record.detail or ''}"
    negated = [*_NEGATED.finditer(said), *_GONE.finditer(said)]
    out = {norm(m.group(1)) for m in negated}
    out.update(norm(f"{a}&{b}") for m in negated for a, b in _AMPERSAND.findall(m[1]))
    own = (_names(said) | _words(said)) - out  # said anywhere, a sentence's first word too
    for old in replaced:  # what it decided: its reason's names are mentions, not choices
        out |= _names(old.summary) - own
    return {n for n in out if len(n) >= 3 and not _GENERIC.fullmatch(n)}


def _words(text: str) -> set[str]:
    """Every word of a text written loosely ("certbot's" -> certbot), names or not."""
    return {norm(re.sub(r"['’]s$", "", w.strip(".-"))) for w in _WORD.findall(text)}


def moot_by(
    error: LogEntry,
    history: Sequence[tuple[LedgerEntry, str | None]],
    until: str | None = None,
) -> LedgerEntry | None:
    """The record in force, recorded after `error`, that drops its subject, or (when
    `until`, the end of the error's session, is given) that decided how to go on with
    what it used; None if none. `history` is `Decisions.history()`: every record with
    the id that replaced it."""
    why = moot_why(error, history, until)
    return why[0] if why is not None else None


DROPPED = "dropped what it was about"
ANSWERED = "decided after it how to go on"


def moot_why(
    error: LogEntry,
    history: Sequence[tuple[LedgerEntry, str | None]],
    until: str | None = None,
) -> tuple[LedgerEntry, str] | None:
    """`moot_by`, with why: `DROPPED` or `ANSWERED` (module docstring)."""
    about = subject(error)
    if not about:
        return None
    by_id = {e.id: e for e, _ in history}
    later = [
        r for r, by in sorted(history, key=lambda x: x[0].ts) if by is None and r.ts > error.ts
    ]
    for record in later:
        old = [by_id[record.supersedes]] if record.supersedes in by_id else []
        if about & dropped(record, old):
            return record, DROPPED
    for record in later:
        if until is not None and record.ts <= until and about & _words(record.summary):
            return record, ANSWERED
    return None
