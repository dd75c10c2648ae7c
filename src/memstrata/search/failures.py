"""A failed tool call's ERROR answers what its call was about: relevance lent along a call.

A failed call leaves its trace and its error apart: the trace names what was done
(`Bash(command="pnpm test -- PriceDisplay") -> error, 1 failed`, or a transcript's
`tool_use` with its description "Apply the fees migration"), the ERROR entry says what
went wrong ("TypeError: amount.toFixed is not a function ..."), and the two rarely share
a word. A question about why the price display test crashed finds the trace, whose
outcome is "error" and whose weight is low (`recall.tool`), and not the error it points
to. A search that finds the call has found its failure, so the ERROR is a candidate too:

    lender(e)  = a record of the call e failed in, in the pool: a tool record with e's
                 `tool_use_id` (hook metadata: the transcript's tool_use, a LOG trace),
                 or, for records without the id (an MCP agent's own `log_append`), a
                 LOG trace whose outcome reads as a failure ("-> error", "-> failed",
                 metadata `outcome: error`) with e the next entry of its LOG file,
                 written within `END_GAP` seconds
    score(e)   = max(score(e), score(lender(e)))

The ERROR's own prior (`recall.error`) then applies as to any error; when it and the
trace are grouped as one call (`search.toolcalls`) the better one stands for both.
An ERROR not yet in the pool joins it. `explain` names the lender (`failure_of`).
Applied to the pool before the priors, so their exact pruning (`search.prune`) reads
the lent score as any other. Only when the query has no kind, tag or room filter.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from memstrata.search.filters import filters
from memstrata.search.lending import lend, narrowed
from memstrata.search.priors import asked_signals
from memstrata.search.query import Hit, Searchable, SearchQuery
from memstrata.search.toolcalls import END_GAP, LOG_LAYERS, first_line, log_metadata
from memstrata.search.turns import _COLUMNS, _hit

ERROR_KIND = "ERROR"
LENDERS = 20  # tool records of one pool whose errors are looked for, best first
_FAILED = re.compile(r"^[\w.:/-]+\(.*?\)\s*(?:->|→)\s*(?:error|failed|failure)\b", re.S | re.I)


def with_failures(
    store: Searchable, q: SearchQuery, pool: Sequence[Hit], dropped: Mapping[str, str]
) -> list[Hit]:
    """`pool` with the ERROR of each failed call it holds lifted to the call's score
    (`failure_of` in its explain); an ERROR not in the pool joins it."""
    if not pool or narrowed(q) or not asks_about_failure(q.text):
        return list(pool)
    tools = sorted(
        (h for h in pool if h.uid not in dropped and _is_tool_record(h)), key=lambda h: -h.score
    )[:LENDERS]
    if not tools:
        return list(pool)
    loans = _errors_of(store, q, tools)
    return lend(pool, ((e, lender.score, "failure_of", lender.uid) for e, lender in loans))


def asks_about_failure(query: str) -> bool:
    """The question asks what went wrong: a word of failure (`priors.ASKED_WORDS`'s
    `error`: failed, crash, broke, wrong, ...)."""
    return "error" in asked_signals(query)


def tool_use_id(hit: Hit) -> str | None:
    """The id hooks give every record of one tool call (LOG metadata or transcript)."""
    for where in (hit.meta, log_metadata(hit)):
        value = where.get("tool_use_id") if isinstance(where, Mapping) else None
        if isinstance(value, str) and value:
            return value
    return None


def failed_trace(hit: Hit) -> bool:
    """A LOG tool trace whose outcome is a failure."""
    if hit.layer not in LOG_LAYERS or hit.kind != "TOOL_USE":
        return False
    return log_metadata(hit).get("outcome") == "error" or bool(_FAILED.match(first_line(hit.text)))


def _is_tool_record(hit: Hit) -> bool:
    if hit.kind == ERROR_KIND:
        return False
    return failed_trace(hit) or tool_use_id(hit) is not None


def _errors_of(store: Searchable, q: SearchQuery, tools: Sequence[Hit]) -> list[tuple[Hit, Hit]]:
    """(ERROR entry, the pool's record of its call) for the failed calls among `tools`."""
    layers = [x for x in LOG_LAYERS if not q.layers or x in q.layers]
    if not layers:
        return []
    where, params = filters(store, q)  # an error is filtered as any search of `q` is
    where += [f"d.layer IN ({','.join('?' for _ in layers)})", "d.kind = ?"]
    params += [*layers, ERROR_KIND]
    found: list[tuple[Hit, Hit]] = []
    by_id = {i: h for h in tools if (i := tool_use_id(h)) is not None}
    with store.db.read() as conn:
        if by_id:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM docs d WHERE {' AND '.join(where)} AND "
                f"json_extract(d.meta, '$.metadata.tool_use_id') IN "
                f"({','.join('?' for _ in by_id)})",
                [*params, *by_id],
            ).fetchall()
            for r in rows:
                e = _hit(r)
                lender = by_id.get(tool_use_id(e) or "")
                if lender is not None:
                    found.append((e, lender))
        for t in tools:
            if t.uid in {lender.uid for _, lender in found} or not failed_trace(t):
                continue
            after = _next_error(conn, where, params, t)
            if after is not None:
                found.append((after, t))
    return found


def _next_error(conn: Any, where: list[str], params: list[Any], trace: Hit) -> Hit | None:
    """The entry right after `trace` in its LOG file when it is an ERROR written with it."""
    at = conn.execute("SELECT thread, pos FROM docs WHERE uid = ?", (trace.uid,)).fetchone()
    if at is None or at[0] is None or at[1] is None:
        return None
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM docs d WHERE d.thread = ? AND d.pos > ? AND d.layer = ? "
        "ORDER BY d.pos LIMIT 1",
        (at[0], at[1], trace.layer),
    ).fetchone()
    if row is None:
        return None
    e = _hit(row)
    if e.kind != ERROR_KIND or abs(e.ts - trace.ts) > END_GAP:
        return None
    visible = conn.execute(
        f"SELECT 1 FROM docs d WHERE {' AND '.join(where)} AND d.uid = ?", [*params, e.uid]
    ).fetchone()
    return e if visible is not None else None
