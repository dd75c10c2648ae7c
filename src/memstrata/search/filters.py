"""What a query lets a search see: one WHERE clause for every path that reads `docs`.

The lexical and hybrid searches and a turn's members (`search.turns`) apply the same
filters, so the rules of scope, superseded records, layers, kinds, agents, rooms, time
and tags live here once.
"""

from __future__ import annotations

from typing import Any

from memstrata.errors import UnknownKind
from memstrata.model import RECORD_KINDS
from memstrata.search.query import OPT_IN_LAYERS, Searchable, SearchQuery


def filters(store: Searchable, q: SearchQuery) -> tuple[list[str], list[Any]]:
    """The WHERE terms (on `docs d`) and their parameters that every search of `q` applies:
    scope, superseded, layers, kind, agent, rooms, since/until, tags."""
    scope_sql, params = store.gate.sql_filter("d")
    where = [scope_sql]
    if not q.include_superseded:
        where.append("d.superseded = 0")
    if q.layers:
        where.append(f"d.layer IN ({','.join('?' for _ in q.layers)})")
        params.extend(q.layers)
    elif not store.config.search_sessions_by_default:  # transcripts are opt-in
        where.append(f"d.layer NOT IN ({','.join('?' for _ in OPT_IN_LAYERS)})")
        params.extend(OPT_IN_LAYERS)
    if q.kind is not None:
        if (
            "ledger" in (q.layers or ("ledger",))
            and q.layers == ("ledger",)
            and q.kind not in store.config.half_lives
            and q.kind not in RECORD_KINDS  # decision, constraint, preference: always kinds
        ):
            raise UnknownKind(
                f"unknown kind {q.kind!r}; known kinds: {', '.join(store.config.kinds)}"
            )
        where.append("d.kind = ?")
        params.append(q.kind)
    if q.agent is not None:
        store.gate.check("read", "file", q.agent)
        where.append("d.owner = ?")
        params.append(q.agent)
    if q.in_room is not None:
        where.append("d.room = ?")
        params.append(q.in_room)
    if q.rooms:
        where.append(f"d.room IN ({','.join('?' for _ in q.rooms)})")
        params.extend(q.rooms)
    if q.exclude_room is not None:
        where.append("(d.room IS NULL OR d.room != ?)")
        params.append(q.exclude_room)
    if q.since is not None:
        where.append("d.ts >= ?")
        params.append(q.since)
    if q.until is not None:
        where.append("d.ts <= ?")
        params.append(q.until)
    if q.tags:
        joiner = " OR " if q.tags_match == "any" else " AND "
        where.append("(" + joiner.join("(' ' || d.tags || ' ') LIKE ?" for _ in q.tags) + ")")
        params.extend(f"% {t} %" for t in q.tags)
    return where, params
