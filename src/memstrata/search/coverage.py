"""How much of a question a record speaks to: IDF-weighted query-term coverage.

    coverage(hit) = sum of idf(t) over the query terms t the hit holds
                    / sum of idf(t) over all the query terms
    idf(t)        = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))     (BM25's, over the index)

A hit that holds one incidental word of a five-word question ("page", "many") covers
little of it; one that holds the question's rare, key words covers most. BM25 alone
lets a short record that repeats the incidental word win: relevance is normalised to
the best candidate, and a one-word match in a one-line record can be the best BM25.
Coverage is the share of the question's information a record holds, whatever its length.

A term is held when a word of the hit's title, text or tags starts with one of the
term's FTS5 stems (the porter stems `search.terms.stems` gives: "databases" holds
"database"), as the engine's `matched` does. Pure functions: the stems and document
frequencies come from the caller (`search.worth.query_terms_of`).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass

from memstrata.search import features
from memstrata.search.query import Hit


@dataclass(frozen=True)
class QueryTerm:
    """One content word of the query, its FTS5 stems and its IDF over the index."""

    word: str
    stems: tuple[str, ...]
    idf: float


def idf(df: int, total: int) -> float:
    """BM25's inverse document frequency (always > 0)."""
    return math.log(1.0 + (max(total, df) - df + 0.5) / (df + 0.5))


def held_terms(hit: Hit, terms: Sequence[QueryTerm]) -> list[str]:
    """The query terms (`QueryTerm.word`) the hit's title, text or tags hold.

    Example:
        >>> h = Hit("f:1", "fact", 1.0, "db_engine", "PostgreSQL 16 databases", "", 0.0, "f")
        >>> held_terms(h, [QueryTerm("database", ("databas",), 2.0),
        ...                QueryTerm("page", ("page",), 1.0)])
        ['database']
    """
    words = features.words(hit)
    return [t.word for t in terms if any(_starts(words, s) for s in t.stems)]


def _starts(words: list[str], stem: str) -> bool:
    """Whether a word of the sorted `words` starts with `stem` (one bisection, not a scan)."""
    i = bisect.bisect_left(words, stem)
    return i < len(words) and words[i].startswith(stem)


def coverage(
    hit: Hit, terms: Sequence[QueryTerm], total: float | None = None
) -> tuple[float, list[str]]:
    """(IDF-weighted share of the query terms the hit holds, the terms it holds);
    (1.0, []) when the query has no terms (nothing to cover). `total`: the terms' IDF
    summed, when the caller has it (the priors sum it once per query, not per hit)."""
    if total is None:
        total = sum(t.idf for t in terms)
    if total <= 0:
        return 1.0, []
    words = features.words(hit)
    end = len(words)
    held: list[str] = []
    got = 0.0
    for t in terms:  # `held_terms`, inlined: this runs for every candidate of every query
        for stem in t.stems:
            i = bisect.bisect_left(words, stem)
            if i < end and words[i].startswith(stem):
                held.append(t.word)
                break
    for t in terms:
        if t.word in held:
            got += t.idf
    return got / total, held
