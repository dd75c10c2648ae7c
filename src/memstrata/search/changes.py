"""A later change above the statement it changes, for a question about the present.

"Which database does the backend use now?" matches "Backend: Node with Express and
MongoDB Atlas" (month 1) in its words and meaning; "I've decided to move off Mongo ...
we're going to PostgreSQL on Supabase" (month 4) names neither the database nor the
backend and ranks 25th. The update rules do not reach it: `search.updates` moves a newer
statement only on a near-tie with one that says nearly the same (cos >= 0.6), and the
priors' `recall.newer` never moves a turn of a conversation. What marks the answer is
its form: a short turn, later than the best match, that says something changes. So,
among one search's candidates:

    asks(q)    = q asks about the present (`restated.PRESENT`: "now", "currently", ...)
    a          = the best candidate, a turn of a conversation that states no change
    change(b)  = b is a turn of one unit (at most `index.units.CHUNK_CHARS`), and one of
                 its sentences that does not ask (no "?") holds a word of change
                 (`CHANGE`: "move to", "switch", "change", "replace", "instead", ...)
    b          = the best-scored candidate of the top `DEPTH` that is newer than a
                 (`search.newer`) with change(b)
    score(b)   = score(a) x (1 + 1e-6)     (b just above a; nothing else moves)

One record moves, one place above the best match, and only on a question about the
present: the best match stays second, never buried. Explain: `changes` (a's uid).
Pure function over plain values (texts, scores, timestamps).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from memstrata.search.restated import PRESENT

LAYERS = frozenset({"session", "channel"})  # turns of a conversation
DEPTH = 30  # candidates looked at, best first
SHORT = 600  # characters: one unit (`index.units.CHUNK_CHARS`)
CHANGE = re.compile(
    r"\b(?:mov(?:e|es|ed|ing)\s+(?:\w+\s+){0,3}?(?:to|off|over|away)|switch\w*|"
    r"chang(?:e|es|ed|ing)|migrat\w*|replac\w*|rais(?:e|es|ed|ing)|lower(?:s|ed|ing)?|"
    r"bump\w*|extend\w*|instead|going to|from now on|no longer|go(?:es)? (?:up|down)|"
    r"upgrad\w*|increas\w*|decreas\w*)\b",
    re.I,
)
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]*")

Candidate = tuple[float, float, str, str, str, int]  # score, ts, uid, layer, text, units


def states_change(text: str) -> bool:
    """Whether a sentence of `text` that does not ask says something changes.

    Example:
        >>> states_change("Let's move the build to Go 1.22.")
        True
        >>> states_change("Could you tell me what you'd change?")
        False
    """
    return any(
        CHANGE.search(s) is not None
        for s in _SENTENCE.findall(text)
        if not s.rstrip().endswith("?")
    )


def later_change(
    question: str, ranked: list[Candidate], earlier: Callable[[str, str], bool]
) -> tuple[str, float, str] | None:
    """(b's uid, its new score, a's uid) for `ranked` (best first), or None.
    `earlier(a, b)`: whether a was written before b when their ts are the same."""
    if len(ranked) < 2 or PRESENT.search(question) is None:
        return None
    score_a, ts_a, a, layer_a, text_a, _ = ranked[0]
    if layer_a not in LAYERS or score_a <= 0 or states_change(text_a):
        return None
    for _score, ts, uid, layer, text, units in ranked[1:DEPTH]:
        if layer not in LAYERS or units != 1 or len(text) > SHORT:
            continue
        if not (ts > ts_a or (ts == ts_a and earlier(a, uid))):
            continue
        if states_change(text):
            return uid, score_a * (1.0 + 1e-6), a
    return None


__all__ = ["CHANGE", "DEPTH", "later_change", "states_change"]
