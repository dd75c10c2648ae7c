"""MaxSim (late interaction, Khattab & Zaharia 2020) of a query over a candidate pool.

    maxsim(q, unit) = mean over the query's word pieces i of max over the unit's
                      pieces j of cos(q_i, t_j)
    maxsim(q, d)    = max over d's units with token vectors

The token vectors are stored by the vector index (`index.tokens`: projected, int8);
this is the search side: one product over every piece of the pool's candidates.
"""

from __future__ import annotations

from typing import Any


def maxsim(np: Any, query: Any, units: dict[str, list[Any]]) -> dict[str, float]:
    """maxsim(q, d) for every uid in `units` (uid -> its units' token arrays: `index.tokens.unpack`
    int8 rows or float rows, any scale), `query` the query's projected unit token
    vectors (m, DIMS); uids without pieces are left out. One product over all pieces
    (einsum: one thread, no BLAS pool spinning on a loaded machine), then a segment max
    per unit and the mean over the query's pieces."""
    q = np.asarray(query, dtype=np.float32)
    owners: list[str] = []
    arrays: list[Any] = []
    for uid, arrs in units.items():
        for a in arrs:
            if len(a):
                owners.append(uid)
                arrays.append(a)
    if not arrays or not len(q):
        return {}
    lengths = np.array([len(a) for a in arrays], dtype=np.int64)
    starts = np.cumsum(lengths) - lengths
    t = np.concatenate(arrays).astype(np.float32)
    norms = np.sqrt(np.einsum("ij,ij->i", t, t))
    sims = np.einsum("ij,kj->ik", t, q) / np.maximum(norms, np.float32(1e-12))[:, None]
    best = np.maximum.reduceat(sims, starts, axis=0)  # (units, m)
    per_unit = best.mean(axis=1)
    out: dict[str, float] = {}
    for uid, s in zip(owners, per_unit.tolist(), strict=True):
        if s > out.get(uid, -2.0):
            out[uid] = s
    return out


__all__ = ["maxsim"]
