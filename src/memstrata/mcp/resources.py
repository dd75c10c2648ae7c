"""The MCP resources: CONTEXT.md and the assembled prompt context, for both transports."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from memstrata.assembly.context import assemble_context
from memstrata.errors import MemstrataError
from memstrata.policy.secrets import withhold
from memstrata.values import value_type

if TYPE_CHECKING:
    from memstrata.store.view import Store


@value_type(frozen=True)
class Resource:
    """A readable resource: what `resources/list` shows and the function that reads it."""

    uri: str
    name: str
    description: str
    read: Callable[[], str]
    mime_type: str = "text/markdown"

    def listing(self) -> dict[str, Any]:
        return {
            "uri": self.uri,
            "name": self.name,
            "description": self.description,
            "mimeType": self.mime_type,
        }


def build_resources(store: Store) -> list[Resource]:
    """The resources, each read through `policy.secrets.withhold` (a resource enters the
    model's context as a tool result does)."""

    def context_md() -> str:
        context = store.agent().context
        try:
            text = context.read()
        except (OSError, MemstrataError) as exc:  # a resource degrades to a warning naming the file
            why = getattr(exc, "strerror", None) or exc
            return f"⚠ {store.rel(context.path)} could not be read: {why}\n"
        if text.strip():
            return text
        name = context.path.name
        if not context.exists():
            return (
                f"(no {name} yet for agent {store.principal.agent}: nothing is auto-loaded. "
                f'Write long-term notes with memory_write(path="{name}", content=...).)'
            )
        return f"({name} is empty: nothing is auto-loaded.)"

    def prompt_context() -> str:

        # A file that cannot be read costs its section only (a warning line in its place).
        return assemble_context(store, store.principal.agent).text

    def withheld(read: Callable[[], str]) -> Callable[[], str]:
        return lambda: str(withhold(read()))

    return [
        Resource(
            "memory://context",
            "CONTEXT.md",
            "Your auto-loaded long-term memory (CONTEXT.md / MEMORY.md)",
            withheld(context_md),
        ),
        Resource(
            "memory://prompt-context",
            "assembled context",
            "Identity, CONTEXT, NOW, recent LOG, facts and ledger context",
            withheld(prompt_context),
        ),
    ]
