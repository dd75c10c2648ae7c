"""A question that asks what fixed something is answered by the record that says so.

"The github cli kept refusing me last tuesday, what fixed it?": the ERROR that reports the
failure shares the question's words and ranks first; the THOUGHT "gh fails with 401 ...
fixed by removing GH_TOKEN ... and running gh auth refresh" ranks below it (support-marlin;
analytics-kestrel's "The login error on the shared warehouse: what fixed it?" alike).
`search.failures` lends a failed call's relevance to its ERROR for "what went wrong"; this
is its mirror for "what fixed it": the records that say they fixed something are weighed up:

    asks(q)      = q asks "what fixed ...", "what was the fix / workaround", "how did we
                   fix ...", "how was it fixed", or how a problem was got past: "how did
                   we get past / around it", "what got it through", "what did we do
                   about it" (past tense only: "how do we handle X?" asks how things are
                   done)
    states(r)    = r says it fixed something: "fixed / solved / resolved (it) with / by",
                   "fixes it", "the fix was", "works / passes / builds / runs now" (the
                   words `lifecycle.resolved.noted_fixed` reads a note by), a "Fix:" /
                   "Workaround:" label, "released / cleared / unblocked (it) with / by"
    score(r)     = score(r) x FIX        when asks(q) and states(r)

`search.resolutions` first lends each error's score to the record after it that says
how it was fixed. Applied to the pool before the priors, as `search.durations` is. `explain`: `fix` (the
factor) and `fix_said` (the words read).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memstrata.reading.patterns import FIXED_SAID
from memstrata.search.query import Hit, weighed

FIX = 1.5  # a record saying it fixed something, for a question that asks what fixed it
_ASKS = re.compile(
    r"\bwhat\s+(?:fixed|solved|resolved)\b"
    r"|\bwhat(?:'s|\s+was|\s+is)\s+the\s+(?:fix|workaround|solution)\b"
    r"|\bhow(?:'d|\s+did|\s+do|\s+have)\s+(?:we|you|i)\s+(?:fix|solve|resolve)\b"
    # got past, in the past tense only: "how do we handle X?" asks how things are done
    r"|\bhow(?:'d|\s+did)\s+(?:we|you|i)\s+(?:get\s+(?:past|around|round|over|through)"
    r"|work\s+around|deal\s+with|handle|unblock)\b"
    r"|\bhow\s+(?:was|were|is)\s+(?:it|that|this|they)\s+(?:fixed|solved|resolved)\b"
    # "what got it through?", "what did we do about it?": how a problem was got past
    r"|\bwhat\s+got\s+(?:it|that|this|them|us|me)\s+(?:through|past|around|working|going)\b"
    r"|\bwhat\s+did\s+(?:we|you|i)\s+do\s+about\b",
    re.I,
)
# A record saying it fixed something: the words `lifecycle.activity` reads a note by,
# "the fix was", a "Fix:" / "Workaround:" label, a lock or block "released / cleared with".
_STATES = re.compile(
    rf"{FIXED_SAID}|\bthe\s+fix\s+(?:was|is)\b|\b(?:fix|workaround|solution):\s"
    r"|\b(?:released|cleared|unblocked|worked\s+around)\s+(?:it\s+|that\s+|this\s+)?"
    r"(?:with|by)\b",
    re.I,
)


def asks_fix(query: str) -> bool:
    """True when `query` asks what fixed something ("what fixed it?", "how'd we fix it")."""
    return bool(_ASKS.search(query))


def with_fixes(query: str, pool: Sequence[Hit], factor: float = FIX) -> list[Hit]:
    """`pool` with the records that say they fixed something weighed by `factor` when
    `query` asks what fixed it (`fix` and `fix_said` in their explain)."""
    if factor == 1.0 or not pool or not asks_fix(query):
        return list(pool)
    return weighed(pool, factor, "fix", fix_said)


def fix_said(hit: Hit) -> str | None:
    """The words by which `hit` says it fixed something, or None."""
    m = _STATES.search(hit.text)
    return m.group(0) if m else None
