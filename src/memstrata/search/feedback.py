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
"""

from __future__ import annotations

from typing import Any

SEEDS = 5  # first hits read (LoCoMo dev: 3 / 5 / 10 gave r@10 0.805 / 0.808 / 0.805 at 1.0)


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
