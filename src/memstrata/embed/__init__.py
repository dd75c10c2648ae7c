"""Embedders: text in, unit vectors out, behind one small Protocol.

    minilm[:path]       all-MiniLM-L6-v2 (384-d) in NumPy, no torch: the default install's
                        embedder (files: `model_files`, a folder, the wheel, a cache, a download)
    local[:name|path]   sentence-transformers (torch, the `embed` extra), offline; the same
                        all-MiniLM-L6-v2 by default, with the same model id and vectors
    fake                deterministic feature hashing, no dependencies (tests, benches)
    openai:<model>@<url> any OpenAI-compatible /embeddings endpoint (OpenAI, Ollama, vLLM)

Nothing heavy is imported here: `make_embedder` imports a provider only when asked
for it, so `import memstrata` stays fast and the core needs no extras.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from memstrata.errors import MalformedInput

if TYPE_CHECKING:
    from memstrata.embed.base import Embedder

DEFAULT_SPEC = "minilm"  # what an unset `[search] embedder` means (when its files are found)

OPENAI_DEFAULT_BASE = "https://api.openai.com/v1"


def daemon_enabled() -> bool:
    """May the CLI use the per-user embedding daemon (`embed.daemon`)? Yes unless
    MEMSTRATA_EMBED_DAEMON says 0/false/no. Here, so that asking costs no import of the
    daemon's module (sockets, subprocesses) on every CLI start."""
    return os.environ.get("MEMSTRATA_EMBED_DAEMON", "1") not in ("0", "false", "no", "")


def make_embedder(
    spec: str,
    *,
    model_path: str | None = None,
    download: bool = True,
    notice: Callable[[str], None] | None = None,
) -> Embedder:
    """Build an embedder from a spec string (the `[search] embedder` setting).

    Args:
        spec: `minilm`, `minilm:<folder>`, `fake`, `fake:<dim>`, `local`,
            `local:<name-or-path>` or `openai:<model>@<base_url>` (without
            `@<base_url>`: env `MEMSTRATA_EMBED_BASE_URL`, else the OpenAI API). The key
            comes from `OPENAI_API_KEY` when set (servers like Ollama need none).
        model_path: `minilm`: the configured model folder (`[search] model_path`).
        download: `minilm`: fetch the files from the Hugging Face hub if not found.
        notice: `minilm`: told one line before a download starts.

    Raises:
        MalformedInput: the spec cannot be parsed.
        ProviderError: the provider cannot be set up (missing extra, model not found:
            `ModelNotFound`).

    Example:
        >>> make_embedder("fake:8").dim
        8
    """
    kind, _, arg = spec.strip().partition(":")
    if kind == "minilm":
        from memstrata.embed import model_files
        from memstrata.embed.minilm import MiniLMEmbedder

        files = model_files.locate(arg or model_path, download=download, notice=notice)
        return MiniLMEmbedder(files.path)
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
        f"unknown embedder {spec!r}: use minilm[:folder], local[:name-or-path], fake[:dim] "
        "or openai:<model>@<url>"
    )


__all__ = ["DEFAULT_SPEC", "make_embedder"]
