"""The memory read and write rules at each event of a task.

    Event               Read                          Write
    context start       session (if any), NOTES.md    -
    phase start         task-episodic (relevant)      session note; durable cross-plan facts
                                                      promoted with Checklist C
    phase end           -                             task-episodic (completion report),
                                                      NOTES.md (phase boundary, blockers)
    task complete       -                             /memories/repo/ (durable facts)
    conversation end    -                             session files cleared (archived)

Durable facts are promoted through Checklist C (`lifecycle.promotion.checklist_c`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from memstrata.layers.episodes import slugify
from memstrata.lifecycle.promotion import ChecklistC, checklist_c, promote_fact
from memstrata.model import Fact, check_name
from memstrata.values import value_type

if TYPE_CHECKING:
    from memstrata.store.view import Store


@value_type(frozen=True)
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
    """The "phase start" event: read the task folder, write a session note, promote the
    durable cross-plan facts that pass Checklist C (the others are returned, refused).

    `facts` are {"text", "citations", "category"?, "key"?} candidates.
    """
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
    """The "phase end" event: write the phase completion report into the task folder, move
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
    """The "task complete" event: write the durable facts to repo-persistent memory (each
    through Checklist C) and log the gate event. Returns (promoted, refused)."""
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
    """The "conversation end" event: session scratch is cleared (moved to the archive, never
    destroyed) and the session, if named, is marked ended. Returns the archive folder."""
    mem = store.agent(agent)
    if session_id is not None and session_id in mem.sessions.ids():
        mem.sessions.end(session_id)
    return mem.scratch.clear()


def _slug(text: str) -> str:
    return slugify(str(text))
