"""`import_archive`: stage, verify, commit, move into place; `recover_imports` after a kill.

    1. stage    stream each member into <home>/.imports/<id>/files/, hashing and
                counting bytes; names, duplicates, file/folder collisions and the
                [import] caps are checked before a member's bytes are read
    2. verify   every member listed in the manifest with its sha256, nothing missing,
                then keep purged content out: the store's and the archive's tombstones
                applied to what was staged (`tombstones`), quotes of it scrubbed; the
                archive's tombstones are never imported (`adopt`: only on request)
    3. plan     compare with the store: identical files are left alone, other
                clashes refuse the import (unless `force`), a file where the import
                needs a folder (or the reverse) always does
    4. commit   fsync what was staged, then write <id>/COMMIT (the list of moves)
    5. move     write each staged file into the store's truth under the target's
                lock (never over a file written since the plan, unless `force`),
                then remove the staging folder; the index catches up (`sync`)

Staging is this host's (`<home>/.imports/`, beside the index), whatever the
backend; the store's sources are only ever read and written through its truth.

Before step 4 the store itself is untouched; after it, the import is decided and
`recover_imports` (run by every `Store` open) finishes the moves of an importer
that died. The staging folder is locked while its importer lives, so recovery
never touches an import still running.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from memstrata.errors import (
    AlreadyExists,
    EntryTooLarge,
    LockTimeout,
    MalformedInput,
    ScopeDenied,
    StaleWrite,
)
from memstrata.files.atomic import atomic_write_bytes, fsync_dir
from memstrata.index import scrub
from memstrata.operations.purge import TOMBSTONES, tombstones
from memstrata.operations.purge_copies import Quotes, derived_edit
from memstrata.operations.transfer import histories
from memstrata.operations.transfer.adopt import (
    ArchiveTombstone,
    adopt,
    describe,
    foreign_tombstones,
)
from memstrata.operations.transfer.members import (
    MANIFEST,
    STAGING,
    classify,
    iter_members,
    member_name,
)
from memstrata.operations.transfer.tombstones import Tombstones, contradicted, parse
from memstrata.values import field, value_type

if TYPE_CHECKING:
    from memstrata.store.engine import Engine
    from memstrata.store.view import Store

CHUNK = 1024 * 1024
SHOW = 5
COMMIT = "COMMIT"


@value_type(frozen=True)
class ImportReport:
    home: str
    source: str
    files: int  # memory files in the archive
    written: int  # moved into the store (new or replaced)
    identical: int  # already in the store with the same content
    replaced: int
    verified: bool  # checked against a manifest
    skipped: tuple[tuple[str, str], ...] = ()  # (member, why it was not imported)
    docs: int = 0
    bad_lines: int = 0
    purged: tuple[tuple[str, str], ...] = ()  # (member, tombstone that kept content out)
    # the archive's tombstones the store lacks: what they claim, whether adopted
    tombstones: tuple[ArchiveTombstone, ...] = ()
    dry_run: bool = False  # nothing was written: what an import would do
    # the store's tombstones not applied: the store still holds what they say was purged
    doubted: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "home": self.home,
            "source": self.source,
            "files": self.files,
            "written": self.written,
            "identical": self.identical,
            "replaced": self.replaced,
            "verified": self.verified,
            "docs": self.docs,
            "bad_lines": self.bad_lines,
            "skipped": [{"path": p, "reason": r} for p, r in self.skipped],
            "purged": [{"path": p, "tombstone": t} for p, t in self.purged],
            "tombstones": [t.to_dict() for t in self.tombstones],
            "dry_run": self.dry_run,
            "doubted_tombstones": list(self.doubted),
        }


@value_type
class _Staged:
    hashes: dict[str, tuple[str, int]] = field(default_factory=dict)  # every file member
    memory: list[str] = field(default_factory=list)  # staged, to import
    mtimes: dict[str, float] = field(default_factory=dict)  # the archive's word for them
    tombstones: list[dict[str, Any]] = field(default_factory=list)  # the archive's
    doubted: list[str] = field(default_factory=list)  # the store's, disproved by the store
    skipped: list[tuple[str, str]] = field(default_factory=list)
    manifest: bytes | None = None


def import_archive(
    store: Store,
    source: str | os.PathLike[str],
    *,
    force: bool = False,
    unverified: bool = False,
    adopt_tombstones: bool = False,
    dry_run: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> ImportReport:
    """Load an export (folder or tarball) into `store`, all or nothing. Admins only.

    The archive's tombstones keep purged content out of its own members only; the
    report lists those the store lacks, with the author they claim (never trusted).
    `adopt_tombstones` makes them the store's purges, run now as this admin (`adopt`).
    `dry_run` stages and checks everything and reports what would happen, writing
    nothing.

    Raises MalformedInput (tampered, unlisted, duplicate, case-clashing or colliding
    members, no manifest without `unverified`, not a readable archive),
    PathOutsideStore (absolute or `..` names), EntryTooLarge (over an `[import]`
    cap) or AlreadyExists (files that differ from the store's, unless `force`); in
    every case the store is unchanged.

    Example:
        >>> import_archive(Store(role="admin"), "backup.tar.gz")  # doctest: +SKIP
    """
    if store.principal.role != "admin":
        raise ScopeDenied(
            "an import writes every agent's memory: open the store as an admin "
            "(no --agent, or an agent listed in [roles] admin)"
        )
    src = Path(source).expanduser().absolute()
    stage = store.home / STAGING / f"{int(time.time() * 1000)}-{os.getpid()}-{os.urandom(3).hex()}"
    # Locked before it exists: an opener's `recover_imports` never takes it for the
    # folder of an importer that died.
    with store.engine.locks.hold(str(stage)):
        try:
            _make_stage(stage / "files")
            staged = _stage(store, src, stage / "files")
            verified = _verify(src, staged, unverified)
            histories.check_blobs(src, staged.hashes)
            purged = _keep_purged_out(store, stage / "files", staged)
            moves, identical, replaced = _plan(store.engine, src, staged, force, stage / "files")
            foreign = foreign_tombstones(staged.tombstones, _store_tombstones(store))
            planned = moves
            if dry_run:
                moves = []
            if moves:
                _commit(stage, moves, force)
        except BaseException:
            shutil.rmtree(stage, ignore_errors=True)
            _tidy(store.home)
            raise
        if moves:
            _apply(store.engine, stage, progress)
        else:
            shutil.rmtree(stage, ignore_errors=True)
    _tidy(store.home)
    bad_lines = 0
    if not dry_run:
        if purged:  # what the replaced files held leaves the index as a purge's does
            scrub.secure_deletes(store.db)
        bad_lines = store.sync().bad_lines
        if purged:
            scrub.drop_vectors(store.db, ())
            scrub.compact(store.db)
        store.events.emit("memory:write", {"type": "import", "path": str(src), "delta": len(moves)})
    shown = tuple(
        adopt(store, rec, src.name) if adopt_tombstones and not dry_run else describe(store, rec)
        for rec in foreign
    )
    docs = store.doc_count()
    return ImportReport(
        str(store.home),
        str(src),
        len(staged.memory),
        len(planned),
        len(identical),
        len(replaced),
        verified,
        tuple(staged.skipped),
        docs,
        bad_lines,
        tuple(purged),
        shown,
        dry_run,
        tuple(staged.doubted),
    )


def _make_stage(folder: Path) -> None:
    """Create the staging folder; another process's `_tidy` may remove an empty
    `.imports/` between the two `mkdir`s of `parents=True`: then try again."""
    for _ in range(100):
        try:
            folder.mkdir(parents=True)
            return
        except FileNotFoundError:
            continue
    folder.mkdir(parents=True)


def _store_tombstones(store: Store) -> list[dict[str, Any]]:

    return tombstones(store)


def recover_imports(engine: Engine) -> list[str]:
    """Finish (after COMMIT) or discard (before it) every import whose process died.

    Returns the staging folders handled; an import still running is left alone.
    """
    home, locks = engine.home, engine.locks
    root = home / STAGING
    done: list[str] = []
    try:
        entries = sorted(root.iterdir())
    except FileNotFoundError:
        return done
    for stage in entries:
        try:
            with locks.hold(str(stage), timeout=0.05):
                if (stage / COMMIT).is_file():
                    _apply(engine, stage, None)
                else:
                    shutil.rmtree(stage, ignore_errors=True) if stage.is_dir() else stage.unlink()
                done.append(stage.name)
        except LockTimeout:
            continue  # its importer is alive
        except OSError:
            continue  # a read-only store: nothing can be finished or removed now
    _tidy(home)
    return done


# -- 1. stage ------------------------------------------------------------------------


def _stage(store: Store, src: Path, root: Path) -> _Staged:
    cfg = store.config
    out = _Staged()
    dirs: set[str] = set()
    folded: dict[str, str] = {}  # casefolded path -> the name the archive gave it
    count = total = 0
    for m in iter_members(src):
        count += 1
        if count > cfg.import_max_members:
            raise EntryTooLarge(
                f"{src}: more than {cfg.import_max_members} members "
                "([import] max_members); nothing was imported"
            )
        if m.is_dir and m.name.strip("./") == "":
            continue  # the archive's own root (`tar -C store -czf x.tgz .`)
        name = member_name(m.name, src)
        _one_case(folded, name, src)
        if m.is_dir:
            if name in out.hashes:
                raise MalformedInput(f"{src}: {name!r} is both a file and a folder")
            dirs.add(name)
            continue
        if name in out.hashes or (name == MANIFEST and out.manifest is not None):
            raise MalformedInput(f"{src}: {name!r} appears twice in the archive")
        parents = ["/".join(name.split("/")[:i]) for i in range(1, name.count("/") + 1)]
        clash = name if name in dirs else next((p for p in parents if p in out.hashes), None)
        if clash is not None:
            raise MalformedInput(f"{src}: {clash!r} is both a file and a folder")
        dirs.update(parents)
        if m.size > cfg.import_max_file_bytes:
            raise EntryTooLarge(
                f"{src}: {name} is {m.size} bytes uncompressed; the limit is "
                f"{cfg.import_max_file_bytes} ([import] max_file_bytes)"
            )
        total += m.size
        if total > cfg.import_max_total_bytes:
            raise EntryTooLarge(
                f"{src}: more than {cfg.import_max_total_bytes} bytes "
                "uncompressed ([import] max_total_bytes); nothing was imported"
            )
        if name == MANIFEST:
            with m.open() as fh:
                out.manifest = _read_exactly(fh, m.size, src, name)
            continue
        reason = classify(name, src)
        target = root.joinpath(*name.split("/")) if reason is None else None
        with m.open() as fh:
            out.hashes[name] = _copy(fh, m.size, target, src, name)
        out.mtimes[name] = m.mtime
        if reason is None:
            out.memory.append(name)
        else:
            out.skipped.append((name, reason))
    return out


def _one_case(folded: dict[str, str], name: str, src: Path) -> None:
    """Refuse two names (or folders on their paths) that differ only by case: on a
    case-insensitive file system (macOS, Windows) they are one file, and one import
    would silently write over the other."""
    parts = name.split("/")
    for i in range(len(parts), 0, -1):
        path = "/".join(parts[:i])
        seen = folded.get(path.casefold())
        if seen is None:
            folded[path.casefold()] = path
            continue
        if seen == path:
            if i < len(parts):
                return  # a folder seen before: the folders above it were checked then
            continue
        raise MalformedInput(
            f"{src}: {seen!r} and {path!r} differ only by case (one file on a case-insensitive "
            "file system); nothing was imported"
        )


def _read_exactly(fh: IO[bytes], size: int, src: Path, name: str) -> bytes:
    data = fh.read(size + 1)
    if len(data) != size:
        raise MalformedInput(f"{src}: {name} is not {size} bytes as its header says")
    return data


def _copy(
    fh: IO[bytes],
    size: int,
    target: Path | None,
    src: Path,
    name: str,
) -> tuple[str, int]:
    """Stream at most `size` bytes to `target` (or only hash them); (sha256, bytes)."""
    sha = hashlib.sha256()
    seen = 0
    out = None
    if target is not None:
        target.parent.mkdir(parents=True, exist_ok=True)
        out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    try:
        while chunk := fh.read(min(CHUNK, size + 1 - seen)):
            seen += len(chunk)
            if seen > size:
                raise MalformedInput(f"{src}: {name} is larger than its {size} bytes")
            sha.update(chunk)
            if out is not None:
                view = memoryview(chunk)
                while view:
                    view = view[os.write(out, view) :]
        if seen != size:
            raise MalformedInput(f"{src}: {name} is not {size} bytes as its header says")
        if out is not None:
            os.fsync(out)
    finally:
        if out is not None:
            os.close(out)
    return sha.hexdigest(), seen


# -- 2. verify -----------------------------------------------------------------------


def _verify(src: Path, staged: _Staged, unverified: bool) -> bool:
    if staged.manifest is None:
        if unverified:
            return False
        raise MalformedInput(
            f"{src}: no manifest ({MANIFEST}), so nothing in it can be checked; nothing was "
            "imported. Import only exports written by `memstrata export`, or pass "
            "--unverified to accept this archive as it is"
        )
    try:
        rows = json.loads(staged.manifest)["files"]
        listed: dict[str, tuple[str, int]] = {}
        for row in rows:
            path = member_name(str(row["path"]), src)
            if path in listed:
                raise MalformedInput(f"{src}: the manifest lists {path!r} twice")
            listed[path] = (str(row["sha256"]), int(row["size"]))
            if isinstance(row.get("mtime"), int | float) and path in staged.mtimes:
                staged.mtimes[path] = float(row["mtime"])  # (a tar header keeps whole seconds)
    except (ValueError, KeyError, TypeError) as exc:
        if isinstance(exc, MalformedInput):
            raise
        raise MalformedInput(f"{src}: the export manifest is unreadable") from None
    unlisted = sorted(set(staged.hashes) - set(listed))
    if unlisted:
        raise MalformedInput(
            f"{src}: {len(unlisted)} member(s) not listed in the manifest "
            f"(e.g. {', '.join(unlisted[:SHOW])}); nothing was imported"
        )
    missing = sorted(set(listed) - set(staged.hashes))
    if missing:
        raise MalformedInput(f"{src}: {len(missing)} file(s) listed but absent, e.g. {missing[0]}")
    for name, got in staged.hashes.items():
        if got != listed[name]:
            raise MalformedInput(
                f"{src}: {name} does not match its sha256 in the manifest; nothing was imported"
            )
    return True


def _keep_purged_out(store: Store, root: Path, staged: _Staged) -> list[tuple[str, str]]:
    """Apply every tombstone (the store's, and the archive's it lacks) to the staged
    files; returns (member, tombstone id or what was scrubbed) for each change."""

    def path(name: str) -> Path:
        return root.joinpath(*name.split("/"))

    def replace(name: str, data: bytes | None) -> None:
        if data is None:
            staged.memory.remove(name)
            path(name).unlink()
        else:
            atomic_write_bytes(path(name), data)
            staged.hashes[name] = (hashlib.sha256(data).hexdigest(), len(data))

    records = tombstones(store)
    doubted = contradicted(store, records, staged.memory)
    if doubted:  # a tombstone the live store disproves never costs the store what it holds
        records = [r for r in records if r["id"] not in doubted]
        staged.doubted = sorted(doubted)
    if TOMBSTONES in staged.memory:  # the archive's: they apply to its own members only
        staged.tombstones = parse(path(TOMBSTONES).read_bytes())
        records += staged.tombstones
        replace(TOMBSTONES, None)
        staged.skipped.append(
            (
                TOMBSTONES,
                f"its {len(staged.tombstones)} tombstone(s) kept purged content out of this "
                "archive only; an archive's tombstones are never the store's (--merge-tombstones "
                "shows what adopting them would purge)",
            )
        )
    rules = Tombstones(store, records)
    out: list[tuple[str, str]] = []
    needles: dict[str, set[str]] = {}
    for name in list(staged.memory):
        if name == TOMBSTONES or not rules.concerns(name):
            continue
        verdict = rules.apply(name, path(name).read_bytes(), staged.mtimes.get(name, -math.inf))
        if verdict is None:
            continue
        replace(name, verdict.data)
        out += [(name, tomb) for tomb in verdict.ids]
        for owner, texts in verdict.needles.items():
            needles.setdefault(owner, set()).update(texts)
    kept_out = {owner: Quotes(texts) for owner, texts in needles.items()}
    staging = histories.Staged(root, staged.memory, staged.hashes, atomic_write_bytes)
    out += histories.keep_purged_out(store, staging, records, kept_out)
    for owner in sorted(needles):
        quotes = kept_out[owner]
        for name in list(staged.memory):
            change = (
                derived_edit(store, owner, name, quotes)
                if quotes and name.startswith(f"agents/{owner}/")
                else None
            )
            if change is not None:
                data = path(name).read_bytes()
                if (new := change(data)) != data:
                    replace(name, new)
                    out.append((name, "quotes of purged content scrubbed"))
    return out


# -- 3. plan -------------------------------------------------------------------------


def _plan(
    engine: Engine,
    src: Path,
    staged: _Staged,
    force: bool,
    root: Path,
) -> tuple[list[str], list[str], list[str]]:
    moves: list[str] = []
    identical: list[str] = []
    clashes: list[str] = []
    for rel in staged.memory:
        parts = rel.split("/")
        for i in range(1, len(parts)):
            p = engine.stat("/".join(parts[:i]))
            if p is not None and not p.is_dir:
                raise AlreadyExists(
                    f"{src}: {rel} needs a folder where the store has the file "
                    f"{'/'.join(parts[:i])}; nothing was imported"
                )
        dst = engine.stat(rel)
        if dst is not None and dst.is_dir:
            raise AlreadyExists(
                f"{src}: {rel} is a folder (or a link) in the store; nothing was imported"
            )
        if dst is not None and histories.is_blob(rel):
            identical.append(rel)  # named by its content: the same bytes
            continue
        if dst is not None and histories.is_history_log(rel):  # merged, never replaced
            data = root.joinpath(*rel.split("/")).read_bytes()
            (moves if histories.adds_to(engine, rel, data) else identical).append(rel)
            continue
        if dst is not None:
            found = engine.read(rel)
            if (
                found is not None
                and hashlib.sha256(found.data).hexdigest() == staged.hashes[rel][0]
            ):
                identical.append(rel)
                continue
            clashes.append(rel)
        moves.append(rel)
    if clashes and not force:
        raise AlreadyExists(
            f"{len(clashes)} file(s) already exist in {engine.location} with other content (e.g. "
            f"{', '.join(clashes[:SHOW])}); nothing was imported; use --force to replace them"
        )
    return moves, identical, clashes


# -- 4. commit and 5. move -----------------------------------------------------------


def _commit(stage: Path, moves: list[str], force: bool) -> None:
    folders = {(stage / "files" / rel).parent for rel in moves}
    for folder in sorted(folders, key=lambda p: -len(p.parts)):
        fsync_dir(folder)
    atomic_write_bytes(stage / COMMIT, json.dumps({"force": force, "files": moves}).encode())


def _apply(engine: Engine, stage: Path, progress: Callable[[int, int], None] | None) -> None:
    plan = json.loads((stage / COMMIT).read_text(encoding="utf-8"))
    moves: list[str] = plan["files"]
    for n, rel in enumerate(moves, start=1):
        staged = stage.joinpath("files", *rel.split("/"))
        if staged.exists():  # else placed by an earlier, interrupted run
            with engine.lock(rel):
                _place(engine, staged, rel, bool(plan["force"]))
        if progress:
            progress(n, len(moves))
    shutil.rmtree(stage, ignore_errors=True)


def _place(engine: Engine, staged: Path, rel: str, force: bool) -> None:
    data = staged.read_bytes()
    # Never over a file written since the plan was made, unless forced: a racing writer's
    # file (or our own, before a kill) is kept. Never the store's tombstones (a plan
    # staged by an earlier version may name them): an archive's carry no authority.
    if rel != TOMBSTONES:
        with contextlib.suppress(StaleWrite):
            histories.place(engine, rel, data, force)
    staged.unlink(missing_ok=True)


def _tidy(home: Path) -> None:
    with contextlib.suppress(OSError):
        (home / STAGING).rmdir()  # only when empty
