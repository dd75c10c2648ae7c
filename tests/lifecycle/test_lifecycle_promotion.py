"""Promotion (scratch -> episode -> durable fact), taxonomy, save exclusions, audit and prune."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from tests.planted import plant_fact

from memstrata import AlreadyExists, MalformedInput, NotFound, Refused, Store
from memstrata.layers.episodes import SESSION_TEMPLATE
from memstrata.lifecycle import audit, classify_fact, promote_fact, promote_scratch, prune
from memstrata.lifecycle.hygiene import AuditThresholds
from memstrata.lifecycle.promotion import near_duplicate

CITE = ["plans/artifacts/feature-x/final_review.md"]


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("The test command is `cd evals && npm test`.", "reference"),
        ("The API listens on port 8080.", "reference"),
        ("User prefers concise responses.", "user"),
        ("Never push directly to main; open a review instead.", "feedback"),
        ("All agent files follow P.A.R.T. section order.", "project"),
        ("PlanAuditor excludes the transient failure classification.", "project"),
    ],
)
def test_classify_fact(text: str, category: str) -> None:
    assert classify_fact(text) == category


def test_promote_fact_classifies_and_stores_with_citations(store: Store) -> None:
    fact = promote_fact(store, "finn", "The test command is `cd evals && npm test`.", None, CITE)
    assert fact.category == "reference" and fact.citations == tuple(CITE)
    assert store.agent("finn").facts.get(fact.key).value == fact.value
    explicit = promote_fact(
        store, "finn", "API handlers return typed errors.", "project", CITE, key="api-errors"
    )
    assert explicit.key == "api-errors" and explicit.category == "project"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("Commit a1b2c3d4 fixed the flaky parser.", "git history"),
        ("The login work lives on branch feature/login-form.", "git history"),
        ("The parser fix was merged last week.", "git history"),
        ("Iteration 3 passed at 14:32.", "ephemeral"),
        ("The nightly build is currently running.", "ephemeral"),
        ("parse_log is defined in src/memstrata/layers/log.py.", "derivable"),
        ("The lock is taken at store.py:120.", "derivable"),
        ("utils.py has 300 lines.", "derivable"),
    ],
)
def test_save_exclusions_are_refused_with_reason(store: Store, text: str, why: str) -> None:
    with pytest.raises(Refused, match=why):
        promote_fact(store, "finn", text, None, CITE)
    assert store.agent("finn").facts.list() == []
    assert not store.layout.facts("finn").exists()


def test_long_uncited_duplicate_and_bad_input_refused(store: Store) -> None:
    with pytest.raises(Refused, match="1-2 sentences"):
        promote_fact(store, "finn", "One fact. Another fact. A third fact.", "project", CITE)
    with pytest.raises(Refused, match="at most"):
        promote_fact(store, "finn", "word " * 120, "project", CITE)
    with pytest.raises(Refused, match="citation"):
        promote_fact(store, "finn", "The API uses Fastify.", "project", [])
    with pytest.raises(MalformedInput):
        promote_fact(store, "finn", "The API uses Fastify.", "preference", CITE)
    with pytest.raises(MalformedInput):
        promote_fact(store, "finn", "The API uses Fastify.", "project", "docs/a.md")  # type: ignore[arg-type]
    with pytest.raises(MalformedInput):
        promote_fact(store, "finn", "  ", "project", CITE)
    promote_fact(store, "finn", "The test command is cd evals && npm test.", None, CITE, key="t")
    with pytest.raises(Refused, match="duplicate"):
        promote_fact(store, "finn", "Run the tests with `cd evals && npm test`.", None, CITE)
    with pytest.raises(AlreadyExists):
        promote_fact(store, "finn", "The API uses Fastify.", "project", CITE, key="t")
    assert [f.key for f in store.agent("finn").facts.list()] == ["t"]


def test_promote_scratch_appends_with_provenance(store: Store) -> None:
    mem = store.agent("finn")
    mem.scratch.write("research.md", "# Research\n\nFastify beats Express for our case.\n")
    rel = promote_scratch(store, "finn", "research.md", "feature-x")
    text = (store.home / rel).read_text()
    assert rel.endswith("episodes/feature-x/notes.md")
    assert "Promoted from session/research.md" in text and "Fastify beats Express" in text
    promote_scratch(store, "finn", "research.md", "feature-x")
    assert (store.home / rel).read_text().count("Promoted from session/research.md") == 2
    assert mem.scratch.read("research.md")  # the scratch stays until the conversation ends
    with pytest.raises(NotFound):
        promote_scratch(store, "finn", "missing.md", "feature-x")
    with pytest.raises(MalformedInput):
        promote_scratch(store, "finn", "research.md", "../escape")
    mem.scratch.write("empty.md", "  \n")
    with pytest.raises(Refused):
        promote_scratch(store, "finn", "empty.md", "feature-x")


SIX_VARIANTS = [
    "The test command is cd evals && npm test",
    "Run tests with: cd evals && npm test",
    "Tests: `cd evals && npm test`",
    "To run the tests, cd evals && npm test",
    "cd evals && npm test runs the test suite",
    "Test suite: cd evals; npm test",
]


def test_six_variants_are_near_duplicates() -> None:
    for v in SIX_VARIANTS:
        assert near_duplicate(SIX_VARIANTS[0], v)
    assert not near_duplicate("The API uses Fastify.", "The database is SQLite.")
    assert not near_duplicate("Uses Python 3.11", "Uses Python 3.12")


def _polluted(store: Store) -> None:
    facts = store.agent("finn").facts
    for i, v in enumerate(SIX_VARIANTS):
        facts.set(f"test-cmd-{i}", v, "reference", citations=["evals/package.json"])
        time.sleep(0.002)
    facts.set("api", "The API uses Fastify.", "project", citations=["docs/api.md"])
    # Ephemeral state is refused on every write path; a hand edit still gets it in.
    plant_fact(store, "finn", "progress", "Iteration 3 passed at 14:32.", "project")
    mem = store.agent("finn")
    mem.now.update("Ship feature X", ["write tests"])
    mem.context.write("# Memory\n" + "long line of context\n" * 300)
    mem.scratch.write("unused.md", SESSION_TEMPLATE)
    mem.scratch.write("old.md", "# Old\n\nnotes from a past conversation\n")
    old = time.time() - 30 * 86400
    os.utime(mem.scratch.dir / "old.md", (old, old))
    mem.scratch.write("fresh.md", "# Fresh\n\ncurrent notes\n")


def test_audit_finds_pollution_and_changes_nothing(store: Store) -> None:
    _polluted(store)
    before = {
        p: p.read_bytes()
        for p in store.home.rglob("*")
        if p.is_file() and p.parent != store.layout.index_dir and p.name != "events.jsonl"
    }
    report = audit(store, "finn", thresholds=AuditThresholds(context_chars=2000))
    dups = report.of_kind("duplicate_fact")
    assert sorted(f.target for f in dups) == [f"test-cmd-{i}" for i in range(5)]
    assert {f.keep for f in dups} == {"test-cmd-5"}  # the newest variant is kept
    assert [f.target for f in report.of_kind("volatile_fact")] == ["progress"]
    assert [f.target for f in report.of_kind("oversized")] == ["CONTEXT.md"]
    assert [f.target for f in report.of_kind("unused_scratch")] == ["session/unused.md"]
    assert [f.target for f in report.of_kind("old_scratch")] == ["session/old.md"]
    assert "api" not in {f.target for f in report.findings}
    assert "duplicate_fact" in report.to_markdown()
    after = {p: p.read_bytes() for p in before}
    assert after == before


def test_prune_dry_run_then_real_run_never_destroys(store: Store) -> None:
    _polluted(store)
    report = audit(store, "finn")
    dry = prune(store, "finn", report)
    assert dry.dry_run and not dry.applied
    assert any(a.result.startswith("would forget fact test-cmd-0") for a in dry.actions)
    assert len(store.agent("finn").facts.list()) == 8
    real = prune(store, "finn", report, dry_run=False)
    facts = store.agent("finn").facts
    assert sorted(f.key for f in facts.list()) == ["api", "test-cmd-5"]
    journal = store.layout.facts("finn").read_text()
    assert SIX_VARIANTS[0] in journal and "Iteration 3" in journal  # history kept
    names = {f.path for f in store.agent("finn").scratch.list()}
    assert names == {"session/fresh.md"}
    deleted = store.layout.archive_dir("finn") / "deleted"  # deleted/<ms>/<path>
    archived = [p.relative_to(deleted).as_posix() for p in deleted.rglob("*.md")]
    assert sorted(p.split("/", 1)[1] for p in archived) == ["session/old.md", "session/unused.md"]
    assert len(real.applied) == 8
    # a second real run on the stale report skips what is already done
    again = prune(store, "finn", report, dry_run=False)
    assert not again.applied
    assert sorted(f.key for f in facts.list()) == ["api", "test-cmd-5"]


def test_audit_flags_stale_now_and_big_log(home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text("[log]\ncompact_entries = 3\nauto_compact = false\n")
    with Store(home, agent="finn") as s:
        mem = s.agent("finn")
        mem.now.update("Old objective", [])
        for i in range(5):
            mem.log.append("THOUGHT", f"t{i}")
        report = audit(s, "finn", now=time.time() + 30 * 86400)
        assert [f.kind for f in report.findings] == ["stale_now", "log_over_limit"]
        res = prune(s, "finn", report, dry_run=False)
        assert [a.applied for a in res.actions] == [False, True]
        assert mem.log.count() == 1
