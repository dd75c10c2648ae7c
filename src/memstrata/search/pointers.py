"""A record that points to a fact by its key stands below the fact it points to.

"What size is the production database instance right now?": the decision "Production
database: RDS PostgreSQL 16.4 (salt-prod-db), Multi-AZ, ... the instance class is in the
rds_instance_class fact" shares the question's words and ranks first; the fact it points
to, `rds_instance_class = db.t4g.large ...`, holds the value and ranks second
(infra-saltmarsh q-class). An agent that names a fact's key in a note says where the
value lives: the value is kept current in the fact (updated in place), the note is not.
So:

    pointer(f)  = a record of the pool (the best `POINTERS`) whose text names the key of
                  the current fact f as written (an identifier: `rds_instance_class`,
                  `db-engine`; two or more words joined by `_` or `-`)
    asks(q, f)  = q holds a word of f's key (its FTS5 stems): the question is about
                  what the pointer points to ("instance" of rds_instance_class), not
                  only about the pointer's other words
    score(f)    = max(score(f), ABOVE x score(pointer(f)))      when asks(q, f)

A fact not yet in the pool joins it. `explain`: `pointed_by` (the pointer's uid) and
`own_score`. Applied to the pool before the priors, with `search.failures`' conditions:
no kind, tag or room filter; the fact is filtered as any search of the query is.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from memstrata.search.features import remember
from memstrata.search.filters import filters
from memstrata.search.lending import lend, narrowed
from memstrata.search.query import Hit, Searchable, SearchQuery
from memstrata.search.terms import stems
from memstrata.search.text import query_terms, tokenize
from memstrata.search.turns import _COLUMNS, _hit

POINTERS = 10  # records of one pool whose fact keys are looked for, best first
ABOVE = 1.01  # a pointed-to fact scores just above its pointer
_KEY = re.compile(r"(?<![\w./-])[a-z][a-z0-9]*(?:[_-][a-z0-9]+)+(?![\w/-])")


def keys_named(text: str) -> list[str]:
    """The identifiers in `text` that may be fact keys (`rds_instance_class`), in order.

    Example:
        >>> keys_named("the instance class is in the rds_instance_class fact")
        ['rds_instance_class']
    """
    return list(dict.fromkeys(_KEY.findall(text)))


def _keys_of(hit: Hit) -> list[str]:
    """`keys_named` of a record's title and text, read once per record
    (`features.remember`): `points_to` runs twice a recall over the pool's best."""
    return keys_named(f"{hit.title}\n{hit.text}")


def points_to(q: SearchQuery, pool: Sequence[Hit], dropped: Mapping[str, str]) -> dict[str, Hit]:
    """The fact keys the pool's best records name that the question holds a word of, each
    with its best pointer: what `with_pointed` would look up ({} when it would do nothing;
    `search.worth.rules_idle` asks it before candidates are held back)."""
    if not pool or narrowed(q):
        return {}
    if q.layers and "fact" not in q.layers:
        return {}
    asked = _stems_of(query_terms(q.text))
    if not asked:
        return {}
    best = sorted((h for h in pool if h.uid not in dropped), key=lambda h: -h.score)[:POINTERS]
    named: dict[str, Hit] = {}  # key -> its best pointer
    for h in best:
        if h.layer == "fact":
            continue
        for key in remember(h, "keys named", _keys_of):
            if key not in named and _stems_of(tokenize(key)) & asked:
                named[key] = h
    return named


def with_pointed(
    store: Searchable, q: SearchQuery, pool: Sequence[Hit], dropped: Mapping[str, str]
) -> list[Hit]:
    """`pool` with each current fact a good candidate names by key lifted just above that
    candidate, when the question holds a word of the key (`pointed_by` in its explain)."""
    named = points_to(q, pool, dropped)
    if not named:
        return list(pool)
    where, params = filters(store, q)
    where += ["d.layer = 'fact'", f"d.title IN ({','.join('?' for _ in named)})"]
    with store.db.read() as conn:
        rows = conn.execute(
            f"SELECT {_COLUMNS} FROM docs d WHERE {' AND '.join(where)}", [*params, *named]
        ).fetchall()
    facts = [(f, named.get(f.title)) for f in map(_hit, rows)]
    return lend(
        pool,
        (
            (f, ABOVE * p.score, "pointed_by", p.uid)
            for f, p in facts
            if p is not None and f.uid not in dropped
        ),
    )


def _stems_of(words: Sequence[str]) -> set[str]:
    return {t for terms in stems(list(words)).values() for t in terms}
