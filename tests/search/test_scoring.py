"""Ranking math: decay, BM25 normalisation, fusion, thread re-ranking, explain."""

from __future__ import annotations

import math
import sqlite3

import pytest

from memstrata.search import scoring as sc


def test_decay() -> None:
    assert sc.decay(0, 24) == 1.0
    assert sc.decay(24, 24) == pytest.approx(0.5)
    assert sc.decay(48, 24) == pytest.approx(0.25)
    assert sc.decay(10, 24) == pytest.approx(math.exp(-math.log(2) / 24 * 10))
    assert sc.decay(-5, 24) == 1.0  # future timestamps clamp to age 0
    assert sc.decay(1e6, None) == 1.0
    assert sc.decay(1e6, 0) == 1.0
    assert sc.decay(1e6, -3) == 1.0
    assert 0.0 <= sc.decay(1e9, 1) < 1e-12
    assert sc.decay(5, 24) > sc.decay(6, 24)


def test_bm25_relevance_from_real_fts5() -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61')")
    conn.executemany(
        "INSERT INTO t(rowid, x) VALUES (?, ?)",
        [
            (1, "lake lake lake sunrise"),
            (2, "a lake"),
            (3, "mountain"),
            (4, "river"),
            (5, "forest"),
            (6, "sea"),
        ],
    )
    rows = conn.execute(
        "SELECT rowid, bm25(t) FROM t WHERE t MATCH '\"lake\"' ORDER BY bm25(t)"
    ).fetchall()
    assert [r[0] for r in rows] == [1, 2] and all(raw < 0 for _, raw in rows)
    rel = {rid: sc.bm25_relevance(raw) for rid, raw in rows}
    assert rel[1] > rel[2] > 0
    assert sc.bm25_relevance(3.0) == 0.0
    assert sc.bm25_relevance(-2.5) == 2.5


def test_normalisations() -> None:
    assert sc.max_normalize({"a": 4.0, "b": 2.0, "c": 0.0}) == {"a": 1.0, "b": 0.5, "c": 0.0}
    assert sc.max_normalize({}) == {}
    assert sc.max_normalize({"a": 0.0, "b": -1.0}) == {"a": 0.0, "b": -1.0}
    assert sc.minmax({"a": 0.2, "b": 0.6, "c": 0.4}) == pytest.approx(
        {"a": 0.0, "b": 1.0, "c": 0.5}
    )
    assert sc.minmax({"a": 0.3, "b": 0.3}) == {"a": 1.0, "b": 1.0}
    assert sc.minmax({}) == {}


def test_linear_and_weighted_fusion() -> None:
    assert sc.linear_fusion([(0.4, {"a": 1.0}), (0.6, {"a": 0.5, "b": 1.0})]) == pytest.approx(
        {"a": 0.7, "b": 0.6}
    )
    assert sc.linear_fusion([]) == {}
    text = {"a": 10.0, "b": 5.0, "c": 0.0}
    vec = {"b": 0.9, "c": 0.5, "d": 0.1}
    f = sc.weighted_fusion(text, vec, w_text=0.3, w_vec=0.7)
    # text minmax: a 1, b .5, c 0; vec minmax: b 1, c .5, d 0
    assert f == pytest.approx({"a": 0.3, "b": 0.15 + 0.7, "c": 0.35, "d": 0.0})
    g = sc.weighted_fusion(text, vec, w_text=0.3, w_vec=0.7, text_norm="max")
    assert g["c"] == pytest.approx(0.35) and g["b"] == pytest.approx(0.85)
    with pytest.raises(ValueError):
        sc.weighted_fusion(text, vec, text_norm="zscore")
    assert sc.weighted_fusion({}, {}) == {}


def test_rrf() -> None:
    f = sc.rrf([["a", "b", "c"], ["b", "a"]], k=60)
    assert f["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert f["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert f["c"] == pytest.approx(1 / 63)
    w = sc.rrf([["a"], ["b"]], k=1, weights=[1.0, 3.0])
    assert w == pytest.approx({"a": 0.5, "b": 1.5})
    assert sc.rrf([]) == {}
    with pytest.raises(ValueError):
        sc.rrf([["a"]], weights=[1.0, 2.0])


def test_bm25_term_matches_the_okapi_formula() -> None:
    import math

    from memstrata.search.scoring import bm25_term

    idf = math.log(1 + (1000 - 10 + 0.5) / (10 + 0.5))
    assert bm25_term(2, 10, 1000, 20, 20) == pytest.approx(idf * 2 * 2.2 / (2 + 1.2))
    assert bm25_term(0, 10, 1000, 20, 20) == 0.0
    # longer than average documents weigh a term less; rarer terms weigh more
    assert bm25_term(1, 10, 1000, 40, 20) < bm25_term(1, 10, 1000, 10, 20)
    assert bm25_term(1, 500, 1000, 20, 20) < bm25_term(1, 5, 1000, 20, 20)
