"""Which summariser / extractor the lifecycle uses, and what a model call cost.

Default: the deterministic ones from `memstrata.llm` (no network, same output
for the same input). A store opts into a model in `config.toml`:

    [llm]
    summarizer = "openai:gpt-4o-mini@http://127.0.0.1:11434/v1"
    extractor = "openai:gpt-4o-mini@http://127.0.0.1:11434/v1"

Usage is read from the provider's `usage` counter (or its client's) before and
after a run, so a compaction record can say how many calls and tokens it took.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memstrata.llm.base import Extractor, LineClassifier, Summarizer
    from memstrata.store.view import Store


def default_summarizer(store: Store) -> Summarizer:
    """The configured summariser, else the deterministic extractive one."""
    from memstrata.llm import make_summarizer

    return make_summarizer(store.config.llm_summarizer or "extractive")


def default_classifier(store: Store) -> LineClassifier | None:
    """The configured line classifier for compaction digests, else None (rules only)."""
    from memstrata.llm import make_line_classifier

    return make_line_classifier(store.config.llm_classifier or "rules")


def default_extractor(store: Store) -> Extractor:
    """The configured extractor, else the rule-based one."""
    from memstrata.llm import make_extractor

    return make_extractor(store.config.llm_extractor or "rules")


def usage_counter(provider: object) -> Any:
    """The provider's `Usage` counter (on itself or its `client`), or None."""
    for owner in (provider, getattr(provider, "client", None)):
        usage = getattr(owner, "usage", None)
        if usage is not None and hasattr(usage, "calls"):
            return usage
    return None


def usage_snapshot(provider: object) -> tuple[int, int, int] | None:
    u = usage_counter(provider)
    if u is None:
        return None
    return int(u.calls), int(u.prompt_tokens), int(u.completion_tokens)


def usage_sum(*parts: dict[str, int] | None) -> dict[str, int] | None:
    """Several providers' `usage_delta`s added up (None when none counted anything)."""
    counted = [p for p in parts if p]
    if not counted:
        return None
    return {k: sum(p.get(k, 0) for p in counted) for k in counted[0]}


def usage_delta(before: tuple[int, int, int] | None, provider: object) -> dict[str, int] | None:
    """Calls and tokens spent since `before` (None when the provider counts nothing)."""
    after = usage_snapshot(provider)
    if before is None or after is None:
        return None
    calls, prompt, completion = (a - b for a, b in zip(after, before, strict=True))
    if calls == 0:
        return None
    return {
        "calls": calls,
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
