"""A decision in force that carries a value a fact updated since has changed.

renovation-ashgrove q-start: the builder decision "Builder: Nowak Build ..., starting
Monday 8 March" stays in force (the builder did not change), while the fact `start_date`
was updated in place from "Monday 8 March 2027" to "Monday 15 March 2027 ... a week later".
"When do the builders actually turn up?" ranked the decision 2nd, its date stale, and the
fact 5th. `search.restated` lifts such a fact only over a record holding most of its words
(the fact's new value adds a reason, "because of the party wall award's 14 days", that the
decision never said) and only when the question names the fact or says "now". What marks
the decision as stale is narrower and surer: the same value frame with another number.

    frames(t)     = for each number of t (digits, a run of them: "74 880"), the words
                    either side of it: "Monday 8 March" -> (monday, march): 8
    carries(r, f) = r is a ledger decision or constraint written before f's update, one
                    frame holds one number in r and another in f ("Monday 8 March" /
                    "Monday 15 March", "every 15 minutes" / "every 30 minutes"), and r and
                    f share at least `SHARED` other content words (the subject: "nowak",
                    "build"), so a frame common to two subjects ("including VAT") is not
                    enough
    asks(q, f)    = q does not ask why; it asks about the present (`restated.PRESENT`),
                    names f's key, or asks "when" and the frame is a date's (a weekday or
                    a month beside the number)

`search.restated.restating` applies it: f is lifted just above r (`ABOVE`), r stays
second, never hidden (the rest of it may still hold: the builder is Nowak). Pure
functions over token lists.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from memstrata.reading.patterns import MONTHS, WEEKDAYS

SHARED = 2  # content words besides the frame that the record and the fact share, at least
KINDS = frozenset({"decision", "constraint"})  # ledger kinds whose values are in force
_CALENDAR = (*WEEKDAYS, *MONTHS)
# the calendar's names and their short forms ("mon", "sept") beside a number: a date
_DATE_WORDS = frozenset([*_CALENDAR, *(w[:3] for w in _CALENDAR), "tues", "thur", "thurs", "sept"])
_WHEN = re.compile(r"\b(?:when|what (?:date|day|time)|which (?:date|day))\b", re.I)

Frame = tuple[str, str]


def frames(tokens: Sequence[str]) -> dict[Frame, set[str]]:
    """The numbers of `tokens` by the words either side of them (a run of number tokens,
    "74 880", is one value; "" at either end).

    Example:
        >>> frames(["starting", "monday", "8", "march", "electrics"])
        {('monday', 'march'): {'8'}}
    """
    out: dict[Frame, set[str]] = {}
    n, i = len(tokens), 0
    while i < n:
        if not tokens[i].isdigit():
            i += 1
            continue
        j = i
        while j < n and tokens[j].isdigit():
            j += 1
        before = tokens[i - 1] if i > 0 else ""
        after = tokens[j] if j < n else ""
        out.setdefault((before, after), set()).add(" ".join(tokens[i:j]))
        i = j
    return out


def changed_frames(record: Sequence[str], fact: Sequence[str]) -> list[Frame]:
    """The frames where `record` holds a number `fact` does not, and `fact` another one."""
    mine, theirs = frames(record), frames(fact)
    return [
        f
        for f, values in mine.items()
        if any(f) and f in theirs and not values & theirs[f] and theirs[f]
    ]


def carries(record: Sequence[str], fact: Sequence[str], content: Iterable[str]) -> list[Frame]:
    """The frames of `changed_frames` when the two share `SHARED` content words outside
    them (`content`: the words the two share, as `restated.content_words` reads them)."""
    changed = changed_frames(record, fact)
    if not changed:
        return []
    framing = {w for f in changed for w in f}
    subject = {w for w in content if w not in framing and not w.isdigit()}
    return changed if len(subject) >= SHARED else []


def asks_when(query: str, changed: Sequence[Frame]) -> bool:
    """The question asks "when" and one of the frames is a date's."""
    return bool(_WHEN.search(query)) and any(w in _DATE_WORDS for f in changed for w in f)


__all__ = ["asks_when", "carries", "changed_frames", "frames"]
