"""A question that asks who is answered by a record that names a person.

"Who has to approve revenue figures?": the constraint "Deduplicate Recharge charges on
charge_id before any revenue figure" shares "revenue" and "figure" and ranks first; the
fact "Ingrid Solberg (head of growth) owns the board deck; Marco Ruiz (finance) signs off
revenue numbers" names who. The question's words name the act (approve, change, control),
the answer the person, and nothing in the ranking read "who". So a question that asks who
weighs up the records that name a person:

    asks(q)    = a sentence or clause of q opens with "who", "whom" or "whose" (not
                 "Henrike wants to know who reads it. Can we turn on open rates?")
    names(r)   = r holds a person's name: two capitalised words in a row ("Marco Ruiz",
                 "Priya Raman"), neither a stopword ("How Ingrid"), a weekday or a month
                 ("Thursday April"), and where a sentence or clause opens only with a role
                 or a possessive after it ("Ingrid Solberg (head of growth)"; not
                 "Deduplicate Recharge charges"); or the first name of such a pair in the pool
                 ("Marco signed this one off", the pool also holding "Marco Ruiz")
    score(r)   = score(r) x WHO        when asks(q) and names(r)

Turns of a conversation (transcripts, channels) are left alone: every turn of a dialogue
is said by a person, and its names are its speakers'. Applied to the pool before the
priors, as `search.reasons` is. `explain`: `who` (the factor) and `who_said` (the name).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memstrata.reading.patterns import MONTHS, WEEKDAYS
from memstrata.search.priors import DIALOGUE_LAYERS
from memstrata.search.query import Hit, weighed
from memstrata.search.text import STOPWORDS

WHO = 1.5  # a record naming a person, for a question that asks who
# "who" opening a sentence or clause; not "Henrike wants to know who reads it. Can we ...?"
_ASKS = re.compile(r"(?:^|[.!?,;:]\s+)(?:and\s+|so\s+|but\s+)?(?:who|whom|whose|who's)\b", re.I)
_PAIR = re.compile(r"\b([A-Z][a-z]+)\s+([A-Z][a-z]+)\b")
# Where a sentence, clause or list item opens: a capitalised pair there is a person's name
# only when a role or a possessive follows it ("Ingrid Solberg (head of growth)", "Ruth's").
_OPENS = re.compile(r"(?:\A|[.!?;:\n#]|^\s*[-*]|\(|\|)\s*$", re.M)
_ROLE = re.compile(r"\s*\(|'s\b")
_CALENDAR = frozenset([*WEEKDAYS, *MONTHS])


def asks_who(query: str) -> bool:
    """True when `query` asks who ("Who has to approve a pricing change?").

    Example:
        >>> asks_who("who can change our DNS records?"), asks_who("What fixed it?")
        (True, False)
    """
    return bool(_ASKS.search(query.strip()))


def full_names(text: str) -> list[str]:
    """The two-word capitalised names in `text` ("Marco Ruiz"), not a stopword ("How
    Ingrid") nor a weekday or a month ("Thursday April").

    Example:
        >>> full_names("## How Ingrid likes it; Marco Ruiz (finance) signs off, Thursday April 23")
        ['Marco Ruiz']
    """
    out = []
    for m in _PAIR.finditer(text):
        words = [w.lower() for w in m.groups()]
        if any(w in STOPWORDS or w in _CALENDAR for w in words):
            continue
        if _OPENS.search(text[: m.start()]) and not _ROLE.match(text, m.end()):
            continue  # "Deduplicate Recharge charges ...": a verb and a name open a sentence
        out.append(m.group(0))
    return out


def with_people(query: str, pool: Sequence[Hit], factor: float = WHO) -> list[Hit]:
    """`pool` with the records that name a person weighed by `factor` when `query` asks
    who (`who` and `who_said` in their explain)."""
    if factor == 1.0 or not pool or not asks_who(query):
        return list(pool)
    found = {
        h.uid: full_names(f"{h.title}\n{h.text}") for h in pool if h.layer not in DIALOGUE_LAYERS
    }
    firsts = {name.split()[0] for names in found.values() for name in names}
    first = re.compile(rf"\b(?:{'|'.join(sorted(firsts))})\b") if firsts else None

    def named(h: Hit) -> str | None:
        if h.layer in DIALOGUE_LAYERS:
            return None
        names = found.get(h.uid) or []
        if names:
            return names[0]
        m = first.search(f"{h.title}\n{h.text}") if first is not None else None
        return m.group(0) if m else None

    return weighed(pool, factor, "who", named)
