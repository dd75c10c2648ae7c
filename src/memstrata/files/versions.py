"""Versions: every replace of an overwritable memory file keeps what it replaced.

Which files: an agent's NOW.md / NOTES.md, CONTEXT.md / MEMORY.md (wherever
`[memory] path` puts it), AGENT.md / IDENTITY.md and every memory file, i.e.
`agents/<agent>/memory/**` but the append-only LOG.md, plus the agent folder's
AGENT.md, IDENTITY.md and MEMORY.md (`versioned`). Where, through the truth (so
the same code keeps them in a folder of files and in PostgreSQL, and an export
or a migration carries them like any source):

    agents/<agent>/versions/<slug>.<hash8>/   one folder per file (`Versioned.folder`)
        log.jsonl    one record per content the file held, oldest first: time, who
                     (agent, role), surface (`surface()`), size, sha256, note
        <sha256>     the bytes of each content, named by their sha256: the same
                     content written twice (or restored) is one blob; the hot-state
                     file (NOW.md / NOTES.md, up to INLINE_MAX_BYTES of UTF-8) has
                     none: each record carries its content (`text`), so an
                     `update_now` costs two syncs, as a bare atomic replace does
                     (`Versioned.inline`; step 3 below)

A replace (`FileHistory.replace`, called by the store's write door with the
file's lock held) runs four steps, each durable before the next:

    1. found    the file's content now is not the last record (edited by hand,
                written before versions were kept, or a writer stopped between 3
                and 4): its blob and a record dated by its mtime are kept first
    2. blob     the new content's blob, unless it is there already (a hot file's
                content goes in its record, step 4, instead)
    3. replace  the file itself (atomic: old or new, never a mix)
    4. record   the new content's record (a durable append)

So a crash at any point never loses both the old and the new content: before 3
the file still holds the old content (and the history has it); after 3 the
history holds the old content and the file the new one; a crash between 3 and 4
only leaves the new content unrecorded, and step 1 of the next replace (or
`FileHistory.versions`, which shows it as the file's unrecorded content) finds
it (a hot file: the old content is in its own record, durable since its write).

A hot file's replace (3) syncs the temporary file but not the folder: its record (4)
carries the new content and is synced right after the rename, so once `update_now`
returns the content is durable in the history whatever the filesystem. On a
filesystem with one ordered metadata journal (ext4, XFS) the record's sync commits the
rename too; elsewhere a power cut may leave NOW.md holding the previous content, whole,
with the acknowledged one as its newest version (`memstrata versions`, restore), and the
next replace records what it finds (step 1). A killed process loses nothing: the rename
is done before the record is written.
Steady state costs one sha256, one blob write and one small append (a hot file:
no blob write).

Retention (`Retention`): a file keeps its newest `keep` versions and drops those
older than `max_age_days`, but never the newest MIN_KEEP; pruned after a write
that finds more than `keep` + slack records or one past the age (in the
background, off the write's path: `Edit`), and by `maintain`. A blob no kept
record names is removed (an unreferenced blob, left by a writer stopped after
step 2 or an import still placing its records, only once it is an hour old).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from memstrata.errors import MalformedInput, StaleWrite
from memstrata.files.truth import MISSING, Content, Entry
from memstrata.model import iso, now_ts, parse_ts
from memstrata.values import replace, value_type

if TYPE_CHECKING:
    from memstrata.files.truth import Truth

FOLDER = "versions"  # in each agent's folder
LOG = "log.jsonl"
MIN_KEEP = 3  # retention never drops the newest few
ID_CHARS = 12  # a version id: the first hex digits of its sha256
ORPHAN_GRACE_S = 3600.0  # an unreferenced blob younger than this is left alone
TOP_FILES = frozenset({"AGENT.md", "IDENTITY.md", "MEMORY.md"})  # in the agent's folder
INLINE_FILES = frozenset({"NOW.md", "NOTES.md"})  # contents kept in their records
INLINE_MAX_BYTES = 16384
FOUND = (
    "found: written outside memstrata's write paths (by hand, before versions were kept, "
    "or by a writer that stopped before recording it)"
)


# -- where a write comes from ------------------------------------------------------


@value_type(frozen=True)
class Origin:
    """Where the writes of this context come from: the surface ("cli restore", "mcp
    memory_write", "web", nested ones joined by "/") and a note ("restore of <id>")."""

    surface: str | None = None
    note: str | None = None


_NOWHERE = Origin()
_ORIGIN: ContextVar[Origin | None] = ContextVar("memstrata_write_origin", default=None)


def origin() -> Origin:
    return _ORIGIN.get() or _NOWHERE


@contextlib.contextmanager
def surface(label: str, *, note: str | None = None) -> Iterator[None]:
    """Record the writes made inside as coming from `label` (nested inside an outer one).

    Example:
        >>> with surface("mcp memory_write"):  # doctest: +SKIP
        ...     agent.files.write("CONTEXT.md", text)
    """
    now = origin()
    label = f"{now.surface}/{label}" if now.surface and label else (label or now.surface or "")
    token = _ORIGIN.set(Origin(label or None, note if note is not None else now.note))
    try:
        yield
    finally:
        _ORIGIN.reset(token)


def set_surface(label: str) -> None:
    """Name the surface of everything this context writes from now on (an adapter's entry
    point: a CLI process, a request's thread)."""
    _ORIGIN.set(Origin(label, origin().note))


# -- which files, and where their versions live -------------------------------------


@value_type(frozen=True)
class Versioned:
    """A file whose replaces keep versions: `rel` (store-relative), its `agent` and its
    `name` below the agent's folder ("memory/CONTEXT.md", "AGENT.md")."""

    rel: str
    agent: str
    name: str

    @property
    def folder(self) -> str:
        slug = self.name.replace("/", "__")[:100]
        digest = hashlib.sha256(self.name.encode("utf-8")).hexdigest()[:8]
        return f"agents/{self.agent}/{FOLDER}/{slug}.{digest}"

    @property
    def log(self) -> str:
        return f"{self.folder}/{LOG}"

    def blob(self, sha: str) -> str:
        return f"{self.folder}/{sha}"

    def inline(self, data: bytes) -> str | None:
        """The text a record of this file carries itself (None: the content is a blob).

        The hot-state file (NOW.md / NOTES.md, rewritten on every `update_now`) keeps
        its small contents in the history log: a replace then costs one record append
        besides the file's own replace, not a blob written atomically as well."""
        if self.name.rsplit("/", 1)[-1] not in INLINE_FILES or len(data) > INLINE_MAX_BYTES:
            return None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return None


def versioned(rel: str, memory_path: str | None = None) -> Versioned | None:
    """The `Versioned` file `rel` is, or None if its replaces keep no versions."""
    parts = rel.split("/")
    if len(parts) < 3 or parts[0] != "agents":
        return None
    name = "/".join(parts[2:])
    if parts[2] == "memory" and len(parts) > 3 and name != "memory/LOG.md":
        return Versioned(rel, parts[1], name)
    if name in TOP_FILES or (memory_path is not None and name == memory_path.strip("/")):
        return Versioned(rel, parts[1], name)
    return None


def history_folder(rel: str) -> bool:
    """True for an agent's `versions` folder: what walks for index sources leave out
    (`Truth.list(skip=...)`: thousands of blobs, none of them indexed)."""
    parts = rel.split("/")
    return len(parts) == 3 and parts[0] == "agents" and parts[2] == FOLDER


def agent_histories(truth: Truth, agent: str) -> list[str]:
    """The history logs (store-relative) of every file of `agent` that has versions."""
    base = f"agents/{agent}/{FOLDER}"
    return [
        e.path
        for e in truth.list(base)
        if not e.is_dir and e.path.endswith(f"/{LOG}") and e.path.count("/") == 4
    ]


# -- records --------------------------------------------------------------------------


@value_type(frozen=True)
class Record:
    """One content a file held: when it was written, by whom, through what."""

    ts: str
    path: str  # the file, store-relative
    sha256: str
    size: int
    by: str | None = None  # the agent (None: unknown, or the admin at the terminal)
    role: str | None = None
    surface: str | None = None
    note: str | None = None
    truth: str | None = None  # the truth's version of the file right after the write
    text: str | None = None  # the content itself, for a hot file's record (`Versioned.inline`)

    @property
    def id(self) -> str:
        return self.sha256[:ID_CHARS]

    @property
    def epoch(self) -> float:
        try:
            return parse_ts(self.ts)
        except MalformedInput:
            return -math.inf

    def line(self) -> bytes:
        d = {k: v for k, v in self.__dict__.items() if v is not None}
        return (json.dumps(d, ensure_ascii=False, separators=(",", ":")) + "\n").encode()

    @classmethod
    def parse(cls, raw: bytes) -> Record | None:
        try:
            d = json.loads(raw)
            if not isinstance(d, dict):
                return None
            sha = d["sha256"]
            if not isinstance(sha, str) or len(sha) != 64 or sha.strip("0123456789abcdef"):
                return None

            def opt(key: str) -> str | None:
                value = d.get(key)
                return value if isinstance(value, str) else None

            return cls(
                str(d["ts"]),
                str(d["path"]),
                sha,
                int(d["size"]),
                opt("by"),
                opt("role"),
                opt("surface"),
                opt("note"),
                opt("truth"),
                opt("text"),
            )
        except (ValueError, KeyError, TypeError, UnicodeDecodeError):
            return None


def parse_log(data: bytes) -> list[Record]:
    """The readable records of a history log, in order (torn or bad lines skipped)."""
    out = []
    for raw in data.splitlines():
        rec = Record.parse(raw) if raw.strip() else None
        if rec is not None:
            out.append(rec)
    return out


def log_ends(data: bytes) -> tuple[int, Record | None, Record | None]:
    """(how many lines, the first readable record, the last one) of a history log: what
    a write needs, without parsing every record."""
    lines = [x for x in data.split(b"\n") if x.strip()]
    first = next((r for x in lines if (r := Record.parse(x)) is not None), None)
    last = next((r for x in reversed(lines) if (r := Record.parse(x)) is not None), None)
    return len(lines), first, last


def encode_log(records: list[Record]) -> bytes:
    return b"".join(r.line() for r in records)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@value_type(frozen=True)
class Retention:
    """How many versions a file keeps (`[versions] keep`) and for how long
    (`[versions] max_age_days`, 0: no age limit); the newest MIN_KEEP always stay."""

    keep: int = 50
    max_age_days: float = 90.0

    @property
    def slack(self) -> int:
        return max(8, self.keep // 4)  # writes between prunes: a prune rewrites the log

    def dropped(self, records: list[Record], now: float) -> list[int]:
        """Indexes (oldest first) of the records retention drops."""
        n = len(records)
        keep = max(self.keep, MIN_KEEP)
        cutoff = now - self.max_age_days * 86400 if self.max_age_days > 0 else -math.inf
        return [
            i
            for i, r in enumerate(records)
            if i < n - MIN_KEEP and (i < n - keep or r.epoch < cutoff)
        ]

    def due(self, count: int, oldest: Record | None, now: float) -> bool:
        """Whether a write should prune a log of `count` records, the oldest `oldest`:
        past `keep` + slack, or one past the age."""
        if count > max(self.keep, MIN_KEEP) + self.slack:
            return True
        if count <= MIN_KEEP or self.max_age_days <= 0 or oldest is None:
            return False
        return oldest.epoch < now - self.max_age_days * 86400


@value_type(frozen=True)
class Author:
    """Who wrote a version: the acting agent and its role, when known."""

    by: str | None
    role: str | None


# -- one file's history ------------------------------------------------------------------


class FileHistory:
    """The versions of one file, read and written through `truth`."""

    def __init__(self, truth: Truth, target: Versioned, retention: Retention | None = None):
        self.truth = truth
        self.target = target
        self.retention = retention or Retention()
        self.due = False  # the last replace found retention due: `prune` (after the ack)

    def records(self) -> list[Record]:
        """Every record, oldest first."""
        found = self.truth.read(self.target.log)
        return parse_log(found.data) if found is not None else []

    def blob(self, sha: str) -> bytes | None:
        """The content with this sha256 (a blob, or a record's own text), or None if it
        is not kept (or not intact)."""
        found = self.truth.read(self.target.blob(sha))
        if found is not None and sha256(found.data) == sha:
            return found.data
        for rec in reversed(self.records()):
            if rec.sha256 == sha and rec.text is not None:
                data = rec.text.encode("utf-8")
                if sha256(data) == sha:
                    return data
        return None

    def _keep(self, sha: str, data: bytes) -> str | None:
        """Keep a content: the text its record carries, or (None) a blob written now."""
        text = self.target.inline(data)
        if text is None:
            self._keep_blob(sha, data)
        return text

    def _keep_blob(self, sha: str, data: bytes) -> None:
        path = self.target.blob(sha)
        there = self.truth.stat(path)
        if there is not None and there.size == len(data):
            return
        with contextlib.suppress(StaleWrite):  # another writer kept the same content
            self.truth.rewrite(path, data, expected=there.version if there else MISSING)

    def replace(
        self,
        data: bytes,
        *,
        expected: str,
        current: Content | Callable[[], Content | None] | None,
        author: Author,
    ) -> Entry:
        """Replace the file with `data`, keeping versions (module docstring: steps 1-4).

        `expected` is the file's version as read (MISSING: it does not exist);
        `current` its content as read, or a function that reads it (called only when
        the history does not already hold it). The caller holds the file's lock."""
        truth, target = self.truth, self.target
        log = truth.read(target.log)
        count, oldest, last = log_ends(log.data) if log is not None else (0, None, None)
        new_sha = sha256(data)
        if expected != MISSING and (last is None or last.truth != expected):
            found = current() if callable(current) else current
            if found is not None and found.entry.version == expected:
                old_sha = sha256(found.data)
                if last is None or last.sha256 != old_sha:  # 1. found
                    text = self._keep(old_sha, found.data)
                    rec = Record(
                        iso(found.entry.mtime),
                        target.rel,
                        old_sha,
                        len(found.data),
                        note=FOUND,
                        text=text,
                    )
                    truth.append(target.log, rec.line())
                    count, oldest, last = count + 1, oldest or rec, rec
        if last is not None and last.sha256 == new_sha:
            return truth.rewrite(target.rel, data, expected=expected)  # the same content
        text = self._keep(new_sha, data)  # 2. blob (or the record's text)
        # 3. replace; a record carrying the content follows (a hot file): the rename
        # needs no folder sync of its own, the record's makes the content durable
        settled = text is None or expected == MISSING or log is None  # a name made now
        written = truth.rewrite(target.rel, data, expected=expected, sync_folder=settled)
        now = origin()
        rec = Record(
            iso(now_ts()),
            target.rel,
            new_sha,
            len(data),
            author.by,
            author.role,
            now.surface,
            now.note,
            written.version,
            text,
        )
        truth.append(target.log, rec.line())  # 4. record
        self.due = self.retention.due(count + 1, oldest or rec, time.time())
        return written

    def prune(self, now: float | None = None, *, sweep: bool = False) -> list[Record]:
        """Apply retention (the caller holds the file's lock); returns the records dropped.
        `sweep` also removes old blobs no record names (a listing of the folder)."""
        now = time.time() if now is None else now
        with self.truth.lock(self.target.log):
            found = self.truth.read(self.target.log)
            if found is None:
                return []
            records = parse_log(found.data)
            drop = set(self.retention.dropped(records, now))
            if drop:
                kept = [r for i, r in enumerate(records) if i not in drop]
                self.truth.rewrite(self.target.log, encode_log(kept), expected=found.entry.version)
            else:
                kept = records
        gone = [records[i] for i in sorted(drop)]
        self._remove_blobs({r.sha256 for r in gone}, {r.sha256 for r in kept}, now, sweep)
        return gone

    def _remove_blobs(self, dropped: set[str], kept: set[str], now: float, sweep: bool) -> None:
        """Remove the blobs only dropped records named, and (`sweep`) blobs no record
        names that are older than ORPHAN_GRACE_S."""
        for sha in dropped - kept:
            if self.truth.stat(self.target.blob(sha)) is not None:  # (not a record's text)
                self.truth.move(self.target.blob(sha), None)
        if not sweep:
            return
        prefix = f"{self.target.folder}/"
        for e in self.truth.list(self.target.folder, recursive=False):
            name = e.path[len(prefix) :]
            if not e.is_dir and name != LOG and name not in kept and now - e.mtime > ORPHAN_GRACE_S:
                self.truth.move(e.path, None)

    def rewrite(self, change: Callable[[Record, bytes], bytes | None]) -> list[tuple[Record, str]]:
        """Change every kept content with `change(record, bytes)`: new bytes (kept under
        their own sha256), the same bytes, or None (the version is dropped). The caller
        holds the file's lock. Returns (old record, "dropped" or the new id) per change.
        A purge does this: the content purged leaves every version holding it."""
        with self.truth.lock(self.target.log):
            found = self.truth.read(self.target.log)
            if found is None:
                return []
            records = parse_log(found.data)
            done: dict[str, str | None] = {}  # sha -> new sha (None: dropped)
            texts: dict[str, str | None] = {}  # new sha -> the text its records carry
            for r in records:
                if r.sha256 in done:
                    continue
                data = self.blob(r.sha256)
                new = change(r, data) if data is not None else None
                if new is None:
                    done[r.sha256] = None
                elif new != data:
                    done[r.sha256] = sha256(new)
                    texts[sha256(new)] = self._keep(done[r.sha256] or "", new)
            if not any(done.get(r.sha256, r.sha256) != r.sha256 for r in records):
                return []
            out: list[tuple[Record, str]] = []
            kept: list[Record] = []
            for r in records:
                if r.sha256 not in done or done[r.sha256] == r.sha256:
                    kept.append(r)
                    continue
                new_sha = done[r.sha256]
                out.append((r, "dropped" if new_sha is None else new_sha[:ID_CHARS]))
                if new_sha is not None:
                    text = texts.get(new_sha)
                    data = text.encode("utf-8") if text is not None else self.blob(new_sha) or b""
                    kept.append(replace(r, sha256=new_sha, size=len(data), truth=None, text=text))
            self.truth.rewrite(self.target.log, encode_log(kept), expected=found.entry.version)
        old = {r.sha256 for r, _ in out}
        self._remove_blobs(old, {r.sha256 for r in kept}, 0.0, False)
        return out

    def remove(self) -> bool:
        """Remove the whole history (a purged file); False if there was none."""
        if self.truth.stat(self.target.folder) is None:
            return False
        with self.truth.lock(self.target.log):
            self.truth.move(self.target.folder, None)
        return True


def merge_logs(ours: bytes, theirs: bytes) -> bytes:
    """Two history logs of one file as one: every record of both, once, by time (an
    import adds an archive's versions to the store's; neither side's is lost)."""
    seen: dict[tuple[str, str], Record] = {}
    for rec in [*parse_log(ours), *parse_log(theirs)]:
        seen.setdefault((rec.ts, rec.sha256), rec)
    return encode_log(sorted(seen.values(), key=lambda r: (r.epoch, r.ts)))


def as_dict(rec: Record) -> dict[str, Any]:
    return {k: v for k, v in rec.__dict__.items() if k not in ("truth", "text")}
