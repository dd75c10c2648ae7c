"""The `Embedder` contract and a deterministic fake for tests.

An embedder turns texts into unit vectors. It names itself with a `model_id`
and a `dim`; the vector index stores both beside every vector, so switching
models never mixes spaces and a model change re-embeds instead of silently
comparing apples with pears.

`FakeEmbedder` is the feature-hashing trick (Weinberger et al. 2009): every word
token lands in one of `dim` buckets with a sign, so texts that share words point
the same way and unrelated texts are nearly orthogonal. It is pure Python,
deterministic across processes and machines (blake2b, not `hash()`), and good
enough to test ranking logic without a model.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from memstrata.errors import InvalidInput

_TOKEN = re.compile(r"\w+", re.UNICODE)


@runtime_checkable
class Embedder(Protocol):
    """Anything that maps texts to L2-normalised vectors of one model.

    Attributes:
        model_id: Stable name of the model (stored with each vector).
        dim: Length of every vector returned.
    """

    @property
    def model_id(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed `texts`, one unit vector (||v||₂ = 1) per text, in order."""
        ...


def embeds_tokens(embedder: object) -> bool:
    """Does `embedder` also give token vectors (`embed_tokens(texts) -> (vectors,
    token arrays)`, used by `index.tokens` for MaxSim)? The NumPy MiniLM does, and the
    fake when made with `tokens=True`."""
    return callable(getattr(embedder, "embed_tokens", None)) and bool(
        getattr(embedder, "token_vectors", True)
    )


def l2_normalise(vec: Sequence[float]) -> list[float]:
    """Return `v / ||v||₂`; a zero vector is returned unchanged (as floats)."""
    norm = math.sqrt(math.fsum(x * x for x in vec))
    if norm == 0.0:
        return [float(x) for x in vec]
    return [x / norm for x in vec]


class FakeEmbedder:
    """Deterministic signed feature hashing of lower-cased word tokens.

    For each token `t` with count `c` in a text:

        h = blake2b(t)       bucket = h mod dim       sign = ±1 from bit 63 of h
        v[bucket] += sign x (1 + ln c)

    and the result is L2-normalised. An empty text maps to the hashed sentinel
    token `<empty>` so that every vector has unit length.

    Example:
        >>> e = FakeEmbedder(dim=32)
        >>> a, b = e.embed(["red apple pie", "red apple"])
        >>> round(sum(x * y for x, y in zip(a, b)), 2) > 0.5
        True
    """

    def __init__(self, dim: int = 64, *, tokens: bool = False) -> None:
        if not isinstance(dim, int) or isinstance(dim, bool) or not 2 <= dim <= 65536:
            raise InvalidInput(f"fake embedder dim must be an int in 2..65536, got {dim!r}")
        self.dim = dim
        self.model_id = f"fake-hash-{dim}"
        self.token_vectors = tokens  # `embed_tokens` offered (`embeds_tokens`)
        self._buckets: dict[str, tuple[int, float]] = {}
        self.calls = 0
        self.texts_embedded = 0

    def _bucket(self, token: str) -> tuple[int, float]:
        hit = self._buckets.get(token)
        if hit is None:
            h = int.from_bytes(
                hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest(), "big"
            )
            hit = (h % self.dim, -1.0 if h >> 63 else 1.0)
            if len(self._buckets) < 200_000:  # bound the memo on huge vocabularies
                self._buckets[token] = hit
        return hit

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed `texts`; counts calls in `calls` and texts in `texts_embedded`."""
        if isinstance(texts, str):
            raise InvalidInput("embed() takes a sequence of texts, not one string")
        self.calls += 1
        self.texts_embedded += len(texts)
        return [self._vector(text) for text in texts]

    def _vector(self, text: str) -> list[float]:
        counts: dict[str, int] = {}
        for tok in _TOKEN.findall(text.lower()) or ["<empty>"]:
            counts[tok] = counts.get(tok, 0) + 1
        vec = [0.0] * self.dim
        for tok, c in counts.items():
            bucket, sign = self._bucket(tok)
            vec[bucket] += sign * (1.0 + math.log(c))
        if not any(vec):  # all tokens cancelled out in one bucket
            bucket, sign = self._bucket("<empty>")
            vec[bucket] = sign
        return l2_normalise(vec)

    def embed_tokens(
        self, texts: Sequence[str]
    ) -> tuple[list[list[float]], list[list[list[float]]]]:
        """`embed(texts)` and each text's token vectors: every word token embedded alone
        (so a query word matches the same word in a text with cosine 1)."""
        vecs = self.embed(texts)
        tokens = [
            [self._vector(t) for t in _TOKEN.findall(text.lower())] or [vecs[i]]
            for i, text in enumerate(texts)
        ]
        return vecs, tokens


__all__ = ["Embedder", "FakeEmbedder", "embeds_tokens", "l2_normalise"]
