"""Browsing the shared ledger: pages by room, supersede chains, freshness.

`Ledger.query` answers an agent (seed 000: newest first, at most 50). People
browsing a ledger of 100,000 entries need more: every page of a room, each entry
with its freshness (the decay factor search applies to it now,
exp(-ln2 / half_life x age), 1.0 = new), whether it was superseded and by what,
and the whole chain of versions of one decision. Pages are keyset-paginated on
(time, row id) over the index `docs(layer, ts)`; scope is the gate's read check
plus its SQL filter on every row.

    page = ledger_page(store, room="room-042", limit=50)
    chain = supersede_chain(store, page.rows[0].entry.id)   # oldest first
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memstrata.errors import MalformedInput, NotFound
from memstrata.layers.base import check_tags
from memstrata.model import LedgerEntry, check_name, parse_ts
from memstrata.search.scoring import decay
from memstrata.search.timeline import parse_cursor

if TYPE_CHECKING:
    from memstrata.store.engine import Store

MAX_PAGE = 200
MAX_CHAIN = 100


@dataclass(frozen=True)
class LedgerRow:
    entry: LedgerEntry
    superseded: bool
    successor: str | None  # the id of the entry that superseded this one
    half_life_hours: float | None
    freshness: float  # decay factor now: 1.0 new, 0.5 at one half-life
    row: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.entry.to_dict(),
            "superseded": self.superseded,
            "successor": self.successor,
            "half_life_hours": self.half_life_hours,
            "freshness": round(self.freshness, 4),
        }


@dataclass(frozen=True)
class LedgerPage:
    rows: tuple[LedgerRow, ...]
    next: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"entries": [r.to_dict() for r in self.rows], "next": self.next}


def ledger_page(
    store: Store,
    *,
    room: str | None = None,
    exclude_room: str | None = None,
    kind: str | None = None,
    tags: list[str] | tuple[str, ...] = (),
    match: str = "any",
    include_superseded: bool = False,
    before: str | None = None,
    limit: int = 50,
    now: float | None = None,
) -> LedgerPage:
    """One page of ledger entries, newest first, with freshness and successors."""
    store.gate.check("read", "ledger", None)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE:
        raise MalformedInput(f"limit must be an integer from 1 to {MAX_PAGE}, got {limit!r}")
    if match not in ("any", "all"):
        raise MalformedInput("match must be 'any' or 'all'")
    for name in (room, exclude_room):
        if name is not None:
            check_name(name, "room")
    wanted_tags = check_tags(list(tags))
    scope_sql, params = store.gate.sql_filter("d")
    where = ["d.layer = 'ledger'", scope_sql]
    if not include_superseded:
        where.append("d.superseded = 0")
    if room is not None:
        where.append("d.room = ?")
        params.append(room)
    if exclude_room is not None:
        where.append("(d.room IS NULL OR d.room != ?)")
        params.append(exclude_room)
    if kind is not None:
        where.append("d.kind = ?")
        params.append(kind)
    if wanted_tags:
        joiner = " OR " if match == "any" else " AND "
        where.append("(" + joiner.join("(' ' || d.tags || ' ') LIKE ?" for _ in wanted_tags) + ")")
        params.extend(f"% {t} %" for t in wanted_tags)
    if before:
        ts, rid = parse_cursor(before)
        where.append("(d.ts < ? OR (d.ts = ? AND d.id < ?))")
        params += [ts, ts, rid]
    with store.db.read() as conn:
        rows = conn.execute(
            f"SELECT d.id, d.meta, d.superseded FROM docs d WHERE {' AND '.join(where)} "
            "ORDER BY d.ts DESC, d.id DESC LIMIT ?",
            [*params, limit + 1],
        ).fetchall()
    out = _rows(store, rows[:limit], now)
    more = len(rows) > limit
    last = out[-1] if out else None
    cursor = f"{parse_ts(last.entry.ts)!r}:{last.row}" if more and last else None
    return LedgerPage(tuple(out), cursor)


def supersede_chain(store: Store, entry_id: str, *, now: float | None = None) -> list[LedgerRow]:
    """Every version of the decision `entry_id` belongs to, oldest first, head last."""
    store.gate.check("read", "ledger", None)
    scope_sql, scope_params = store.gate.sql_filter("d")

    def one(sql: str, value: str) -> tuple[Any, ...] | None:
        with store.db.read() as conn:
            return conn.execute(  # type: ignore[no-any-return]
                f"SELECT d.id, d.meta, d.superseded FROM docs d WHERE d.layer = 'ledger' "
                f"AND {sql} AND {scope_sql} ORDER BY d.ts LIMIT 1",
                [value, *scope_params],
            ).fetchone()

    start = one("d.uid = ?", f"ledger:{entry_id}")
    if start is None:
        raise NotFound(f"no ledger entry with id {entry_id!r} (or not visible to you)")
    chain = [start]
    seen = {entry_id}
    while len(chain) < MAX_CHAIN:  # back to the first version
        prior = json.loads(chain[0][1]).get("supersedes")
        if not prior or prior in seen:
            break
        row = one("d.uid = ?", f"ledger:{prior}")
        if row is None:
            break
        seen.add(prior)
        chain.insert(0, row)
    while len(chain) < MAX_CHAIN:  # forward to the live head
        row = one("d.supersedes = ?", f"ledger:{json.loads(chain[-1][1])['id']}")
        if row is None or json.loads(row[1])["id"] in seen:
            break
        seen.add(json.loads(row[1])["id"])
        chain.append(row)
    return _rows(store, chain, now)


def _rows(store: Store, rows: list[Any], now: float | None) -> list[LedgerRow]:
    clock = time.time() if now is None else now
    entries = [(rid, LedgerEntry.from_dict(json.loads(meta)), bool(sup)) for rid, meta, sup in rows]
    successors: dict[str, str] = {}
    hidden = [f"ledger:{e.id}" for _, e, sup in entries if sup]
    if hidden:
        scope_sql, scope_params = store.gate.sql_filter("d")
        with store.db.read() as conn:
            for target, meta in conn.execute(
                f"SELECT d.supersedes, d.meta FROM docs d WHERE d.layer = 'ledger' AND "
                f"d.supersedes IN ({','.join('?' for _ in hidden)}) AND {scope_sql} "
                "ORDER BY d.ts DESC",
                [*hidden, *scope_params],
            ):
                successors[target.removeprefix("ledger:")] = json.loads(meta)["id"]
    out = []
    for rid, entry, sup in entries:
        half = store.config.half_life("ledger", entry.kind)
        try:
            age_h = (clock - parse_ts(entry.ts)) / 3600.0
        except MalformedInput:
            age_h = 0.0
        out.append(LedgerRow(entry, sup, successors.get(entry.id), half, decay(age_h, half), rid))
    return out
