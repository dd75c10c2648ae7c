"""Summarise and extract: deterministic by default, an OpenAI-compatible LLM on request.

    extractive / rules           no model, no network, same output for same input
    openai:<model>@<base_url>    any /chat/completions endpoint (OpenAI, Ollama, vLLM)

The contracts (`Summarizer`, `Extractor`, `ItemDraft`, `Usage`) live in
`memstrata.llm.base`. Nothing is imported here until a factory is called.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from memstrata.errors import MalformedInput

if TYPE_CHECKING:
    from memstrata.llm.base import Extractor, LineClassifier, Summarizer
    from memstrata.llm.openai_compat import ChatClient


def chat_client(spec: str) -> ChatClient:
    """A `ChatClient` from `openai[:<model>][@<base_url>]`, completed from the environment.

    The model falls back to `MEMSTRATA_LLM_MODEL`, the base URL to
    `MEMSTRATA_LLM_BASE_URL`; the key is read from `MEMSTRATA_LLM_API_KEY` when
    set, else `OPENAI_API_KEY` (local servers need none).

    Raises:
        MalformedInput: the spec is not `openai...` or the model/base URL is missing.
    """
    from memstrata.llm.openai_compat import ChatClient

    kind, _, rest = spec.strip().partition(":")
    if kind != "openai":
        raise MalformedInput(f"unknown LLM spec {spec!r}: expected openai:<model>@<base_url>")
    model, _, base = rest.partition("@")
    model = model or os.environ.get("MEMSTRATA_LLM_MODEL", "")
    base = base or os.environ.get("MEMSTRATA_LLM_BASE_URL", "")
    if not model or not base:
        raise MalformedInput(
            f"LLM spec {spec!r} needs a model and a base URL: write openai:<model>@<base_url> "
            "or set MEMSTRATA_LLM_MODEL and MEMSTRATA_LLM_BASE_URL"
        )
    key_env = (
        "MEMSTRATA_LLM_API_KEY" if os.environ.get("MEMSTRATA_LLM_API_KEY") else "OPENAI_API_KEY"
    )
    return ChatClient(base, model, api_key_env=key_env)


def make_summarizer(spec: str = "extractive") -> Summarizer:
    """`extractive` (default, deterministic) or `openai:<model>@<base_url>`.

    Example:
        >>> make_summarizer("extractive").summarize(["one line"], max_chars=20)
        'one line'
    """
    if spec.strip() in ("", "extractive"):
        from memstrata.llm.extractive import ExtractiveSummarizer

        return ExtractiveSummarizer()
    from memstrata.llm.openai_compat import LLMSummarizer

    return LLMSummarizer(chat_client(spec))


def make_extractor(spec: str = "rules") -> Extractor:
    """`rules` (default, deterministic) or `openai:<model>@<base_url>`."""
    if spec.strip() in ("", "rules"):
        from memstrata.llm.extractive import RuleExtractor

        return RuleExtractor()
    from memstrata.llm.openai_compat import LLMExtractor

    return LLMExtractor(chat_client(spec))


def make_line_classifier(spec: str = "rules") -> LineClassifier | None:
    """`rules` (default: the digest's own rules only, no model) or `openai:<model>@<base_url>`."""
    if spec.strip() in ("", "rules"):
        return None
    from memstrata.llm.openai_compat import LLMLineClassifier

    return LLMLineClassifier(chat_client(spec))


__all__ = ["chat_client", "make_extractor", "make_line_classifier", "make_summarizer"]
