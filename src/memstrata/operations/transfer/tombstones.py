"""Purges outlive imports: what `purged.jsonl` says is gone stays out of the store.

An export written before a purge still holds the purged content. After the
manifest check (so hashes are of the archive as written), the tombstones of the
store and of the archive are applied to the staged members as the purge did to
the store, to what was written before the purge (its tombstone's `ts`):

    file:<agent>:<path>          the file and its archived copies are not imported
                                 (a member modified before the purge)
    session:<agent>:<sid>        its messages written before the purge are dropped
                                 (a transcript left empty is not imported) and its
                                 row leaves sessions.json
    session:<agent>:<sid>:<msg>  the message's line is dropped from the transcripts
    fact:<agent>:<key>           its records written before the purge are dropped
                                 from facts.jsonl
    log:<agent>:<id>             its block is cut from LOG.md and the LOG archives
    ledger:<id>                  its line becomes the purge stub (the entry format's fields)

Content written after a purge under the same name (a fact set again, a file
written again) is not the purged content, and an honest backup holds it beside
the tombstone: it is kept, so a restore of your own backup loses nothing the store
held. (Ids of LOG entries, ledger entries and messages are never reused: those are
dropped by id.) A record without a readable time counts as written before.

The content so kept out is looked for in the staged derived text of its agent
(`purge_copies`). An archive's own tombstones only ever change that archive's
content: the importer never merges them into the store's (`adopt` does, when an
admin asks). Pure functions on bytes: the importer does the reading and writing.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

from memstrata.errors import MalformedInput
from memstrata.files.jsondoc import RecordList
from memstrata.layers.ledger import PURGED_SUMMARY
from memstrata.layers.log import _unescape
from memstrata.layers.logblocks import split_blocks
from memstrata.model import parse_ts
from memstrata.operations.purge import ledger_stub
from memstrata.values import field, value_type

if TYPE_CHECKING:
    from memstrata.store.view import Store


@value_type
class Verdict:
    data: bytes | None  # what to import instead; None: not the member at all
    ids: list[str] = field(default_factory=list)  # the tombstones that changed it
    needles: dict[str, set[str]] = field(default_factory=dict)  # agent -> content kept out


def parse(data: bytes) -> list[dict[str, Any]]:
    """The tombstones of a `purged.jsonl` (unreadable lines skipped)."""
    out = []
    for line in data.splitlines():
        try:
            rec = json.loads(line)
        except (ValueError, UnicodeDecodeError):
            continue
        if isinstance(rec, dict) and isinstance(rec.get("id"), str):
            out.append(rec)
    return out


SKEW_S = 300.0  # clocks of hosts sharing a store may differ by this much


def when(value: object) -> float:
    """Epoch seconds of a record's time field; -inf when missing or unreadable (such a
    record counts as written before any purge)."""
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        return -math.inf
    try:
        return parse_ts(value)
    except MalformedInput:
        return -math.inf


def purged_at(rec: dict[str, Any]) -> float:
    """When a tombstone's purge ran; +inf when unreadable (it then keeps out every copy)."""
    t = when(rec.get("ts"))
    return math.inf if t == -math.inf else t


def _json(line: bytes) -> dict[str, Any] | None:
    try:
        rec = json.loads(line)
    except (ValueError, UnicodeDecodeError):
        return None
    return rec if isinstance(rec, dict) else None


def contradicted(
    store: Store, records: list[dict[str, Any]], names: list[str], *, future: bool = True
) -> set[str]:
    """Ids of the tombstones that the store disproves: it still holds, in one of the
    sources `names`, content written before the purge a tombstone says removed it (a
    genuine purge leaves none), or (with `future`) the tombstone is dated in the future.
    Such a tombstone of the store's was planted (an archive's merged by an earlier
    version, a hand edit): it keeps nothing out of an import, so a restore never loses
    what the store holds."""
    import time

    # A purge that claims to have run in the future (beyond clock skew) never ran.
    now = time.time() + SKEW_S
    out = {str(r["id"]) for r in records if future and purged_at(r) > now}
    rules = Tombstones(store, records)
    if not rules:
        return out
    mine: dict[str, list[dict[str, Any]]] = {}  # owner ("" for the ledger) -> its tombstones
    for rec in records:
        layer, _, rest = str(rec["id"]).partition(":")
        mine.setdefault("" if layer == "ledger" else rest.partition(":")[0], []).append(rec)
    for name in names:
        if not rules.concerns(name):
            continue
        live = store.engine.read(name)
        if live is None or live.entry.is_dir:
            continue
        owner = name.split("/")[1] if name.startswith("agents/") else ""
        for rec in mine.get(owner, []):
            one = Tombstones(store, [rec])
            if rec["id"] not in out and one.apply(name, live.data, live.entry.mtime):
                out.add(str(rec["id"]))
    return out


def _written(rec: dict[str, Any]) -> float:
    """When a facts.jsonl record was written (a `set` records `updated_at`, a `forget` `ts`)."""
    return when(rec.get("updated_at") or rec.get("ts") or rec.get("created_at"))


class Tombstones:
    """The purges of a store and an archive, as rules on store-relative member names."""

    def __init__(self, store: Store, records: list[dict[str, Any]]) -> None:
        self.store = store
        # owner -> name -> when the latest purge of it ran (what was written before is gone)
        self.facts: dict[str, dict[str, float]] = {}
        self.files: dict[str, dict[str, float]] = {}
        self.sessions: dict[str, dict[str, float]] = {}
        self.logs: dict[str, set[str]] = {}  # ids, never reused
        self.messages: dict[str, dict[str, set[str]]] = {}
        self.ledger: set[str] = set()
        for rec in records:
            layer, _, rest = str(rec["id"]).partition(":")
            if layer == "ledger":
                self.ledger.add(rest)
                continue
            owner, _, what = rest.partition(":")
            if not owner or not what:
                continue
            at = purged_at(rec)
            if layer in ("fact", "file"):
                names = (self.facts if layer == "fact" else self.files).setdefault(owner, {})
                names[what] = max(at, names.get(what, -math.inf))
            elif layer == "log":
                self.logs.setdefault(owner, set()).add(what)
            elif layer == "session":
                sid, _, msg = what.partition(":")
                if msg:
                    self.messages.setdefault(owner, {}).setdefault(sid, set()).add(msg)
                else:
                    sids = self.sessions.setdefault(owner, {})
                    sids[sid] = max(at, sids.get(sid, -math.inf))

    def __bool__(self) -> bool:
        return any((self.facts, self.files, self.logs, self.sessions, self.messages, self.ledger))

    def _rel(self, path: object) -> str:
        return self.store.rel(path)  # type: ignore[arg-type]

    def concerns(self, name: str) -> bool:
        """Might a tombstone change member `name`? (Cheap: by its name alone.)"""
        if name == self._rel(self.store.layout.ledger):
            return bool(self.ledger)
        parts = name.split("/")
        return (
            len(parts) > 2
            and parts[0] == "agents"
            and parts[1]
            in (
                self.facts.keys()
                | self.files.keys()
                | self.logs.keys()
                | self.sessions.keys()
                | self.messages.keys()
            )
        )

    def apply(self, name: str, data: bytes, mtime: float = -math.inf) -> Verdict | None:
        """What to import for member `name` holding `data`, last modified at `mtime` (the
        archive's word for it); None when no purge touches it."""
        if name == self._rel(self.store.layout.ledger):
            return self._ledger(data)
        if not self.concerns(name):
            return None
        owner = name.split("/")[1]
        layout = self.store.layout
        if name == self._rel(layout.facts(owner)):
            return self._facts(owner, data)
        archive = self._rel(layout.archive_dir(owner))
        if name == self._rel(layout.log_file(owner)) or (
            name.startswith(archive + "/LOG-") and name.endswith(".md")
        ):
            return self._log(owner, data)
        sessions = self._rel(layout.sessions_dir(owner))
        if name == self._rel(layout.session_index(owner)):
            return self._session_index(owner, data)
        sid = None
        if name.startswith(sessions + "/") and name.endswith(".jsonl"):
            sid = name[len(sessions) + 1 :].removesuffix(".jsonl")
        elif name.startswith(archive + "/sessions/") and name.endswith(".jsonl"):
            sid = name.rsplit("/", 1)[1].removesuffix(".jsonl").rsplit("-", 1)[0]
        if sid is not None:
            return self._transcript(owner, sid, data)
        purged = self._file(owner, name)
        if purged is not None and mtime <= self.files[owner][purged]:
            return Verdict(
                None, [f"file:{owner}:{purged}"], {owner: {data.decode("utf-8", "replace")}}
            )
        return None

    def _file(self, owner: str, name: str) -> str | None:
        """The purged memory file `name` is (a copy of), if any."""
        files = self.files.get(owner, {})
        if not files:
            return None
        layout = self.store.layout
        memory = self._rel(layout.memory_dir(owner)) + "/"
        if name.startswith(memory) and name[len(memory) :] in files:
            return name[len(memory) :]
        archive = self._rel(layout.archive_dir(owner))
        deleted, scratch = archive + "/deleted/", archive + "/scratch/"
        if name.startswith(deleted):
            rest = name[len(deleted) :]
            if "/" in rest:
                return rest.split("/", 1)[1] if rest.split("/", 1)[1] in files else None
            return next((f for f in files if rest.endswith("-" + f.replace("/", "__"))), None)
        if name.startswith(scratch) and name.count("/") > scratch.count("/"):
            relp = "session/" + name[len(scratch) :].split("/", 1)[1]
            return relp if relp in files else None
        return None

    def _lines(self, data: bytes, change: Any) -> bytes:
        return b"".join(
            out for line in data.splitlines(keepends=True) if (out := change(line)) is not None
        )

    def _facts(self, owner: str, data: bytes) -> Verdict | None:
        keys = self.facts.get(owner, {})
        found: list[dict[str, Any]] = []

        def keep(line: bytes) -> bytes | None:
            rec = _json(line)
            key = rec.get("key") if rec is not None else None
            if (
                rec is not None
                and isinstance(key, str)
                and key in keys
                and _written(rec) <= keys[key]
            ):
                found.append(rec)
                return None
            return line

        out = self._lines(data, keep)
        if not found:
            return None
        return Verdict(
            out,
            sorted({f"fact:{owner}:{r['key']}" for r in found}),
            {owner: {str(r.get("value", "")) for r in found if r.get("op") == "set"}},
        )

    def _log(self, owner: str, data: bytes) -> Verdict | None:

        ids = self.logs.get(owner, set())
        hits = [b for b in split_blocks(data, final=True).blocks if b.entry_id in ids]
        if not hits:
            return None
        keep, pos = [], 0
        for b in hits:
            keep.append(data[pos : b.start])
            pos = b.end or len(data)
        keep.append(data[pos:])
        return Verdict(
            b"".join(keep),
            sorted({f"log:{owner}:{b.entry_id}" for b in hits}),
            {owner: {_unescape(b.lines) for b in hits}},
        )

    def _transcript(self, owner: str, sid: str, data: bytes) -> Verdict | None:
        purged = self.sessions.get(owner, {}).get(sid, -math.inf)
        ids = self.messages.get(owner, {}).get(sid, set())
        gone: list[dict[str, Any]] = []

        def keep(line: bytes) -> bytes | None:
            rec = _json(line)
            if rec is None:  # unreadable: kept, unless the whole session was purged
                return None if purged > -math.inf else line
            if rec.get("id") in ids or when(rec.get("timestamp")) <= purged:
                gone.append(rec)
                return None
            return line

        out = self._lines(data, keep)
        if out == data:
            return None
        texts = {owner: {str(r.get("content") or "") for r in gone}}
        if not out.strip():  # nothing written after the purge: not the member at all
            return Verdict(None, [f"session:{owner}:{sid}"], texts)
        ids_gone = {f"session:{owner}:{sid}:{r['id']}" for r in gone if r.get("id") in ids}
        if len(ids_gone) < len(gone):
            ids_gone.add(f"session:{owner}:{sid}")
        return Verdict(out, sorted(ids_gone), texts)

    def _session_index(self, owner: str, data: bytes) -> Verdict | None:

        sids = self.sessions.get(owner, {})

        def purged(row: dict[str, Any]) -> bool:
            return row["id"] in sids and when(row.get("created")) <= sids[row["id"]]

        try:
            doc = RecordList.parse(data, "sessions.json", key="sessions")
        except MalformedInput:
            return None  # a broken index is rebuilt from the transcripts on its next write
        gone = sorted(r["id"] for r in doc.records() if purged(r))
        if not gone:
            return None
        doc.remove(purged)
        return Verdict(doc.dumps().encode("utf-8"), [f"session:{owner}:{s}" for s in gone])

    def _ledger(self, data: bytes) -> Verdict | None:

        found: list[dict[str, Any]] = []

        def stub(line: bytes) -> bytes | None:
            rec = _json(line)
            if (
                rec is None
                or rec.get("id") not in self.ledger
                or (rec.get("summary") == PURGED_SUMMARY and not rec.get("detail"))
            ):
                return line
            found.append(rec)
            return ledger_stub(rec)

        out = self._lines(data, stub)
        if not found:
            return None
        needles: dict[str, set[str]] = {}
        for r in found:
            author = r.get("author_role")
            if isinstance(author, str):
                needles.setdefault(author, set()).update(
                    str(r.get(k) or "") for k in ("summary", "detail", "ref")
                )
        return Verdict(out, sorted({f"ledger:{r['id']}" for r in found}), needles)
