"""Plain-English normalisation shared by the rule-based readers of memory text.

The compaction classifier (`reading.classify`) and the ignore-memory reader
(`assembly.ignore`) both match cue phrases ("do not touch", "don't use your
memory"). Matching one spelling is only possible once contractions are expanded,
so both expand them with this one table: "don't" and "dont" -> "do not",
"can't"/"cannot" -> "can not", "let's" -> "let us", "you'll" -> "you will", ...
Input is expected lower-cased with typographic apostrophes already made ASCII.
"""

from __future__ import annotations

import re

_CONTRACTIONS = (
    (
        re.compile(
            r"\b(do|does|did|could|would|should|is|are|was|were|have|has|had|must|need)"
            r"n'?t\b"
        ),
        r"\1 not",
    ),
    (re.compile(r"\bdon'?t\b|\bdont\b"), "do not"),
    (re.compile(r"\bwon'?t\b"), "will not"),
    (re.compile(r"\bcan'?t\b|\bcannot\b"), "can not"),
    (re.compile(r"\blet's\b|\blets\b"), "let us"),
    (re.compile(r"\b(i|you|we|they|he|she)'ll\b"), r"\1 will"),
    (re.compile(r"\b(i|you|we|they)'ve\b"), r"\1 have"),
    (re.compile(r"\b(i|you|we|they)'d\b"), r"\1 would"),
    (re.compile(r"\b(i|you|we|they)'re\b"), r"\1 are"),
    (re.compile(r"\bi'm\b"), "i am"),
    (re.compile(r"\b(it|that|what|there|this|he|she|memory|context)'s\b"), r"\1 is"),
)


def expand_contractions(low: str) -> str:
    """`low` (lower case, ASCII apostrophes) with every contraction spelled out.

    >>> expand_contractions("don't use your notes, we'll start fresh")
    'do not use your notes, we will start fresh'
    """
    for pattern, repl in _CONTRACTIONS:
        low = pattern.sub(repl, low)
    return low


# Words said before the point: acknowledgements standing as a sentence of their own
# ("Nice.", "Great, thanks!") and openers ("OK so", "For the record:", "By the way,").
_ACK = (
    r"nice|great|good|perfect|cool|awesome|excellent|lovely|brilliant|wonderful|fantastic|"
    r"ok|okay|alright|all right|right|sure|yes|yeah|yep|wow|hmm+|hm|oh|ah|well|thanks|"
    r"thank you|thx|cheers|got it|fair enough|makes sense|understood|noted|fine|sounds good|"
    r"looks good|good catch|nice work|good work|great work|well done|interesting"
)
_FILLER = re.compile(
    r"^(?:(?:(?:" + _ACK + r")(?:[\s,]+(?:" + _ACK + r"))*\s*[.!]+|"
    r"(?:" + _ACK + r"|so|also|and|anyway|btw|by the way|fyi|for the record|for what it'?s worth|"
    r"just so you know|one more thing|quick note|side note|remember|note|please note)"
    r"(?:\s+that)?\s*[,:;\u2013\u2014-]|(?:ok|okay|alright|right|and|also|anyway|well)\s+so\b|"
    r"(?:please )?(?:remember|note|keep in mind) that\b|"
    r"(?:ok|okay|alright|well|right|so)(?=\s+(?:we|i|you|let|the|our|from|for)\b))"
    r"\s*[,:;\u2013\u2014-]?\s*)+",
    re.I,
)


def strip_filler(text: str) -> str:
    """`text` without the acknowledgements and openers said before its point ("Nice.",
    "OK so", "For the record:"), its first letter upper-cased; `text` itself when nothing
    of substance would be left.

    >>> strip_filler("Nice. For the record: I prefer httpx to requests.")
    'I prefer httpx to requests.'
    >>> strip_filler("OK so we go with PostgreSQL 16.")
    'We go with PostgreSQL 16.'
    >>> strip_filler("Great, thanks!")
    'Great, thanks!'
    """
    stripped = text.strip()
    rest = _FILLER.sub("", stripped, count=1).strip()
    if len(re.findall(r"\w+", rest)) < 2 or rest == stripped:
        return stripped
    return rest[0].upper() + rest[1:]
