"""Hits that say the same thing: the best one is shown, the others are named in its explain.

    key(hit)   = (title, text) case-folded, runs of whitespace as one space
    duplicates = the hits after the first (by worth) with the key of an earlier hit

An agent's memory repeats itself: the same tool line logged every session ("Ran kubectl
get pods -n harbor"), the same short reply in many transcripts ("Looks good, go ahead."),
a LOG entry and its twin in an archive. Ranked apart, four copies of one line take four
of the ten places a question gets, and push out the record that answers it, while a
reader learns nothing from the second copy. So a hit whose title and text repeat a
better-ranked hit's is not shown; the hit shown lists it under `explain["duplicates"]`
(uid and layer), so nothing is hidden: asked for by its uid or words alone, it is
there. Different words, however close in meaning, are never collapsed; neither are
two records with the same text under different titles (two speakers saying "yes").

Pure functions over `Hit` values, applied after the priors (`search.worth.rank_pool`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memstrata.search.features import remember
from memstrata.search.query import Hit

_SPACE = re.compile(r"\s+")


def key(hit: Hit) -> tuple[str, str]:
    """What two hits must share to be duplicates: title and text, case-folded, spaces folded."""
    return (_fold(hit.title), _fold(hit.text))


def collapse_duplicates(hits: Sequence[Hit], limit: int | None = None) -> list[Hit]:
    """`hits` (best first) without the ones that repeat an earlier hit's title and text;
    each hit kept lists the ones it stands for in `explain["duplicates"]`. The first
    `limit` kept hits (all without it); duplicates of those are still listed.

    Example:
        >>> a = Hit("log:1", "log", 0.9, "TOOL_USE", "Ran  make test", "", 2.0, "LOG.md")
        >>> b = Hit("archive:2", "archive", 0.8, "TOOL_USE", "ran make test", "", 1.0, "a.md")
        >>> c = Hit("fact:3", "fact", 0.7, "ci", "make test runs the suite", "", 0.0, "f")
        >>> [(h.uid, h.explain.get("duplicates")) for h in collapse_duplicates([a, b, c])]
        [('log:1', [{'uid': 'archive:2', 'layer': 'archive'}]), ('fact:3', None)]
    """
    first: dict[tuple[str, str], int] = {}
    kept: list[Hit] = []
    extra: dict[int, list[dict[str, str]]] = {}
    for h in hits:
        k = remember(h, "duplicate key", key)  # a pure function of title and text
        if not k[1]:  # nothing said: never a duplicate of anything
            kept.append(h)
            continue
        n = first.get(k)
        if n is None:
            first[k] = len(kept)
            kept.append(h)
        else:
            extra.setdefault(n, []).append({"uid": h.uid, "layer": h.layer})
    out = kept if limit is None else kept[:limit]
    return [
        h.but(explain={**h.explain, "duplicates": extra[n]}) if n in extra else h
        for n, h in enumerate(out)
    ]


def repeats(hits: Sequence[Hit]) -> bool:
    """Whether two of `hits` share a key (`collapse_duplicates` would collapse one)."""
    seen: set[tuple[str, str]] = set()
    for h in hits:
        k = remember(h, "duplicate key", key)
        if k[1]:
            if k in seen:
                return True
            seen.add(k)
    return False


def _fold(text: str) -> str:
    return _SPACE.sub(" ", text).strip().casefold()


__all__ = ["collapse_duplicates", "key", "repeats"]
