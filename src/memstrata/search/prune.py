"""Which candidates of a weighed pool can still be among the first `limit` places
(`priors.apply_priors`): the others are not given their held terms, the near-tie pass
(`search.newer`) or a place in the order, and the list shown is the same.

    worth      = score x prior, known before the held terms when coverage does not weigh
                 (`recall.coverage` = 0, the default): held terms only feed the near-tie
                 pass and explain
    M          = limit + the candidates that collapse may take out (signal tool or error)
    theta      = the M-th highest worth
    pruned     = every candidate worth less than (1 - newer) x theta

Why the first M places do not change (so neither do the first `limit` hits shown, nor
what collapse counts): the kept candidates are a prefix of the worth order (every one
worth at least the cut, ties included), and the near-tie pass looks at each candidate
in worth order, moving it only above candidates before it, so the prefix is ordered
as it was; a pruned candidate (worth w) would need every candidate it passes to be
worth at most w / (1 - newer) < theta, and among the candidates before it at least M
are worth theta or more, so it never reaches the first M places, and every place it
could reach is after them. Collapse reads the relative order of the records of tool
calls, all of which are kept (the cut is lowered to the lowest of them).

Nothing is pruned when coverage weighs (worth needs the held terms), when no limit is
asked (`rank_pool`'s fall-back to the whole pool), when the pool holds M or fewer, or
when a worth is negative (a factor below 0 in `[recall]`: the order of bounds flips)
or not a number.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from memstrata.config.recall import REPLACED_KEY

CLUE_SIGNALS = frozenset({"tool", "error"})  # the records `toolcalls.clues_of` may group


def contenders(
    kept: Sequence[Any],
    worth: Callable[[Any], float],
    limit: int | None,
    near: float,
) -> list[Any]:
    """The candidates of `kept` that can reach the first `limit` places (see the module),
    in `kept`'s order; all of them when nothing can be pruned. `near`: 1 - `recall.newer`
    when the near-tie pass runs, else 1."""
    if limit is None:
        return list(kept)
    values = [worth(w) for w in kept]
    clues = [v for w, v in zip(kept, values, strict=True) if w.signal.name in CLUE_SIGNALS]
    places = limit + len(clues)
    if len(kept) <= places or near <= 0.0 or not all(v >= 0.0 for v in values):
        return list(kept)
    theta = heapq.nlargest(places, values)[-1]
    cut = near * theta
    if clues:
        cut = min(cut, min(clues))
    return [w for w, v in zip(kept, values, strict=True) if v >= cut]


def demote_replaced(
    kept: Sequence[Any], factor: float, replaced: Mapping[str, tuple[str, str]]
) -> None:
    """`recall.replaced` on the kept candidates a newer decision replaces (`replaced`:
    `priors.replaced_decisions` of the whole pool's decisions)."""
    if factor == 1.0:
        return
    for w in kept:
        if w.hit.uid in replaced:
            by, term = replaced[w.hit.uid]
            w.factor *= factor
            w.prior.update(
                replaced=factor,
                replaced_key=f"recall.{REPLACED_KEY}",
                replaced_by=by,
                replaced_term=term,
            )
