"""How much the words of a question can say: the weight of the lexical z in the fusion.

    w_lexical = max over the lexical candidates d of coverage(d)     (`search.coverage`)
    fused(d)  = w_lexical x z_lexical(d) + z_dense(d) + z_maxsim(d)

The z-sum gives each feature the same say whatever its evidence: z-scores are
scale-free, so a pool whose best word match holds one incidental word of the
question ("client", "review") spreads its candidates on the lexical axis as widely as a
pool whose best holds every rare word of it. A question that says a memory in other
words then ranks the records that share a stray word with it above the one that
answers it, which only its meaning finds (paraphrase bench: semantic alone top-5
0.659, hybrid 0.635). When some candidate holds the question's words (coverage 1,
names and rare terms included) the fusion is the unweighted z-sum it was.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from memstrata.search.coverage import QueryTerm, coverage_of
from memstrata.search.query import Hit

HALF = 0.5  # a word match holding this share of the question's information counts fully


def lexical_weight(terms: Sequence[QueryTerm] | None, hits: Iterable[Hit]) -> float:
    """The best IDF-weighted query coverage among `hits` (the lexical candidates);
    1.0 when the query has no terms to cover (the lexical side is then left as it is).

    Example:
        >>> h = Hit("f:1", "fact", 1.0, "k", "the client list", "", 0.0, "f")
        >>> lexical_weight([QueryTerm("client", ("client",), 1.0),
        ...                 QueryTerm("close", ("close",), 3.0)], [h])
        0.25
    """
    if not terms:
        return 1.0
    cover = coverage_of(terms)
    best = max((cover(h)[0] for h in hits), default=0.0)
    return best if best < HALF else 1.0


def weighted_zsum(
    z: Mapping[str, Mapping[str, float]], weights: Mapping[str, float], pool: Iterable[str]
) -> dict[str, float]:
    """sum_f weights[f] x z_f(d) (weight 1 for a feature `weights` does not name); a
    candidate a feature left out scores 0 there, as in `scoring.zsum`."""
    out = dict.fromkeys(pool, 0.0)
    for f, zs in z.items():
        w = weights.get(f, 1.0)
        for k, v in zs.items():
            if k in out:
                out[k] += w * v
    return out
