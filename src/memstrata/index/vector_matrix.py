"""The vectors of one model in memory, and a record's dense score: max over its units
and the windows of messages around it.

Rows are unit vectors (a record whole, or one of its chunks: `index.units`),
normalised once so that cosine is a dot product. A record's own vector is the
normalised mean of its units. Messages of a thread (session and channel
transcripts) also get windows: the record with its neighbours within r positions,
as the normalised sum of their record vectors. Cosine being linear, a window's
score needs no vector of its own:

    m_j        = q . record_j                         (one product per record)
    window_r(i) = sum_{|pos_j - pos_i| <= r} m_j / || sum record_j ||
    dense(i)   = max( max_u q . unit_u(i), window_1(i), window_2(i) )

so windows cost no embedding and no storage, and a message that arrives later
changes its neighbours' windows without re-embedding anything. Windows are kept for
short messages only (one unit): a long message already carries its own context,
and a window of long neighbours would average it away.

The structure is rebuilt from per-record rows (`Rows`) when they change; building
is vectorised NumPy (a 10k-record store builds in milliseconds).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from memstrata.values import value_type

WINDOWS = (1, 2)
WINDOW_LAYERS = frozenset({"session", "channel"})


@value_type
class Record:
    """What the matrix keeps of one record: its unit vectors and where it sits."""

    units: dict[int, Any]  # unit number -> float32 vector (not normalised)
    layer: str
    thread: str | None
    pos: int | None


@value_type(frozen=True)
class Dense:
    """One record's dense score and what gave it: `unit` (its n-th unit) or `window`."""

    uid: str
    score: float
    source: str  # "unit" | "window"
    detail: int  # the unit number, or the window radius
    units: int  # how many units the record has


class Matrix:
    """Unit matrix, record vectors and thread windows of a set of records.

    Args:
        np: The numpy module (imported by the caller, so importing this is free).
        dim: Vector dimension.
        records: uid -> `Record`.
    """

    def __init__(self, np: Any, dim: int, records: Mapping[str, Record]) -> None:
        self.np, self.dim = np, dim
        self.uids = sorted(records)
        self.index = {u: i for i, u in enumerate(self.uids)}
        n = len(self.uids)
        counts = np.array([len(records[u].units) for u in self.uids], dtype=np.int64)
        self.counts = counts
        self.starts = (np.cumsum(counts) - counts).astype(np.int64)
        self.seg = np.repeat(np.arange(n, dtype=np.int64), counts)  # unit row -> record
        blobs = [records[u].units[k] for u in self.uids for k in sorted(records[u].units)]
        self.unit_no = np.array(
            [k for u in self.uids for k in sorted(records[u].units)], dtype=np.int64
        )
        units = np.array(blobs, dtype=np.float32).reshape(-1, dim)
        self.units = _unit_rows(np, units)
        sums = np.add.reduceat(self.units, self.starts, axis=0) if n else units[:0]
        self.vectors = _unit_rows(np, sums)
        layers = sorted({records[u].layer for u in self.uids})
        self.layer_names = layers
        code = {name: i for i, name in enumerate(layers)}
        self.layer = np.array([code[records[u].layer] for u in self.uids], dtype=np.int64)
        self.windows = self._windows(records)

    def _windows(self, records: Mapping[str, Record]) -> dict[int, tuple[Any, Any]]:
        """radius -> (neighbour index matrix, norm of the window's vector sum)."""
        np = self.np
        n = len(self.uids)
        short = [
            i
            for i, u in enumerate(self.uids)
            if records[u].layer in WINDOW_LAYERS
            and records[u].thread is not None
            and records[u].pos is not None
            and self.counts[i] == 1
        ]
        out: dict[int, tuple[Any, Any]] = {}
        if not short:
            return out
        # order the windowed records by (thread, pos): neighbours are adjacent rows
        threads = {records[self.uids[i]].thread for i in short}
        tcode = {t: k for k, t in enumerate(sorted(threads, key=str))}
        key_t = np.array([tcode[records[self.uids[i]].thread] for i in short], dtype=np.int64)
        key_p = np.array([records[self.uids[i]].pos for i in short], dtype=np.int64)
        order = np.lexsort((key_p, key_t))
        rows = np.array(short, dtype=np.int64)[order]
        th = key_t[order]
        m = len(rows)
        for r in WINDOWS:
            offsets = np.arange(-r, r + 1)
            idx = np.arange(m)[:, None] + offsets[None, :]
            inside = (idx >= 0) & (idx < m)
            idx = np.clip(idx, 0, m - 1)
            same = inside & (th[idx] == th[:, None])
            nb = np.where(same, rows[idx], n)  # n: the zero row padded in at search time
            full = np.full((n, 2 * r + 1), n, dtype=np.int64)
            full[rows] = nb
            padded = np.vstack([self.vectors, np.zeros((1, self.dim), np.float32)])
            norm = np.linalg.norm(padded[full].sum(axis=1), axis=1)
            norm[norm == 0] = np.inf  # no window: scores 0, never the max of a real match
            has = np.zeros(n, dtype=bool)
            has[rows] = True
            norm[~has] = np.inf
            out[r] = (full, norm)
        return out

    def __len__(self) -> int:
        return len(self.uids)

    def score(
        self,
        q: Any,
        *,
        allowed: Any = None,
    ) -> tuple[Any, Any, Any]:
        """Dense score of every record for the unit query vector `q`.

        Returns (score, source, detail) arrays over records: source 0 = a unit,
        r > 0 = the window of radius r; detail = the unit number for units. Records
        not `allowed` (a boolean mask) score -inf.
        """
        np = self.np
        n = len(self.uids)
        if n == 0:
            empty = np.zeros(0)
            return empty, empty.astype(np.int64), empty.astype(np.int64)
        # einsum, not `@`: a matrix-vector product this small runs in one thread either
        # way, and BLAS's threads spinning on a loaded machine made it 10-50x slower
        su = np.einsum("ij,j->i", self.units, q)
        best = np.maximum.reduceat(su, self.starts)
        detail = self.unit_no[self._argmax(su, best)]
        source = np.zeros(n, dtype=np.int64)
        if self.windows:
            m = np.append(np.einsum("ij,j->i", self.vectors, q), 0.0)
            for r, (nb, norm) in self.windows.items():
                w = m[nb].sum(axis=1) / norm
                better = w > best
                best = np.where(better, w, best)
                source = np.where(better, r, source)
        if allowed is not None:
            best = np.where(allowed, best, -np.inf)
        return best, source, detail

    def _argmax(self, su: Any, best: Any) -> Any:
        """The row of each record's best unit (its first on a tie): the first row of the
        record whose score is the record's max. Vectorised: a Python loop over the
        records of several units cost 2-5 ms a search per thousand long records (a
        store of assistant answers), the matrix product itself less."""
        np = self.np
        if len(self.seg) == len(best):  # every record is one unit
            return self.starts
        hit = np.flatnonzero(su == best[self.seg])
        owner = self.seg[hit]
        first = np.ones(len(hit), dtype=bool)
        first[1:] = owner[1:] != owner[:-1]
        arg = self.starts.copy()
        arg[owner[first]] = hit[first]
        return arg

    def top(self, q: Any, k: int, *, allowed: Any = None) -> list[Dense]:
        """The `k` best records for `q` (dense score descending, then uid)."""
        return self.best(self.score(q, allowed=allowed), k)

    def best(self, scores: tuple[Any, Any, Any], k: int) -> list[Dense]:
        """The `k` best records of `scores` (from `score`), best first."""
        np = self.np
        best, source, detail = scores
        finite = np.flatnonzero(np.isfinite(best))
        if k <= 0 or finite.size == 0:
            return []
        vals = best[finite]
        if k < finite.size:
            part = np.argpartition(-vals, k - 1)[:k]
            finite = finite[part]
        out = [self._dense(int(i), best, source, detail) for i in finite]
        out.sort(key=lambda d: (-d.score, d.uid))
        return out

    def of(self, q: Any, uids: Iterable[str]) -> dict[str, Dense]:
        """The dense score for `q` of each of `uids` that has vectors."""
        return self.pick(self.score(q), uids)

    def pick(self, scores: tuple[Any, Any, Any], uids: Iterable[str]) -> dict[str, Dense]:
        """The entries of `scores` (from `score`) for `uids` that have vectors."""
        best, source, detail = scores
        got = {}
        for u in uids:
            i = self.index.get(u)
            if i is not None:
                got[u] = self._dense(i, best, source, detail)
        return got

    def _dense(self, i: int, best: Any, source: Any, detail: Any) -> Dense:
        src = int(source[i])
        return Dense(
            uid=self.uids[i],
            score=float(best[i]),
            source="unit" if src == 0 else "window",
            detail=int(detail[i]) if src == 0 else src,
            units=int(self.counts[i]),
        )

    def mask(self, *, layers: Iterable[str] | None, exclude: Iterable[str] = ()) -> Any:
        """Records of `layers` (None: any) not in `exclude`, as a boolean mask."""
        np = self.np
        allowed = np.ones(len(self.uids), dtype=bool)
        if layers is not None:
            wanted = [i for i, name in enumerate(self.layer_names) if name in set(layers)]
            allowed &= np.isin(self.layer, np.array(wanted, dtype=np.int64))
        for u in exclude:
            i = self.index.get(u)
            if i is not None:
                allowed[i] = False
        return allowed


def _unit_rows(np: Any, m: Any) -> Any:
    """Rows scaled to length 1; a zero or non-finite row becomes zeros (never matches)."""
    if m.size == 0:
        return m.astype(np.float32)
    m = np.array(m, dtype=np.float32)
    sq = np.einsum("ij,ij->i", m, m)
    bad = ~np.isfinite(sq) | (sq == 0)
    m[bad] = 0.0
    sq[bad] = 1.0
    m *= (1.0 / np.sqrt(sq))[:, None]
    return m
