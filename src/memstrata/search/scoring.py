"""Ranking math on plain numbers: decay, BM25 normalisation, fusion, thread re-ranking.

Pure functions (no sqlite, no I/O). Scores are floats, higher is better, unless a
docstring says otherwise. Keyed functions take ``Mapping[K, float]`` for any
hashable key K (a uid, a row id) and return a new ``dict``; inputs are never
modified.

The LoCoMo-tuned pipeline (see the retrieval findings) composes them as:

    text  = max_normalize(bm25_relevance(bm25) per lexical candidate)
    dense = 0.6 x minmax(cos) + 0.4 x minmax(window_mean(cos, radius 1))
    s     = linear_fusion([(0.4, text), (0.6, dense)]) + 0.3 x [author named in query]
    s     = propagate_neighbours(s, weight 0.2)
    s     = thread_boost(s, weight 0.3, top_n 3)
    final = combine(s, decay(age, half_life))
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

K = TypeVar("K", bound=Hashable)

Position = tuple[str, int]
"""Where a document sits in a thread: (thread id, position in the thread)."""


def decay(age_hours: float, half_life_hours: float | None) -> float:
    """Exponential recency factor: exp(-ln 2 / half_life x age).

    1.0 at age 0, 0.5 at one half-life. `half_life_hours` None or <= 0 means no
    decay (1.0). A negative age (clock skew, future timestamp) counts as 0.
    """
    if not half_life_hours or half_life_hours <= 0:
        return 1.0
    age = max(0.0, float(age_hours))
    return math.exp(-math.log(2.0) / half_life_hours * age)


def bm25_relevance(raw: float) -> float:
    """FTS5 ``bm25()`` (negative, lower = better) as a relevance >= 0: max(0, -raw)."""
    return max(0.0, -float(raw))


def bm25_term(tf: int, df: int, total: int, length: float, avg_length: float, *,
              k1: float = 1.2, b: float = 0.75) -> float:
    """One term's Okapi BM25 weight in one document (FTS5's k1 and b).

    idf   = ln(1 + (N - df + 0.5) / (df + 0.5))
    score = idf x tf x (k1 + 1) / (tf + k1 x (1 - b + b x |d| / avg|d|))
    """
    if tf <= 0:
        return 0.0
    idf = math.log(1 + (total - df + 0.5) / (df + 0.5))
    norm = 1 - b + b * length / (avg_length or 1.0)
    return idf * tf * (k1 + 1) / (tf + k1 * norm)


def max_normalize(scores: Mapping[K, float]) -> dict[K, float]:
    """s / max(s) over the list (keeps ratios, best = 1.0); all <= 0 -> unchanged.

    Used for BM25 relevance: a document with half the best BM25 gets 0.5, which
    keeps the weak-match information that min-max would stretch away.
    """
    if not scores:
        return {}
    hi = max(scores.values())
    if hi <= 0:
        return dict(scores)
    return {k: v / hi for k, v in scores.items()}


def minmax(scores: Mapping[K, float]) -> dict[K, float]:
    """(s - min) / (max - min) over the list; 1.0 for every entry when all are equal."""
    if not scores:
        return {}
    lo, hi = min(scores.values()), max(scores.values())
    if hi == lo:
        return {k: 1.0 for k in scores}
    return {k: (v - lo) / (hi - lo) for k, v in scores.items()}


def combine(relevance: float, decay_factor: float = 1.0) -> float:
    """Per-hit score: relevance x decay."""
    return relevance * decay_factor


def linear_fusion(parts: Iterable[tuple[float, Mapping[K, float]]]) -> dict[K, float]:
    """sum_i w_i x s_i(d) over (weight, scores) pairs; a key missing from a part scores 0 there."""
    out: dict[K, float] = defaultdict(float)
    for w, scores in parts:
        for k, v in scores.items():
            out[k] += w * v
    return dict(out)


def weighted_fusion(
    text: Mapping[K, float],
    vec: Mapping[K, float],
    *,
    w_text: float = 0.5,
    w_vec: float = 0.5,
    text_norm: str = "minmax",
) -> dict[K, float]:
    """finalScore(d) = w_vec x minmax(cos)(d) + w_text x bm25norm(d).

    bm25norm is `minmax` (default) or `max_normalize` (``text_norm="max"``) of the
    BM25 relevances; a document absent from one list scores 0 on that side.
    """
    if text_norm not in ("minmax", "max"):
        raise ValueError("text_norm must be 'minmax' or 'max'")
    t = minmax(text) if text_norm == "minmax" else max_normalize(text)
    return linear_fusion([(w_text, t), (w_vec, minmax(vec))])


def rrf(
    rankings: Sequence[Sequence[K]], *, k: int = 60, weights: Sequence[float] | None = None
) -> dict[K, float]:
    """Reciprocal rank fusion (Cormack et al. 2009): sum_lists w_l / (k + rank_l(d)), rank from 1."""
    if weights is not None and len(weights) != len(rankings):
        raise ValueError("one weight per ranking")
    out: dict[K, float] = defaultdict(float)
    for li, ranking in enumerate(rankings):
        w = 1.0 if weights is None else weights[li]
        for rank, key in enumerate(ranking, start=1):
            out[key] += w / (k + rank)
    return dict(out)


def _by_position(position: Mapping[K, Position]) -> dict[Position, K]:
    return {pos: key for key, pos in position.items()}


def window_mean(
    scores: Mapping[K, float], position: Mapping[K, Position], *, radius: int = 1
) -> dict[K, float]:
    """Mean score of a document and its thread neighbours within `radius` positions.

    w(d) = mean{ s(e) : thread(e) = thread(d), |pos(e) - pos(d)| <= radius, e scored }.
    A document without a position is its own window. Used on cosine similarities,
    it scores a message by the passage around it (a reply and the question it
    answers) without a second embedding per message.
    """
    at = _by_position(position)
    out: dict[K, float] = {}
    for key, s in scores.items():
        pos = position.get(key)
        if pos is None:
            out[key] = s
            continue
        thread, p = pos
        vals = [s]
        for d in range(-radius, radius + 1):
            other = at.get((thread, p + d))
            if d != 0 and other is not None and other in scores:
                vals.append(scores[other])
        out[key] = sum(vals) / len(vals)
    return out


def propagate_neighbours(
    scores: Mapping[K, float], position: Mapping[K, Position], *, weight: float = 0.2
) -> dict[K, float]:
    """s'(d) = s(d) + weight x max(s(prev), s(next)), prev/next = same thread, position -+ 1.

    Neighbours that are known (`position`) but unscored enter with s = 0 plus the
    propagated part, so the message right after a strong hit (often the answer to
    it) can be recalled. Missing neighbours count as 0.
    """
    at = _by_position(position)
    out: dict[K, float] = dict(scores)
    for key, pos in position.items():
        thread, p = pos
        best = 0.0
        for d in (-1, 1):
            other = at.get((thread, p + d))
            if other is not None:
                best = max(best, scores.get(other, 0.0))
        if best > 0 or key in scores:
            out[key] = scores.get(key, 0.0) + weight * best
    return out


def thread_boost(
    scores: Mapping[K, float],
    thread: Mapping[K, str],
    *,
    weight: float = 0.3,
    top_n: int = 3,
) -> dict[K, float]:
    """s'(d) = s(d) + weight x agg(thread(d)) / max_t agg(t).

    agg(t) = mean of the `top_n` best scores in thread t (fewer if the thread has
    fewer scored documents). A thread (session) that matches the query in several
    places lifts all its documents a little. Documents without a thread are unchanged.
    """
    groups: dict[str, list[float]] = defaultdict(list)
    for key, s in scores.items():
        t = thread.get(key)
        if t is not None:
            groups[t].append(s)
    agg = {t: sum(sorted(v, reverse=True)[: max(1, top_n)]) / min(len(v), max(1, top_n))
           for t, v in groups.items()}
    hi = max(agg.values(), default=0.0)
    if hi <= 0:
        return dict(scores)
    out: dict[K, float] = {}
    for key, s in scores.items():
        t = thread.get(key)
        out[key] = s + (weight * agg[t] / hi if t is not None else 0.0)
    return out


def rank(scores: Mapping[K, float], k: int | None = None) -> list[K]:
    """Keys by descending score (ties keep insertion order), at most `k`."""
    ordered = sorted(scores, key=lambda key: -scores[key])
    return ordered if k is None else ordered[: max(0, k)]


def explain(
    *,
    final: float,
    relevance: float | None = None,
    bm25: float | None = None,
    decay_factor: float | None = None,
    components: Mapping[str, float] | None = None,
    digits: int = 6,
    **extra: Any,
) -> dict[str, Any]:
    """A JSON-friendly record of how a hit scored: the parts given, floats rounded.

    ``explain(final=0.5, relevance=1.0, decay_factor=0.5)`` ->
    ``{"final": 0.5, "relevance": 1.0, "decay": 0.5}``. None parts are left out.
    """
    def r(x: Any) -> Any:
        return round(x, digits) if isinstance(x, float) else x

    out: dict[str, Any] = {"final": r(float(final))}
    if relevance is not None:
        out["relevance"] = r(float(relevance))
    if bm25 is not None:
        out["bm25"] = r(float(bm25))
    if decay_factor is not None:
        out["decay"] = r(float(decay_factor))
    if components:
        out["components"] = {name: r(float(v)) for name, v in components.items()}
    for name, v in extra.items():
        if v is not None:
            out[name] = r(v)
    return out
