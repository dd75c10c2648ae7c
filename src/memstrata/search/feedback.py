"""Pseudo-relevance feedback in vector space (Rocchio), opt-in: `[search] feedback`.

    q'  = q / |q| + feedback x c / |c|,   c = mean of the record vectors of the best
          `SEEDS` hits of a first hybrid search for the same question

The second pass scores only the dense side anew (`search.hybrid._feedback`): the first
pass's lexical pool, rows, exclusions and MaxSim (the question's words, not its vector)
are kept, and its candidates are scored with q' beside the dense pool of q' itself.
A question whose answer is spread over several records ("What books has John read?":
"this fantasy series", "a novel by ...") is worded unlike most of them; the first hits
say what the answers look like in this memory, and moving the query toward them reaches
the items the question's own vector misses. docs/benchmarks-recall.md sections 12 and 14
have what it gave and what it costs.

Two guards (section 15), chosen on the three dev splits together:

- **short seeds only** (`acts`): the query moves only when each seed is a record of one
  unit (a chat turn, a decision, a fact). A long message's vector is the mean of its
  chunks, mostly filler around the one paragraph that matched: on techconv dev, moving
  toward such seeds brought nothing up and pushed 9 evidence messages out of the top 10.
- **the first hits stay first** (`pinned`): the first pass's best `PINNED` hits keep
  their places; the moved vector orders what follows them. What feedback is for (the
  second and third item of a list) sits below them, and the question's own best answers
  are not traded for their neighbours (paraphrase dev: top-1 0.388 -> 0.329 without it).
"""

from __future__ import annotations

from typing import Any

SEEDS = 5  # first hits read (LoCoMo dev: 3 / 5 / 10 gave r@10 0.805 / 0.808 / 0.805 at 1.0)
PINNED = 3  # first hits kept in place (section 15)


def acts(units: list[int]) -> bool:
    """Whether feedback moves the query, given how many units each seed has: only when
    every seed is one unit (a long message's vector is mostly its filler).

    Example:
        >>> acts([1, 1, 1]), acts([1, 3, 1]), acts([])
        (True, False, False)
    """
    return bool(units) and all(n == 1 for n in units)


def pinned(first: list[str], hits: list[Any], k: int) -> list[Any]:
    """The top `k`: the hits of `first` (the first pass's best uids, best first) in
    that order, then the other `hits` (the second pass's ranking) in theirs. A uid of
    `first` that the second pass did not return is left out.

    Example:
        >>> pinned(["b", "a"], ["a", "c", "b", "d"], 3)
        ['b', 'a', 'c']
    """
    by_uid = {getattr(h, "uid", h): h for h in hits}
    top = [by_uid[u] for u in first if u in by_uid]
    kept = {getattr(h, "uid", h) for h in top}
    return (top + [h for h in hits if getattr(h, "uid", h) not in kept])[:k]


def feedback_vector(np: Any, query: Any, seeds: Any, weight: float) -> Any:
    """q / |q| + weight x c / |c| (c = the mean of the `seeds` rows), as float32;
    `query` itself when there is no seed or no weight.

    Example:
        >>> import numpy as np
        >>> feedback_vector(np, np.array([1.0, 0.0]), np.array([[0.0, 2.0]]), 0.5).tolist()
        [1.0, 0.5]
    """
    q = np.asarray(query, dtype=np.float32)
    if weight <= 0 or seeds is None or not len(seeds):
        return q
    nq = float(np.linalg.norm(q))
    c = np.asarray(seeds, dtype=np.float32).mean(axis=0)
    nc = float(np.linalg.norm(c))
    if nq == 0.0 or nc == 0.0:
        return q
    return (q / nq + np.float32(weight) * c / nc).astype(np.float32)
