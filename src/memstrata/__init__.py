"""memstrata: persistent, layered, local-first memory for AI agents.

Files (Markdown, JSONL) are the source of truth; a SQLite index beside them is
derived and rebuildable. Start with `Store` (every layer) or `MemoryManager`
(seed 002's face for one agent).
"""

from memstrata.errors import (
    AlreadyExists,
    Conflict,
    EntryTooLarge,
    IndexError_,
    InvalidInput,
    LockTimeout,
    MalformedInput,
    MemstrataError,
    NotFound,
    NotUnique,
    PathOutsideStore,
    ProviderError,
    Refused,
    ReservedFile,
    ScopeDenied,
    StaleWrite,
    UnknownKind,
    UnknownLayer,
    UnknownSupersedes,
)
from memstrata.manager import MemoryManager
from memstrata.model import Fact, Item, LedgerEntry, LogEntry, SessionMessage, Task
from memstrata.search.query import Hit, SearchQuery
from memstrata.store import Store

__all__ = [
    "AlreadyExists",
    "Conflict",
    "EntryTooLarge",
    "Fact",
    "Hit",
    "IndexError_",
    "InvalidInput",
    "Item",
    "LedgerEntry",
    "LockTimeout",
    "LogEntry",
    "MalformedInput",
    "MemoryManager",
    "MemstrataError",
    "NotFound",
    "NotUnique",
    "PathOutsideStore",
    "ProviderError",
    "Refused",
    "ReservedFile",
    "ScopeDenied",
    "SearchQuery",
    "SessionMessage",
    "StaleWrite",
    "Store",
    "Task",
    "UnknownKind",
    "UnknownLayer",
    "UnknownSupersedes",
]
