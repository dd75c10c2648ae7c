"""Seed 001's read and write rules at each event of a task, and Checklist C.

    Event               Read                          Write
    context start       session (if any), NOTES.md    -
    phase start         task-episodic (relevant)      session note; durable cross-plan facts
                                                      promoted with Checklist C
    phase end           -                             task-episodic (completion report),
                                                      NOTES.md (phase boundary, blockers)
    task complete       -                             /memories/repo/ (durable facts)
    conversation end    -                             session files cleared (archived)

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

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memstrata.errors import MalformedInput, Refused
from memstrata.model import DURABLE_CATEGORIES, Fact, check_name

if TYPE_CHECKING:
    from memstrata.store.engine import Store

MAX_FACT_CHARS = 400
MAX_SENTENCES = 2
_DANGLING = re.compile(
    r"^(it|they|he|she|this|that|these|those)\s+(is|are|was|were|does|did|has|have|had|will|"
    r"would|should|must|can|could|needs?|works?|fails?)\b|\bsee above\b|\bas (mentioned|discussed|"
    r"noted|said) (above|earlier|before)\b|\bthe (previous|last|above|earlier) (step|phase|message|"
    r"answer|turn|output)\b|\blike before\b",
    re.I,
)
_THIS_TASK = re.compile(r"\b(this|the current) (task|ticket|iteration|phase|pr)\b", re.I)


@dataclass(frozen=True)
class Check:
    name: str
    passed: bool
    why: str


@dataclass(frozen=True)
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
    from memstrata.lifecycle.likeness import near_duplicate, sentences
    from memstrata.lifecycle.promotion import classify_fact, save_exclusion

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


def durable_fact_problem(text: str, citations: Sequence[str]) -> str | None:
    """Why `text` cannot be a repo-persistent fact whatever path writes it, or None.

    Seed 001's rules for `/memories/repo/`, checked on every write of a durable
    category (`Facts.set`, MCP `save_fact`, `memstrata facts set`, a `repo/` memory
    file): cited, short (1-2 sentences, at most 400 characters), not a save exclusion.
    Checklist C (`checklist_c`, run by promotion) adds "standalone" and "new".
    """
    from memstrata.lifecycle.likeness import sentences
    from memstrata.lifecycle.promotion import save_exclusion

    flat = " ".join(text.split())
    if not [c for c in citations if isinstance(c, str) and c.strip()]:
        return (
            "a repo-persistent fact needs at least one citation (the file, doc or task it "
            "came from): seed 001"
        )
    if len(flat) > MAX_FACT_CHARS or sentences(flat) > MAX_SENTENCES:
        return (
            f"a repo-persistent fact is 1-{MAX_SENTENCES} sentences and at most "
            f"{MAX_FACT_CHARS} characters (seed 001): split it or keep it in task notes"
        )
    reason = save_exclusion(flat)
    if reason is not None:
        return f"not saved as a repo-persistent fact (seed 001 save exclusions), it is {reason}"
    return None


_CITE_LINE = re.compile(r"^\s*[-*]?\s*(?:citations?|sources?|cited?)\s*:\s*(.*\S)\s*$", re.I)


def split_repo_file(content: str) -> tuple[str, list[str]]:
    """A `repo/` memory file as (fact text, citations): a `Citations: a, b` (or
    `Source: a`) line gives the citations; Markdown headings are titles, not the fact.

    Example:
        >>> split_repo_file("# Tests\nThe test command is `make test`.\nSource: Makefile\n")
        ('The test command is `make test`.', ['Makefile'])
    """
    text, cites = [], []
    for line in content.splitlines():
        m = _CITE_LINE.match(line)
        if m:
            cites += [c.strip() for c in m.group(1).split(",") if c.strip()]
        elif line.strip() and not line.lstrip().startswith("#"):
            text.append(line.strip())
    return " ".join(text), cites


def repo_file_problem(content: str) -> str | None:
    """Why `content` cannot be a `repo/` memory file (seed 001 `/memories/repo/`), or None."""
    text, cites = split_repo_file(content)
    if not text:
        return "a repo/ file holds one durable fact, 1-2 sentences: it is empty"
    problem = durable_fact_problem(text, cites)
    if problem is not None and not cites:
        return problem + "; in a repo/ file, add a line `Citations: <file or doc>, ...`"
    return problem


def require(verdict: ChecklistC) -> None:
    """Raise Refused with the first failed check's reason."""
    failed = verdict.failed
    if failed is not None:
        raise Refused(failed.why)


@dataclass(frozen=True)
class PhaseStart:
    """What a phase starts from: the task folder's files it may read, and what it wrote."""

    task: str
    phase: str
    task_files: tuple[str, ...]
    verified: tuple[tuple[int | None, str], ...]
    session_note: str
    promoted: tuple[Fact, ...]
    refused: tuple[ChecklistC, ...]


def phase_start(
    store: Store,
    agent: str,
    task: str,
    phase: str,
    *,
    note: str = "",
    facts: Sequence[dict[str, Any]] = (),
) -> PhaseStart:
    """Seed 001 "phase start": read the task folder, write a session note, promote the
    durable cross-plan facts that pass Checklist C (the others are returned, refused).

    `facts` are {"text", "citations", "category"?, "key"?} candidates.
    """
    from memstrata.lifecycle.promotion import promote_fact

    check_name(task, "task slug")
    mem = store.agent(agent)
    files = tuple(mem.episodes.files(task)) if task in mem.episodes.list() else ()
    verified = tuple(mem.episodes.verified(task)) if files else ()
    body = (
        f"# Phase {phase} of {task}\n\n{note.strip()}\n"
        if note.strip()
        else (f"# Phase {phase} of {task}\n")
    )
    note_path = mem.scratch.write(f"phase-{_slug(phase)}.md", body).path
    promoted: list[Fact] = []
    refused: list[ChecklistC] = []
    for cand in facts:
        verdict = checklist_c(
            store,
            agent,
            cand.get("text", ""),
            cand.get("citations") or [],
            cand.get("category"),
            task=task,
        )
        if verdict.passed:
            promoted.append(
                promote_fact(
                    store,
                    agent,
                    verdict.text,
                    verdict.category,
                    cand.get("citations") or [],
                    key=cand.get("key"),
                )
            )
        else:
            refused.append(verdict)
    return PhaseStart(task, phase, files, verified, note_path, tuple(promoted), tuple(refused))


def phase_end(
    store: Store,
    agent: str,
    task: str,
    phase: str,
    report: str,
    *,
    next_phase: str | None = None,
    blockers: Sequence[str] = (),
    next_steps: Sequence[str] = (),
) -> str:
    """Seed 001 "phase end": write the phase completion report into the task folder, move
    NOTES.md to the phase boundary (stale blockers replaced), log a gate event.

    Returns the report's store-relative path.
    """
    mem = store.agent(agent)
    path = mem.episodes.write(
        task,
        f"phase-{_slug(phase)}-report.md",
        f"# Phase {phase} completion report\n\n{report.strip()}\n",
    )
    state = mem.now.state() if mem.now.exists() else None
    objective = state.objective if state and state.objective != "(none)" else f"Task {task}"
    mem.now.update(
        objective,
        list(next_steps),
        blockers=list(blockers),
        phase=next_phase or f"{phase} complete",
    )
    mem.episodes.log_gate_event(
        task, task, {"event": "phase_end", "phase": phase, "report": path, "next_phase": next_phase}
    )
    return path


def task_complete(
    store: Store, agent: str, task: str, facts: Sequence[dict[str, Any]] = ()
) -> tuple[list[Fact], list[ChecklistC]]:
    """Seed 001 "task complete": write the durable facts to repo-persistent memory (each
    through Checklist C) and log the gate event. Returns (promoted, refused)."""
    from memstrata.lifecycle.promotion import promote_fact

    mem = store.agent(agent)
    promoted: list[Fact] = []
    refused: list[ChecklistC] = []
    for cand in facts:
        verdict = checklist_c(
            store,
            agent,
            cand.get("text", ""),
            cand.get("citations") or [],
            cand.get("category"),
            task=task,
        )
        if verdict.passed:
            promoted.append(
                promote_fact(
                    store,
                    agent,
                    verdict.text,
                    verdict.category,
                    cand.get("citations") or [],
                    key=cand.get("key"),
                )
            )
        else:
            refused.append(verdict)
    mem.episodes.log_gate_event(
        task, task, {"event": "task_complete", "promoted": [f.key for f in promoted]}
    )
    return promoted, refused


def end_conversation(store: Store, agent: str, session_id: str | None = None) -> str | None:
    """Seed 001 "conversation end": session scratch is cleared (moved to the archive, never
    destroyed) and the session, if named, is marked ended. Returns the archive folder."""
    mem = store.agent(agent)
    if session_id is not None and session_id in mem.sessions.ids():
        mem.sessions.end(session_id)
    return mem.scratch.clear()


def _slug(text: str) -> str:
    from memstrata.layers.episodes import slugify

    return slugify(str(text))
