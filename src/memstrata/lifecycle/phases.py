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
from memstrata.layers.durable import (  # noqa: F401  (names kept for callers)
    MAX_FACT_CHARS,
    MAX_SENTENCES,
    durable_fact_problem,
    repo_file_problem,
    save_exclusion,
    sentences,
    split_repo_file,
)
from memstrata.model import DURABLE_CATEGORIES, Fact, check_name

if TYPE_CHECKING:
    from memstrata.store.view import Store

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
    from memstrata.lifecycle.likeness import near_duplicate
    from memstrata.lifecycle.promotion import classify_fact

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
