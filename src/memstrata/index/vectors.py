"""Stored embeddings of every memory's units, built in the background, searched exactly.

Table `vectors` keeps one row per (uid, model id, unit): the dimension, the
sha256 of the unit's text and its float32 vector (`index.units` says what a unit
is: the record whole, or one of its chunks). Like simonw/llm, a text whose hash is
already stored is never embedded again, whatever record it belongs to (a LOG entry
moved to an archive keeps its vector), and vectors of different models never mix.

Building (`build`) follows table `doc_changes` (a sequence number per uid, bumped by
triggers when a doc is added, its text changes, it is (un)superseded or deleted):
it takes the changes past its watermark a step at a time, embeds the unit texts
whose hash is new, and commits the step's vectors together with the advanced
watermark. A process killed mid-build loses at most the step it was embedding; the
next build resumes after the last committed step, and the unique key (uid, model,
unit) means a unit is never stored twice. One builder per index runs at a time (a
lock file beside it); another process that asks meanwhile returns at once.

A changed record's old vectors are never used: a search leaves out every record
changed past the watermark (the "dirty" ones) until the build has caught up with
it, and then uses its new vectors. Such a record is still found by its words.

Search is exact, not approximate: at agent-memory sizes one float32 matrix
product over every unit is a few milliseconds and misses nothing, with no ANN
index to build, tune or corrupt (`index.vector_matrix` scores units and windows).
The matrix lives in memory; each search compares (generation token, newest row
id, newest doc change, watermark) with what it loaded, four index lookups, and
reads only the rows added since (row ids only grow: AUTOINCREMENT). A deletion
changes the generation token, and the next search reloads everything.
"""

from __future__ import annotations

import array
import contextlib
import hashlib
import json
import sys
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstrata.embed.base import embeds_tokens
from memstrata.errors import MalformedInput, MemstrataError, ProviderError
from memstrata.index import tokens as token_vectors
from memstrata.index.units import ITEM_LAYERS, unit_texts
from memstrata.index.vector_matrix import Dense, Matrix, Record

if TYPE_CHECKING:
    import sqlite3

    from memstrata.embed.base import Embedder
    from memstrata.index.db import Database

BATCH = 64  # texts per embed call
QUERY_CACHE = 64  # query vectors remembered
STEP = 256  # doc changes per committed step of a build
LOOKUP_CHUNK = 500  # bound on SQL parameters per statement
Progress = Callable[[int, int], None]
_SET_META = "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)"
_GET_META = "SELECT value FROM meta WHERE key = ?"
_UPSERT = (
    "INSERT OR REPLACE INTO vectors(uid, model, unit, dim, content_hash, vector, tokens) "
    "VALUES (?, ?, ?, ?, ?, ?, ?)"
)
_TOKENS = (
    "SELECT v.uid, v.tokens FROM json_each(?) c CROSS JOIN vectors v ON v.uid = c.value "
    "WHERE v.model = ? AND v.dim = ? AND length(v.tokens) > 0 ORDER BY v.uid, v.unit"
)
_TOP_CHANGE = "SELECT coalesce(max(seq), 0) FROM doc_changes"
_CHANGES = (
    "SELECT c.seq, c.uid, d.title, d.body, d.superseded, d.layer FROM doc_changes c "
    "LEFT JOIN docs d ON d.uid = c.uid WHERE c.seq > ? ORDER BY c.seq LIMIT ?"
)
_PENDING = "SELECT count(*) FROM doc_changes WHERE seq > ?"
_ROWS = (
    "SELECT v.id, v.uid, v.unit, v.vector, coalesce(d.layer, ''), d.thread, d.pos FROM vectors v "
    "LEFT JOIN docs d ON d.uid = v.uid WHERE v.model = ? AND v.dim = ?"
)
_ORPHANS = (
    "SELECT DISTINCT uid FROM vectors v WHERE model = ? "
    "AND NOT EXISTS (SELECT 1 FROM docs d WHERE d.uid = v.uid)"
)


def content_hash(text: str) -> str:
    """sha256 hex digest of the UTF-8 text: what decides whether to re-embed."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _numpy() -> Any:
    try:
        import numpy
    except ImportError as exc:
        raise MemstrataError("vector search needs numpy: pip install 'memstrata[vectors]'") from exc
    return numpy


def _pack(vec: Sequence[float]) -> bytes:
    a = array.array("f", vec)
    if sys.byteorder == "big":  # stored little-endian, portable across machines
        a.byteswap()
    return a.tobytes()


def _chunked(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


Unit = tuple[str, int, str, str]  # uid, unit number, text, hash
Stored = tuple[bytes, bytes | None]  # a unit's vector and its token vectors (None: not computed)


class VectorIndex:
    """Embeddings of one embedder's model, kept in SQLite and searched exactly.

    Args:
        db: The index database (table `vectors`).
        embedder: Provides `model_id`, `dim` and `embed`.
        batch_size: Texts per `embed` call.

    Example:
        >>> vi = VectorIndex(db, FakeEmbedder(64)); vi.sync([("a", "red apple")])  # doctest: +SKIP
        >>> vi.search(vi.embedder.embed(["apple"])[0], k=1)  # doctest: +SKIP
        [('a', 0.7071...)]
    """

    def __init__(self, db: Database, embedder: Embedder, *, batch_size: int = BATCH) -> None:
        self.db = db
        self.embedder = embedder
        self.model = embedder.model_id
        self.batch_size = max(1, batch_size)
        self._token_key = f"vectors:{self.model}:generation"
        self._seq_key = f"vectors:{self.model}:synced_change"
        self._lock = threading.Lock()  # guards the cache; taken inside the db lock, never around it
        self._cache: _Cache | None = None
        self.embedded = 0  # texts this object embedded (what a build cost)
        self._queries: OrderedDict[str, tuple[list[float], Any]] = OrderedDict()
        self.tokens = embeds_tokens(embedder)  # keep token vectors (MaxSim, `index.tokens`)

    # -- building -----------------------------------------------------------
    def sync(self, docs: Iterable[tuple[str, str | Sequence[str]]]) -> int:
        """Embed and store the `(uid, text)` docs whose unit texts changed; return how
        many texts were embedded. A text is cut into units (`index.units`); a sequence
        of strings is taken as the units themselves.

        Raises:
            ProviderError: the embedder failed or misbehaved (earlier steps stay stored).
        """
        latest: dict[str, list[str]] = {}
        for uid, text in docs:
            if not isinstance(uid, str) or not isinstance(text, str | list | tuple):
                raise MalformedInput(f"vector docs must be (uid, text) strings, got {uid!r}")
            units = unit_texts("", text) if isinstance(text, str) else list(text)
            if not all(isinstance(u, str) for u in units):
                raise MalformedInput(f"vector units of {uid!r} must be strings")
            latest[uid] = units
        done = 0
        items = list(latest.items())
        for part in _chunked(items, STEP):
            done += self._step(dict(part), [], None)
        return done

    def remove(self, uids: Iterable[str]) -> int:
        """Delete this model's vectors for `uids`; return how many rows went."""
        return self._write([], list(uids), [], None)

    def pending(self) -> int:
        """Doc changes the vectors have not caught up with yet."""
        with self.db.read() as conn:
            return int(conn.execute(_PENDING, (self._watermark(conn),)).fetchone()[0])

    def build(
        self,
        *,
        stop: Callable[[], bool] | None = None,
        progress: Progress | None = None,
        wait: bool = False,
        pause: Callable[[], None] | None = None,
    ) -> int:
        """Catch the vectors up with every doc change past the watermark, a committed
        step at a time; return how many texts were embedded.

        Args:
            stop: Asked between steps; True ends the build early (resumable).
            progress: Called with (changes done, changes pending at the start).
            wait: Wait for another process's build to finish instead of returning 0.
            pause: Called before each embedding batch (a background build lets the
                writes of a burst go first: `store.semantic`).
        """
        with self._builder_lock(wait) as mine:
            if not mine:
                return 0
            done_texts = 0
            done = 0
            total: int | None = None
            while stop is None or not stop():
                with self.db.read() as conn:
                    since = self._watermark(conn)
                    if total is None:
                        total = int(conn.execute(_PENDING, (since,)).fetchone()[0])
                        if progress is not None:
                            progress(0, total)
                    changes = conn.execute(_CHANGES, (since, STEP)).fetchall()
                if not changes:
                    break
                live: dict[str, list[str]] = {}
                gone: list[str] = []
                for _seq, uid, title, body, superseded, layer in changes:
                    if title is None:
                        gone.append(uid)
                        live.pop(uid, None)
                    elif not superseded:
                        live[uid] = unit_texts(title, body, items=layer in ITEM_LAYERS)
                    else:
                        live.pop(uid, None)
                done_texts += self._step(live, gone, int(changes[-1][0]), pause)
                done += len(changes)
                if progress is not None:
                    progress(min(done, max(total, done)), max(total, done))
            return done_texts

    def catch_up(self) -> int:
        """`build()` until nothing is pending; returns how many texts were embedded."""
        return self.build()

    def sync_all(self, progress: Progress | None = None) -> int:
        """Drop the vectors of docs that are gone, then build from the first change.

        Every live doc has a change row (docs are inserted through the triggers), so
        this looks at every doc and embeds only the unit texts whose hash is new.
        """
        with self.db.read() as conn:
            gone = [r[0] for r in conn.execute(_ORPHANS, (self.model,))]
        self.remove(gone)
        with self._builder_lock(True), self.db.write() as conn:
            conn.execute(_SET_META, (self._seq_key, "0"))
        return self.build(progress=progress, wait=True)

    @contextlib.contextmanager
    def _builder_lock(self, wait: bool) -> Iterator[bool]:
        """One builder per index file: an flock on `<index>.vectors.lock` (True if ours)."""
        import fcntl

        path = Path(f"{self.db.path}.vectors.lock")
        try:
            f = open(path, "a+b")  # noqa: SIM115 - closed below
        except OSError:
            yield True  # a read-only folder: nothing to coordinate with
            return
        try:
            try:
                fcntl.flock(f, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                yield False
                return
            yield True
        finally:
            f.close()

    def _step(
        self,
        live: dict[str, list[str]],
        gone: list[str],
        mark: int | None,
        pause: Callable[[], None] | None = None,
    ) -> int:
        """Store `live` docs' units (embedding only new hashes), drop `gone` docs'
        vectors and set the watermark to `mark`, in one transaction after embedding.
        With an embedder that gives token vectors, a unit stored without them (NULL)
        is embedded again; units past `tokens.UNITS` keep none (an empty blob)."""
        dim = self.embedder.dim
        want: list[Unit] = [
            (uid, i, text, content_hash(text))
            for uid, units in live.items()
            for i, text in enumerate(units)
        ]
        have = self._stored(list(live))
        todo = [u for u in want if not self._current(have.get((u[0], u[1])), u)]
        reuse = self._by_hash(list({u[3] for u in todo}))
        new_texts = list(
            {u[3]: u[2] for u in todo if not self._reusable(reuse.get(u[3]), u)}.items()
        )
        np = _numpy() if self.tokens else None
        for part in _chunked(new_texts, self.batch_size):
            if pause is not None:
                pause()
            texts = [t for _, t in part]
            if self.tokens:
                vecs, toks = self.embedder.embed_tokens(texts)  # type: ignore[attr-defined]
            else:
                vecs, toks = self.embedder.embed(texts), [None] * len(part)
            if len(vecs) != len(part) or any(len(v) != dim for v in vecs) or len(toks) != len(part):
                msg = f"{len(vecs)} vectors for {len(part)} texts, or not of dim {dim}"
                raise ProviderError(f"{self.model}: {msg}")
            for (h, _), v, t in zip(part, vecs, toks, strict=True):
                reuse[h] = (_pack(v), token_vectors.pack(np, t) if np is not None else None)
        self.embedded += len(new_texts)
        rows = [(uid, i, h, *self._row(reuse[h], i)) for uid, i, _t, h in todo]
        extra = [(uid, len(units)) for uid, units in live.items()]
        self._write(rows, gone, extra, mark)
        return len(new_texts)

    def _current(self, got: tuple[str, bool] | None, u: Unit) -> bool:
        """Is what is stored for this uid and unit (text hash, token vectors computed)
        all this unit needs?"""
        if got is None or got[0] != u[3]:
            return False
        return not self.tokens or got[1]

    def _reusable(self, got: Stored | None, u: Unit) -> bool:
        """Can a vector stored for the same text (under any uid) serve this unit?"""
        if got is None:
            return False
        blob = got[1]
        if not self.tokens:
            return True
        return blob is not None and (len(blob) > 0 or u[1] >= token_vectors.UNITS)

    def _row(self, got: Stored, unit: int) -> tuple[bytes, bytes | None]:
        vec, toks = got
        if not self.tokens:
            return vec, None
        return vec, (toks or b"") if unit < token_vectors.UNITS else b""

    def _stored(self, uids: list[str]) -> dict[tuple[str, int], tuple[str, bool]]:
        """(uid, unit) -> (text hash, token vectors computed) of what is stored."""
        out: dict[tuple[str, int], tuple[str, bool]] = {}
        sql = (
            "SELECT uid, unit, content_hash, tokens IS NOT NULL FROM vectors "
            "WHERE model = ? AND dim = ? AND uid IN "
        )
        with self.db.read() as conn:
            for part in _chunked(uids, LOOKUP_CHUNK):
                args = [self.model, self.embedder.dim, *part]
                for uid, unit, h, t in conn.execute(sql + f"({','.join('?' * len(part))})", args):
                    out[(uid, int(unit))] = (h, bool(t))
        return out

    def _by_hash(self, hashes: list[str]) -> dict[str, Stored]:
        """text hash -> a stored (vector, tokens), preferring a row whose tokens are set."""
        out: dict[str, Stored] = {}
        sql = (
            "SELECT content_hash, vector, tokens FROM vectors "
            "WHERE model = ? AND dim = ? AND content_hash IN "
        )
        with self.db.read() as conn:
            for part in _chunked(hashes, LOOKUP_CHUNK):
                args = [self.model, self.embedder.dim, *part]
                for h, vec, toks in conn.execute(sql + f"({','.join('?' * len(part))})", args):
                    old = out.get(h)
                    if old is None or len(toks or b"") > len(old[1] or b""):
                        out[h] = (vec, toks)
        return out

    def _write(
        self,
        rows: list[tuple[str, int, str, bytes, bytes | None]],
        gone: list[str],
        extra: list[tuple[str, int]],
        mark: int | None,
    ) -> int:
        """Upsert `rows`, delete `gone` uids and units past each `extra` (uid, count),
        advance the watermark to `mark`; a deletion changes the generation token."""
        dim = self.embedder.dim
        with self.db.write() as conn:
            conn.executemany(_UPSERT, [(u, self.model, i, dim, h, b, t) for u, i, h, b, t in rows])
            removed = 0
            for uid in gone:
                removed += conn.execute(
                    "DELETE FROM vectors WHERE uid = ? AND model = ?", (uid, self.model)
                ).rowcount
            for uid, count in extra:
                removed += conn.execute(
                    "DELETE FROM vectors WHERE uid = ? AND model = ? AND unit >= ?",
                    (uid, self.model, count),
                ).rowcount
            if removed:
                conn.execute(_SET_META, (self._token_key, uuid.uuid4().hex))
            if mark is not None and mark > self._watermark(conn):
                conn.execute(_SET_META, (self._seq_key, str(mark)))  # never backwards
        return removed

    def _watermark(self, conn: sqlite3.Connection) -> int:
        row = conn.execute(_GET_META, (self._seq_key,)).fetchone()
        return int(row[0]) if row else 0

    # -- searching ----------------------------------------------------------
    def _state(self, conn: sqlite3.Connection) -> tuple[Any, ...]:
        return tuple(
            conn.execute(
                "SELECT (SELECT value FROM meta WHERE key = ?), "
                "(SELECT coalesce(max(id), 0) FROM vectors), "
                f"({_TOP_CHANGE}), (SELECT value FROM meta WHERE key = ?)",
                (self._token_key, self._seq_key),
            ).fetchone()
        )

    def matrix(self) -> Matrix:
        """The records' vectors as of now (dirty records left out), loaded or refreshed."""
        np = _numpy()
        with self.db.read() as conn:
            state = self._state(conn)
            with self._lock:
                cache = self._cache
                if cache is not None and cache.state == state:
                    return cache.matrix
                if cache is None or cache.state[0] != state[0]:
                    cache = _Cache(self.model, self.embedder.dim)
                cache.refresh(np, conn, state)
                self._cache = cache
                return cache.matrix

    def query_vector(self, query_vector: Sequence[float]) -> Any:
        """`query_vector` as a unit float32 array, or None if it is zero or not finite.

        Raises MalformedInput if it has the wrong dimension.
        """
        np = _numpy()
        q = np.asarray(query_vector, dtype=np.float32).ravel()
        if q.shape != (self.embedder.dim,):
            raise MalformedInput(f"query has dim {q.size}, {self.model} has {self.embedder.dim}")
        norm = float(np.linalg.norm(q))
        if not np.isfinite(norm) or norm == 0.0:
            return None
        return q / norm

    def embed_query(self, text: str) -> list[float]:
        """The query's vector (the last QUERY_CACHE queries are remembered)."""
        return self._query(text)[0]

    def query_tokens(self, text: str) -> Any:
        """The query's projected unit token vectors (`index.tokens.project`), an array
        (pieces, DIMS); None when the embedder gives no token vectors."""
        return self._query(text)[1]

    def _query(self, text: str) -> tuple[list[float], Any]:
        with self._lock:
            hit = self._queries.get(text)
            if hit is not None:
                self._queries.move_to_end(text)
                return hit
        if self.tokens:
            vecs, toks = self.embedder.embed_tokens([text])  # type: ignore[attr-defined]
            got = (vecs[0], token_vectors.project(_numpy(), toks[0]))
        else:
            got = (self.embedder.embed([text])[0], None)
        with self._lock:
            self._queries[text] = got
            while len(self._queries) > QUERY_CACHE:
                self._queries.popitem(last=False)
        return got

    def token_sets(self, uids: Iterable[str]) -> dict[str, list[Any]]:
        """uid -> its units' stored token vectors (`index.tokens.unpack`, unit order), for
        the `uids` that have any. The caller passes records of the loaded matrix only
        (`matrix().index`), so a changed record's old token vectors are never used."""
        np = _numpy()
        want = sorted(set(uids))
        out: dict[str, list[Any]] = {}
        if not want or not self.tokens:
            return out
        with self.db.read() as conn:
            got = [
                (uid, blob)
                for part in _chunked(want, LOOKUP_CHUNK)
                for uid, blob in conn.execute(
                    _TOKENS, (json.dumps(list(part)), self.model, self.embedder.dim)
                )
            ]
        arrays = token_vectors.unpack_all(np, [blob for _uid, blob in got])
        for (uid, _blob), a in zip(got, arrays, strict=True):
            out.setdefault(uid, []).append(a)
        return out

    def pending_records(self) -> int:
        """Records left out of the last loaded matrix: changed past the watermark."""
        cache = self._cache
        return len(cache.dirty) if cache is not None else 0

    def nearest(
        self, query_vector: Sequence[float], k: int, *, layers: Iterable[str] | None = None
    ) -> list[Dense]:
        """The `k` records with the best dense score (`vector_matrix`), best first."""
        q = self.query_vector(query_vector)
        if q is None or k <= 0:
            return []
        m = self.matrix()
        return m.top(q, k, allowed=m.mask(layers=layers) if layers is not None else None)

    def search(
        self, query_vector: Sequence[float], k: int, candidates: Iterable[str] | None = None
    ) -> list[tuple[str, float]]:
        """The `k` stored docs most similar to `query_vector`: `(uid, score)` pairs,
        score descending, then uid; `candidates` restricts the search to those uids."""
        q = self.query_vector(query_vector)
        if q is None or k <= 0:
            return []
        m = self.matrix()
        if candidates is None:
            got = m.top(q, k)
        else:
            got = sorted(m.of(q, candidates).values(), key=lambda d: (-d.score, d.uid))[:k]
        return [(d.uid, d.score) for d in got]


class _Cache:
    """The loaded matrix of one model, and what it was loaded from."""

    def __init__(self, model: str, dim: int) -> None:
        self.model, self.dim = model, dim
        self.records: dict[str, Record] = {}
        self.dirty: dict[str, int] = {}  # uid -> its newest change past the watermark
        self.last_id = 0
        self.last_change = 0
        self.state: tuple[Any, ...] = (None, None, None, None)
        self.matrix: Matrix = Matrix(_numpy(), dim, {})
        self.loaded = False

    def refresh(self, np: Any, conn: sqlite3.Connection, state: tuple[Any, ...]) -> None:
        _token, top_id, top_change, mark = state
        watermark = int(mark) if mark else 0
        if not self.loaded:  # only changes past the watermark can make a record dirty
            self.last_change = watermark
            self._reload(np, conn, None)
            self.last_id, self.loaded = int(top_id), True
        elif top_id > self.last_id:
            touched = {
                r[0]
                for r in conn.execute(
                    "SELECT DISTINCT uid FROM vectors WHERE model = ? AND id > ?",
                    (self.model, self.last_id),
                )
            }
            self._reload(np, conn, touched)
            self.last_id = int(top_id)
        if top_change > self.last_change:
            for seq, uid in conn.execute(
                "SELECT seq, uid FROM doc_changes WHERE seq > ? AND seq <= ?",
                (self.last_change, top_change),
            ):
                self.dirty[uid] = int(seq)
            self.last_change = int(top_change)
        self.dirty = {u: s for u, s in self.dirty.items() if s > watermark}
        live = {u: r for u, r in self.records.items() if u not in self.dirty}
        self.matrix = Matrix(np, self.dim, live)
        self.state = state

    def _reload(self, np: Any, conn: sqlite3.Connection, touched: set[str] | None) -> None:
        """Re-read every row of the `touched` uids (None: every row, a first load)."""
        first = touched is None
        sql = _ROWS if first else _ROWS + " AND v.uid IN "
        uids = sorted(touched or ())
        parts: Iterable[Sequence[str]] = [()] if first else _chunked(uids, LOOKUP_CHUNK)
        for u in uids:
            self.records.pop(u, None)
        for part in parts:
            args: list[Any] = [self.model, self.dim, *part]
            tail = "" if first else f"({','.join('?' * len(part))})"
            for _id, uid, unit, blob, layer, thread, pos in conn.execute(sql + tail, args):
                if len(blob) != 4 * self.dim:
                    continue
                vec = np.frombuffer(blob, dtype="<f4")
                rec = self.records.get(uid)
                if rec is None:
                    rec = self.records[uid] = Record({}, layer, thread, pos)
                rec.units[int(unit)] = vec


__all__ = ["VectorIndex", "content_hash"]
