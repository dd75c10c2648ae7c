"""The default embedder: all-MiniLM-L6-v2 on the CPU with NumPy, no torch (`minilm`).

What the default install (`memstrata[serve]`) gives for semantic recall: numpy,
HF `tokenizers` and threadpoolctl, plus the model's files from `model_files`.
Its vectors are the torch runtime's (`local`, sentence-transformers) to float32
rounding (cosine >= 0.999 on 1,000 varied texts, `tests/embed/test_minilm_equivalence.py`),
so both record the same model id and share stored vectors.

Threads: NumPy's BLAS (OpenBLAS) splits every matrix product over the cores, which
for the small products of one query costs more than it saves, and on a loaded
machine, where its spinning threads wait for each other, made a query 2-8x slower
(one small product 50x, measured at a load average of 8 on 2 cores). So the forward pass runs BLAS on one thread, and a batch of many texts is
spread over `workers` Python threads instead (NumPy releases the GIL in its
products), one length-sorted chunk of texts each.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from memstrata.embed import model_files
from memstrata.errors import InvalidInput

_blas_lock = threading.Lock()
_blas_users = 0
_blas_limit: Any = None
_controller: Any = None


@contextlib.contextmanager
def _one_blas_thread() -> Iterator[None]:
    """BLAS on one thread while any embedding runs in this process (threadpoolctl;
    a no-op without it). Counted, so overlapping calls restore the setting once."""
    global _blas_users, _blas_limit, _controller
    with _blas_lock:
        if _blas_users == 0:
            if _controller is None:  # made once, after numpy has loaded its BLAS
                try:
                    from threadpoolctl import ThreadpoolController
                except ImportError:
                    _controller = False
                else:
                    _controller = ThreadpoolController()
            if _controller:
                _blas_limit = _controller.limit(limits=1, user_api="blas")
        _blas_users += 1
    try:
        yield
    finally:
        with _blas_lock:
            _blas_users -= 1
            if _blas_users == 0 and _blas_limit is not None:
                _blas_limit.restore_original_limits()
                _blas_limit = None


class MiniLMEmbedder:
    """`Embedder` running a BERT sentence-transformer (all-MiniLM-L6-v2) in NumPy.

    Args:
        folder: The model folder (see `model_files.locate`).
        workers: Threads for a large batch (default: the CPU count, at most 4).

    Raises:
        ProviderError: numpy or tokenizers missing, or the folder is not a usable model.

    Example:
        >>> e = MiniLMEmbedder(model_files.locate().path)  # doctest: +SKIP
        >>> e.model_id, e.dim  # doctest: +SKIP
        ('sentence-transformers/all-MiniLM-L6-v2', 384)
    """

    def __init__(self, folder: Path, *, workers: int | None = None) -> None:
        from memstrata.embed.numpy_bert import BertEncoder

        self.folder = folder
        self.model_id = model_files.model_id(folder)
        self.encoder = BertEncoder(folder)
        self.dim = self.encoder.dim
        self.workers = max(1, workers if workers is not None else min(4, os.cpu_count() or 1))

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector per text, in order (float32 values as Python floats)."""
        if isinstance(texts, str):
            raise InvalidInput("embed() takes a sequence of texts, not one string")
        if not texts:
            return []
        with _one_blas_thread():
            out: list[list[float]] = self.encoder.encode(texts, self._map, self.workers).tolist()
        return out

    def embed_tokens(self, texts: Sequence[str]) -> tuple[list[list[float]], list[Any]]:
        """`embed(texts)` and, from the same forward pass, each text's unit token vectors
        (a float32 array (word pieces, dim) per text, [CLS] and [SEP] left out)."""
        if isinstance(texts, str):
            raise InvalidInput("embed() takes a sequence of texts, not one string")
        if not texts:
            return [], []
        tokens: list[Any] = []
        with _one_blas_thread():
            vecs = self.encoder.encode(texts, self._map, self.workers, tokens=tokens)
        return vecs.tolist(), tokens

    def _map(self, fn: Callable[[Any], Any], items: list[Any]) -> list[Any]:
        if self.workers == 1 or len(items) < 2:
            return [fn(x) for x in items]
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(min(self.workers, len(items))) as pool:
            return list(pool.map(fn, items))


__all__ = ["MiniLMEmbedder"]
