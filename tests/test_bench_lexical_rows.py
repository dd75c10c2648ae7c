"""The benchmarks' lexical rows time the lexical search, whatever mode searches default to.

Hybrid became the default mode when the embedder works without a download; the rows
named lexical (`bench search`'s lexical row, `bench ops`'s `recall (lexical)` and its
ratio to bare FTS5) went on calling `store.search` without a mode and so timed the
hybrid search (embedding each query) under the lexical name.
"""

from __future__ import annotations

from typing import Any

import pytest

from memstrata.bench import floors
from memstrata.bench.ops import run_ops
from memstrata.bench.search import run_search
from memstrata.search import recall
from memstrata.search.query import Hit, Searchable, SearchQuery


@pytest.fixture
def modes(monkeypatch: pytest.MonkeyPatch) -> list[str | None]:
    """The mode of every search the store runs (`recall.search` is its one door)."""
    seen: list[str | None] = []
    search = recall.search

    def spy(store: Searchable, q: SearchQuery) -> list[Hit]:
        seen.append(q.mode)
        return search(store, q)

    monkeypatch.setattr(recall, "search", spy)
    return seen


def test_bench_search_lexical_row_searches_lexically(modes: list[str | None]) -> None:
    rows = run_search(sizes=(200,), queries=5, hybrid=False)
    assert [r["mode"] for r in rows] == ["lexical"]
    assert modes == ["lexical"] * 5


def test_bench_ops_recall_rows_search_lexically(
    modes: list[str | None], monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_cold_start(home: Any, size: int) -> dict[str, Any]:  # not what is tested here
        return {"entries": size, "operation": "context cold start"}

    monkeypatch.setattr(floors, "cold_start", no_cold_start)
    rows = run_ops(sizes=(200,), repeat=3, floors=True)
    assert {"recall (lexical)"} <= {r["operation"] for r in rows if "floor" in r}
    assert len(modes) == 3 + 3  # the table's row, then the ratio's
    assert set(modes) == {"lexical"}
