"""An updated statement above its earlier version: a bounded tie-break on relevance.

When a fact changes in a conversation ("members get 14 days to pay" in March, "from next month members
get 21 days" in May), a question about it matches both statements, in nearly the same
words and meaning, and the fused relevance orders them by noise. Decay cannot decide:
it is bounded (`[search] recency_bound`) and, for history months old, saturated (both
statements keep the bound's floor). So among the candidates of one search:

    b moves just above a  when  b is newer than a (a later ts; at one ts, later in
                                their transcript: `earlier`, `search.newer`),
                                b's score >= (1 - band) x a's score  (a near-tie),
                                cos(a, b) >= SAME  (their best-matching units say
                                nearly the same thing: one is a version of the other)

and b then passes only candidates within the band, so a strong match is never buried:
b gains at most `band` of a's score, and only over records it nearly ties with.
`band` is `[search] update_band` (0 turns it off). b's explain says which record it
moved above (`newer_than`) and the similarity (`same_as`).

Pure function over plain values (scores, timestamps, vectors); `np` passed in.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# Turns of a conversation only: other records that state how things are (decisions,
# facts, preferences) have their own newer-first rule after relevance (`search.priors`,
# `recall.newer`), and a ledger decision names what it replaces.
LAYERS = frozenset({"session", "channel"})
SAME = 0.6  # cosine of the two candidates' best-matching units (all-MiniLM-L6-v2)
DEPTH = 30  # only the top of the ranking is looked at: ties below do not change what is shown


def newer_first(
    np: Any,
    ranked: list[tuple[float, float, str]],
    vector: Callable[[str], Any],
    band: float,
    same: float | None = None,
    earlier: Callable[[str, str], bool] | None = None,
) -> dict[str, tuple[float, str, float]]:
    """Moves for `ranked` ((score, ts, uid), best first): uid -> (its new score, the
    uid it moved above, their cosine). `vector(uid)` is the candidate's unit vector
    that matched the query (None: never moved, never passed). `earlier(a, b)`: whether
    a was written before b when their ts are the same (None: neither was)."""
    if band <= 0 or len(ranked) < 2:
        return {}
    same = SAME if same is None else same
    order = list(ranked[:DEPTH])
    moved: dict[str, tuple[float, str, float]] = {}
    for j in range(1, len(order)):
        score_b, ts_b, b = order[j]
        vb = vector(b)
        if vb is None or score_b <= 0:
            continue
        top = None
        for i in range(j - 1, -1, -1):
            score_a, ts_a, a = order[i]
            if score_b < (1.0 - band) * score_a:
                break
            if ts_a > ts_b or (ts_a == ts_b and (earlier is None or not earlier(a, b))):
                continue
            va = vector(a)
            if va is None:
                continue
            cos = float(np.dot(va, vb))
            if cos >= same:
                top = (i, a, cos, score_a)
        if top is None:
            continue
        i, a, cos, score_a = top
        new = min(score_a * (1.0 + 1e-6), score_b / (1.0 - band))
        moved[b] = (new, a, cos)
        order.insert(i, (new, ts_b, b))
        del order[j + 1]
    return moved


__all__ = ["DEPTH", "LAYERS", "SAME", "newer_first"]
