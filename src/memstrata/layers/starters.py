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


# The starters' lines that ask a person to write something: they tell an agent nothing.
PLACEHOLDERS = frozenset(
    {
        "Describe who this agent is and what it is responsible for.",
        "List the tools and skills this agent may use.",
        "Long-term notes that are loaded into every prompt. Keep them short and current.",
    }
)


def as_shown(text: str, layer: str, owner: str | None) -> str:
    """What an agent is shown of a file: an untouched starter without the lines asking a
    person to write something and the headings they leave empty ("" when nothing is
    left); any edited file exactly as it is.

    Example:
        >>> as_shown(starter("context", None) or "", "context", None)
        ''
        >>> "## Rules" in as_shown(starter("identity", "finn") or "", "identity", "finn")
        True
    """
    if not is_untouched_starter(text, layer, owner):
        return text
    lines = [
        x for x in text.replace("\r\n", "\n").splitlines() if x.lstrip("- ") not in PLACEHOLDERS
    ]
    kept: list[str] = []
    for i, line in enumerate(lines):
        if line.startswith("#") and _empty_heading(line, lines[i + 1 :]):
            continue
        kept.append(line)
    shown = "\n".join(kept).strip()
    return shown + "\n" if shown else ""


def _empty_heading(heading: str, after: list[str]) -> bool:
    """No text under `heading` before the next heading of its level or above."""
    level = len(heading) - len(heading.lstrip("#"))
    for line in after:
        if not line.strip():
            continue
        if line.startswith("#"):
            return len(line) - len(line.lstrip("#")) <= level
        return False
    return True
