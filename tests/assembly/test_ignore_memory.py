"""Seed 001 "ignore memory on request", by meaning: precision and recall on labelled sets.

The sets (tests/assembly/ignore_memory_cases.py) were written apart from the rule in
`memstrata.assembly.ignore`; B, C and D were each measured once, blind, before the rule
was generalised from their misses (docs/seeds.md gives those first numbers). AUDIT is
the issue-11 audit's held-out list. Run with `-s` to see the table.
"""

from __future__ import annotations

import pytest
from tests.assembly import ignore_memory_cases as cases

from memstrata.assembly.context import wants_no_memory

AUDIT_POSITIVES = [
    "ignore memory",
    "don't use memory",
    "fresh context",
    "no memory please",
    "Answer from scratch, don't use anything you've saved.",
    "Treat this as a brand new conversation.",
    "Don't use what you know about me",
    "Without looking at NOTES.md, what is the plan?",
    "Please don't consult your memory files.",
    "memory off for this one",
    "Act as if you've never seen this project.",
    "Ignore your previous notes.",
    "forget everything you know and just read the code",
    "Don't use the stored context",
    "Can you answer without relying on your saved notes?",
    "Disregard memory.",
    "no memories",
    "Ignore all prior context.",
    "ignore the memory",
    "start fresh",
    "Clean slate please",
    "Do not use your memory for this question",
    "new context, no history",
    "answer this without using memory or notes",
    "skip memory",
]
AUDIT_NEGATIVES = [
    "Ignore the memory leak warnings in the log",
    "Fresh context for the new hire onboarding doc is in docs/",
    "The memory module has no tests",
    "Add a 'no memory' option to the CLI",
    "Don't use memory-mapped files here",
    "The function should start fresh each time it runs",
    "Write a fresh context manager for the DB connection",
    "Explain how the memory cache is invalidated",
    "Forget the old API, use v2",
    "ignore memory-related test failures for now",
    "Why does the process run out of memory?",
    "no memory leaks were found",
    "Use a clean slate approach for the CSS reset",
]

SETS = {
    "A": (cases.POSITIVES, cases.NEGATIVES),
    "B": (cases.POSITIVES_B, cases.NEGATIVES_B),
    "C": (cases.POSITIVES_C, cases.NEGATIVES_C),
    "D": (cases.POSITIVES_D, cases.NEGATIVES_D),
    "audit": (AUDIT_POSITIVES, AUDIT_NEGATIVES),
}


def _score(pos: list[str], neg: list[str]) -> tuple[float, float, list[str], list[str]]:
    missed = [m for m in pos if not wants_no_memory(m)]
    wrong = [m for m in neg if wants_no_memory(m)]
    tp = len(pos) - len(missed)
    precision = tp / (tp + len(wrong)) if tp + len(wrong) else 0.0
    return precision, tp / len(pos), missed, wrong


def test_the_labelled_sets_are_large_and_disjoint() -> None:
    pos = [p for ps, _ in SETS.values() for p in ps]
    neg = [n for _, ns in SETS.values() for n in ns]
    assert len(cases.POSITIVES) >= 40 and len(cases.NEGATIVES) >= 40
    assert len(set(pos)) == len(pos) and len(set(neg)) == len(neg) and not set(pos) & set(neg)


@pytest.mark.parametrize("name", list(SETS))
def test_precision_and_recall_per_set(name: str) -> None:
    precision, recall, missed, wrong = _score(*SETS[name])
    print(
        f"\nignore-memory set {name}: precision {precision:.3f} recall {recall:.3f}"
        f" missed={missed} false={wrong}"
    )
    assert precision >= 0.9, wrong
    assert recall >= 0.9, missed


def test_precision_and_recall_over_every_set() -> None:
    pos = [p for ps, _ in SETS.values() for p in ps]
    neg = [n for _, ns in SETS.values() for n in ns]
    precision, recall, missed, wrong = _score(pos, neg)
    print(
        f"\nignore-memory, {len(pos)} positives / {len(neg)} negatives: "
        f"precision {precision:.3f} recall {recall:.3f}"
    )
    assert precision >= 0.95, wrong
    assert recall >= 0.95, missed
