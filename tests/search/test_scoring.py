"""Ranking math: decay, BM25 normalisation, fusion, thread re-ranking, explain."""

from __future__ import annotations

import json
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
    conn.executemany("INSERT INTO t(rowid, x) VALUES (?, ?)", [
        (1, "lake lake lake sunrise"), (2, "a lake"), (3, "mountain"), (4, "river"),
        (5, "forest"), (6, "sea")])
    rows = conn.execute(
        "SELECT rowid, bm25(t) FROM t WHERE t MATCH '\"lake\"' ORDER BY bm25(t)").fetchall()
    assert [r[0] for r in rows] == [1, 2] and all(raw < 0 for _, raw in rows)
    rel = {rid: sc.bm25_relevance(raw) for rid, raw in rows}
    assert rel[1] > rel[2] > 0
    assert sc.bm25_relevance(3.0) == 0.0
    assert sc.bm25_relevance(-2.5) == 2.5


def test_normalisations() -> None:
    assert sc.max_normalize({"a": 4.0, "b": 2.0, "c": 0.0}) == {"a": 1.0, "b": 0.5, "c": 0.0}
    assert sc.max_normalize({}) == {}
    assert sc.max_normalize({"a": 0.0, "b": -1.0}) == {"a": 0.0, "b": -1.0}
    assert sc.minmax({"a": 0.2, "b": 0.6, "c": 0.4}) == pytest.approx({"a": 0.0, "b": 1.0, "c": 0.5})
    assert sc.minmax({"a": 0.3, "b": 0.3}) == {"a": 1.0, "b": 1.0}
    assert sc.minmax({}) == {}


def test_combine() -> None:
    assert sc.combine(2.0, 0.5) == 1.0
    assert sc.combine(2.0) == 2.0
    assert sc.combine(3.0, sc.decay(24, 24)) == pytest.approx(1.5)


def test_linear_and_weighted_fusion() -> None:
    assert sc.linear_fusion([(0.4, {"a": 1.0}), (0.6, {"a": 0.5, "b": 1.0})]) == pytest.approx(
        {"a": 0.7, "b": 0.6})
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


POS = {
    "s1-0": ("s1", 0), "s1-1": ("s1", 1), "s1-2": ("s1", 2), "s1-3": ("s1", 3),
    "s2-0": ("s2", 0), "s2-1": ("s2", 1),
}


def test_window_mean() -> None:
    cos = {"s1-0": 0.2, "s1-1": 0.8, "s1-2": 0.5, "s2-0": 0.9, "s2-1": 0.1}
    w = sc.window_mean(cos, POS, radius=1)
    assert w["s1-0"] == pytest.approx((0.2 + 0.8) / 2)
    assert w["s1-1"] == pytest.approx((0.2 + 0.8 + 0.5) / 3)
    assert w["s1-2"] == pytest.approx((0.8 + 0.5) / 2)  # s1-3 unscored: not counted
    assert w["s2-0"] == pytest.approx(0.5)  # never crosses into thread s1
    assert sc.window_mean({"x": 0.7}, POS) == {"x": 0.7}  # no position: own window
    assert sc.window_mean(cos, POS, radius=0) == cos


def test_propagate_neighbours() -> None:
    s = {"s1-1": 1.0, "s2-0": 0.5}
    p = sc.propagate_neighbours(s, POS, weight=0.2)
    assert p["s1-1"] == pytest.approx(1.0)
    assert p["s1-0"] == pytest.approx(0.2) and p["s1-2"] == pytest.approx(0.2)
    assert "s1-3" not in p  # two steps away
    assert p["s2-0"] == pytest.approx(0.5) and p["s2-1"] == pytest.approx(0.1)
    # the stronger neighbour counts; the input is not modified
    q = sc.propagate_neighbours({"s1-0": 0.4, "s1-1": 0.1, "s1-2": 0.9}, POS, weight=0.5)
    assert q["s1-1"] == pytest.approx(0.1 + 0.45)
    assert s == {"s1-1": 1.0, "s2-0": 0.5}
    assert sc.propagate_neighbours({"x": 1.0}, {}, weight=0.3) == {"x": 1.0}


def test_thread_boost() -> None:
    thread = {k: v[0] for k, v in POS.items()}
    s = {"s1-0": 1.0, "s1-1": 0.8, "s1-2": 0.6, "s2-0": 0.9, "s2-1": 0.0, "loose": 0.5}
    b = sc.thread_boost(s, thread, weight=0.3, top_n=3)
    agg1, agg2 = (1.0 + 0.8 + 0.6) / 3, (0.9 + 0.0) / 2
    assert b["s1-2"] == pytest.approx(0.6 + 0.3)
    assert b["s2-0"] == pytest.approx(0.9 + 0.3 * agg2 / agg1)
    assert b["loose"] == 0.5
    # the thread with several good hits overtakes a lone best hit
    assert b["s1-0"] > b["s2-0"]
    assert sc.thread_boost({}, thread) == {}
    assert sc.thread_boost({"s1-0": 0.0}, thread) == {"s1-0": 0.0}


def test_rank() -> None:
    s = {"a": 0.1, "b": 0.9, "c": 0.5, "d": 0.5}
    assert sc.rank(s) == ["b", "c", "d", "a"]
    assert sc.rank(s, 2) == ["b", "c"]
    assert sc.rank(s, 0) == []
    assert sc.rank({}) == []


def test_explain() -> None:
    e = sc.explain(final=0.123456789, relevance=1.0, bm25=-7.25, decay_factor=0.5,
                   components={"text": 0.4, "vec": 1 / 3}, mode="hybrid", missing=None)
    assert e == {"final": 0.123457, "relevance": 1.0, "bm25": -7.25, "decay": 0.5,
                 "components": {"text": 0.4, "vec": 0.333333}, "mode": "hybrid"}
    json.dumps(e)
    assert sc.explain(final=1) == {"final": 1.0}


def test_pipeline_composition_orders_as_documented() -> None:
    # text hit in s1-1, dense favours s2-0; the documented pipeline end to end
    lex = {"s1-1": 8.0, "s1-2": 2.0}
    cos = {k: v for k, v in zip(POS, [0.1, 0.3, 0.2, 0.0, 0.35, 0.05], strict=True)}
    dense = sc.linear_fusion([(0.6, sc.minmax(cos)),
                              (0.4, sc.minmax(sc.window_mean(cos, POS, radius=1)))])
    s = sc.linear_fusion([(0.4, sc.max_normalize(lex)), (0.6, dense)])
    s = sc.propagate_neighbours(s, POS, weight=0.2)
    s = sc.thread_boost(s, {k: v[0] for k, v in POS.items()}, weight=0.3)
    top = sc.rank(s, 3)
    assert top[0] == "s1-1"
    assert set(top) <= set(POS)


def test_bm25_term_matches_the_okapi_formula() -> None:
    import math

    from memstrata.search.scoring import bm25_term

    idf = math.log(1 + (1000 - 10 + 0.5) / (10 + 0.5))
    assert bm25_term(2, 10, 1000, 20, 20) == pytest.approx(idf * 2 * 2.2 / (2 + 1.2))
    assert bm25_term(0, 10, 1000, 20, 20) == 0.0
    # longer than average documents weigh a term less; rarer terms weigh more
    assert bm25_term(1, 10, 1000, 40, 20) < bm25_term(1, 10, 1000, 10, 20)
    assert bm25_term(1, 500, 1000, 20, 20) < bm25_term(1, 5, 1000, 20, 20)
