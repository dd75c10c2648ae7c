"""Relevance (issue 22): bounded recency, the z-score fusion of lexical and dense
features, and what explain says about them. Fake embedder for mechanics."""

from __future__ import annotations

import time

import pytest

from memstrata import SearchQuery, Store
from memstrata.embed.base import FakeEmbedder
from memstrata.search import scoring

DAY = 86400.0


def test_an_old_strong_match_is_not_buried_by_recent_weak_ones(store: Store) -> None:
    """Months-old LOG entries answered nothing under plain decay (issue 22: the LOG row
    fell to 0.079 r@10): a weak match written today outranked the one that answers."""
    now = time.time()
    log = store.agent().log
    log.append(
        "THOUGHT",
        "staging database password rotates every 90 days through vault",
        ts=now - 60 * DAY,
    )
    for i in range(5):
        log.append("TOOL_USE", f"ran database migration {i} on staging", ts=now - 3600 * i)
    hits = store.search(SearchQuery(text="how often does the staging database password rotate"))
    assert "vault" in hits[0].text
    e = hits[0].explain
    assert e["decay"] < 0.1  # 60 days at a 14-day half-life
    assert e["recency"] >= 1 - store.config.recency_bound  # what age may take, at most


def test_recency_orders_near_ties_newest_first(store: Store) -> None:
    now = time.time()
    log = store.agent().log
    log.append("THOUGHT", "the deploy target is eu-central-1", ts=now - 30 * DAY)
    log.append("THOUGHT", "the deploy target is eu-west-3", ts=now - 2 * DAY)
    hits = store.search(SearchQuery(text="deploy target", layers=("log",)))
    assert [h.text for h in hits[:2]] == [
        "the deploy target is eu-west-3",
        "the deploy target is eu-central-1",
    ]


def test_recency_is_bounded_and_plain_decay_is_bound_one() -> None:
    assert scoring.recency(0.0, 0.1) == pytest.approx(0.9)
    assert scoring.recency(1.0, 0.1) == 1.0
    assert scoring.recency(0.25, 1.0) == pytest.approx(0.25)  # bound 1: plain decay
    assert scoring.recency(0.25, 0.0) == 1.0


def test_zsum_needs_no_weights_and_ignores_scale() -> None:
    lexical = {"a": 30.0, "b": 10.0, "c": 0.0}
    dense = {"a": 0.31, "b": 0.35, "c": 0.30}
    fused = scoring.zsum({"lexical": lexical, "dense": dense}, ["a", "b", "c"])
    scaled = scoring.zsum(
        {"lexical": {k: v * 1000 for k, v in lexical.items()}, "dense": dense}, ["a", "b", "c"]
    )
    assert fused == pytest.approx(scaled)  # BM25's scale does not matter, only its spread
    assert max(fused, key=lambda k: fused[k]) == "b"  # best on dense, good on lexical
    # a candidate with no vector yet scores the average on that feature
    partial = scoring.zsum({"lexical": lexical, "dense": {"a": 0.9, "b": 0.1}}, ["a", "b", "c"])
    assert partial["c"] == pytest.approx(scoring.zscores(lexical)["c"])


def test_hybrid_explains_every_feature_and_the_formula(store: Store) -> None:
    store.use_embedder(FakeEmbedder(64))
    m = store.agent()
    m.log.append("THOUGHT", "the cache eviction policy is LRU")
    m.facts.set("db", "postgres holds the billing tables")
    hits = store.search(SearchQuery(text="cache eviction policy", mode="hybrid", k=5))
    e = hits[0].explain
    assert hits[0].text == "the cache eviction policy is LRU"
    for key in ("lexical", "bm25", "dense", "dense_from", "z_lexical", "z_dense", "fused"):
        assert key in e, key
    assert e["fused"] == pytest.approx(e["z_lexical"] + e["z_dense"], abs=1e-5)
    assert e["score"] == pytest.approx(e["relevance"] * e["recency"], rel=1e-4)
    assert "z(lexical) + z(dense)" in e["formula"] and e["fusion"] == "zsum"


def test_hybrid_does_not_pad_a_small_store_with_unrelated_memories(store: Store) -> None:
    """A candidate no query word reaches is a hit only if it stands out on meaning
    (z_dense >= 1): a store of three memories used to answer every query with all three."""
    store.use_embedder(FakeEmbedder(64))
    m = store.agent()
    for text in ("the kettle whistles at dawn", "quarterly revenue grew", "ran the migration"):
        m.log.append("THOUGHT", text)
    hits = store.search(SearchQuery(text="kettle", mode="hybrid"))
    assert [h.text for h in hits] == ["the kettle whistles at dawn"]
