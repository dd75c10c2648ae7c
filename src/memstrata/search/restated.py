"""A fact updated in place stands above the older records that stated its earlier value.

A fact is updated in place (`facts.set` on a live key): the index holds its current value
only, while what was written around its first value stays: the decision "Model: Azure
OpenAI ... a Standard deployment of gpt-4o-mini named brook-gpt4omini" beside the fact
`azure_deployment`, since changed to "brook-gpt41mini: gpt-4.1-mini ... 150k TPM"
(chatbot-otterbrook q-deploy); the archived note "Light sleep measured: 413 uA avg over
900 s (PPK2, 3.0 V)" beside `avg_current`, since "62 uA avg over 900 s (PPK2, 3.0 V),
deep sleep" (firmware-larkspur q-current). The older record shares the question's words
and ranks first; the fact that changed what it says ranks below it, or is not found at
all when the question's words ("draw", "average") are not the fact's ("avg", "uA"). So:

    updated(f)     = a current fact changed after it was first set (its journal record's
                     `created_at` before its `updated_at`)
    asks(q, f)     = q names f's subject, a word of its key (FTS5 stems: "deployment" of
                     `azure_deployment`), or asks about the present ("now", "currently",
                     "still", "any more": `PRESENT`); and q does not ask why a choice was
                     made (`search.reasons`: the older record holds the reason)
    stated(r, f)   = r is one of the pool's best `LENDERS` records (the best
                     `PRESENT_LENDERS` when q does not name f's subject), not a fact, tool
                     trace or error, written before f's update, and holds at least `SHARED`
                     of the content words of f's key and value, `SHARE` of them or more
    score(f)       = max(score(f), ABOVE x score(r))       when stated(r, f) and asks(q, f)

A decision in force (of the best `LENDERS`) that holds a value f changed since, in the
same frame ("Monday 8 March" / "Monday 15 March"), lends to f as well, when q asks about
the present, names f's key or asks "when" of a date (`search.stale`, renovation-ashgrove).

A fact not yet in the pool joins it. `explain`: `updates` (the older record's uid) and
`own_score`. Applied to the pool before the priors, as `search.pointers` is (`lend`:
no kind, tag or room filter; the facts filtered as any search of the query is).
"""

from __future__ import annotations

import re
import sqlite3
from collections import OrderedDict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

from memstrata.search.features import words
from memstrata.search.filters import filters
from memstrata.search.lending import lend, narrowed
from memstrata.search.pointers import ABOVE
from memstrata.search.query import Hit, Searchable, SearchQuery
from memstrata.search.reasons import asks_reason
from memstrata.search.rowmemo import index_stamp
from memstrata.search.stale import KINDS as STALE_KINDS
from memstrata.search.stale import asks_when, carries
from memstrata.search.terms import stems
from memstrata.search.text import QUERY_STOPWORDS, query_terms, tokenize
from memstrata.search.turns import _COLUMNS, _hit

LENDERS = 10  # records of one pool looked at, best first
PRESENT_LENDERS = 3  # ... for a fact the question does not name, only asks "now" about
SHARED = 4  # content words of the fact an older record holds, at least
SHARE = 0.4  # ... and this share of the fact's content words
UPDATED_FACTS = 200  # facts read (the most recently updated first)
NOT_LENDERS = frozenset({"fact"})  # layers whose records never lend
PRESENT = re.compile(
    r"\b(?:now|nowadays|currently|current|still|latest|anymore|any\s+more|these\s+days|"
    r"at\s+the\s+moment|at\s+present|today)\b",
    re.I,
)
_TRACE_KINDS = frozenset({"TOOL_USE", "ERROR", "tool_use", "tool_result"})


def content_words(text: str) -> set[str]:
    """The words of `text` that name something: no stopwords, no single characters.

    Example:
        >>> sorted(content_words("avg_current: 62 uA avg over 900 s"))
        ['62', '900', 'avg', 'current', 'ua']
    """
    return _naming(tokenize(text))


def _content(hit: Hit) -> set[str]:
    """`content_words` of a record's title, text and tags, from the words ranking reads
    of it once (`features.words`)."""
    return _naming(words(hit))


def _naming(tokens: Iterable[str]) -> set[str]:
    return {t for t in tokens if len(t) > 1 and t not in QUERY_STOPWORDS}


def stated(record: set[str], fact: set[str]) -> bool:
    """Whether a record holding the content words `record` states the subject of a fact
    whose key and value hold `fact` (`SHARED` of them, and `SHARE` of the fact's)."""
    if not fact:
        return False
    shared = len(record & fact)
    return shared >= SHARED and shared >= SHARE * len(fact)


def _lenders(pool: Sequence[Hit], dropped: Mapping[str, str]) -> list[Hit]:
    best = sorted((h for h in pool if h.uid not in dropped), key=lambda h: -h.score)
    out = [
        h
        for h in best
        if h.layer not in NOT_LENDERS and (h.kind or "") not in _TRACE_KINDS and h.score > 0
    ]
    return out[:LENDERS]


def _updated_facts(store: Searchable, q: SearchQuery) -> Sequence[Hit]:
    """The current facts the query may see whose value changed after it was first set."""
    where, params = filters(store, q)
    with store.db.read() as conn:
        if conn.in_transaction:  # the caller's: its writes may yet be rolled back
            return _read_updated(conn, where, params)
        return store.df_cache.per_scope(("updated facts",), UpdatedFacts).get(conn, where, params)


class UpdatedFacts:
    """`_updated_facts` of each recent filter, kept while the index is unchanged (kept in
    `Store.df_cache`, per generation).

    Most stores hold no fact updated in place, and the rule then does nothing; reading
    the docs for them at every search cost ~4% of a search's CPU on an agent store, a
    fifth on `bench ops`'s with 50 updated facts (docs/scale.md, cache19l). The facts
    read are kept with the index's stamp (`search.rowmemo.index_stamp`: `PRAGMA
    data_version`, which another connection's commit changes, and this connection's
    `total_changes`, which its own writes and its catch-up of files changed by hand or by
    other processes change), and read again when the stamp differs. The stamp is read
    before the facts: a commit between the two is read now and changes the stamp again.
    """

    FILTERS = 4  # filters (WHERE terms and parameters) kept, the least recent dropped

    def __init__(self) -> None:
        self._by_filter: OrderedDict[Hashable, tuple[tuple[Any, ...], tuple[Hit, ...]]] = (
            OrderedDict()
        )

    def get(self, conn: sqlite3.Connection, where: list[str], params: list[Any]) -> tuple[Hit, ...]:
        key = (tuple(where), tuple(params))
        stamp = index_stamp(conn)
        kept = self._by_filter.get(key)
        if kept is None or kept[0] != stamp:
            kept = self._by_filter[key] = (stamp, _read_updated(conn, where, params))
            while len(self._by_filter) > self.FILTERS:
                self._by_filter.popitem(last=False)
        self._by_filter.move_to_end(key)
        return kept[1]


def _read_updated(conn: sqlite3.Connection, where: list[str], params: list[Any]) -> tuple[Hit, ...]:
    made, changed = "json_extract(d.meta, '$.created_at')", "json_extract(d.meta, '$.updated_at')"
    where = [*where, "d.layer = 'fact'", f"{made} < {changed}"]
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM docs d WHERE {' AND '.join(where)} ORDER BY d.ts DESC LIMIT ?",
        [*params, UPDATED_FACTS],
    ).fetchall()
    return tuple(_hit(r) for r in rows)


def restating(
    store: Searchable, q: SearchQuery, pool: Sequence[Hit], dropped: Mapping[str, str]
) -> list[tuple[Hit, Hit]]:
    """(fact, the best older record that stated it) for each fact `with_restated` lifts
    ([] when it would do nothing; `search.worth.rules_idle` asks it before candidates
    are held back)."""
    if not pool or narrowed(q) or (q.layers and "fact" not in q.layers):
        return []
    if asks_reason(q.text):
        return []
    lenders = _lenders(pool, dropped)
    if not lenders:
        return []
    facts = [f for f in _updated_facts(store, q) if f.uid not in dropped]
    if not facts:
        return []
    present = PRESENT.search(q.text) is not None
    asked = _stems_of(query_terms(q.text))
    out: list[tuple[Hit, Hit]] = []
    for f in facts:
        named = bool(_stems_of(tokenize(f.title)) & asked)
        said = _content(f)
        found = None
        if named or present:
            for r in lenders if named else lenders[:PRESENT_LENDERS]:  # the first that stated f
                if r.ts < f.ts and stated(_content(r), said):
                    found = r
                    break
        if found is None:  # a decision in force holding a value f changed since
            found = _carrier(q.text, f, said, lenders, named or present)
        if found is not None:
            out.append((f, found))
    return out


def _carrier(
    query: str, fact: Hit, said: set[str], lenders: Sequence[Hit], asked: bool
) -> Hit | None:
    """The best of `lenders` that is a decision in force carrying a value `fact` changed
    since it was written (`search.stale`), when the question asks for it."""
    mine = tokenize(f"{fact.title} {fact.text}")
    for r in lenders:
        if r.layer != "ledger" or r.kind not in STALE_KINDS or r.ts >= fact.ts:
            continue
        changed = carries(tokenize(f"{r.title} {r.text}"), mine, _content(r) & said)
        if changed and (asked or asks_when(query, changed)):
            return r
    return None


def with_restated(
    store: Searchable, q: SearchQuery, pool: Sequence[Hit], dropped: Mapping[str, str]
) -> list[Hit]:
    """`pool` with each fact updated in place lifted just above the best older record of
    the pool that stated it, when the question asks about it (`updates` in its explain)."""
    found = restating(store, q, pool, dropped)
    if not found:
        return list(pool)
    return lend(pool, ((f, ABOVE * r.score, "updates", r.uid) for f, r in found))


def _stems_of(said: Sequence[str]) -> set[str]:
    return {t for terms in stems(list(said)).values() for t in terms}


__all__ = ["content_words", "restating", "stated", "with_restated"]
