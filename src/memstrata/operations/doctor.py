"""Does the derived index still agree with the files? (`memstrata doctor`, the HTTP API)

`examine` parses every source file afresh (the same parsers `reindex` uses) and
compares, source by source, the docs the files yield with the rows the index
holds: missing, stale and changed docs, docs of files that no longer exist, and the
superseded flags of the ledger. It also lists what the files hold that could not be
read cleanly (torn or hand-mangled records, LOG blocks with a cut footer or a copied
id, JSON entries the code does not understand, a damaged session index, a file whose
name memstrata refuses: each skipped or kept as said, never fatal) and runs SQLite's
and FTS5's integrity checks. It
changes neither the files nor the index rows. The files are the store's truth,
read through its backend: with `[backend] url` naming PostgreSQL this compares
this host's index with the database, and also lists every source whose version
in the database is newer than the one the index last caught up with.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstrata.errors import ScopeDenied
from memstrata.files.versions import history_folder
from memstrata.index import queries
from memstrata.index.masked import indexed
from memstrata.values import field, value_type

if TYPE_CHECKING:
    from memstrata.store.view import Store

SHOW_UIDS = 5


@value_type
class Findings:
    sources: int = 0
    file_docs: int = 0
    index_docs: int = 0
    drift: list[dict[str, Any]] = field(default_factory=list)
    bad_lines: list[dict[str, Any]] = field(default_factory=list)
    integrity: list[str] = field(default_factory=list)
    fts_integrity: str = "ok"
    cannot_fix: str | None = None  # why the index cannot be rebuilt here (a read-only disk)

    @property
    def index_ok(self) -> bool:
        return not self.drift and self.integrity == ["ok"] and self.fts_integrity == "ok"

    @property
    def ok(self) -> bool:
        """The index agrees with the files and every file reads cleanly."""
        return self.index_ok and not self.bad_lines

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "index_ok": self.index_ok,
            "files_ok": not self.bad_lines,
            "sources": self.sources,
            "file_docs": self.file_docs,
            "index_docs": self.index_docs,
            "drift": self.drift,
            "bad_lines": self.bad_lines,
            "integrity_check": self.integrity,
            "fts_integrity": self.fts_integrity,
            "cannot_fix": self.cannot_fix,
        }


def examine(store: Store) -> Findings:
    """Compare a fresh parse of every source with the index rows, without changing either.

    Store-wide: the principal must be an admin (ScopeDenied otherwise).
    """
    store.gate.check("read", "index", None)
    engine, db = store.engine, store.db
    out = Findings(cannot_fix=engine.index_access.cannot_rebuild())
    seen: set[str] = set()
    should_hide: set[str] = set()
    bad: dict[tuple[str, int], str] = {}  # what the files hold now, and what the index recorded
    for spec in engine.sources():
        path = str(spec.path)
        seen.add(path)
        out.sources += 1
        parsed = spec.parse(engine.origin.read_from(spec, 0), 0)  # (a project file too)
        fresh = {d.uid: (d.title, d.body) for d in map(indexed, parsed.docs)}  # (masked)
        should_hide.update(d.supersedes for d in parsed.docs if d.supersedes)
        held = queries.texts_by_uid(db, path)
        out.file_docs += len(fresh)
        for b in parsed.bad:
            bad[(store.rel(spec.path), b.offset)] = b.reason
        _compare(out, store.rel(spec.path), fresh, held)
    out.index_docs = queries.doc_count(db)
    for source, n in queries.rows_by_source(db).items():
        if source not in seen:
            out.drift.append(
                {"source": store.rel(Path(source)), "problem": "file gone", "stale": n}
            )
    hidden = queries.superseded_uids(db)
    should_hide &= queries.layer_uids(db, "ledger")
    if hidden != should_hide:
        out.drift.append(
            {
                "source": "ledger.jsonl",
                "problem": "superseded flags",
                "should_hide": sorted(should_hide - hidden)[:SHOW_UIDS],
                "wrongly_hidden": sorted(hidden - should_hide)[:SHOW_UIDS],
            }
        )
    for source, offset, reason in queries.every_bad_line(db):
        bad.setdefault((store.rel(Path(source)), offset), reason)
    listed = engine.listing("", skip=history_folder)  # file versions: no index source
    versions = {e.path: e.version for e in listed if not e.is_dir}
    for source, version in queries.source_versions(db).items():
        rel = store.rel(Path(source))
        if rel in versions and versions[rel] != version:
            out.drift.append(
                {
                    "source": rel,
                    "problem": "behind the truth",
                    "indexed_version": version,
                    "truth_version": versions[rel],
                }
            )
    for path, why in store.engine.misnamed.found.items():  # (noted by the listing above)
        bad[(path, 0)] = f"file skipped: its name {why}; rename or remove it"
    for agent in store.agents():  # the session index is no index source, but a file people edit
        sessions = store.agent(agent).sessions
        with contextlib.suppress(ScopeDenied):
            for n, problem in enumerate(sessions.problems()):
                bad.setdefault(
                    (store.rel(sessions.index_path), n), problem.replace(f"{store.home}/", "")
                )
    out.integrity = queries.integrity(db)  # (once, even for a store without agents)
    out.bad_lines = [{"source": k[0], "offset": k[1], "reason": r} for k, r in sorted(bad.items())]
    out.fts_integrity = queries.fts_integrity(db)
    return out


def _compare(out: Findings, rel: str, fresh: dict[str, Any], held: dict[str, Any]) -> None:
    missing = sorted(set(fresh) - set(held))
    stale = sorted(set(held) - set(fresh))
    changed = sorted(u for u in set(fresh) & set(held) if fresh[u] != held[u])
    if missing or stale or changed:
        out.drift.append(
            {
                "source": rel,
                "problem": "docs differ",
                "missing": len(missing),
                "stale": len(stale),
                "changed": len(changed),
                "examples": (missing + stale + changed)[:SHOW_UIDS],
            }
        )
