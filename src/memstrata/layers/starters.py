"""The starter files `memstrata init` writes: AGENT.md and CONTEXT.md to fill in.

They are boilerplate, not memory: "what database do we use?" should not recall "List the
tools and skills this agent may use". A file that still holds exactly its starter text
is not indexed (`mdparse.markdown_spec`); once someone edits it, all of it is.
"""

from __future__ import annotations

AGENT_STARTER = """# {name}

## Role
Describe who this agent is and what it is responsible for.

## Rules
- Read NOW.md and CONTEXT.md before acting; log what you did to LOG.md.
- Save durable facts with `memstrata facts set`; publish cross-room knowledge to the ledger.

## Capabilities
- List the tools and skills this agent may use.
"""

CONTEXT_STARTER = """# Persistent memory

Long-term notes that are loaded into every prompt. Keep them short and current.
"""


def starter(layer: str, owner: str | None) -> str | None:
    """The starter text of a file of `layer` owned by `owner`, if `init` writes one.

    Example:
        >>> starter("context", "finn") == CONTEXT_STARTER
        True
    """
    if layer == "identity" and owner is not None:
        return AGENT_STARTER.format(name=owner)
    if layer == "context":
        return CONTEXT_STARTER
    return None


def is_untouched_starter(text: str, layer: str, owner: str | None) -> bool:
    """Does `text` still say exactly what `init` wrote (line endings aside)?"""
    start = starter(layer, owner)
    return start is not None and text.replace("\r\n", "\n") == start
