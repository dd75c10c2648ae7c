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
import functools
import math
import re
from collections.abc import Callable, Sequence

from memstrata.search import features
from memstrata.search.query import Hit
from memstrata.values import value_type

_ASCII_TOKEN = re.compile(r"[a-z0-9]+")  # `text.tokenize`'s tokens of ASCII text


@value_type(frozen=True)
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


def coverage(hit: Hit, terms: Sequence[QueryTerm]) -> tuple[float, list[str]]:
    """(IDF-weighted share of the query terms the hit holds, the terms it holds);
    (1.0, []) when the query has no terms (nothing to cover)."""
    return coverage_of(terms)(hit)


def coverage_of(terms: Sequence[QueryTerm]) -> Callable[[Hit], tuple[float, list[str]]]:
    """`coverage` for one query's terms, what does not depend on the hit read once (the
    priors call it for every candidate)."""
    total = sum(t.idf for t in terms)
    pairs = [(t.word, t.stems) for t in terms]
    plain = all(_plain(stem) for _word, stems in pairs for stem in stems)

    def cover(hit: Hit) -> tuple[float, list[str]]:
        if total <= 0:
            return 1.0, []
        held = _held(hit, pairs, plain)
        got = 0.0
        for t in terms:
            if t.word in held:
                got += t.idf
        return got / total, held

    return cover


def holders(pairs: Sequence[tuple[str, Sequence[str]]]) -> Callable[[Hit], list[str]]:
    """For one query's (word, stems) pairs: the words a hit holds, in order, as `holds`
    tells each (`[w for w, st in pairs if holds(hit, st)]`), what does not depend on the
    hit read once (the engine's `matched` of every hit shown)."""
    if all(_plain(stem) for _word, stems in pairs for stem in stems):
        return lambda hit: _held(hit, pairs, True)
    return lambda hit: [w for w, st in pairs if holds(hit, st)]


def holds(hit: Hit, stems: Sequence[str]) -> bool:
    """Whether a word of the hit's title, text or tags starts with one of `stems`."""
    return bool(_held(hit, [("", stems)], all(_plain(stem) for stem in stems)))


def _held(hit: Hit, terms: Sequence[tuple[str, Sequence[str]]], plain: bool) -> list[str]:
    """The words of `terms` ((word, stems) pairs) whose stems start a word of the hit;
    `plain`: every stem is a whole ASCII token (`_plain`).

    An ASCII record's folded text is searched for the stem with no letter or digit
    before it (a token of `text.tokenize` starting with it, without making the tokens);
    another record is bisected in its sorted words (`features.words`). At 100k entries
    most records a query ranks are read for the first time, and making a record's sorted
    words cost more than the rest of its priors.
    """
    low = features.remember(hit, "ascii lower", _ascii_lower)
    if low is None or not plain:
        return _held_in_words(hit, terms)
    out: list[str] = []
    for word, stems in terms:
        for stem in stems:
            i = low.find(stem)
            while i > 0 and low[i - 1].isalnum():  # inside a token: look further on
                i = low.find(stem, i + 1)
            if i >= 0:
                out.append(word)
                break
    return out


def _held_in_words(hit: Hit, terms: Sequence[tuple[str, Sequence[str]]]) -> list[str]:
    words = features.words(hit)
    end = len(words)
    out: list[str] = []
    for word, stems in terms:
        for stem in stems:
            i = bisect.bisect_left(words, stem)
            if i < end and words[i].startswith(stem):
                out.append(word)
                break
    return out


def _ascii_lower(hit: Hit) -> str | None:
    """The hit's title, text and tags case-folded as `text.tokenize` folds ASCII, or None
    when they are not all ASCII (tokenize folds diacritics and other scripts' cases)."""
    joined = f"{hit.title} {hit.text} {' '.join(hit.tags)}"
    return joined.lower() if joined.isascii() else None


@functools.lru_cache(maxsize=4096)
def _plain(stem: str) -> bool:
    """Whether `stem` is a whole ASCII token (it is then found where a token starts);
    other stems are bisected in the record's words."""
    return _ASCII_TOKEN.fullmatch(stem) is not None
