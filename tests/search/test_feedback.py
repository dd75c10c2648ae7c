"""Pseudo-relevance feedback in vector space (`search.feedback`, `[search] feedback`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from memstrata import SearchQuery, Store
from memstrata.embed.base import FakeEmbedder
from memstrata.search.feedback import SEEDS, feedback_vector


def test_the_query_moves_toward_the_mean_of_its_seeds_by_the_weight() -> None:
    q = np.array([3.0, 0.0, 0.0])
    seeds = np.array([[0.0, 2.0, 0.0], [0.0, 0.0, 2.0]])
    got = feedback_vector(np, q, seeds, 0.5)
    c = np.array([0.0, 1.0, 1.0]) / np.sqrt(2.0)
    assert np.allclose(got, np.array([1.0, 0.0, 0.0]) + 0.5 * c)
    assert feedback_vector(np, q, seeds, 0.0) is not None
    assert np.allclose(feedback_vector(np, q, seeds, 0.0), q)  # off: the query as it is
    assert np.allclose(feedback_vector(np, q, seeds[:0], 1.0), q)  # no seed: as it is


def _store(home: Path, config: str) -> Store:
    (home / "config.toml").write_text(config)
    store = Store(home, agent="a")
    store.use_embedder(FakeEmbedder(dim=64))
    sessions = store.agent().sessions
    turns = [
        ("John", "I just finished reading a fantasy series"),
        ("Maria", "the weather was great at the beach"),
        ("John", "my favourite books are about dragons"),
        ("Maria", "we cooked pasta for dinner"),
        ("John", "reading before bed helps me sleep"),
        ("Maria", "the dog chased a ball in the park"),
    ]
    sessions.append_many(
        "s1",
        [
            {"id": f"D1:{i}", "role": "user", "speaker": who, "content": text}
            for i, (who, text) in enumerate(turns, 1)
        ],
    )
    return store


def test_feedback_is_off_by_default_and_explain_names_its_seeds_when_on(tmp_path: Path) -> None:
    q = SearchQuery(text="What books has John read?", layers=("session",), k=5, mode="hybrid")
    (tmp_path / "off").mkdir()
    with _store(tmp_path / "off", '[search]\nembedder = "fake"\n') as off:
        hits = off.search(q)
        assert hits and all("feedback" not in h.explain for h in hits)
    (tmp_path / "on").mkdir()
    with _store(tmp_path / "on", '[search]\nembedder = "fake"\nfeedback = 1.0\n') as on:
        assert on.config.feedback == 1.0
        hits = on.search(q)
        assert hits
        for h in hits:
            assert h.explain["feedback"] == 1.0
            seeds = h.explain["feedback_seeds"]
            assert 1 <= len(seeds) <= SEEDS and len(set(seeds)) == len(seeds)
