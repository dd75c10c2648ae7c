"""What a statement says it replaces: "replace WeasyPrint with ReportLab", "ReportLab
instead of WeasyPrint" name WeasyPrint (group 1).

Its own module so that the copies' rules (`search.copies`, read by `memstrata context`)
do not load the ranking priors (`search.priors`, 10-15 ms of rules at start-up)."""

from __future__ import annotations

import re

REPLACES = re.compile(
    r"\b(?:replac(?:e|es|ed|ing)|swap(?:s|ped|ping)?(?: out)?|instead of|rather than|"
    r"no longer (?:use|using)|"
    r"(?:switch|migrat|mov)\w* (?:away )?from|drop(?:s|ped|ping)?)\s+(?:the |our |using )?"
    r"([^\W\d_][\w.+#-]{2,})",
    re.I,
)
