"""Pseudo-relevance feedback in vector space (`search.feedback`, `[search] feedback`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memstrata import SearchQuery, Store
from memstrata.embed.base import FakeEmbedder
from memstrata.index.vectors import VectorIndex
from memstrata.search import hybrid
from memstrata.search.feedback import PINNED, SEEDS, acts, feedback_vector, pinned


def test_the_query_moves_toward_the_mean_of_its_seeds_by_the_weight() -> None:
    q = np.array([3.0, 0.0, 0.0])
    seeds = np.array([[0.0, 2.0, 0.0], [0.0, 0.0, 2.0]])
    got = feedback_vector(np, q, seeds, 0.5)
    c = np.array([0.0, 1.0, 1.0]) / np.sqrt(2.0)
    assert np.allclose(got, np.array([1.0, 0.0, 0.0]) + 0.5 * c)
    assert feedback_vector(np, q, seeds, 0.0) is not None
    assert np.allclose(feedback_vector(np, q, seeds, 0.0), q)  # off: the query as it is
    assert np.allclose(feedback_vector(np, q, seeds[:0], 1.0), q)  # no seed: as it is


def _store(home: Path, config: str, embedder: FakeEmbedder | None = None) -> Store:
    (home / "config.toml").write_text(config)
    store = Store(home, agent="a")
    store.use_embedder(embedder or FakeEmbedder(dim=64))
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


def _counting(monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], list[list[str]]]:
    """Record each lexical search's query and each token-vector read's uids."""
    lexical: list[str] = []
    read: list[list[str]] = []
    real_pool = hybrid.lexical_pool
    real_sets = VectorIndex.token_sets

    def pool(store: Any, q: SearchQuery, *args: Any, **kw: Any) -> Any:
        lexical.append(q.text)
        return real_pool(store, q, *args, **kw)

    def sets(self: VectorIndex, uids: Any) -> Any:
        uids = list(uids)
        read.append(uids)
        return real_sets(self, uids)

    monkeypatch.setattr(hybrid, "lexical_pool", pool)
    monkeypatch.setattr(VectorIndex, "token_sets", sets)
    return lexical, read


def test_feedback_reruns_neither_the_lexical_search_nor_a_candidates_maxsim(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second pass reuses the first's lexical pool and MaxSim (`hybrid._Read`): one
    FTS5 search a question, each candidate's token vectors read once, on and off alike."""
    q = SearchQuery(text="What books has John read?", layers=("session",), k=5, mode="hybrid")
    lexical, read = _counting(monkeypatch)
    config = '[search]\nembedder = "fake"\nfeedback = 1.0\n'
    with _store(tmp_path, config, FakeEmbedder(dim=64, tokens=True)) as store:
        store.vectors(store.embedder()).build(wait=True)
        lexical.clear()
        read.clear()
        hits = store.search(q)
        assert hits and hits[0].explain["feedback_seeds"]
        assert hits[0].explain.get("maxsim") is not None  # MaxSim took part
        assert lexical == [q.text]  # one lexical search, not one a pass
        uids = [u for part in read for u in part]
        assert uids and len(uids) == len(set(uids))  # no candidate's token vectors twice


def test_feedback_applies_to_a_search_given_its_query_vector(tmp_path: Path) -> None:
    """`hybrid_search(query_vector=...)` (the bench's timed loop, the API) moves the
    given vector too: feedback is a setting of the store, not of who embedded the query."""
    q = SearchQuery(text="What books has John read?", layers=("session",), k=5, mode="hybrid")
    emb = FakeEmbedder(dim=64)
    with _store(tmp_path, '[search]\nembedder = "fake"\nfeedback = 1.0\n', emb) as store:
        v = emb.embed([q.text])[0]
        hits = hybrid.hybrid_search(store, q, emb, query_vector=v)
        assert hits and all(h.explain["feedback_seeds"] for h in hits)


def test_bench_semantic_searches_with_the_search_config_of_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`bench semantic`'s 10k hybrid store reads MEMSTRATA_BENCH_SEARCH_CONFIG, as `bench
    locomo` does: its p95 can be paired with feedback on and off."""
    from memstrata.bench.semantic import hybrid_config

    for extra, want in ((None, 0.0), ("feedback = 1.0", 1.0)):
        if extra is None:
            monkeypatch.delenv("MEMSTRATA_BENCH_SEARCH_CONFIG", raising=False)
        else:
            monkeypatch.setenv("MEMSTRATA_BENCH_SEARCH_CONFIG", extra)
        home = tmp_path / str(want)
        home.mkdir()
        (home / "config.toml").write_text(hybrid_config())
        with Store(home, agent="bench") as store:
            assert store.config.feedback == want
            assert store.config.embedder == "none"


def test_feedback_leaves_a_question_alone_when_a_seed_is_a_long_message(tmp_path: Path) -> None:
    """A long message's vector is the mean of its chunks, mostly filler: with one among
    the seeds (`feedback.acts`) the query is not moved, and the hits are feedback off's."""
    q = SearchQuery(text="What books has John read?", layers=("session",), k=5, mode="hybrid")
    filler = " ".join(
        f"Generic note {i} about deployment pipelines and caching." for i in range(40)
    )
    long_turn = f"John read a fantasy series about books and dragons. {filler}"
    assert len(long_turn) > 1200  # more than one unit (`index.units.CHUNK_CHARS`)
    got = {}
    for fb in ("0", "1.0"):
        (tmp_path / fb).mkdir()
        with _store(tmp_path / fb, f'[search]\nembedder = "fake"\nfeedback = {fb}\n') as store:
            store.agent().sessions.append_many(
                "s2", [{"id": "D2:1", "role": "user", "speaker": "John", "content": long_turn}]
            )
            hits = store.search(q)
            assert any(h.meta.get("id") == "D2:1" for h in hits[:SEEDS])
            assert all("feedback_seeds" not in h.explain for h in hits)
            got[fb] = [h.uid for h in hits]
    assert got["0"] == got["1.0"]
    assert acts([1, 1]) and not acts([1, 2])  # the rule itself: one long seed is enough


def test_the_first_hits_keep_their_places_when_the_query_moves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Feedback orders what follows the first pass's best `PINNED` hits, not them: moved
    toward an unrelated message, the top 3 stay the first pass's, in its order."""
    q = SearchQuery(text="What books has John read?", layers=("session",), k=5, mode="hybrid")
    emb = FakeEmbedder(dim=64)
    away = emb.embed(["the dog chased a ball in the park"])[0]
    monkeypatch.setattr(hybrid, "feedback_vector", lambda np, q, rows, w: np.asarray(away))
    tops = {}
    for fb in ("0", "1.0"):
        (tmp_path / fb).mkdir()
        with _store(tmp_path / fb, f'[search]\nembedder = "fake"\nfeedback = {fb}\n', emb) as s:
            hits = s.search(q)
            tops[fb] = [h.uid for h in hits]
            if fb == "1.0":
                assert hits[0].explain["feedback_seeds"]  # the query did move
    assert tops["1.0"][:PINNED] == tops["0"][:PINNED]
    assert pinned(["b", "a"], ["a", "c", "b", "d"], 3) == ["b", "a", "c"]


def test_feedback_answers_a_search_at_the_largest_k(tmp_path: Path) -> None:
    """The second pass asks for `PINNED` more hits than the question, never past `MAX_K`
    (`bench locomo`'s session ranking asks for 50: it raised MalformedInput)."""
    from memstrata.search.query import MAX_K

    q = SearchQuery(text="What books has John read?", layers=("session",), k=MAX_K, mode="hybrid")
    with _store(tmp_path, '[search]\nembedder = "fake"\nfeedback = 1.0\n') as store:
        hits = store.search(q)
        assert hits and hits[0].explain["feedback_seeds"]
