"""What ranking reads of a record, read once per record, not once per query.

The priors (`search.priors`), term coverage (`search.coverage`) and the engine's
`matched` read the same things of every candidate, query after query: its LOG metadata,
its first line, its tags, its signal, whether it asks, its sorted words. Each is a pure
function of the record's stored fields (layer, kind, title, text, tags, and a LOG
entry's meta), so it is kept here, keyed by those fields, and computed again only when
one of them differs (an edit, a rewrite, a reindex that changes a field). Only LOG
entries' metadata says anything ranking reads (their entry type, tags, event, tool); a
record of another layer is known by its other fields, which is what makes a look-up
cheaper than what it saves (comparing a ledger entry's whole metadata cost as much).

    remember(hit, name, compute) = compute(hit), computed once per (record fields, name)

A function remembered here must read nothing but those fields of the hit: not its
score or uid, not the query, not the configuration (a signal's weight is looked up
after), and the meta only of a LOG entry.
`tests/search/test_features.py` holds it to that: rankings with the memo and without
it are the same, field for field.

The memo is bounded (`SIZE` records, the older half dropped when full) and shared by
every store of the process (its keys are contents, not places). At 10k entries a
typical query's candidates were read before by an earlier query about 85% of the time,
at 100k about 45% (the 200 and 300 queries of `bench ops` and `bench search`).
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from memstrata.search.query import MEMO_SLOT, Hit
from memstrata.search.text import tokenize
from memstrata.search.toolcalls import LOG_LAYERS

T = TypeVar("T")
SIZE = 8_192  # records remembered (their texts are held by the keys: a few MB)

_memo: dict[tuple[Any, ...], tuple[dict[str, Any], dict[str, Any]]] = {}
_lock = threading.Lock()
_on = True


def _key(hit: Hit) -> tuple[Any, ...]:
    return (hit.layer, hit.kind, hit.title, hit.text, hit.tags)


def remember(hit: Hit, name: str, compute: Callable[[Hit], T]) -> T:
    """`compute(hit)`, computed once for the hit's stored fields (see the module's rule)."""
    if not _on:
        return compute(hit)
    # The hit's values are kept on the hit too (`query.MEMO_SLOT`): exclusions, the
    # priors, coverage and `matched` each ask for them, and a look-up in the memo hashes
    # the record's title and text (new strings each query). A hit is frozen, and a copy
    # that changes a field read here drops the slot (`Hit.but`).
    values = hit.__dict__.get(MEMO_SLOT)
    if values is None:
        values = hit.__dict__[MEMO_SLOT] = _values(hit)
    if name in values:
        return values[name]  # type: ignore[no-any-return]
    value = values[name] = compute(hit)
    return value


def _values(hit: Hit) -> dict[str, Any]:
    key = _key(hit)
    entry = _memo.get(key)
    if entry is None or (hit.layer in LOG_LAYERS and entry[0] != hit.meta):
        entry = (hit.meta, {})
        with _lock:
            if len(_memo) >= SIZE:
                for old in list(itertools.islice(_memo, SIZE // 2)):
                    _memo.pop(old, None)
            _memo[key] = entry
    return entry[1]


def words(hit: Hit) -> list[str]:
    """The hit's title, text and tag words (`text.tokenize`), sorted, each once: what
    `coverage.held_terms` and the engine's `matched` bisect for a term's stems."""
    return remember(hit, "words", _words)


def _words(hit: Hit) -> list[str]:
    return sorted(set(tokenize(f"{hit.title} {hit.text} {' '.join(hit.tags)}")))


def clear() -> None:
    """Forget every record (tests; nothing else needs it: keys are contents)."""
    with _lock:
        _memo.clear()


@contextmanager
def disabled() -> Iterator[None]:
    """Everything computed afresh inside the block (what the memo must not change)."""
    global _on
    before, _on = _on, False
    try:
        yield
    finally:
        _on = before
