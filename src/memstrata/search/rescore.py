"""The pruned common words of a large store's query, scored on the candidates only.

In a store over `[search] postings_budget`, a query's most common words are left out of
the FTS5 MATCH (`engine._essential`); their BM25 share is added back here, on the pool's
candidates (`engine.lexical_pool`).
"""

from __future__ import annotations

import functools
import re
from typing import Any

from memstrata.search import scoring


def scoring_extra(
    rows: list[Any], extra: list[tuple[str, list[str], int]], total: int
) -> list[float]:
    """BM25 contribution (`scoring.bm25_term`) of the pruned common terms, on the
    candidates only; tf counts words of the candidate starting with one of the term's stems."""
    texts, lengths = [], []
    for r in rows:
        text, length = _lowered(r[8], r[9], r[6])
        texts.append(text)
        lengths.append(length)
    avg = sum(lengths) / len(lengths) if lengths else 1.0
    out = [0.0] * len(rows)
    # One scan of each candidate finds, at each word start, the longest stem the word
    # starts with; the word then counts for every term owning that stem or a stem that
    # prefixes it (what one `\b(?:stems)\w*` scan per term and candidate counted before).
    union = sorted({st for _w, stem_list, _df in extra for st in stem_list}, key=len, reverse=True)
    plain = all(_plain_stem(st) for st in union)
    pat = None if plain else _stems_pattern(tuple(union))
    covers = [
        (df, {u for u in union if u.startswith(tuple(stem_list))}) for _w, stem_list, df in extra
    ]
    for i, t in enumerate(texts):
        for st in union:
            if st in t:
                break
        else:
            continue  # no stem anywhere in it (most candidates): nothing for the scan to find
        stems_found = pat.findall(t) if pat is not None else _stems_at_word_starts(t, union)
        if not stems_found:
            continue
        for df, owned in covers:
            tf = sum(1 for st in stems_found if st in owned)
            if tf:
                out[i] += scoring.bm25_term(tf, df, total, lengths[i], avg)
    return out


# A candidate's text lowered and its word count, per (title, body, tags): the same
# candidates come back query after query (the strings of a kept row are the same objects,
# their hashes already known), and lowering ~100 texts was half of this re-scoring.
_LOWERED_KEPT = 8192
_lowered_texts: dict[tuple[str, str, str], tuple[str, int]] = {}


def _lowered(title: str, body: str, tags: str) -> tuple[str, int]:
    key = (title, body, tags)
    got = _lowered_texts.get(key)
    if got is None:
        text = f"{title} {body} {tags}".lower()
        got = (text, max(1, len(text.split())))
        if len(_lowered_texts) >= _LOWERED_KEPT:
            _lowered_texts.clear()
        _lowered_texts[key] = got
    return got


def _stems_at_word_starts(text: str, union: list[str]) -> list[str]:
    """What `_stems_pattern(union).findall(text)` finds (in another order) when every stem
    is a plain ASCII token (`_plain_stem`): at each word start (a word character with no
    word character before it, as a pattern's word boundary reads them) the longest stem
    the word starts with. No pattern to compile: at 100k entries most queries prune other
    common words, and compiling their pattern cost more than the scans."""
    found: dict[int, str] = {}
    for st in union:  # longest first: a word start keeps the first stem found there
        i = text.find(st)
        while i >= 0:
            if i not in found and (i == 0 or not _is_word(text[i - 1])):
                found[i] = st
            i = text.find(st, i + 1)
    return list(found.values())


def _is_word(c: str) -> bool:
    """Whether `re` counts `c` as a word character (a Unicode letter or digit, or `_`)."""
    return c.isalnum() or c == "_"


_PLAIN_STEM = re.compile(r"[a-z0-9]+")


def _plain_stem(stem: str) -> bool:
    return _PLAIN_STEM.fullmatch(stem) is not None


@functools.lru_cache(maxsize=256)  # the common words pruned recur from query to query
def _stems_pattern(union: tuple[str, ...]) -> re.Pattern[str]:
    """A word start followed by one of `union` (longest first): the stem it starts with."""
    return re.compile(r"\b(" + "|".join(re.escape(st) for st in union) + ")")
