"""Token vectors of a memory's units, stored small, and MaxSim over a candidate pool.

One pooled vector per unit says what a text is about on average; a question that
asks for one detail of a turn ("what did Caroline research?") matches that detail's
words in context better than the average. So the embedder's forward pass also keeps
each word piece's output vector (`BertEncoder.encode(tokens=...)`), and a candidate
gets a second meaning feature, late interaction as in ColBERT (Khattab & Zaharia 2020):

    maxsim(q, unit) = mean over the query's pieces i of  max over the unit's pieces j
                      of cos(q_i, t_j)
    maxsim(q, d)    = max over d's units with token vectors

computed for the candidates of one search only (the fused pool), in one NumPy
product over all their pieces (`search.maxsim`).

Storage (`pack`, `unpack`): each piece's unit vector goes through a fixed projection
to `DIMS` dimensions (a +-1 matrix read from SHAKE-256 of a constant: the same on
every machine and NumPy version, Johnson-Lindenstrauss keeps cosines up to noise
that the mean over the query's pieces averages out), then is scaled so that its
largest coordinate is +-127 and stored as int8: DIMS bytes a piece. Cosine ignores
the scale, so unpacking only renormalises. A record keeps token vectors for its
first `UNITS` units (a unit is at most 256 pieces, the model's window); the rest of a
long record is scored by its pooled vectors and words only (a stored empty blob says
"none by design", NULL "not computed yet"). What a record costs: DIMS bytes per word
piece (a short chat turn of 25 pieces: 3.2 KB), at most UNITS x 256 x DIMS = 128 KB.

Pure functions over NumPy arrays; `np` is passed in so that importing this is free.
"""

from __future__ import annotations

import hashlib
from typing import Any

DIMS = 128  # stored dimensions per piece
UNITS = 4  # a record's first units that keep token vectors
_SEED = b"memstrata token projection v1"
_projection: dict[int, Any] = {}


def projection(np: Any, dim: int) -> Any:
    """The fixed (dim, DIMS) float32 projection: entries +-1/sqrt(DIMS) from SHAKE-256."""
    p = _projection.get(dim)
    if p is None:
        bits = np.unpackbits(
            np.frombuffer(hashlib.shake_256(_SEED).digest(dim * DIMS // 8 + 1), dtype=np.uint8)
        )[: dim * DIMS]
        p = ((bits.astype(np.float32) * 2 - 1) / np.float32(DIMS**0.5)).reshape(dim, DIMS)
        _projection[dim] = p
    return p


def project(np: Any, tokens: Any) -> Any:
    """Unit token vectors (n, dim) projected to (n, DIMS), each row renormalised."""
    t = np.asarray(tokens, dtype=np.float32)
    if t.ndim != 2 or not len(t):
        return np.zeros((0, DIMS), dtype=np.float32)
    p = t @ projection(np, t.shape[1])
    norms = np.sqrt(np.einsum("ij,ij->i", p, p))
    return p / np.maximum(norms, np.float32(1e-12))[:, None]


def pack(np: Any, tokens: Any) -> bytes:
    """Token vectors (n, dim) as stored: projected, int8 per coordinate (n x DIMS bytes)."""
    p = project(np, tokens)
    if not len(p):
        return b""
    scale = np.float32(127.0) / np.maximum(np.abs(p).max(axis=1), np.float32(1e-12))
    out: bytes = np.rint(p * scale[:, None]).astype(np.int8).tobytes()
    return out


def unpack(np: Any, blob: bytes) -> Any:
    """Stored token vectors back as unit float32 rows (n, DIMS)."""
    if not blob or len(blob) % DIMS:
        return np.zeros((0, DIMS), dtype=np.float32)
    t = np.frombuffer(blob, dtype=np.int8).reshape(-1, DIMS).astype(np.float32)
    norms = np.sqrt(np.einsum("ij,ij->i", t, t))
    return t / np.maximum(norms, np.float32(1e-12))[:, None]


def unpack_all(np: Any, blobs: list[bytes]) -> list[Any]:
    """`[unpack(np, b) for b in blobs]`, the same values, by one conversion over all of
    them (each row is normalised on its own, so the rows do not depend on the batch): a
    search unpacks its ~200 candidates' blobs, and per-blob NumPy calls were most of it."""
    ok = [bool(b) and not len(b) % DIMS for b in blobs]
    if not any(ok):
        return [unpack(np, b) for b in blobs]
    rows = unpack(np, b"".join(b for b, good in zip(blobs, ok, strict=True) if good))
    out: list[Any] = []
    at = 0
    for b, good in zip(blobs, ok, strict=True):
        n = len(b) // DIMS if good else 0
        out.append(rows[at : at + n] if good else unpack(np, b))
        at += n
    return out


__all__ = ["DIMS", "UNITS", "pack", "project", "unpack", "unpack_all"]
