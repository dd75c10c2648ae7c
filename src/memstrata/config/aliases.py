"""The MemoryConfig of the memory spec in memstrata's config: its camelCase keys, accepted in the
`[memory]` table (or `memory:` in config.yaml) as aliases of the settings that serve
them, and the validators of its two path keys (`memoryPath`, `sessionsPath`)."""

from __future__ import annotations

from typing import Any

# MemoryConfig, by its own camelCase names, accepted in the [memory] table
# (or `memory:` in config.yaml) as aliases of the settings that serve them.
MEMORY_CONFIG_ALIASES: dict[str, str] = {
    "memoryPath": "memory.path",
    "maxMemorySize": "memory.max_chars",
    "sessionsPath": "sessions.path",
    "sessionRetentionDays": "sessions.retention_days",
    "compactionThreshold": "sessions.compaction_threshold",
    "compactionKeepRecent": "sessions.keep_recent",
    "flushEnabled": "sessions.flush_enabled",
    "flushThreshold": "sessions.flush_threshold",
    "searchProvider": "search.provider",
    "vectorModel": "search.embedder",
    "toolResultRetention": "sessions.tool_result_retention",
}


def memory_path(v: Any) -> str | None:
    """MemoryConfig memoryPath: "<agent>/MEMORY.md" style, a Markdown file in the agent's folder
    (beside AGENT.md, or in its memory/ directory)."""
    if v is None or v == "":
        return None
    if not isinstance(v, str):
        raise ValueError(f'must be a string such as "<agent>/MEMORY.md", got {v!r}')
    rel = v.strip().replace("\\", "/")
    if not rel.startswith("<agent>/"):
        raise ValueError(f'must start with "<agent>/" (a file in the agent\'s folder), got {v!r}')
    rest = rel.removeprefix("<agent>/")
    parts = rest.split("/")
    ok = rest.endswith(".md") and (
        (len(parts) == 1 and parts[0] not in ("AGENT.md", "IDENTITY.md"))
        or (
            len(parts) == 2
            and parts[0] == "memory"
            and parts[1] not in ("NOW.md", "NOTES.md", "LOG.md")
        )
    )
    if not ok or any(x in ("", ".", "..") for x in parts):
        raise ValueError(
            'must be a Markdown file beside AGENT.md ("<agent>/MEMORY.md") or in '
            f'the agent\'s memory/ directory ("<agent>/memory/CONTEXT.md"), got {v!r}'
        )
    return rest


def sessions_path(v: Any) -> str:
    """MemoryConfig sessionsPath: the layout keeps transcripts in <agent>/sessions/ (export,
    retention and the folder watcher rely on it), so that is the one accepted value."""
    if v not in ("<agent>/sessions/", "<agent>/sessions"):
        raise ValueError(f'the layout keeps transcripts in "<agent>/sessions/"; got {v!r}')
    return "<agent>/sessions/"
