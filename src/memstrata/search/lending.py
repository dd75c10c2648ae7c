"""Relevance lent from one record to another: the step `search.failures`,
`search.resolutions` and `search.pointers` share.

A question rule finds a record the question's words miss through one they reach (a
failed call's ERROR through the call, a fix through its error, a fact through the note
that names its key) and lends it the lender's score, or a share of it:

    score(r)  = max(score(r), lent)          explain: <key>: the lender's uid, own_score
    joins     a record not in the pool joins it, at the end (the priors order it)

Only for a query without a kind, tag or room filter (`narrowed`): the rules read the
records around a hit, which such a filter would have to be applied to again.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from memstrata.search.query import Hit, SearchQuery


def narrowed(q: SearchQuery) -> bool:
    """The query filters by kind, tag or room: the lending rules leave its pool alone."""
    return bool(q.kind is not None or q.tags or q.rooms or q.in_room or q.exclude_room)


def lend(pool: Sequence[Hit], loans: Iterable[tuple[Hit, float, str, str]]) -> list[Hit]:
    """`pool` with each loan (the record as found, the score lent, the explain key, the
    lender's uid) applied where it raises the record's score; the best loan of a record
    wins; a record not in the pool joins it after the others.

    Example:
        >>> a = Hit("log:1", "log", 0.9, "ERROR", "", "", 0.0, "LOG.md")
        >>> b = Hit("log:2", "log", 0.2, "THOUGHT", "", "", 0.0, "LOG.md")
        >>> [(h.uid, h.score, h.explain) for h in lend([a, b], [(b, 0.72, "resolves", a.uid)])]
        [('log:1', 0.9, {}), ('log:2', 0.72, {'resolves': 'log:1', 'own_score': 0.2})]
    """
    by_uid = {h.uid: h for h in pool}
    lifted: dict[str, Hit] = {}
    for found, score, key, lender in loans:
        have = lifted.get(found.uid) or by_uid.get(found.uid)
        if have is not None and have.score >= score:
            continue
        base = have if have is not None else found
        explain = dict(base.explain) if have is not None else {}
        explain.update({key: lender, "own_score": round(base.score, 6)})
        lifted[found.uid] = base.but(score=score, explain=explain)
    if not lifted:
        return list(pool)
    out = [lifted.pop(h.uid, h) for h in pool]
    return out + list(lifted.values())
