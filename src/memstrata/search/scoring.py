"""Ranking math on plain numbers: decay, BM25 normalisation, fusion, thread re-ranking.

Pure functions (no sqlite, no I/O). Scores are floats, higher is better, unless a
docstring says otherwise. Keyed functions take ``Mapping[K, float]`` for any
hashable key K (a uid, a row id) and return a new ``dict``; inputs are never
modified.

Search composes them as (see `search.engine` and `search.hybrid`):

    lexical   = bm25_relevance(bm25) / best, + author bonus
    relevance = lexical                                        (lexical search)
              = unit_range(zsum({lexical, dense, ...}))        (hybrid search)
    score     = relevance x recency(decay(age, half_life), bound)
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import TypeVar

K = TypeVar("K", bound=Hashable)
_LN2 = math.log(2.0)  # (`decay` took the logarithm once per candidate)


def decay(age_hours: float, half_life_hours: float | None) -> float:
    """Exponential recency factor: exp(-ln 2 / half_life x age).

    1.0 at age 0, 0.5 at one half-life. `half_life_hours` None or <= 0 means no
    decay (1.0). A negative age (clock skew, future timestamp) counts as 0.
    """
    if not half_life_hours or half_life_hours <= 0:
        return 1.0
    age = max(0.0, float(age_hours))
    return math.exp(-_LN2 / half_life_hours * age)


def bm25_relevance(raw: float) -> float:
    """FTS5 ``bm25()`` (negative, lower = better) as a relevance >= 0: max(0, -raw)."""
    return max(0.0, -float(raw))


def bm25_term(
    tf: int,
    df: int,
    total: int,
    length: float,
    avg_length: float,
    *,
    k1: float = 1.2,
    b: float = 0.75,
) -> float:
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


def zscores(values: Mapping[K, float]) -> dict[K, float]:
    """(v - mean) / sd over the list (population sd); every entry 0 when sd is ~0.

    A feature's z-score says how far a candidate stands out from the other
    candidates on it, in that feature's own spread: BM25 (unbounded, heavy-tailed)
    and cosine (crowded near 0.3) become comparable without a weight for either.
    """
    if not values:
        return {}
    n = len(values)
    mean = math.fsum(values.values()) / n
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values.values()) / n)
    if sd < 1e-9:
        return {k: 0.0 for k in values}
    return {k: (v - mean) / sd for k, v in values.items()}


def zsum(features: Mapping[str, Mapping[K, float]], pool: Iterable[K]) -> dict[K, float]:
    """sum_f z_f(d) over the `pool`: the fusion of features with no weights.

    A candidate missing from a feature (no vector yet) is left out of that feature's
    mean and sd and scores 0 there, the pool's average: neither helped nor hurt.
    """
    keys = list(pool)
    out = dict.fromkeys(keys, 0.0)
    for scores in features.values():
        z = zscores({k: scores[k] for k in keys if k in scores})
        for k, v in z.items():
            out[k] += v
    return out


FLOOR_SHARE = 0.001  # `above_floor`: the pool's weakest candidate scores 0.001 / 1.001


def unit_range(scores: Mapping[K, float]) -> dict[K, float]:
    """(s - min) / (max - min): the pool's best 1.0, its worst 0.0 (all equal: 1.0)."""
    return minmax(scores)


def above_floor(scores: Mapping[K, float], share: float = FLOOR_SHARE) -> dict[K, float]:
    """(s - floor) / (max - floor), floor = min - share x (max - min): the best 1.0, the
    weakest share / (1 + share) (all equal: 1.0). The order is min-max's.

    Every candidate matched the query in some way: min-max gave the pool's weakest exactly
    0.0, so in a small pool an answer came back at rank 2 reading "score 0.0" (and no
    prior could lift it: 0 x anything is 0).

    Example:
        >>> above_floor({"a": 3.0, "b": 1.0, "c": 2.0}, 0.25)
        {'a': 1.0, 'b': 0.2, 'c': 0.6}
    """
    if not scores:
        return {}
    lo, hi = min(scores.values()), max(scores.values())
    if hi == lo:
        return {k: 1.0 for k in scores}
    floor = lo - share * (hi - lo)
    return {k: (v - floor) / (hi - floor) for k, v in scores.items()}


def recency(decay_factor: float, bound: float) -> float:
    """1 - bound x (1 - decay): the share of a score that age can take, at most `bound`.

    With bound 0.1 a memory keeps at least 90% of its relevance however old it is,
    so age orders near-ties (an updated fact before its older version) and never
    buries a strong match under a weak recent one. bound 1 is plain decay.
    """
    b = min(1.0, max(0.0, bound))
    return 1.0 - b * (1.0 - min(1.0, max(0.0, decay_factor)))
