"""Which of a query's word pieces MaxSim reads: its content, not its grammar.

MaxSim (`search.maxsim`) averages, over the query's word pieces, each piece's best
match in a candidate. In "what did Caroline research?" four of the five pieces
(`what`, `did`, `?` and, in longer questions, `the`, `of`, `'`, `s`) say that this is a
question, not what it is about; every English text holds a close match for them, so
they add the same amount to every candidate and dilute the one or two pieces that
tell candidates apart. The rule, one for every query and language-independent in
form:

    a piece is left out when the word it belongs to (the tokenizer's word, e.g.
    "postgresql" for post ##gre ##s ##q ##l) is an English stopword (`search.text`:
    the NLTK English stop list; the question words the lexical search also drops,
    "kind", "type", "would", stay: they still name something in context) or holds
    no letter or digit (punctuation, symbols);
    [CLS] and [SEP] are never stored nor asked (`embed.minilm.embed_tokens`);
    if that leaves no piece, every piece is kept.

The query's pieces still go through the model together (each piece's vector is
read in the context of the whole question); only the mean skips the grammar.
Chosen on LoCoMo dev and techconv dev (docs/benchmarks-recall.md section 9).

The pieces' words come from the embedder's tokenizer: the NumPy MiniLM's
(`embedder.encoder.tokenizer`, HF `tokenizers`), or the fake embedder's words (one
piece per `\\w+` word). An embedder with neither keeps every piece.
"""

from __future__ import annotations

import re
from typing import Any

from memstrata.search.text import STOPWORDS, tokenize

_WORD = re.compile(r"\w+", re.UNICODE)
_STOP = STOPWORDS  # the NLTK English list (techconv dev r@10 0.898; with the question words 0.893)


def piece_words(embedder: Any, text: str) -> list[str] | None:
    """The word each of `text`'s pieces belongs to, in the order of its token vectors
    ([CLS] and [SEP] left out, truncated as the model truncates), or None when the
    embedder does not say how it cuts text."""
    tokenizer = getattr(getattr(embedder, "encoder", None), "tokenizer", None)
    if tokenizer is not None:
        enc = tokenizer.encode(text)
        spans: dict[int, tuple[int, int]] = {}
        for w, (a, b) in zip(enc.word_ids, enc.offsets, strict=True):
            if w is not None:
                lo, hi = spans.get(w, (a, b))
                spans[w] = (min(lo, a), max(hi, b))
        return [text[slice(*spans[w])] for w in enc.word_ids if w is not None]
    if getattr(embedder, "token_vectors", False) and hasattr(embedder, "_bucket"):
        return _WORD.findall(text.lower())  # `FakeEmbedder.embed_tokens`: one piece a word
    return None


def is_content(word: str) -> bool:
    """Does a piece of `word` count in MaxSim: a word with a letter or digit that is
    not an English stopword?"""
    words = tokenize(word)
    return bool(words) and not all(w in _STOP for w in words)


def content_pieces(embedder: Any, text: str, n: int) -> tuple[list[int] | None, list[str]]:
    """Indices of the query's `n` token vectors MaxSim reads (module docstring), None
    for all of them (the embedder does not say how it cuts text, the pieces do not line
    up with the vectors, or no piece is content), and the words of the pieces read
    (for `explain`: each word once, in order; empty when not known)."""
    words = piece_words(embedder, text)
    if words is None or len(words) != n:
        return None, []
    keep = [i for i, w in enumerate(words) if is_content(w)]
    if not keep:
        keep = list(range(n))
    read = list(dict.fromkeys(words[i].lower() for i in keep))
    return (keep if len(keep) < n else None), read


__all__ = ["content_pieces", "is_content", "piece_words"]
