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
