"""Seed 001 (Chapter 12, Memory Architecture): one test per row of docs/seeds.md."""

from __future__ import annotations

import pytest

from memstrata import Store
from memstrata.errors import AlreadyExists

# -- memory pollution: Checklist D --------------------------------------------------------

# Seed 001 exercise 7: "six entries with slightly different descriptions of the same
# `cd evals && npm test` command".
SEED_SIX = [
    "The test command is `cd evals && npm test`.",
    "Run the test suite with cd evals && npm test",
    "To run tests: cd evals; npm test",
    "Tests are run via `npm test` inside the evals directory.",
    "cd into evals/ and run npm test to execute the tests",
    "Eval tests: (cd evals && npm test)",
]
# Held out: other commands the mechanism was not written from, grouped by meaning.
HELD_OUT_GROUPS = [
    ["Build the docs with `cd docs && make html`.", "Docs build: make html in the docs folder",
     "cd docs; make html builds the documentation"],
    ["Start the dev server with cd web && yarn dev",
     "The web app runs locally via `yarn dev` from the web/ directory"],
]
# Alike in words, different in meaning: never grouped with the six.
NOT_THE_SAME = [
    "cd api && npm test runs the API tests",
    "Lint with cd evals && npm run lint",
    "cd docs && make clean removes the build",
    "Run npm test in the root folder for unit tests",
    "The API uses Fastify.",
]


def test_checklist_d_groups_the_seeds_six_paraphrases(store: Store) -> None:
    from memstrata.lifecycle import audit, prune

    facts = store.agent("finn").facts
    for i, text in enumerate(SEED_SIX):
        facts.set(f"test-cmd-{i}", text, "reference", citations=["evals/package.json"])
    for i, text in enumerate(NOT_THE_SAME):
        facts.set(f"other-{i}", text, "reference", citations=["README.md"])
    for g, group in enumerate(HELD_OUT_GROUPS):
        for i, text in enumerate(group):
            facts.set(f"held-{g}-{i}", text, "reference", citations=["README.md"])
    report = audit(store, "finn")
    dups = report.of_kind("duplicate_fact")
    by_keep: dict[str, set[str]] = {}
    for f in dups:
        assert f.keep is not None
        by_keep.setdefault(f.keep, {f.keep}).add(f.target)
    groups = sorted(sorted(g) for g in by_keep.values())
    assert sorted(f"test-cmd-{i}" for i in range(6)) in groups  # all six, one group
    assert sorted(f"held-0-{i}" for i in range(3)) in groups
    assert sorted(f"held-1-{i}" for i in range(2)) in groups
    assert len(groups) == 3
    assert not any(f.target.startswith("other-") for f in dups)
    pruned = prune(store, "finn", report, dry_run=False)
    assert len(pruned.applied) == 5 + 2 + 1
    left = {f.key for f in facts.list()}
    assert sum(k.startswith("test-cmd-") for k in left) == 1
    assert {f"other-{i}" for i in range(len(NOT_THE_SAME))} <= left


# -- repo-persistent facts are create-only; seed 002's user facts stay upserts ---------------


def test_repo_facts_are_create_only_on_every_library_path(store: Store) -> None:
    facts = store.agent("finn").facts
    facts.set("test-cmd", "The test command is `cd evals && npm test`.", "reference",
              citations=["evals/package.json"])
    with pytest.raises(AlreadyExists):
        facts.set("test-cmd", "The test command is `make test`.", "reference")
    with pytest.raises(AlreadyExists):  # a seed 002 upsert cannot clobber a repo fact
        facts.set("test-cmd", "make test", "general")
    assert "cd evals" in facts.get("test-cmd").value
    facts.set("preferred_currency", "USD", "preference")  # seed 002: upsert
    facts.set("preferred_currency", "EUR", "preference")
    assert facts.get("preferred_currency").value == "EUR"
    with pytest.raises(AlreadyExists):  # nor can a repo fact take over a user fact's key
        facts.set("preferred_currency", "Prices are in EUR.", "project")
    facts.forget("test-cmd")  # forgetting (pruning) stays possible; the journal keeps it
    facts.set("test-cmd", "The test command is `make test`.", "reference")
    assert facts.get("test-cmd").value == "The test command is `make test`."


# -- ignore memory on request, by meaning ----------------------------------------------------

# Written apart from the rule in memstrata.assembly.ignore, as a user would say it.
ASKS_TO_IGNORE = [
    "no memory please",
    "Answer this one without your memory.",
    "Skip the memory for this question",
    "please disregard what you remember and look at the code",
    "Don't look at your notes, just read the file",
    "for this turn, do not consult NOTES.md or anything saved",
    "set aside your saved facts and tell me from scratch",
    "Start with a clean slate: no stored context",
    "I want a fresh context for this",
    "Forget about your memories for now and reason from first principles",
    "Don't rely on past sessions here",
    "answer without using anything from previous conversations",
    "no notes, no memory, just the diff",
    "Ignore what you have stored about me",
    "Could you not use memory this time?",
    "Leave your memory out of this one",
    "Pretend you don't remember anything about this repo",
    "Don't pull in prior context",
    "without memory: what does main.py do?",
    "Please ignore memories",
]
DOES_NOT_ASK = [
    "What do you remember about the auth module?",
    "Save this to memory: the port is 8080",
    "Remember that I prefer tabs",
    "Check your notes before answering",
    "The memory usage is too high, there should be no leaks",
    "Don't forget to update NOTES.md",
    "Use your memory of the last session",
    "I have no memory of writing this function",
    "Don't write this to memory",
    "Fix the out of memory error in the loader",
    "There's no memory leak in the cache anymore",
    "Please add notes about the migration",
    "Store the in-memory cache without locks",
    "Never mind the tests, look at the memory module",
    "Without tests this is risky; update memory afterwards",
    "Do not use the old API; it is deprecated",
    "What's in your memory about deployments?",
    "Keep this in memory for later",
    "No, the memory tool is fine",
    "Ignore the lint warnings",
]


def test_ignore_memory_is_read_by_meaning() -> None:
    from memstrata.assembly.context import wants_no_memory

    missed = [m for m in ASKS_TO_IGNORE if not wants_no_memory(m)]
    wrong = [m for m in DOES_NOT_ASK if wants_no_memory(m)]
    assert missed == [] and wrong == []
