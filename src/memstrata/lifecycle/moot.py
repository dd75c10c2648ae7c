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
  Redis", "drop pandas") in its text or its reason, and the names of the record it
  replaces that it does not repeat itself (a name: a capitalised word or acronym not
  opening the sentence, a word with a digit, dot or `&`, or the initials of "Weights &
  Biases");
* names match written loosely: lower case, `&` read as "and", punctuation dropped, so
  "W&B", "Weights & Biases" and `wandb` are one name.

Pure functions over `LogEntry` and `LedgerEntry` values.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from memstrata.lifecycle.activity import call_args, kind_of_call, tool_of

if TYPE_CHECKING:
    from memstrata.model import LedgerEntry, LogEntry

# Words that run a program rather than name it, and words that name nothing in particular.
_RUNNERS = re.compile(
    r"(?:uvx?|run|python3?|py|-m|npx|pnpm|yarn|npm|bunx?|poetry|pipenv|sudo|env|exec|bash|sh|"
    r"zsh|time|nice|nohup|conda|mamba|pixi|hatch|pdm|rye)"
)
_INSTALL = frozenset({"install", "add", "i"})
_GENERIC = re.compile(
    r"(?:api|www|app|web|com|org|net|io|ai|dev|local|internal|lab|the|and|https?|localhost|"
    r"main|master|src|tests?|data|files?|server)"
)
_HOST = re.compile(
    r"\b(?:[a-z0-9-]+\.)+(?:com|org|net|io|ai|dev|app|co|uk|de|fr|nl|es|eu|us|edu|gov|"
    r"internal|local|lan|cloud|sh|me|info|xyz|example)\b"
)
_NEGATED = re.compile(
    r"\b(?:no longer(?: use| using)?|no|not|without|instead of|rather than|drop(?:s|ped|ping)?|"
    r"away from|stop using|off)\s+(?:the |a |an |using |our |any |in |on |with |from )?"
    r"((?:[A-Z][\w-]*\s*&\s*[A-Z][\w-]*)|[\w.&+#-]{2,})",
)
_AMPERSAND = re.compile(r"\b([A-Z])[\w-]*\s*&\s*([A-Z])[\w-]*")
_WORD = re.compile(r"[\w.&+#-]+")


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
    """The names `record` drops: those it negates, and those of what it replaces that it
    does not name itself."""
    said = f"{record.summary}\n{record.detail or ''}"
    out = {norm(m.group(1)) for m in _NEGATED.finditer(said)}
    out.update(
        norm(f"{a}&{b}") for m in _NEGATED.finditer(said) for a, b in _AMPERSAND.findall(m[1])
    )
    own = _names(said) - out
    for old in replaced:
        out |= _names(f"{old.summary}\n{old.detail or ''}") - own
    return {n for n in out if len(n) >= 3 and not _GENERIC.fullmatch(n)}


def moot_by(
    error: LogEntry, history: Sequence[tuple[LedgerEntry, str | None]]
) -> LedgerEntry | None:
    """The record in force, recorded after `error`, that drops its subject; None if none.
    `history` is `Decisions.history()`: every record with the id that replaced it."""
    about = subject(error)
    if not about:
        return None
    by_id = {e.id: e for e, _ in history}
    for record, replaced_by in sorted(history, key=lambda x: x[0].ts):
        if replaced_by is not None or record.ts <= error.ts:
            continue
        old = [by_id[record.supersedes]] if record.supersedes in by_id else []
        if about & dropped(record, old):
            return record
    return None
