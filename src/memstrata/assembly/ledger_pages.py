"""Browsing the shared ledger: pages by room, supersede chains, freshness.

`Ledger.query` answers an agent (newest first, at most 50). People
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

import time
from typing import TYPE_CHECKING, Any

from memstrata.errors import MalformedInput, NotFound
from memstrata.index import queries
from memstrata.layers.base import check_tags
from memstrata.model import LedgerEntry, check_name, parse_ts
from memstrata.search.scoring import decay
from memstrata.values import value_type

if TYPE_CHECKING:
    from memstrata.store.view import Store

MAX_PAGE = 200
MAX_CHAIN = 100


@value_type(frozen=True)
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


@value_type(frozen=True)
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
    wanted = queries.DocFilter(
        store.gate,
        layers=("ledger",),
        live=not include_superseded,
        room=room,
        exclude_room=exclude_room,
        kind=kind,
        tags=check_tags(list(tags)),
        tags_match=match,
        before=queries.parse_cursor(before) if before else None,
    )
    rows = queries.newest(store.db, wanted, limit + 1)
    out = _rows(store, rows[:limit], now)
    more = len(rows) > limit
    last = out[-1] if out else None
    cursor = queries.cursor(parse_ts(last.entry.ts), last.row) if more and last else None
    return LedgerPage(tuple(out), cursor)


def supersede_chain(store: Store, entry_id: str, *, now: float | None = None) -> list[LedgerRow]:
    """Every version of the decision `entry_id` belongs to, oldest first, head last."""
    store.gate.check("read", "ledger", None)
    db, gate = store.db, store.gate
    start = queries.visible(db, f"ledger:{entry_id}", gate, layer="ledger")
    if start is None:
        raise NotFound(f"no ledger entry with id {entry_id!r} (or not visible to you)")
    chain = [start]
    seen = {entry_id}
    while len(chain) < MAX_CHAIN:  # back to the first version
        prior = chain[0].record().get("supersedes")
        if not prior or prior in seen:
            break
        row = queries.visible(db, f"ledger:{prior}", gate, layer="ledger")
        if row is None:
            break
        seen.add(prior)
        chain.insert(0, row)
    while len(chain) < MAX_CHAIN:  # forward to the live head
        head = f"ledger:{chain[-1].record()['id']}"
        row = queries.successor(db, head, layer="ledger", scope=gate)
        if row is None or row.record()["id"] in seen:
            break
        seen.add(row.record()["id"])
        chain.append(row)
    return _rows(store, chain, now)


def _rows(store: Store, rows: list[queries.DocRow], now: float | None) -> list[LedgerRow]:
    clock = time.time() if now is None else now
    entries = [(r.id, LedgerEntry.from_dict(r.record()), bool(r.superseded)) for r in rows]
    successors: dict[str, str] = {}
    hidden = [f"ledger:{e.id}" for _, e, sup in entries if sup]
    for row in queries.successors_of(store.db, hidden, store.gate, layer="ledger"):
        successors[str(row.supersedes).removeprefix("ledger:")] = row.record()["id"]
    out = []
    for rid, entry, sup in entries:
        half = store.config.half_life("ledger", entry.kind)
        try:
            age_h = (clock - parse_ts(entry.ts)) / 3600.0
        except MalformedInput:
            age_h = 0.0
        out.append(LedgerRow(entry, sup, successors.get(entry.id), half, decay(age_h, half), rid))
    return out
