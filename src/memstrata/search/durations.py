"""A question that asks how long is answered by a record that states a length of time.

"How long may a member keep a borrowed tool?" is answered by the fact `loan_period`,
"7 days, one renewal of 7 more days", which shares no word with it: the question's words
name the subject, and its "how long" asks for a duration, which no word of the answer
says either. Records about the subject that state no duration (the rule on how many
tools a member may have out, the decision about late fees) outrank it on words and
meaning alike. What the question asks for is a kind of value, so the records that hold
one are weighed up:

    asks(q)      = q asks "how long", "how quickly" / "how fast", "how soon", "how much
                   time", or "how many" seconds ... years
    lead(r)      = what r says first: a ledger record's summary, else the first clause
                   of each line of its text (a Markdown section's lines are statements
                   of their own); a duration in a later clause is said in passing
    states(r)    = lead(r) holds a number (digits or a number word) followed by a unit
                   of time: ms, s, sec, min, h, hours, days, weeks, months, years
                   ("15-minute access tokens", "30 s timeout", "2 hours", "ten hours";
                   not "50 cents a day": a rate)
    score(r)     = score(r) x DURATION        when asks(q) and states(r)

DURATION 1.5 was chosen on the dev scenarios of `bench agent` (2.0 and 2.5 moved no
further question into the top 3); the first clause of the whole text only (not of each
line) cost paraphrase dev lexical and semantic top 1 / top 3 on CONTEXT.md sections.

Applied to the pool before the priors, so their exact pruning (`search.prune`) reads the
weighed score as any other. `explain`: `duration` (the factor) and `duration_said` (what
the record states). "How long is the article?" also reads as "how long": a length in words
is not a duration, and the records that state one are weighed up there too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memstrata.search.query import Hit, weighed

DURATION = 1.5  # a record stating a duration, for a question that asks for one
_ASKS = re.compile(
    r"\bhow\s+(?:long|quickly|fast|soon|much\s+time|many\s+"
    r"(?:milliseconds|seconds|minutes|hours|days|nights|weeks|months|years))\b",
    re.I,
)
_NUMBER = (
    r"(?:\d+(?:[.,]\d+)?|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
    r"|fifteen|twenty|thirty|forty|fifty|sixty|ninety|a\s+few|several|half\s+an?)"
)
_UNIT = (
    r"(?:ms|milliseconds?|s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?|days?|nights?"
    r"|weeks?|months?|years?)"
)
_STATES = re.compile(rf"(?<![\w.,]){_NUMBER}(?:\s*-\s*|\s+|(?<=\d)){_UNIT}\b", re.I)


def asks_duration(query: str) -> bool:
    """True when `query` asks for a length of time ("How long may a member keep it?")."""
    return bool(_ASKS.search(query))


def stated_duration(text: str) -> str | None:
    """The first length of time `text` states ("7 days", "15-minute", "30 s"), or None."""
    m = _STATES.search(text)
    return m.group(0) if m else None


_LABEL = re.compile(r"^(?:#+ .*|Final response:\s*|[-*]\s+|\d+[.)]\s+)+")
_CLAUSE_END = re.compile(r"[;\n]|\.(?:\s|$)")


def lead_of(hit: Hit) -> str:
    """What a record says first: a ledger entry's summary, else the first clause of each
    line of its text (a Markdown section's lines are items of their own; a heading,
    "Final response:" and a list mark left out), one per line."""
    if hit.layer == "ledger":
        return hit.title
    leads = []
    for line in hit.text.splitlines():
        text = _LABEL.sub("", line.strip())
        end = _CLAUSE_END.search(text)
        leads.append(text if end is None else text[: end.start()])
    return "\n".join(x for x in leads if x)


def with_durations(query: str, pool: Sequence[Hit], factor: float = DURATION) -> list[Hit]:
    """`pool` with the records that state a duration weighed by `factor` when `query`
    asks for one (`duration` and `duration_said` in their explain)."""
    if factor == 1.0 or not pool or not asks_duration(query):
        return list(pool)
    return weighed(pool, factor, "duration", lambda h: stated_duration(lead_of(h)))
