"""BM25 of the common words a large store's MATCH leaves out, on the candidates only.

In a store over `[search] postings_budget` the engine matches a query's rarest words and
re-scores its common ones on the candidates (`engine.scoring_extra`): a word's tf in a
candidate counts the candidate's words that start with one of its FTS5 stems, the
longest stem first where several do (a word starting with "databas" counts for
"databas", not also for "data"). That was one regular expression per query,
`\\b(stem|stem|...)` longest first, run over every candidate's text: compiling it took
~0.27 ms a query and each scan ~12 us.

Here each text is read once (`_Words`, remembered by text: the same candidates come back
query after query): its distinct words sorted, with running counts. The words starting
with a stem are then one range of that list (two bisections), and a stem owns the words
of its range that no longer stem of the query owns. The counts are exactly the
expression's: a match of `\\b(stem)` begins a run of word characters and, one match per
run, is the run's longest stem; a stem holding other characters (none does: FTS5's
stems are letters and digits) is counted by the expression, as before.
"""

from __future__ import annotations

import bisect
import itertools
import re
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from memstrata.search import scoring

SIZE = 32_768  # texts remembered (the older half dropped when full)
_WORD = re.compile(r"\w+")
_ALL_WORD = re.compile(r"\w+")

_memo: dict[str, _Words] = {}
_lock = threading.Lock()


@dataclass(frozen=True)
class _Words:
    length: int  # whitespace-separated words (BM25's |d|)
    words: list[str]  # distinct runs of word characters, sorted
    upto: list[int]  # upto[i]: occurrences of words[:i]


def _read(text: str) -> _Words:
    got = _memo.get(text)
    if got is None:
        counts = Counter(_WORD.findall(text))
        words = sorted(counts)
        upto = [0, *itertools.accumulate(counts[w] for w in words)]
        got = _Words(max(1, len(text.split())), words, upto)
        with _lock:
            if len(_memo) >= SIZE:
                for old in list(itertools.islice(_memo, SIZE // 2)):
                    _memo.pop(old, None)
            _memo[text] = got
    return got


def _starting(w: _Words, stem: str) -> int:
    """Occurrences of the words starting with `stem`."""
    lo = bisect.bisect_left(w.words, stem)
    hi = bisect.bisect_left(w.words, stem + "\U0010ffff", lo)
    return w.upto[hi] - w.upto[lo]


def stem_counts(text: str, union: Sequence[str]) -> dict[str, int]:
    """stem -> how many words of `text` it owns (their longest stem in `union`):
    `Counter(re.findall(r"\\b(" + "|".join(union longest first) + ")", text))`."""
    w = _read(text)
    owned: dict[str, int] = {}
    for stem in sorted(union, key=len, reverse=True):
        n = _starting(w, stem) - sum(c for s, c in owned.items() if s.startswith(stem))
        owned[stem] = n
    return {s: n for s, n in owned.items() if n}


def extra_scores(
    texts: Sequence[str], extra: Sequence[tuple[str, list[str], int]], total: int
) -> list[float]:
    """`engine.scoring_extra` over the candidates' lower-cased texts."""
    union = sorted({st for _w, stem_list, _df in extra for st in stem_list}, key=len, reverse=True)
    if not all(_ALL_WORD.fullmatch(st) for st in union):
        return _by_expression(texts, extra, total, union)
    read = [_read(t) for t in texts]
    lengths = [r.length for r in read]
    avg = sum(lengths) / len(lengths) if lengths else 1.0
    covers = [
        (df, {u for u in union if u.startswith(tuple(stem_list))}) for _w, stem_list, df in extra
    ]
    out = [0.0] * len(texts)
    for i, t in enumerate(texts):
        found = stem_counts(t, union)
        if not found:
            continue
        for df, owned in covers:
            tf = sum(n for st, n in found.items() if st in owned)
            if tf:
                out[i] += scoring.bm25_term(tf, df, total, lengths[i], avg)
    return out


def _by_expression(
    texts: Sequence[str], extra: Sequence[tuple[str, list[str], int]], total: int, union: list[str]
) -> list[float]:
    """The same with one regular expression (stems with characters outside `\\w`)."""
    lengths = [max(1, len(t.split())) for t in texts]
    avg = sum(lengths) / len(lengths) if lengths else 1.0
    out = [0.0] * len(texts)
    pat = re.compile(r"\b(" + "|".join(re.escape(st) for st in union) + ")")
    covers = [
        (df, {u for u in union if u.startswith(tuple(stem_list))}) for _w, stem_list, df in extra
    ]
    for i, t in enumerate(texts):
        stems_found = pat.findall(t)
        if not stems_found:
            continue
        found = Counter(stems_found)
        for df, owned in covers:
            tf = sum(n for st, n in found.items() if st in owned)
            if tf:
                out[i] += scoring.bm25_term(tf, df, total, lengths[i], avg)
    return out
