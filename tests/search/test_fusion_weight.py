"""Issue 22 (locomo22b): MaxSim weighs 0.75 in the z-score sum, not 1.

MaxSim and the pooled cosine both read the question's meaning; at equal weight the two
outvoted the words, and a turn that holds the question's rare words lost to one that
only paraphrases it more closely, piece by piece (LoCoMo dev, leave-one-conversation-out:
docs/benchmarks-recall.md section 10)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from memstrata import SearchQuery, Store
from memstrata.embed.base import FakeEmbedder
from memstrata.index.vector_matrix import Dense
from memstrata.search import hybrid


def _dense(scores: dict[str, float]) -> dict[str, Dense]:
    return {u: Dense(uid=u, score=s, source="unit", detail=0, units=1) for u, s in scores.items()}


def test_a_turn_with_the_words_beats_a_closer_paraphrase_piece_by_piece() -> None:
    """`answer` holds the question's words (best BM25) and is as near on meaning as
    `echo`; `echo` has the better MaxSim. With MaxSim at weight 1 `echo` came first."""
    cands = ["answer", "echo", "other1", "other2"]
    lexical = {"answer": 1.0, "echo": 0.55}
    dense = _dense({"answer": 0.5, "echo": 0.5, "other1": 0.3, "other2": 0.3})
    maxsim = {"answer": 0.6, "echo": 0.8, "other1": 0.4, "other2": 0.4}
    store: Any = SimpleNamespace(config=SimpleNamespace(fusion="zsum"))
    relevance, fused, z = hybrid._fuse(store, cands, lexical, dense, maxsim)
    assert relevance["answer"] == 1.0 and relevance["echo"] < 1.0
    # the weight applies to MaxSim alone: the fused score is the weighted sum of the z-scores
    w = hybrid.MAXSIM_WEIGHT
    for u in cands:
        want = z["lexical"][u] + z["dense"][u] + w * z["maxsim"][u]
        assert abs(fused[u] - want) < 1e-9


def test_explain_gives_the_weighted_formula(home: Path) -> None:
    (home / "config.toml").parent.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text('[search]\nembedder = "fake"\n')
    with Store(home, agent="a") as store:
        store.use_embedder(FakeEmbedder(64, tokens=True))
        store.agent().sessions.append_many(
            "s1",
            [
                {"role": "user", "content": "the boiler got fixed on Monday"},
                {"role": "user", "content": "we walked the dog by the river"},
                {"role": "user", "content": "lunch was soup again"},
            ],
        )
        hits = store.search(
            SearchQuery(text="when was the boiler fixed?", layers=("session",), mode="hybrid")
        )
    assert hits and "boiler" in hits[0].text
    assert f"{hybrid.MAXSIM_WEIGHT:g} x z(maxsim)" in hits[0].explain["formula"]
