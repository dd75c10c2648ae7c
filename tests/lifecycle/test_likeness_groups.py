"""Checklist D near-duplicate grouping (seed 001) on held-out command sets.

Every set in `likeness_cases.py` (npm, pytest, make, cargo, docker compose, go, pnpm,
gradle, tox, rspec, terraform, dotnet, just, kubectl, yarn, mvn) goes through the real
audit: each group of paraphrases must come out as exactly one group, and every
singleton (another command, folder or tool, alike in words) must stay alone. Set A
was written before the change, B and C were each measured once, blind (their first
numbers are in docs/seeds.md). Run with `-s` to see pairwise precision and recall.
The facts are planted as a hand edit leaves them: the audit exists for facts that got
past the write rules (one case, "... lives in evals ...", is refused by them).
"""

from __future__ import annotations

import itertools

import likeness_cases as cases
import pytest
from tests.planted import plant_fact

from memstrata import Store
from memstrata.lifecycle import audit
from memstrata.lifecycle.likeness import canonical_command, command_signature, near_duplicate

SETS = {
    "A": (cases.GROUPS, cases.SINGLETONS),
    "B": (cases.GROUPS_B, cases.SINGLETONS_B),
    "C": (cases.GROUPS_C, cases.SINGLETONS_C),
}


@pytest.mark.parametrize("name", list(SETS))
def test_audit_groups_each_paraphrase_set_and_nothing_else(store: Store, name: str) -> None:
    groups, singletons = SETS[name]
    label: dict[str, str] = {}
    for g, texts in groups.items():
        for i, text in enumerate(texts):
            plant_fact(store, "finn", f"{g}-{i}", text, "reference", citations=["README.md"])
            label[f"{g}-{i}"] = g
    for i, text in enumerate(singletons):
        plant_fact(store, "finn", f"single-{i}", text, "reference", citations=["README.md"])
    found: dict[str, set[str]] = {}
    for f in audit(store, "finn").of_kind("duplicate_fact"):
        assert f.keep is not None
        found.setdefault(f.keep, {f.keep}).add(f.target)
    got = sorted(sorted(g) for g in found.values())
    want = sorted(sorted(f"{g}-{i}" for i in range(len(t))) for g, t in groups.items())
    assert got == want


@pytest.mark.parametrize("name", list(SETS))
def test_pairwise_precision_and_recall(name: str) -> None:
    groups, singletons = SETS[name]
    facts = [(g, t) for g, ts in groups.items() for t in ts]
    facts += [(f"single-{i}", t) for i, t in enumerate(singletons)]
    tp = fp = fn = 0
    for (ga, a), (gb, b) in itertools.combinations(facts, 2):
        said = near_duplicate(a, b)
        tp += said and ga == gb
        fp += said and ga != gb
        fn += not said and ga == gb
    precision, recall = tp / ((tp + fp) or 1), tp / ((tp + fn) or 1)
    print(
        f"\nChecklist D set {name}: {tp + fn} duplicate pairs, precision {precision:.3f} "
        f"recall {recall:.3f}"
    )
    assert precision == 1.0 and recall >= 0.9


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("cd evals && npm test", "cd evals && npm run build"),
        ("Run npm test in the evals folder", "Run npm test in the e2e folder"),
        ("cd evals && npm test", "cd e2e && npm run test"),
        ("npm test", "yarn test"),
        ("pytest tests/unit", "pytest tests/integration"),
        ("docker compose up", "docker compose down"),
        ("cargo test", "cargo build"),
        ("make build", "make clean"),
        ("Run make test from the repository root", "cd backend && make test"),
    ],
)
def test_negative_pairs_are_never_grouped(a: str, b: str) -> None:
    assert not near_duplicate(a, b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("npm test", "npm run test"),
        ("npm test", "npm t"),
        ("pnpm run dev", "pnpm dev"),
        ("python -m pytest tests", "pytest tests"),
        ("uv run pytest", "pytest"),
        ("docker-compose up -d", "docker compose up"),
        ("cargo t", "cargo test"),
        ("./gradlew test", "gradlew test"),
        ("npx vitest run", "vitest run"),
    ],
)
def test_one_spelling_per_command(a: str, b: str) -> None:
    assert canonical_command(tuple(a.split())) == canonical_command(tuple(b.split()))


def test_folder_phrasings_name_the_same_folder() -> None:
    said = [
        "cd evals && npm test",
        "npm test in the evals folder",
        "npm test from evals/",
        "change into the evals directory and run npm test",
        "go to evals and run npm test",
        "npm test (working directory: evals)",
        "npm test within ./evals",
        "npm test (run inside evals)",
        "The suite lives in evals and is started with npm test",
    ]
    assert {command_signature(s) for s in said} == {frozenset({("evals", ("npm", "test"))})}
    # a capitalised tool name in prose is not a command; "go to" is not `go`
    assert command_signature("Python 3.11 tests: tox -e py311") == frozenset(
        {(None, ("tox", "py311"))}
    )
