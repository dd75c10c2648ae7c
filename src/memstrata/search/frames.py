"""The words of a question that frame it, not what it is about: left out of its terms.

"How long do resolvers cache the booking hostname now?" asks for a duration: "long"
says so, it names nothing the answer holds ("TTL lowered to 60 s"). Searched as a word,
and as a prefix when no record holds it whole, it found "longer" in an unrelated
decision, the one record that shared a rare word with the question, and that record
ranked first. The same with "these days" (the "30 days" of a retention rule), "last
time" (NOW's "Last turn" section), "in the end" ("fine-tuned end to end"), "right now",
"how many", "what sort of". The stop list (`search.text`) drops function words one at a
time; these are content words that frame a question only in a fixed phrase, so they
are read as phrases:

    frame(q)  = the words of q inside one of `_FRAMES`: "how" + a word of degree
                (long, often, many, much, far, soon, well, fast, quickly, big, large,
                old, good, frequently); a time-frame adverbial (these days, nowadays,
                right now, at the moment, at present, so far, to date, at the start,
                in the end, in the first place, at the time, any more, anymore, "as
                last ..."); last / this / next + time, week, month, year; "still";
                "what sort of"; "that one" / "this one" closing a clause
    topic(q)  = `text.query_terms(q)` without frame(q), when that leaves at least two
                terms; else all of them

"At first" and "the first time" are not frames: the records that tell what went wrong
first say "first" too ("probe-rs would not attach: first 'Access denied' ..."), and
dropping it moved firmware-larkspur's q-attach from rank 1 to 2 (`bench agent --replay`).
"Per" ("per month") is not one either: left out, it moved web-quillmark's q-price from
rank 2 to 1 and analytics-kestrel's q-churn-rate from 3 to 4. A question left with one
term ("How long should the feature be?" -> "feature") keeps its frame word: one word
ranks the shortest record that holds it first (a bare heading, "# E-scooter feature for
The Commons", above the brief's "2,500 words").

The question's meaning is left whole (the dense and MaxSim features read its text; the
MaxSim pieces without the frame words moved no dev rank), and what it asks for is read
by the question rules (`search.durations` reads "how long"). Only which words are
matched changes: the lexical candidates and BM25 (`engine.lexical_search`, `hybrid`)
and the terms coverage and the near-tie pass read (`worth.query_terms_of`). Pure.
"""

from __future__ import annotations

import re

from memstrata.search.text import STOPWORDS, query_terms, tokenize

_DEGREE = "long|often|many|much|far|soon|well|fast|quickly|big|large|old|good|frequently"
_FRAMES = re.compile(
    r"\bhow\s+(?:" + _DEGREE + r")\b"
    r"|\b(?:these\s+days|nowadays|right\s+now|at\s+the\s+moment|at\s+present|so\s+far"
    r"|to\s+date|at\s+the\s+start|in\s+the\s+end|in\s+the\s+first\s+place"
    r"|at\s+the\s+time|any\s*more)\b"
    r"|\bas\s+last\b"
    r"|\b(?:last|this|next)\s+(?:time|week|month|year)\b"
    r"|\bwhat\s+sort\s+of\b|\bstill\b"
    r"|\b(?:that|this)\s+one\s*(?=[?.!,;]|$)",
    re.I,
)


def frame_words(text: str) -> frozenset[str]:
    """The content words of `text` that only frame it (module doc), as tokens.

    Example:
        >>> sorted(frame_words("How long do resolvers cache the booking hostname now?"))
        ['long']
        >>> sorted(frame_words("Where do the embeddings live these days?"))
        ['days']
    """
    found: set[str] = set()
    for m in _FRAMES.finditer(text):
        found.update(w for w in tokenize(m.group(0)) if w not in STOPWORDS)
    return frozenset(found)


def topic_terms(text: str) -> list[str]:
    """`query_terms(text)` without the words that frame the question (`frame_words`),
    when at least two terms are left; else all of them.

    Example:
        >>> topic_terms("What stopped the evaluation run last time?")
        ['stopped', 'evaluation', 'run']
        >>> topic_terms("How long should the feature be?")
        ['long', 'feature']
    """
    terms = query_terms(text)
    framing = frame_words(text)
    if not framing:
        return terms
    topic = [t for t in terms if t not in framing]
    return topic if len(topic) >= 2 else terms
