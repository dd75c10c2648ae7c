"""Embeddings from any OpenAI-compatible `/embeddings` endpoint (OpenAI, Ollama, vLLM).

Texts go out in batches of `batch_size`; each reply must carry exactly one
vector per input, all of one dimension. Servers do not all normalise (Ollama's
do not, OpenAI's do), so every vector is L2-normalised here. The dimension is
learnt from the first reply unless given, and a server that later changes it is
an error rather than a silent mix of spaces. Transport and failure policy are
shared with the chat client (`memstrata.llm.openai_compat.post_json`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import Any

from memstrata.embed.base import l2_normalise
from memstrata.errors import InvalidInput, MalformedInput, ProviderError
from memstrata.llm.base import Usage
from memstrata.llm.openai_compat import endpoint, post_json


class OpenAICompatEmbedder:
    """`Embedder` over HTTP: `POST {base_url}/embeddings {"model", "input": [...]}`.

    Args:
        base_url: API root, e.g. `http://127.0.0.1:11434/v1`.
        model: Embedding model name (the stored model id is `openai:<model>`).
        api_key_env: Environment variable holding the key (read per call; optional).
        timeout: Seconds per request attempt.
        dim: Expected dimension; learnt from the first reply when None.
        batch_size: Texts per request.
        max_retries: Extra attempts after a transient failure.

    Example:
        >>> e = OpenAICompatEmbedder("http://127.0.0.1:11434/v1", "nomic-embed-text")  # doctest: +SKIP
        >>> len(e.embed(["hello"])[0]) == e.dim  # doctest: +SKIP
        True
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 30.0,
        *,
        dim: int | None = None,
        batch_size: int = 64,
        max_retries: int = 1,
    ) -> None:
        if not model or not isinstance(model, str):
            raise MalformedInput("embedding model name must be a non-empty string")
        if batch_size < 1 or timeout <= 0 or max_retries < 0 or (dim is not None and dim < 1):
            raise InvalidInput("batch_size and dim must be >= 1, timeout > 0, max_retries >= 0")
        self.url = endpoint(base_url, "embeddings")
        self.model = model
        self.model_id = f"openai:{model}"
        self.api_key_env = api_key_env
        self.timeout = timeout
        self.batch_size = batch_size
        self.max_retries = max_retries
        self.usage = Usage()
        self._dim = dim

    @property
    def dim(self) -> int:
        """The vector dimension (one probe request if not yet known)."""
        if self._dim is None:
            self.embed(["dimension probe"])
        assert self._dim is not None
        return self._dim

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed `texts` in batches; raises ProviderError on any bad reply."""
        if isinstance(texts, str):
            raise InvalidInput("embed() takes a sequence of texts, not one string")
        out: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            # The OpenAI API rejects empty strings; a space embeds as "nothing".
            batch = [t if t.strip() else " " for t in texts[start : start + self.batch_size]]
            out.extend(self._embed_batch(batch))
        return out

    def _embed_batch(self, batch: list[str]) -> list[list[float]]:
        reply = post_json(
            self.url,
            {"model": self.model, "input": batch},
            api_key=os.environ.get(self.api_key_env),
            timeout=self.timeout,
            max_retries=self.max_retries,
        )
        usage = reply.get("usage")
        tokens = usage.get("prompt_tokens") if isinstance(usage, dict) else None
        self.usage.record(tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else 0)
        data = reply.get("data")
        if not isinstance(data, list) or len(data) != len(batch):
            got = len(data) if isinstance(data, list) else "no"
            raise ProviderError(f"{self.url} returned {got} embeddings for {len(batch)} inputs")
        if all(isinstance(d, dict) and isinstance(d.get("index"), int) for d in data):
            data = sorted(data, key=lambda d: d["index"])
        return [self._vector(d, i) for i, d in enumerate(data)]

    def _vector(self, item: Any, i: int) -> list[float]:
        vec = item.get("embedding") if isinstance(item, dict) else None
        if (
            not isinstance(vec, list)
            or not vec
            or not all(isinstance(x, int | float) and not isinstance(x, bool) for x in vec)
            or not all(math.isfinite(x) for x in vec)
        ):
            raise ProviderError(f"{self.url} item {i} has no finite numeric `embedding` list")
        if self._dim is None:
            self._dim = len(vec)
        elif len(vec) != self._dim:
            raise ProviderError(f"{self.url} returned dim {len(vec)}, expected {self._dim}")
        return l2_normalise([float(x) for x in vec])


__all__ = ["OpenAICompatEmbedder"]
