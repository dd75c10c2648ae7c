"""Promotion between session, task-episodic and repo-persistent memory, with its taxonomy and save exclusions.

    session scratch --promote_scratch--> task-episodic --promote_fact--> durable fact

A durable (repo-persistent) fact is short (1-2 sentences), cited, classified
as user / feedback / project / reference, and create-only. These never become
durable facts, and are refused with the reason (`Refused`):

* git history: commit hashes, branch names, merge/rebase records;
* ephemeral task state: clock times, "iteration 3 passed", "currently running";
* derivable code state: where code lives or what it contains ("defined in
  src/x.py", "app.py:120", "utils.py has 300 lines") - re-read the code instead.

`classify_fact` is a documented keyword rule, checked in this order:

1. feedback:  corrections and constraints ("never", "don't", "avoid", "must not",
   "instead of", "mistake", "wrong")
2. user:      preferences ("prefers", "likes", "the user", "I want", "my ")
3. reference: commands and configuration (a `code span`, a shell command such as
   npm/pytest/make/pip/cargo/docker/git, a --flag, KEY=value, port, env var)
4. project:   everything else (architecture, structure, conventions).

`checklist_c` decides whether a fact goes to repo-persistent memory, check by
check, so an agent (or the `memory_promote` tool's dry run) sees why:

1. cited: at least one citation (the file, doc or task it came from);
2. classified: one of user / feedback / project / reference (`classify_fact`);
3. short: 1-2 sentences, at most 400 characters;
4. not excluded: no git history, ephemeral task state or derivable code state;
5. independently actionable: it stands alone (no "it is", "see above", "the
   previous step") and is not about the current task only ("this task", its slug);
6. new: no near-duplicate among the durable facts already stored (Checklist D's
   likeness, `lifecycle.likeness`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from memstrata.errors import AlreadyExists, MalformedInput, NotFound, Refused
from memstrata.layers.durable import (
    MAX_FACT_CHARS,
    MAX_SENTENCES,
    save_exclusion,
    sentences,
)
from memstrata.layers.episodes import slugify
from memstrata.lifecycle.likeness import near_duplicate
from memstrata.model import DURABLE_CATEGORIES, Fact, check_name, iso, now_ts
from memstrata.values import value_type

if TYPE_CHECKING:
    from memstrata.store.view import Store

_FEEDBACK = re.compile(
    r"\b(never|don'?t|do not|avoid|must not|mustn'?t|should not|shouldn'?t|instead of|"
    r"mistakes?|wrong|incorrect|correction|stop (doing|using))\b",
    re.I,
)
_USER = re.compile(
    r"\b(prefers?|preferences?|likes?|dislikes?|the user|user wants|"
    r"i want|i like|i prefer|my)\b",
    re.I,
)
_REFERENCE = re.compile(
    r"`[^`]+`|\b(npm|npx|yarn|pnpm|pytest|make|pip|uv|cargo|go (test|build|run)|docker|"
    r"kubectl|git config|python -m|cd \S+ &&)\b|(^|\s)--[a-z][\w-]+|\b[A-Z][A-Z0-9_]{2,}=\S+|"
    r"\b(port|env(ironment)? var(iable)?|config(uration)? (value|key|file)|command)\b",
    re.I,
)


def classify_fact(text: str) -> str:
    """Taxonomy category for a fact by the keyword rule in the module docstring.

    Example:
        >>> classify_fact("The test command is `cd evals && npm test`.")
        'reference'
    """
    if _FEEDBACK.search(text):
        return "feedback"
    if _USER.search(text):
        return "user"
    if _REFERENCE.search(text):
        return "reference"
    return "project"


_DANGLING = re.compile(
    r"^(it|they|he|she|this|that|these|those)\s+(is|are|was|were|does|did|has|have|had|will|"
    r"would|should|must|can|could|needs?|works?|fails?)\b|\bsee above\b|\bas (mentioned|discussed|"
    r"noted|said) (above|earlier|before)\b|\bthe (previous|last|above|earlier) (step|phase|message|"
    r"answer|turn|output)\b|\blike before\b",
    re.I,
)
_THIS_TASK = re.compile(r"\b(this|the current) (task|ticket|iteration|phase|pr)\b", re.I)


@value_type(frozen=True)
class Check:
    name: str
    passed: bool
    why: str


@value_type(frozen=True)
class ChecklistC:
    """The verdict on one candidate fact: every check, in order."""

    text: str
    category: str | None
    checks: tuple[Check, ...]

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    @property
    def failed(self) -> Check | None:
        return next((c for c in self.checks if not c.passed), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "category": self.category,
            "passed": self.passed,
            "checks": [{"name": c.name, "passed": c.passed, "why": c.why} for c in self.checks],
        }


def checklist_c(
    store: Store,
    agent: str,
    text: str,
    citations: Sequence[str],
    category: str | None = None,
    *,
    task: str | None = None,
) -> ChecklistC:
    """Run Checklist C on a candidate durable fact; changes nothing (see the module doc).

    Raises:
        MalformedInput: bad types, or a category outside the durable taxonomy.
    """

    if not isinstance(text, str) or not text.strip() or "\x00" in text:
        raise MalformedInput("a fact must be non-empty text")
    text = " ".join(text.split())
    if isinstance(citations, str) or not isinstance(citations, list | tuple):
        raise MalformedInput("citations must be a list of strings")
    cites = [c.strip() for c in citations if isinstance(c, str) and c.strip()]
    if len(cites) != len(citations):
        raise MalformedInput("every citation must be a non-empty string")
    if category is not None and category not in DURABLE_CATEGORIES:
        raise MalformedInput(
            f"durable facts are one of {', '.join(DURABLE_CATEGORIES)}; got {category!r}"
        )
    chosen = category or classify_fact(text)
    checks = [
        Check(
            "cited",
            bool(cites),
            f"cites {', '.join(cites)}"
            if cites
            else "a durable fact needs at least one citation (file, doc or task it came from)",
        ),
        Check("classified", True, f"{chosen}" + ("" if category else " (by the keyword rule)")),
    ]
    short = len(text) <= MAX_FACT_CHARS and sentences(text) <= MAX_SENTENCES
    checks.append(
        Check(
            "short",
            short,
            "1-2 sentences"
            if short
            else f"a durable fact is 1-{MAX_SENTENCES} sentences and at most "
            f"{MAX_FACT_CHARS} characters: split it or keep it in task notes",
        )
    )
    reason = save_exclusion(text)
    checks.append(
        Check(
            "not_excluded",
            reason is None,
            "no save exclusion"
            if reason is None
            else f"not saved as a durable fact, it is {reason}",
        )
    )
    dangling = _DANGLING.search(text)
    local = _THIS_TASK.search(text) or (task is not None and task.lower() in text.lower())
    actionable = dangling is None and not local
    checks.append(
        Check(
            "actionable",
            actionable,
            "stands alone"
            if actionable
            else (
                f"it does not stand alone ({dangling.group(0)!r}): say what it refers to"
                if dangling
                else "it is about the current task only: keep it in the task folder"
            ),
        )
    )
    dup = next(
        (
            old
            for old in store.agent(agent).facts.list()
            if old.category in DURABLE_CATEGORIES and near_duplicate(old.value, text)
        ),
        None,
    )
    checks.append(
        Check(
            "new",
            dup is None,
            "no near-duplicate"
            if dup is None
            else f"duplicate of durable fact {dup.key!r}: {dup.value!r}",
        )
    )
    return ChecklistC(text, chosen, tuple(checks))


def require(verdict: ChecklistC) -> None:
    """Raise Refused with the first failed check's reason."""
    failed = verdict.failed
    if failed is not None:
        raise Refused(failed.why)


def promote_scratch(
    store: Store, agent: str, scratch_name: str, task_slug: str, dest: str = "notes.md"
) -> str:
    """Session -> task-episodic: append a scratch file to `episodes/<task_slug>/<dest>`
    under a provenance header. Returns the episode file's store-relative path."""
    check_name(task_slug, "task slug")
    mem = store.agent(agent)
    text = mem.scratch.read(scratch_name)
    if not text.strip():
        raise Refused(f"session/{scratch_name} is empty: nothing to promote")
    header = f"## Promoted from session/{scratch_name} ({iso(now_ts())})"
    return mem.episodes.append(task_slug, dest, f"{header}\n\n{text.strip()}\n")


def promote_fact(
    store: Store,
    agent: str,
    text: str,
    category: str | None,
    citations: Sequence[str],
    key: str | None = None,
) -> Fact:
    """Task-episodic -> repo-persistent: save one durable, cited, classified fact.

    Raises:
        Refused: a Checklist C check failed (`checklist_c`: no
            citation, too long, a save exclusion, not standalone, or a near-duplicate
            of a durable fact already stored). AlreadyExists: `key` is taken.
        MalformedInput: bad types or an unknown category.
    """
    verdict = checklist_c(store, agent, text, citations, category)
    require(verdict)  # Checklist C: cited, classified, short, not excluded, standalone, new
    text, category = verdict.text, verdict.category or "project"
    cites = [c.strip() for c in citations]
    facts = store.agent(agent).facts
    if key is None:
        digest = hashlib.sha256(text.encode()).hexdigest()[:6]
        key = f"{category}/{slugify(text)[:48].strip('-')}-{digest}"
    try:
        facts.get(key)
    except NotFound:
        return facts.set(key, text, category, citations=cites)
    raise AlreadyExists(f"fact {key!r} already exists; durable facts are create-only")
