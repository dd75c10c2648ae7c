"""Verify before use: file, line and symbol claims checked against a codebase root."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstrata import NotFound, Store
from memstrata.lifecycle import flag_stale, recall_verified, verify_citations
from memstrata.lifecycle.verify import claims

CODE = """\
import os


class Store:
    def open(self):
        return os.getcwd()


def parse_log(data):
    return data.split()
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "store.py").write_text(CODE)
    (root / "README.md").write_text("# repo\n")
    (root / ".git").mkdir()
    (root / ".git" / "ghost.py").write_text("def ghost_symbol(): pass\n")
    return root


def test_claims_parse_paths_lines_and_symbols() -> None:
    got = claims("Lock is in src/a.py:12 via Store.open and parse_log(). See README.md.")
    assert ("src/a.py", 12) in [(p, line) for _, p, line, _ in got]
    syms = {s for _, _, _, ss in got for s in ss}
    assert syms == {"Store.open", "parse_log()"}
    assert "README.md" in [p for _, p, _, _ in got]


def test_valid_claims_produce_no_findings(store: Store, repo: Path) -> None:
    mem = store.agent("finn")
    mem.facts.set(
        "store", "Store.open returns the cwd.", "project", citations=["src/pkg/store.py:5"]
    )
    mem.files.write("notes.md", "parse_log() lives in src/pkg/store.py:9 and store.py is small.\n")
    assert verify_citations(store, "finn", repo) == []


def test_stale_claims_are_found(store: Store, repo: Path) -> None:
    mem = store.agent("finn")
    mem.facts.set(
        "gone",
        "The cache layer is in src/pkg/cache.py.",
        "project",
        citations=["docs/architecture.md"],
    )
    # A file:line location is no fact text (seed 001: derivable code state); it is a citation.
    mem.facts.set(
        "eof", "Locking happens in the store module.", "project", citations=["src/pkg/store.py:400"]
    )
    mem.facts.set(
        "moved", "Parsing is in src/parse/store.py.", "project", citations=["docs/architecture.md"]
    )
    mem.context.write("# Memory\n\nSee src/pkg/store.py:2 for Store.open.\n")
    mem.now.update("Fix compact_everything() before release", [])
    mem.files.write("notes.md", "ghost_symbol() handles retries.\n")
    findings = verify_citations(store, "finn", repo)
    got = {(f.source, f.ref, f.problem) for f in findings}
    assert ("fact:gone", "src/pkg/cache.py", "missing") in got
    assert ("fact:eof", "src/pkg/store.py:400", "beyond_eof") in got
    assert ("fact:moved", "src/parse/store.py", "moved") in got
    ctx = store.rel(mem.context.path)
    assert (ctx, "src/pkg/store.py:2", "symbol_not_on_line") in got
    assert (store.rel(mem.now.path), "compact_everything()", "symbol_not_found") in got
    # .git is not code: a symbol only found there is stale
    assert (store.rel(mem.files.root / "notes.md"), "ghost_symbol()", "symbol_not_found") in got
    assert all(f.stale for f in findings)
    assert len(findings) == len(got)


def test_flag_stale_marks_recalled_hits(store: Store, repo: Path) -> None:
    mem = store.agent("finn")
    mem.facts.set(
        "eof",
        "Locking happens in the store module for sure.",
        "project",
        citations=["src/pkg/store.py:400"],
    )
    mem.facts.set(
        "ok",
        "Locking wrapper is Store.open in src/pkg/store.py.",
        "project",
        citations=["src/pkg/store.py"],
    )
    mem.files.write("notes.md", "# Locking\n\nLocking retries live in retry_lock().\n")
    hits = store.search("locking", agent="finn")
    assert len(hits) == 3
    flagged = {h.uid: h for h in flag_stale(hits, verify_citations(store, "finn", repo))}
    assert "stale" in flagged["fact:finn:eof"].explain
    assert "beyond_eof" in flagged["fact:finn:eof"].explain["stale"][0]
    assert "stale" not in flagged["fact:finn:ok"].explain
    notes = next(h for h in flagged.values() if h.layer == "file")
    assert any("retry_lock()" in w for w in notes.explain["stale"])
    assert all(h.explain.get("stale") is None for h in hits)  # originals untouched
    wrapped = recall_verified(store, "finn", "locking", repo)
    assert sum(1 for h in wrapped if "stale" in h.explain) == 2


def test_bad_root(store: Store, tmp_path: Path) -> None:
    with pytest.raises(NotFound):
        verify_citations(store, "finn", tmp_path / "nope")
