"""Query text as the FTS5 index sees it: tokens, stopwords and a safe MATCH expression.

Pure functions, no I/O, nothing done at import time beyond building constant sets.

Tokenisation mirrors SQLite's ``unicode61`` tokenizer with ``remove_diacritics 2``:
a token is a maximal run of letters (Unicode category L*), digits (N*) or
private-use characters (Co); everything else (spaces, punctuation, quotes,
symbols, emoji) separates tokens. Tokens are case-folded and stripped of
combining marks (``é`` -> ``e``). SQLite's character tables date from Unicode
6.1, so a code point assigned later (some newer emoji) can be a token character
there and a separator here; that only changes which words are searched, never
the safety of the expression. Stemming is left to FTS5 itself: the index uses
``porter unicode61``, and a quoted term in a MATCH string goes through the same
tokenizer, so ``"running"`` matches ``run``. Python never needs its own stemmer.

Why stopwords are dropped from queries (measured on LoCoMo, see the project's
retrieval findings): an OR query over every word of "What did she say about
the trip?" is dominated by ``what``, ``did``, ``she``, ``the``. BM25 gives them a
low IDF, but in short documents (chat turns, one-line facts) their term
frequency still outweighs the one content word, and every document holding
them becomes a candidate. Dropping them raised recall@10 from 0.55 to 0.58 on
its own and made queries about twice as fast.

The list is the NLTK / Snowball English stop list (function words, pronouns,
auxiliaries) plus the words that make a sentence a *question* or a vague
request rather than name its subject: modal verbs (would, could, might, may,
shall) and generic nouns/adverbs (kind, type, thing, ever, likely, also). They
occur in almost every question put to a memory store and carry no topic.
Contractions are split the way unicode61 splits them (``don't`` -> ``don``, ``t``).
If dropping stopwords would leave nothing (a query such as "The Who"), the
unfiltered tokens are searched instead, so only an empty or symbol-only query
yields no expression.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

MAX_QUERY_CHARS = 20_000
"""Input longer than this is cut before tokenising (bounds work on hostile input)."""

_NLTK_ENGLISH = """
i me my myself we our ours ourselves you you're you've you'll you'd your yours
yourself yourselves he him his himself she she's her hers herself it it's its
itself they them their theirs themselves what which who whom this that that'll
these those am is are was were be been being have has had having do does did
doing a an the and but if or because as until while of at by for with about
against between into through during before after above below to from up down in
out on off over under again further then once here there when where why how all
any both each few more most other some such no nor not only own same so than too
very s t can will just don don't should should've now d ll m o re ve y ain aren
aren't couldn couldn't didn didn't doesn doesn't hadn hadn't hasn hasn't haven
haven't isn isn't ma mightn mightn't mustn mustn't needn needn't shan shan't
shouldn shouldn't wasn wasn't weren weren't won won't wouldn wouldn't
"""

_QUESTION_WORDS = """
would could might may shall likely ever also kind kinds type types thing things
"""


_ASCII_TOKEN = re.compile(r"[a-z0-9]+")


def _is_token_char(ch: str) -> bool:
    cat = unicodedata.category(ch)
    return cat[0] in ("L", "N") or cat == "Co"


def _fold(token: str) -> str:
    """Case-fold and drop combining marks (unicode61 remove_diacritics 2)."""
    decomposed = unicodedata.normalize("NFD", token.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def tokenize(text: str) -> list[str]:
    """Split `text` into lower-case, diacritic-free tokens as FTS5 unicode61 does.

    Example: ``tokenize("Don't STOP-me, Zoë!")`` -> ``["don", "t", "stop", "me", "zoe"]``.
    """
    if text.isascii():  # the common case, in C: ASCII letters and digits are the tokens
        return _ASCII_TOKEN.findall(text.lower())
    out: list[str] = []
    cur: list[str] = []
    for ch in text:
        if _is_token_char(ch) or (cur and unicodedata.combining(ch)):
            cur.append(ch)
        elif cur:
            tok = _fold("".join(cur))
            if tok:
                out.append(tok)
            cur = []
    if cur:
        tok = _fold("".join(cur))
        if tok:
            out.append(tok)
    return out


def _split(words: str) -> frozenset[str]:
    return frozenset(t for w in words.split() for t in tokenize(w))


STOPWORDS: frozenset[str] = _split(_NLTK_ENGLISH)
"""General English function words (NLTK/Snowball list), split as unicode61 splits them."""

QUESTION_WORDS: frozenset[str] = _split(_QUESTION_WORDS)
"""Interrogative/modal/generic words that occur in questions but name no topic."""

QUERY_STOPWORDS: frozenset[str] = STOPWORDS | QUESTION_WORDS
"""What `query_terms` drops by default."""


def query_terms(
    text: str, *, stopwords: Iterable[str] | None = None, max_terms: int = 64
) -> list[str]:
    """Distinct search terms of `text`, in order of first appearance.

    terms = tokenize(text) minus `stopwords` (default `QUERY_STOPWORDS`), de-duplicated,
    at most `max_terms`; if every token is a stopword the unfiltered tokens are used.
    """
    stop = QUERY_STOPWORDS if stopwords is None else frozenset(stopwords)
    tokens = tokenize(text[:MAX_QUERY_CHARS])
    kept = [t for t in tokens if t not in stop] or tokens
    seen: set[str] = set()
    out: list[str] = []
    for t in kept:
        if t not in seen:
            seen.add(t)
            out.append(t)
            if len(out) >= max(1, max_terms):
                break
    return out


def quote(term: str) -> str:
    """An FTS5 string literal: double quotes around `term`, inner quotes doubled."""
    return '"' + term.replace('"', '""') + '"'


def mentioned(text: str, names: Iterable[str]) -> set[str]:
    """The `names` (e.g. speakers, owners) all of whose tokens occur in `text`.

    Used to give documents written by a person a query names a small bonus: the
    name itself is a poor BM25 term in that person's own conversations (it occurs
    in a large share of them, so its IDF is near zero).
    """
    toks = set(tokenize(text[:MAX_QUERY_CHARS]))
    out: set[str] = set()
    for name in names:
        parts = tokenize(name)
        if parts and all(p in toks for p in parts):
            out.add(name)
    return out
