"""An archive's tombstones carry no authority: shown, and adopted only when an admin asks.

A manifest proves an archive is intact, not who made it, so the author and role its
`purged.jsonl` claims mean nothing. On import those tombstones only keep purged
content out of the archive's own members (`tombstones`); the store's own purges
are its own. `describe` says, for each tombstone of an archive that the store lacks,
what it claims and whether the store holds content it would purge (written before
the purge it records); `adopt` (`memstrata import --merge-tombstones --yes`) makes it
one of the store's: when the store holds such content the purge runs on the live
store now, as the importing admin, else the tombstone is recorded as the
importer's, with its time (never later than now). Either way the store, its next
export and every restore agree.

    foreign = foreign_tombstones(archive_records, tombstones(store))
    shown = [describe(store, rec) for rec in foreign]
    done = [adopt(store, rec, "backup.tar.gz") for rec in foreign]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memstrata.errors import InvalidInput, NotFound
from memstrata.files.jsonl import encode
from memstrata.model import iso, now_ts
from memstrata.operations import purge
from memstrata.operations.purge_versions import holds_version
from memstrata.operations.transfer.tombstones import contradicted, purged_at
from memstrata.values import replace, value_type

if TYPE_CHECKING:
    from memstrata.store.view import Store


@value_type(frozen=True)
class ArchiveTombstone:
    """A tombstone an archive holds and the store lacks, with what it claims."""

    id: str
    claimed_by: str  # as the archive says: never trusted
    claimed_role: str
    reason: str
    holds: bool  # the store holds content written before it: adopting it purges that
    adopted: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "claimed_by": self.claimed_by,
            "claimed_role": self.claimed_role,
            "reason": self.reason,
            "store_holds_it": self.holds,
            "adopted": self.adopted,
        }

    def line(self) -> str:
        held = (
            "the store holds content it names: adopting purges it"
            if self.holds
            else "the store holds nothing it would purge"
        )
        return (
            f"{self.id} (claims to be by {self.claimed_by!r}, role {self.claimed_role!r}; {held})"
        )


def foreign_tombstones(
    archive: list[dict[str, Any]], store: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The archive's tombstones whose ids the store has no tombstone for, one per id."""
    known = {str(r.get("id")) for r in store}
    out: dict[str, dict[str, Any]] = {}
    for rec in archive:
        if str(rec["id"]) not in known:
            out.setdefault(str(rec["id"]), rec)
    return list(out.values())


def _label(value: object) -> str:
    return str(value)[:100] if value is not None else "(none)"


def describe(store: Store, rec: dict[str, Any]) -> ArchiveTombstone:
    return ArchiveTombstone(
        str(rec["id"]),
        _label(rec.get("by")),
        _label(rec.get("role")),
        str(rec.get("reason") or "")[:1000],
        _holds(store, rec),
    )


def _holds(store: Store, rec: dict[str, Any]) -> bool:
    """Does the store hold content written before the purge `rec` records, in the
    sources it names? (Read-only.)"""

    uid = str(rec["id"])
    layer, _, rest = uid.partition(":")
    owner, _, what = rest.partition(":")
    layout = store.layout
    try:
        if layer == "ledger":
            names = [layout.ledger]
        elif layer == "fact":
            names = [layout.facts(owner)]
        elif layer == "file":
            names = [layout.memory_dir(owner) / what]
        elif layer == "log":
            names = [layout.log_file(owner)]
        elif layer == "session":
            sid = what.partition(":")[0]
            names = [layout.session(owner, sid), layout.session_index(owner)]
        elif layer == "version":  # the store's history of the file still holds it
            name, _, vid = what.rpartition(":")
            return holds_version(store, owner, name, vid)
        else:
            return False
    except InvalidInput:  # names no agent or session memstrata could hold
        return False
    return bool(contradicted(store, [rec], [store.rel(n) for n in names], future=False))


def adopt(store: Store, rec: dict[str, Any], source: str) -> ArchiveTombstone:
    """Make an archive's tombstone one of the store's purges (module docstring)."""

    shown = describe(store, rec)
    reason = f"adopted from {source}: {shown.reason or '(no reason given)'}"
    layer, _, rest = shown.id.partition(":")
    owner, _, what = rest.partition(":")
    try:
        if not shown.holds:
            raise NotFound(shown.id)  # nothing to purge: record it
        if layer == "fact":
            purge.purge_fact(store, what, agent=owner, reason=reason)
        elif layer == "file":
            purge.purge_file(store, what, agent=owner, reason=reason)
        elif layer == "log":
            purge.purge_log_entry(store, what, agent=owner, reason=reason)
        elif layer == "ledger":
            purge.purge_ledger_entry(store, rest, reason=reason)
        elif layer == "session":
            sid, _, msg = what.partition(":")
            purge.purge_session(store, sid, agent=owner, message_id=msg or None, reason=reason)
        elif layer == "version":
            name, _, vid = what.rpartition(":")
            purge.purge_version(store, name, vid, agent=owner, reason=reason)
        else:
            raise NotFound(f"unknown tombstone {shown.id!r}")
    except (NotFound, InvalidInput):
        p = store.principal
        store.engine.append_raw(
            purge.TOMBSTONES,
            encode(
                purge.Tombstone(
                    shown.id,
                    layer,
                    owner or None,
                    p.agent or "(admin)",
                    p.role,
                    iso(min(purged_at(rec), now_ts())),
                    reason[:1000],
                ).to_dict()
            ),
        )
    return replace(shown, adopted=True)
