"""Embedders: text in, unit vectors out, behind one small Protocol.

    fake                deterministic feature hashing, no dependencies (tests, benches)
    local[:name|path]   sentence-transformers, offline; default all-MiniLM-L6-v2 (384-d)
    openai:<model>@<url> any OpenAI-compatible /embeddings endpoint (OpenAI, Ollama, vLLM)

Nothing heavy is imported here: `make_embedder` imports a provider only when asked
for it, so `import memstrata` stays fast and the core needs no extras.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from memstrata.errors import MalformedInput

if TYPE_CHECKING:
    from memstrata.embed.base import Embedder

OPENAI_DEFAULT_BASE = "https://api.openai.com/v1"


def make_embedder(spec: str) -> Embedder:
    """Build an embedder from a spec string (the `[search] embedder` setting).

    Args:
        spec: `fake`, `fake:<dim>`, `local`, `local:<name-or-path>` or
            `openai:<model>@<base_url>` (without `@<base_url>`: env
            `MEMSTRATA_EMBED_BASE_URL`, else the OpenAI API). The key comes from
            `OPENAI_API_KEY` when set (servers like Ollama need none).

    Raises:
        MalformedInput: the spec cannot be parsed.
        ProviderError: the provider cannot be set up (missing extra, model not found).

    Example:
        >>> make_embedder("fake:8").dim
        8
    """
    kind, _, arg = spec.strip().partition(":")
    if kind == "fake":
        from memstrata.embed.base import FakeEmbedder

        if arg and not arg.isdigit():
            raise MalformedInput(f"fake embedder dim must be an integer: {spec!r}")
        return FakeEmbedder(int(arg) if arg else 64)
    if kind == "local":
        from memstrata.embed.local import DEFAULT_MODEL, SentenceTransformerEmbedder

        return SentenceTransformerEmbedder(arg or DEFAULT_MODEL)
    if kind == "openai":
        from memstrata.embed.openai_compat import OpenAICompatEmbedder

        model, _, base = arg.partition("@")
        if not model:
            raise MalformedInput(f"expected openai:<model>@<base_url>, got {spec!r}")
        base = base or os.environ.get("MEMSTRATA_EMBED_BASE_URL") or OPENAI_DEFAULT_BASE
        return OpenAICompatEmbedder(base, model)
    raise MalformedInput(
        f"unknown embedder {spec!r}: use fake[:dim], local[:name-or-path] or openai:<model>@<url>"
    )


__all__ = ["make_embedder"]
