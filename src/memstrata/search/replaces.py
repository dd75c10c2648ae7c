"""What a statement says it replaces: "replace WeasyPrint with ReportLab", "ReportLab
instead of WeasyPrint" name WeasyPrint (group 1).

Its own module so that the copies' rules (`search.copies`, read by `memstrata context`)
do not load the ranking priors (`search.priors`, 10-15 ms of rules at start-up)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memstrata.search.query import Hit

REPLACES = re.compile(
    r"\b(?:replac(?:e|es|ed|ing)|swap(?:s|ped|ping)?(?: out)?|instead of|rather than|"
    r"no longer (?:use|using)|"
    r"(?:switch|migrat|mov)\w* (?:away )?from|drop(?:s|ped|ping)?)\s+(?:the |our |using )?"
    r"([^\W\d_][\w.+#-]{2,})",
    re.I,
)


def said_of(h: Hit) -> str:
    """What a decision says: a ledger entry's summary is its title, the detail its text."""
    return f"{h.title}\n{h.text}" if h.layer == "ledger" else h.text


def replaced_terms(h: Hit) -> frozenset[str]:
    """The terms a record says it replaces (`REPLACES`, lower case), read once per record
    (`features.remember`): a pool's decisions were searched for them query after query."""
    return frozenset(m.group(1).lower() for m in REPLACES.finditer(said_of(h)))
