"""A question that asks what fixed something is answered by the record that says so.

"The github cli kept refusing me last tuesday, what fixed it?": the ERROR that reports the
failure shares the question's words and ranks first; the THOUGHT "gh fails with 401 ...
fixed by removing GH_TOKEN ... and running gh auth refresh" ranks below it (support-marlin;
analytics-kestrel's "The login error on the shared warehouse: what fixed it?" alike).
`search.failures` lends a failed call's relevance to its ERROR for "what went wrong"; this
is its mirror for "what fixed it": the records that say they fixed something are weighed up:

    asks(q)      = q asks "what fixed ...", "what was the fix", "how did we fix ...",
                   "how was it fixed"
    states(r)    = r says it fixed something: "fixed / solved / resolved (it) with / by",
                   "fixes it", "the fix was", "works / passes / builds / runs now" (the
                   words `lifecycle.resolved.noted_fixed` reads a note by)
    score(r)     = score(r) x FIX        when asks(q) and states(r)

Applied to the pool before the priors, as `search.durations` is. `explain`: `fix` (the
factor) and `fix_said` (the words read).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memstrata.reading.patterns import FIXED_SAID
from memstrata.search.query import Hit, weighed

FIX = 1.5  # a record saying it fixed something, for a question that asks what fixed it
_ASKS = re.compile(
    r"\bwhat\s+(?:fixed|solved|resolved)\b|\bwhat(?:'s|\s+was|\s+is)\s+the\s+fix\b"
    r"|\bhow(?:'d|\s+did|\s+do|\s+have)\s+(?:we|you|i)\s+(?:fix|solve|resolve)\b"
    r"|\bhow\s+(?:was|were|is)\s+(?:it|that|this|they)\s+(?:fixed|solved|resolved)\b",
    re.I,
)
_STATES = re.compile(rf"{FIXED_SAID}|\bthe\s+fix\s+(?:was|is)\b", re.I)


def asks_fix(query: str) -> bool:
    """True when `query` asks what fixed something ("what fixed it?", "how'd we fix it")."""
    return bool(_ASKS.search(query))


def with_fixes(query: str, pool: Sequence[Hit], factor: float = FIX) -> list[Hit]:
    """`pool` with the records that say they fixed something weighed by `factor` when
    `query` asks what fixed it (`fix` and `fix_said` in their explain)."""
    if factor == 1.0 or not pool or not asks_fix(query):
        return list(pool)
    return weighed(pool, factor, "fix", _fix_said)


def _fix_said(hit: Hit) -> str | None:
    m = _STATES.search(hit.text)
    return m.group(0) if m else None
