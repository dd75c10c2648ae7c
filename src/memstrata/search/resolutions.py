"""A question that asks how a problem was got past is answered by what came after its error.

"What did the first restore into the staging database trip over, and what got it
through?": the ERROR (`role "saltmarsh" does not exist`) shares the question's words and
is found; the THOUGHT the agent wrote a few entries later, "pg_restore failed on
ownership ... Fix: pg_restore --no-owner ...", shares almost none and sits far below
(infra-saltmarsh; firmware-larkspur's "The debugger wouldn't connect ... What did we do
about it?" and "What was blocking terraform yesterday, and how did we get past it?"
alike). An agent writes what it did about a failure after the failure, in the same LOG:
a search that finds the error has found where its resolution is. So, for a question that
asks how something was fixed or got past (`search.fixes.asks_fix`):

    lender(r)  = an ERROR entry of the pool (the best `LENDERS`) that r follows in the
                 same LOG file, at most `SPAN` entries and `WINDOW` seconds later, the
                 first entry after it (traces and errors passed over) that states a fix
    states(r)  = r is not a trace or an error and says it fixed something
                 (`search.fixes.fix_said`: "fixed with", "Fix: ...", "released it with")
    score(r)   = max(score(r), SHARE x score(lender(r)))

`search.fixes` then weighs r (x 1.5) as any record that states a fix, so the resolution of
the error the question found ranks above that error. SHARE < 1: a resolution is one step
from what the question found, and a pool's lesser errors (a search for a failure finds
every error a little) must not lend their resolutions a place above the subject's (1.0
put the brown-out fix above the debugger's for "The debugger wouldn't connect ... What did
we do about it?"; 0.8 keeps it below). A resolution not yet in the pool joins it. `explain`: `resolves` (the ERROR's
uid) and `own_score`. Applied to the pool before the priors, with `search.failures`'
conditions: no kind, tag or room filter; the resolution is filtered as any search of the
query is (`search.filters`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from memstrata.search.filters import filters
from memstrata.search.fixes import asks_fix, fix_said
from memstrata.search.lending import lend, narrowed
from memstrata.search.query import Hit, Searchable, SearchQuery
from memstrata.search.toolcalls import LOG_LAYERS
from memstrata.search.turns import _COLUMNS, _hit

ERROR_KIND = "ERROR"
LENDERS = 10  # errors of one pool whose resolutions are looked for, best first
SPAN = 8  # entries after an error its resolution may be
SHARE = 0.8  # a resolution's score: this share of its error's, when more than its own
WINDOW = 6 * 3600.0  # seconds after an error its resolution may be written
_NOT_RESOLUTIONS = frozenset({"TOOL_USE", ERROR_KIND})


def with_resolutions(
    store: Searchable, q: SearchQuery, pool: Sequence[Hit], dropped: Mapping[str, str]
) -> list[Hit]:
    """`pool` with the record that says how each of its errors was fixed lifted to the
    error's score (`resolves` in its explain); one not in the pool joins it."""
    if not pool or narrowed(q) or not asks_fix(q.text):
        return list(pool)
    errors = sorted(
        (h for h in pool if h.uid not in dropped and _is_error(h)), key=lambda h: -h.score
    )[:LENDERS]
    if not errors:
        return list(pool)
    where, params = filters(store, q)
    with store.db.read() as conn:
        fixes = [(e, _resolution_after(conn, where, params, e)) for e in errors]
    return lend(
        pool,
        (
            (fix, SHARE * e.score, "resolves", e.uid)
            for e, fix in fixes
            if fix is not None and fix.uid not in dropped
        ),
    )


def _is_error(hit: Hit) -> bool:
    return hit.kind == ERROR_KIND and (hit.layer in LOG_LAYERS)


def _resolution_after(conn: Any, where: list[str], params: list[Any], error: Hit) -> Hit | None:
    """The first entry after `error` in its LOG file, within `SPAN` entries and `WINDOW`
    seconds, that states a fix and is not a trace or an error (traces and further errors
    in between are passed over: one note often says how two failures were fixed); None
    when none is found."""
    at = conn.execute("SELECT thread, pos FROM docs WHERE uid = ?", (error.uid,)).fetchone()
    if at is None or at[0] is None or at[1] is None:
        return None
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM docs d WHERE d.thread = ? AND d.pos > ? AND d.layer = ? "
        "ORDER BY d.pos LIMIT ?",
        (at[0], at[1], error.layer, SPAN),
    ).fetchall()
    for row in rows:
        entry = _hit(row)
        if entry.ts - error.ts > WINDOW:
            return None
        if entry.kind in _NOT_RESOLUTIONS:
            continue
        if fix_said(entry) is None:
            continue
        visible = conn.execute(
            f"SELECT 1 FROM docs d WHERE {' AND '.join(where)} AND d.uid = ?", [*params, entry.uid]
        ).fetchone()
        return entry if visible is not None else None
    return None
