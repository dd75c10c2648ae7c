"""Stored embeddings and exact cosine search over them.

Table `vectors` keeps one row per (uid, model id): the dimension, the sha256 of
the embedded text and the float32 vector. Like simonw/llm, text whose hash did
not change is never embedded again, and vectors of different models never mix.

Search is exact, not approximate: at agent-memory sizes (1e4..1e6) one float32
matrix product is a few milliseconds and gives perfect recall, with no ANN
index to build, tune or corrupt. The matrix lives in memory, rows normalised
once at load so that cosine is a dot product:

    cos(q, d) = (q / ||q||) . (d / ||d||)        top-k by argpartition, O(n)

To notice other processes' writes without a table scan, each write stores a
fresh random token in `meta['vectors:<model>:generation']`; a search compares
(token, max(rowid)), two index lookups, with the cached pair and reloads on a
difference. This object's own writes patch the matrix in place (amortised O(1)
append, swap-remove) instead. Embedding runs outside any transaction.

Which docs to look at comes from table `doc_changes` (a sequence number per uid,
bumped by triggers when a doc's text changes, it is added, (un)superseded or
deleted): `catch_up` reads the changes past its watermark, embeds the texts
whose hash differs from the stored one and drops the vectors of deleted docs.
"""

from __future__ import annotations

import array
import hashlib
import itertools
import sys
import threading
import uuid
from collections.abc import Collection, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from memstrata.errors import MalformedInput, MemstrataError, ProviderError

if TYPE_CHECKING:
    import sqlite3

    from memstrata.embed.base import Embedder
    from memstrata.index.db import Database

BATCH = 64
LOOKUP_CHUNK = 512
State = tuple[str | None, int | None]
_SET_META = "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)"
_UPSERT = (
    "INSERT OR REPLACE INTO vectors(uid, model, dim, content_hash, vector) VALUES (?, ?, ?, ?, ?)"
)
_LIVE_DOCS = "SELECT uid, title || char(10) || body FROM docs WHERE superseded = 0"
_TOP_CHANGE = "SELECT coalesce(max(seq), 0) FROM doc_changes"
_CHANGES = (
    "SELECT c.seq, c.uid, d.title || char(10) || d.body, d.superseded FROM doc_changes c "
    "LEFT JOIN docs d ON d.uid = c.uid WHERE c.seq > ? AND c.seq <= ? ORDER BY c.seq"
)
_STATE = "SELECT (SELECT value FROM meta WHERE key = ?), (SELECT max(rowid) FROM vectors)"
_ROWS = "SELECT uid, vector FROM vectors WHERE model = ? AND dim = ?"
_ORPHANS = "SELECT uid FROM vectors v WHERE model = ? AND NOT EXISTS (SELECT 1 FROM docs d WHERE d.uid = v.uid)"


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


def _chunks(items: Iterable[tuple[str, str]], size: int) -> Iterator[list[tuple[str, str]]]:
    it = iter(items)
    while chunk := list(itertools.islice(it, size)):
        yield chunk


class _Matrix:
    """Row-normalised float32 matrix with uid <-> row maps and spare capacity."""

    def __init__(self, np: Any, dim: int, state: State) -> None:
        self.np, self.dim, self.state = np, dim, state
        self.buf = np.zeros((0, dim), dtype=np.float32)
        self.uids: list[str] = []
        self.pos: dict[str, int] = {}

    def _unit(self, blobs: list[bytes]) -> Any:
        np = self.np
        m = np.frombuffer(bytearray().join(blobs), dtype="<f4").reshape(-1, self.dim)
        if m.dtype != np.float32:  # big-endian host
            m = m.astype(np.float32)
        sq = np.einsum("ij,ij->i", m, m)
        bad = ~np.isfinite(sq)  # a broken row can never match
        m[bad], sq[bad] = 0.0, 1.0
        sq[sq == 0] = 1.0
        m *= (1.0 / np.sqrt(sq))[:, None]
        return m

    def upsert(self, items: Iterable[tuple[str, bytes]]) -> None:
        latest = {u: b for u, b in items if len(b) == 4 * self.dim}
        if not latest:
            return
        uids, blobs = list(latest), list(latest.values())
        unit = self._unit(blobs)
        if not self.uids:  # a load: take the matrix as it is
            self.buf, self.uids = unit, uids
            self.pos = {u: i for i, u in enumerate(uids)}
            return
        fresh = [i for i, u in enumerate(uids) if u not in self.pos]
        for i, u in enumerate(uids):
            if u in self.pos:
                self.buf[self.pos[u]] = unit[i]
        n, need = len(self.uids), len(self.uids) + len(fresh)
        if need > len(self.buf):
            grown = self.np.empty((max(need, 2 * len(self.buf), 1024), self.dim), self.np.float32)
            grown[:n] = self.buf[:n]
            self.buf = grown
        self.buf[n:need] = unit[fresh]
        for j, i in enumerate(fresh):
            self.pos[uids[i]] = n + j
            self.uids.append(uids[i])

    def remove(self, uids: Iterable[str]) -> None:
        for uid in uids:
            i = self.pos.pop(uid, None)
            if i is None:
                continue
            last = self.uids.pop()
            if last != uid:  # swap the last row into the hole
                self.buf[i] = self.buf[len(self.uids)]
                self.uids[i] = last
                self.pos[last] = i


class VectorIndex:
    """Embeddings of one embedder's model, kept in SQLite and searched exactly.

    Args:
        db: The index database (table `vectors`).
        embedder: Provides `model_id`, `dim` and `embed`.
        batch_size: Texts per `embed` call during `sync`.

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
        self._lock = threading.Lock()  # guards _cache; never held while waiting on the db
        self._cache: _Matrix | None = None

    def _changed(self, chunk: list[tuple[str, str]]) -> list[tuple[str, str, str]]:
        latest: dict[str, str] = {}
        for uid, text in chunk:
            if not isinstance(uid, str) or not isinstance(text, str):
                raise MalformedInput(f"vector docs must be (uid, text) strings, got {uid!r}")
            latest[uid] = text
        sql = "SELECT uid, content_hash FROM vectors WHERE model = ? AND dim = ? AND uid IN "
        with self.db.read() as conn:
            args = [self.model, self.embedder.dim, *latest]
            known = dict(conn.execute(sql + f"({','.join('?' * len(latest))})", args))
        hashed = ((u, t, content_hash(t)) for u, t in latest.items())
        return [(u, t, h) for u, t, h in hashed if known.get(u) != h]

    def sync(self, docs: Iterable[tuple[str, str]]) -> int:
        """Embed and store the `(uid, text)` docs whose text changed; return how many.

        Raises:
            ProviderError: the embedder failed or misbehaved (earlier batches stay stored).
        """
        done = 0
        dim = self.embedder.dim
        for chunk in _chunks(docs, LOOKUP_CHUNK):
            todo = self._changed(chunk)
            for i in range(0, len(todo), self.batch_size):
                part = todo[i : i + self.batch_size]
                vecs = self.embedder.embed([t for _, t, _ in part])
                if len(vecs) != len(part) or any(len(v) != dim for v in vecs):
                    msg = f"{len(vecs)} vectors for {len(part)} texts, or not of dim {dim}"
                    raise ProviderError(f"{self.model}: {msg}")
                rows = [(u, h, _pack(v)) for (u, _, h), v in zip(part, vecs, strict=True)]
                self._write(rows, [])
                done += len(part)
        return done

    def remove(self, uids: Iterable[str]) -> int:
        """Delete this model's vectors for `uids`; return how many rows went."""
        return self._write([], list(uids))

    def sync_all(self) -> int:
        """Embed every live doc of table `docs` and drop vectors of docs that are gone.

        Also advances the change watermark of `catch_up` past every change seen.
        """
        with self.db.read() as conn:
            top = int(conn.execute(_TOP_CHANGE).fetchone()[0])
            docs = conn.execute(_LIVE_DOCS).fetchall()
            gone = [r[0] for r in conn.execute(_ORPHANS, (self.model,))]
        n = self.sync(docs)
        self.remove(gone)
        self._set_watermark(top)
        return n

    def catch_up(self) -> int:
        """Embed the docs whose text changed since the last catch-up; drop deleted ones.

        Returns how many texts were embedded (unchanged text never is).
        """
        with self.db.read() as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = ?", (self._seq_key,)).fetchone()
            since = int(row[0]) if row else 0
            top = int(conn.execute(_TOP_CHANGE).fetchone()[0])
            if top <= since:
                return 0
            changes = conn.execute(_CHANGES, (since, top)).fetchall()
        live = [(uid, text) for _, uid, text, hidden in changes if text is not None and not hidden]
        gone = [uid for _, uid, text, _ in changes if text is None]
        n = self.sync(live)
        self.remove(gone)
        self._set_watermark(top)
        return n

    def _set_watermark(self, top: int) -> None:
        with self.db.write() as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = ?", (self._seq_key,)).fetchone()
            if row is None or int(row[0]) < top:  # another process may have gone further
                conn.execute(_SET_META, (self._seq_key, str(top)))

    def _write(self, rows: list[tuple[str, str, bytes]], gone: list[str]) -> int:
        if not rows and not gone:
            return 0
        with self.db.write() as conn:
            before = self._state(conn)
            rows_sql = [(u, self.model, self.embedder.dim, h, b) for u, h, b in rows]
            conn.executemany(_UPSERT, rows_sql)
            sql = "DELETE FROM vectors WHERE uid = ? AND model = ?"
            removed = conn.executemany(sql, [(u, self.model) for u in gone]).rowcount if gone else 0
            if rows or removed:
                conn.execute(_SET_META, (self._token_key, uuid.uuid4().hex))
            after = self._state(conn)
        with self._lock:
            cache = self._cache
            if cache is not None and cache.state == before:
                cache.upsert((u, b) for u, _, b in rows)
                cache.remove(gone)
                cache.state = after
            elif before != after:
                self._cache = None
        return removed

    def _state(self, conn: sqlite3.Connection) -> State:
        token, top = conn.execute(_STATE, (self._token_key,)).fetchone()
        return token, top

    def _load(self, np: Any) -> _Matrix:
        dim = self.embedder.dim
        with self.db.read() as conn:
            state = self._state(conn)  # read first: a racing write can only make us reload again
            rows = conn.execute(_ROWS, (self.model, dim)).fetchall()
        matrix = _Matrix(np, dim, state)
        matrix.upsert(rows)
        return matrix

    def search(
        self, query_vector: Sequence[float], k: int, candidates: Collection[str] | None = None
    ) -> list[tuple[str, float]]:
        """The `k` stored docs most similar to `query_vector`, best first.

        Args:
            query_vector: A vector of this model's dimension (normalised here).
            k: How many results at most.
            candidates: Restrict the search to these uids (others are ignored).

        Returns:
            `(uid, cosine)` pairs sorted by cosine descending, then uid. Raises
            MalformedInput if the query vector has the wrong dimension.
        """
        np = _numpy()
        q = np.asarray(query_vector, dtype=np.float32).ravel()
        if q.shape != (self.embedder.dim,):
            raise MalformedInput(f"query has dim {q.size}, {self.model} has {self.embedder.dim}")
        norm = float(np.linalg.norm(q))
        if k <= 0 or not np.isfinite(norm) or norm == 0.0:
            return []
        q = q / norm
        with self.db.read() as conn:
            state = self._state(conn)
        cache = self._cache  # reading the pointer is atomic; rows change only under _lock
        if cache is None or cache.state != state:
            cache = self._load(np)
            with self._lock:
                self._cache = cache
        with self._lock:  # patches mutate rows in place
            if candidates is None:
                idx = None
                scores = cache.buf[: len(cache.uids)] @ q
            else:
                pos = cache.pos
                idx = np.fromiter((pos[u] for u in candidates if u in pos), dtype=np.int64)
                scores = cache.buf[idx] @ q
            if scores.size == 0:
                return []
            top = np.argpartition(-scores, k - 1)[:k] if k < scores.size else np.arange(scores.size)
            rows = top if idx is None else idx[top]
            uids = cache.uids
            out = [(uids[int(r)], float(scores[int(t)])) for r, t in zip(rows, top, strict=True)]
        out.sort(key=lambda p: (-p[1], p[0]))
        return out


__all__ = ["VectorIndex", "content_hash"]
