"""Purge: when someone asks for content to be gone, it is gone from every place it lives.

Plain `forget` / `delete` stay soft (a fact's history stays in `facts.jsonl`, a deleted
file moves to the archive, a superseded ledger entry stays for audit). A purge is the
explicit, irreversible exception, for facts, memory files, LOG entries, ledger entries
(admins only: the ledger keeps entries for audit) and sessions (whole, or one message):

    files    journals rewritten without the records (read, filter, atomic replace,
             all under the source's lock, so a racing appender's record is either
             in the rewrite or appended after it); archived copies removed; a purged
             ledger entry's line keeps the entry format's fields but not its content
    copies   what memstrata itself derived from the content (compaction summaries,
             session-compaction, hook and auto-logged tool-call entries in LOG.md
             and its archives, compactions.jsonl, transcripts' summary messages,
             CONTEXT.md / MEMORY.md memory-flush sections): quotes of it replaced
             by `[purged]` (`purge_copies` says what counts as a quote)
    events   audit records that quote the content dropped (same lock as writers); a
             search whose query is kept in clear (`[events] record_queries`) and
             that found the content or shares a word with it keeps only the HMAC of
             its query (`events.query_digest`)
    index    the store re-syncs (rows of rewritten sources are re-parsed, neighbour
             context included); vectors of the purged docs deleted; FTS5 segments
             merged (`optimize`: deleted tokens otherwise linger); `VACUUM` with
             `secure_delete` rewrites the database without free pages, and a
             `wal_checkpoint(TRUNCATE)` empties the WAL, which holds old page images
    exports  read the files, so no later export has it

and a tombstone is appended to `purged.jsonl`: what (id), who, when and why, never
the content (a reason that looks like a secret is redacted).

Example:
    >>> purge_fact(store, "api_key", reason="pasted by mistake")  # doctest: +SKIP
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstrata.errors import MalformedInput, NotFound, Refused, ScopeDenied
from memstrata.files.jsonl import decode, encode
from memstrata.files.versions import ID_CHARS, sha256
from memstrata.index import queries, scrub
from memstrata.layers.ledger import PURGED_SUMMARY
from memstrata.layers.log import _unescape
from memstrata.layers.logblocks import split_blocks
from memstrata.model import LedgerEntry, check_name, iso, now_ts
from memstrata.operations.purge_copies import Quotes, derived_edits
from memstrata.operations.purge_versions import (
    drop_history,
    has_history,
    history_texts,
    own_lines,
    scrub_histories,
)
from memstrata.policy.secrets import find_secrets, redact
from memstrata.search.text import QUERY_STOPWORDS, tokenize
from memstrata.store.events import scrub_audit
from memstrata.values import value_type

if TYPE_CHECKING:
    from memstrata.store.view import Store

TOMBSTONES = "purged.jsonl"
MIN_NEEDLE = 4  # shorter texts are not searched for in the audit trail
Transform = Callable[[bytes], bytes | None]  # a line -> the line to keep (None: drop it)


@value_type(frozen=True)
class Tombstone:
    id: str
    layer: str
    owner: str | None
    by: str
    role: str
    ts: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "layer": self.layer,
            "owner": self.owner,
            "by": self.by,
            "role": self.role,
            "ts": self.ts,
            "reason": self.reason,
        }


@value_type(frozen=True)
class PurgeReport:
    tombstone: Tombstone
    rewritten: tuple[str, ...]  # store-relative files rewritten without the content
    removed: tuple[str, ...]  # store-relative files deleted
    events: int  # audit records dropped, or reduced to the HMAC of their query
    vectors: int  # stored embeddings deleted
    wal_truncated: bool  # False: another process held the index open; see `notes`
    notes: tuple[str, ...] = ()
    versions: tuple[str, ...] = ()  # file versions changed or removed (`purge_versions`)

    def to_dict(self) -> dict[str, Any]:
        return {
            "tombstone": self.tombstone.to_dict(),
            "rewritten": list(self.rewritten),
            "removed": list(self.removed),
            "events": self.events,
            "vectors": self.vectors,
            "wal_truncated": self.wal_truncated,
            "notes": list(self.notes),
            "versions": list(self.versions),
        }


class _Purge:
    """The places one purge touches, then the shared steps every purge ends with."""

    def __init__(self, store: Store, uid: str, layer: str, owner: str | None, reason: str):
        if not isinstance(reason, str) or not reason.strip():
            raise MalformedInput("a purge needs a reason (it is kept in the tombstone)")
        self.store, self.uid, self.layer, self.owner = store, uid, layer, owner
        self.reason = reason.strip()[:1000]
        self.needles: set[str] = set()
        self.uids: set[str] = set()
        self.owners: set[str] = {owner} if owner else set()  # whose derived copies to scrub
        self.rewritten: list[str] = []
        self.removed: list[str] = []
        self.versions: list[str] = []  # file versions changed or removed

    def rewrite(self, path: Path, transform: Transform) -> int:
        """Rewrite `path` line by line under its lock; returns how many lines changed."""
        with self.store.engine.editing(path) as edit:
            if not edit.exists:
                return 0
            lines = edit.data.splitlines(keepends=True)
            out = [transform(line) for line in lines]
            changed = sum(1 for a, b in zip(lines, out, strict=True) if a != b)
            if changed:
                edit(b"".join(b for b in out if b is not None))
                self.rewritten.append(edit.rel)
        return changed

    def cut(self, path: Path, ranges: Callable[[bytes], list[tuple[int, int]]]) -> int:
        """Remove byte ranges (blocks) from `path` under its lock; returns how many."""
        with self.store.engine.editing(path) as edit:
            if not edit.exists:
                return 0
            data = edit.data
            spans = ranges(data)
            if spans:
                keep, pos = [], 0
                for start, end in sorted(spans):
                    keep.append(data[pos:start])
                    pos = end
                keep.append(data[pos:])
                edit(b"".join(keep))
                self.rewritten.append(edit.rel)
        return len(spans)

    def edit(self, rel: str, change: Callable[[bytes], bytes]) -> bool:
        """Replace source `rel` with `change(its bytes)` under its lock; False if unchanged."""
        with self.store.engine.editing(rel) as edit:
            if not edit.exists:
                return False
            data = change(edit.data)
            if data == edit.data:
                return False
            edit(data)
        if rel not in self.rewritten:
            self.rewritten.append(rel)
        return True

    def scrub_copies(self) -> list[str]:
        """Blank out quotes of the needles in the owners' derived text; the sources changed."""

        quotes = Quotes(self.needles)
        if not quotes:
            return []
        return [
            rel
            for owner in sorted(self.owners)
            for rel, change in derived_edits(self.store, owner, quotes)
            if self.edit(rel, change)
        ]

    def remove(self, path: Path) -> None:
        engine = self.store.engine
        rel = engine.rel(path)
        with engine.lock(rel):
            if engine.stat(rel) is None:
                return
            engine.move(rel, None, lock=False)
        self.removed.append(rel)

    def finish(self) -> PurgeReport:
        store = self.store
        scrub.secure_deletes(store.db)  # deletes overwrite, whatever SQLite's build default
        copies = [str(store.home / rel) for rel in self.scrub_copies()]
        self.versions += scrub_histories(store, self.owners, Quotes(self.needles))
        before = _bodies(store, copies)
        store.sync()  # rewritten sources are re-parsed (new inode), removed ones dropped
        after = _bodies(store, copies)
        self.uids.update(u for u, body in before.items() if after.get(u) != body)  # stale vectors
        events = scrub_audit(
            store.layout.events,
            store.engine.locks,
            {n for n in self.needles if len(n) >= MIN_NEEDLE},
            about=_searched_for(self.needles, self.uids),
        )
        vectors = scrub.drop_vectors(store.db, self.uids)
        truncated = scrub.compact(store.db)
        notes = (
            []
            if truncated
            else [
                "another process holds the index open: old pages stay in index.db-wal until its "
                "next checkpoint; purge again once it has closed"
            ]
        )
        p = store.principal

        tomb = Tombstone(
            self.uid,
            self.layer,
            self.owner,
            p.agent or "(admin)",
            p.role,
            iso(now_ts()),
            redact(self.reason, find_secrets(self.reason)),
        )
        store.engine.append_raw(TOMBSTONES, encode(tomb.to_dict()))
        store.events.emit(
            "memory:write", {"type": self.layer, "path": self.uid, "delta": 0, "purged": True}
        )
        return PurgeReport(
            tomb,
            tuple(self.rewritten),
            tuple(self.removed),
            events,
            vectors,
            truncated,
            tuple(notes),
            tuple(self.versions),
        )


def _searched_for(needles: set[str], uids: set[str]) -> Callable[[dict[str, Any]], bool]:
    """Whether a `memory:search` audit record is about the purged content: it found a
    purged memory, or its query shares a word with the purged text (stopwords aside).
    Generous on purpose: a record it picks only loses its query text, never the record."""

    def words(text: str) -> set[str]:
        return {t for t in tokenize(text) if len(t) > 1 and t not in QUERY_STOPWORDS}

    purged = set().union(*(words(n) for n in needles)) if needles else set()

    def about(record: dict[str, Any]) -> bool:
        payload = record.get("payload") or {}
        results = payload.get("results")
        if isinstance(results, list) and any(r in uids for r in results if isinstance(r, str)):
            return True
        return not purged.isdisjoint(words(str(payload.get("query", ""))))

    return about


def _bodies(store: Store, sources: list[str]) -> dict[str, str]:
    """uid -> indexed text of every doc of `sources`."""
    return queries.texts_of(store.db, sources)


def _records(store: Store, path: Path) -> Iterable[dict[str, Any]]:
    return (r for _, r in decode(store.engine.read_from(path)).records)


def _files(store: Store, folder: Path, match: Callable[[str], bool]) -> list[Path]:
    """The sources below `folder` whose path below it `match`es, sorted."""
    base = store.rel(folder)
    return [
        store.home / e.path
        for e in store.engine.listing(base)
        if not e.is_dir and match(e.path[len(base) + 1 :])
    ]


def _json_line(line: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(line)
    except (ValueError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None


def _dropping(match: Callable[[dict[str, Any]], bool], needles: set[str]) -> Transform:
    """Drop lines whose record matches, and unreadable lines that quote a needle."""
    raw = [n.encode("utf-8") for n in needles if len(n) >= MIN_NEEDLE]

    def transform(line: bytes) -> bytes | None:
        rec = _json_line(line)
        if rec is not None:
            return None if match(rec) else line
        return None if any(n in line for n in raw) else line

    return transform


# -- what each layer's purge removes ----------------------------------------------------


def purge_fact(store: Store, key: str, *, agent: str | None = None, reason: str) -> PurgeReport:
    """Remove every record of fact `key` (values, history, forget markers) everywhere."""
    owner = _owner(store, agent)
    store.gate.check("write", "fact", owner)
    path = store.layout.facts(owner)
    job = _Purge(store, f"fact:{owner}:{key}", "fact", owner, reason)
    job.needles = {
        str(r.get("value", ""))
        for r in _records(store, path)
        if r.get("key") == key and r.get("op") == "set"
    }
    if not job.rewrite(path, _dropping(lambda r: r.get("key") == key, job.needles)):
        raise NotFound(f"no fact {key!r} of {owner}")
    job.uids = {job.uid}
    return job.finish()


def purge_file(store: Store, path: str, *, agent: str | None = None, reason: str) -> PurgeReport:
    """Remove a memory file and every archived copy of it (`files delete`, scratch)."""
    owner = _owner(store, agent)
    store.gate.check("write", "file", owner)
    mem = store.agent(owner)
    target, relp = mem.files._path(path)
    archive = store.layout.archive_dir(owner)
    found = store.engine.stat(target)
    copies = [target] if found is not None and not found.is_dir else []
    flat = relp.replace("/", "__")
    copies += _files(
        store,
        archive / "deleted",
        lambda p: (
            (p.split("/", 1)[-1] == relp and "/" in p) or ("/" not in p and p.endswith(f"-{flat}"))
        ),
    )
    if relp.startswith("session/"):
        name = relp.removeprefix("session/")
        copies += _files(
            store, archive / "scratch", lambda p: "/" in p and p.split("/", 1)[1] == name
        )
    if not copies and not has_history(store, store.rel(target)):
        raise NotFound(f"no memory file {relp!r} of {owner} (nor an archived copy)")
    job = _Purge(store, f"file:{owner}:{relp}", "file", owner, reason)
    for p in copies:
        content = store.engine.read(p)
        if content is not None:
            job.needles.add(content.data.decode("utf-8", "replace"))
    for p in copies:
        job.uids.update(queries.uids_of(store.db, str(p)))
    job.needles.update(history_texts(store, store.rel(target)))  # what its versions held
    for p in copies:
        job.remove(p)
    job.versions += drop_history(store, store.rel(target))
    return job.finish()


def purge_log_entry(
    store: Store, entry_id: str, *, agent: str | None = None, reason: str
) -> PurgeReport:
    """Remove one LOG.md entry (and its copy in any compaction archive) by its id."""

    owner = _owner(store, agent)
    store.gate.check("write", "log", owner)
    log = store.layout.log_file(owner)
    archives = _files(
        store,
        store.layout.archive_dir(owner),
        lambda p: "/" not in p and p.startswith("LOG-") and p.endswith(".md"),
    )
    job = _Purge(store, f"log:{owner}:{entry_id}", "log", owner, reason)

    def blocks(data: bytes) -> list[tuple[int, int]]:
        hits = [
            b
            for b in split_blocks(data, final=True).blocks
            if b.entry_id == entry_id
            or (b.entry_id is None and b.kind == "entry" and f"log-hand-{b.start:x}" == entry_id)
        ]
        job.needles.update(_unescape(b.lines) for b in hits)
        return [(b.start, b.end or len(data)) for b in hits]

    if not sum(job.cut(p, blocks) for p in [log, *archives]):
        raise NotFound(f"no LOG entry {entry_id!r} of {owner}")
    job.uids = {f"log:{owner}:{entry_id}"}
    return job.finish()


def purge_ledger_entry(store: Store, entry_id: str, *, reason: str) -> PurgeReport:
    """Empty a ledger entry's content in `ledger.jsonl` (admins only).

    The line keeps the entry format's fields (id, ts, kind, room, author, supersedes) with
    summary `[purged]` and no tags, ref or detail, so what it superseded stays hidden
    and entries that supersede it still name an entry; the stub itself is hidden.
    """
    if store.principal.role != "admin":
        raise ScopeDenied(
            "only an admin may purge a ledger entry: the ledger keeps entries, "
            "superseded ones included, for audit"
        )
    path = store.layout.ledger
    found = [r for r in _records(store, path) if r.get("id") == entry_id]
    if not found:
        raise NotFound(f"no ledger entry with id {entry_id!r}")
    job = _Purge(store, f"ledger:{entry_id}", "ledger", None, reason)
    for r in found:
        job.needles.update(str(r.get(k) or "") for k in ("summary", "detail", "ref"))
        author = r.get("author_role")
        if isinstance(author, str) and store.engine.stat(store.layout.agent(author)):
            job.owners.add(author)  # its auto-logged publish call quotes it

    def stub(line: bytes) -> bytes | None:
        rec = _json_line(line)
        return ledger_stub(rec) if rec is not None and rec.get("id") == entry_id else line

    job.rewrite(path, stub)
    job.uids = {job.uid}
    return job.finish()


def ledger_stub(rec: dict[str, Any]) -> bytes:
    """The line a purged ledger entry keeps: the entry format's fields, content emptied."""

    entry = LedgerEntry(
        id=str(rec.get("id")),
        ts=str(rec.get("ts")),
        kind=str(rec.get("kind")),
        room_id=rec.get("room_id"),
        author_role=rec.get("author_role"),
        ref=None,
        tags=(),
        summary=PURGED_SUMMARY,
        detail=None,
        supersedes=rec.get("supersedes"),
    )
    return encode(entry.to_dict())


def purge_session(
    store: Store,
    session_id: str,
    *,
    agent: str | None = None,
    message_id: str | None = None,
    reason: str,
) -> PurgeReport:
    """Remove a whole session (transcript, index row, archived copies) or one message."""

    owner = _owner(store, agent)
    store.gate.check("write", "session", owner)
    sid = check_name(session_id, "session id")
    sessions = store.agent(owner).sessions
    live = sessions._spec(sid).path
    found = store.engine.stat(live)
    copies = ([live] if found is not None and not found.is_dir else []) + _files(
        store,
        store.layout.archive_dir(owner) / "sessions",
        lambda p: "/" not in p and p.startswith(f"{sid}-") and p.endswith(".jsonl"),
    )
    listed = sessions._read_index().find(sid) is not None
    uids = queries.uids_of(store.db, str(live))
    if message_id is not None:
        job = _Purge(store, f"session:{owner}:{sid}:{message_id}", "session", owner, reason)
        for p in copies:
            job.needles.update(
                str(r.get("content", "")) for r in _records(store, p) if r.get("id") == message_id
            )
        drop = _dropping(lambda r: r.get("id") == message_id, set())
        if not sum(job.rewrite(p, drop) for p in copies):
            raise NotFound(f"no message {message_id!r} in session {sid!r} of {owner}")
        job.uids = uids
        return job.finish()
    if not copies and not listed:
        raise NotFound(f"no session {sid!r} of {owner}")
    job = _Purge(store, f"session:{owner}:{sid}", "session", owner, reason)
    for p in copies:
        job.needles.update(str(r.get("content", "")) for r in _records(store, p))
        job.remove(p)
    if listed:
        sessions._edit_index(lambda doc: doc.remove(lambda r: r.get("id") == sid))
        job.rewritten.append(store.rel(sessions.index_path))
    job.uids = uids
    return job.finish()


def tombstones(store: Store) -> list[dict[str, Any]]:
    """Every purge recorded in `purged.jsonl`, oldest first."""
    return list(_records(store, store.home / TOMBSTONES))


def _owner(store: Store, agent: str | None) -> str:
    who = agent or store.principal.agent
    if who is None:
        raise MalformedInput("say whose memory to purge (agent)")
    return store.agent(who).name


def purge_version(
    store: Store, path: str, version: str, *, agent: str | None = None, reason: str
) -> PurgeReport:
    """Remove one version (by id or prefix) from a file's history, for good.

    Refused for the file's content now (write the file anew, or purge the file).
    Quotes of the version's text in other versions of the agent's files are scrubbed
    as every purge's are.

    Example:
        >>> purge_version(store, "CONTEXT.md", "3f2a91c0", reason="pasted a key")  # doctest: +SKIP
    """
    owner = _owner(store, agent)
    versions = store.agent(owner).versions
    target = versions._resolve(path)
    store.gate.check("write", versions._layer_of(target), owner)
    sha, data = versions._content(target, version)
    hist = store.engine.history(target)
    job = _Purge(store, f"version:{owner}:{target.name}:{sha[:ID_CHARS]}", "version", owner, reason)
    with store.engine.lock(target.rel):
        live = store.engine.read(target.rel)
        if live is not None and sha256(live.data) == sha:
            raise Refused(
                f"{sha[:ID_CHARS]} is what {target.name} holds now: write the file anew first, "
                "or purge the whole file"
            )
        changed = hist.rewrite(lambda r, d: None if r.sha256 == sha else d)
    if not changed:
        raise NotFound(f"version {version!r} of {target.name} is no longer kept")
    job.versions += [f"{target.rel}@{r.id} -> {new}" for r, new in changed]
    job.rewritten.append(target.log)
    job.needles.update(own_lines(data, hist, live.data if live is not None else b""))
    return job.finish()
