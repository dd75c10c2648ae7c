"""Knowledge extraction into items.json: walk, skip, replace, cite, LLM path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lifecycle_stub_llm import StubLLM

from memstrata import NotFound, PathOutsideStore, Store
from memstrata.lifecycle import extract_items
from memstrata.llm.openai_compat import ChatClient, LLMExtractor

ARCH = """\
# Architecture

Decision: use Fastify for the API.

- [ ] migrate the billing tables
SQLite stores the search index.
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "Architecture.md").write_text(ARCH)
    (root / "notes.txt").write_text("TODO: write the release notes\n")
    (root / "logo.md").write_bytes(b"\x89PNG\x00\x00binary")
    (root / "huge.md").write_text("Decision: too big.\n" * 70_000)
    (root / "code.py").write_text("# Decision: not a doc file\n")
    for skipped in (".git", "node_modules", ".memstrata"):
        (root / skipped).mkdir()
        (root / skipped / "x.md").write_text("Decision: must not be read.\n")
    return root


def test_extracts_with_citations_and_skips(store: Store, project: Path) -> None:
    report = extract_items(store, project)
    assert report.extracted == {"docs/Architecture.md": 4, "notes.txt": 1}
    assert report.skipped == {"huge.md": "larger than 1048576 bytes", "logo.md": "binary"}
    assert report.errors == {} and report.items_written == 5
    items = {(i.sourceFile, i.lineNumber): i for i in store.items.list()}
    decision = items[("docs/Architecture.md", 3)]
    assert decision.type == "decision" and "Fastify" in decision.content
    assert 0 < decision.confidence <= 1
    assert items[("docs/Architecture.md", 5)].type == "task"
    assert items[("notes.txt", 1)].type == "task"
    assert all("must not be read" not in i.content for i in store.items.list())
    assert store.search("Fastify")[0].layer == "item"


def test_reextraction_replaces(store: Store, project: Path) -> None:
    extract_items(store, project)
    (project / "docs" / "Architecture.md").write_text("Decision: use Express after all.\n")
    report = extract_items(store, project, paths=["docs/Architecture.md"])
    assert report.extracted == {"docs/Architecture.md": 1}
    arch = store.items.list(source_file="docs/Architecture.md")
    assert [(i.type, i.lineNumber) for i in arch] == [("decision", 1)]
    assert "Express" in arch[0].content
    assert len(store.items.list(source_file="notes.txt")) == 1  # other files untouched
    data = json.loads(store.layout.items.read_text())
    assert len(data) == 2


def test_bad_input_is_typed(store: Store, project: Path) -> None:
    with pytest.raises(NotFound):
        extract_items(store, project / "nope")
    with pytest.raises(PathOutsideStore):
        extract_items(store, project, paths=["../outside.md"])
    assert not store.layout.items.exists()


def test_llm_extractor_and_failure(store: Store, project: Path, stub_llm: StubLLM) -> None:
    extract_items(store, project, paths=["notes.txt"])
    before = store.layout.items.read_bytes()
    llm = LLMExtractor(ChatClient(stub_llm.base_url, "m", timeout=1, max_retries=0))
    stub_llm.mode = "garbage"
    report = extract_items(store, project, paths=["notes.txt"], extractor=llm)
    assert list(report.errors) == ["notes.txt"] and report.extracted == {}
    assert store.layout.items.read_bytes() == before  # old items kept
    stub_llm.mode = "ok"
    stub_llm.reply = json.dumps(
        [
            {
                "type": "task",
                "title": "Write release notes",
                "content": "Write the release notes",
                "line_number": 1,
                "confidence": 0.7,
            }
        ]
    )
    report = extract_items(store, project, paths=["notes.txt"], extractor=llm)
    assert report.extracted == {"notes.txt": 1}
    assert report.usage is not None and report.usage["calls"] == 1
    [item] = store.items.list(source_file="notes.txt")
    assert (item.title, item.confidence, item.lineNumber) == ("Write release notes", 0.7, 1)
