"""Hybrid fusion: pure functions on plain dicts of uid -> score.

Weighted (seed 004's formula, on min-max normalised scores):

    final(d) = w_vec x norm(cos(q, d)) + w_text x norm(bm25(q, d))
    norm(x)  = (x - min) / (max - min)   over the candidates of that list (1.0 if all equal)

A document missing from one list scores 0 on that side. Reciprocal rank fusion
(Cormack et al. 2009) is the alternative, scale-free:

    rrf(d) = sum over lists of 1 / (k + rank(d)),  k = 60
"""

from __future__ import annotations


def minmax(scores: dict[str, float]) -> dict[str, float]:
    if not scores:
        return {}
    lo, hi = min(scores.values()), max(scores.values())
    if hi == lo:
        return {u: 1.0 for u in scores}
    return {u: (s - lo) / (hi - lo) for u, s in scores.items()}


def weighted(text: dict[str, float], vec: dict[str, float], *, w_text: float = 0.5,
             w_vec: float = 0.5) -> dict[str, float]:
    t, v = minmax(text), minmax(vec)
    return {u: w_text * t.get(u, 0.0) + w_vec * v.get(u, 0.0) for u in set(t) | set(v)}


def rrf(*ranked: list[str], k: int = 60) -> dict[str, float]:
    out: dict[str, float] = {}
    for lst in ranked:
        for rank, uid in enumerate(lst, start=1):
            out[uid] = out.get(uid, 0.0) + 1.0 / (k + rank)
    return out
