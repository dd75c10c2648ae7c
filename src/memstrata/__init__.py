"""memstrata: persistent, layered, local-first memory for AI agents.

Files (Markdown, JSONL) are the source of truth; a SQLite index beside them is
derived and rebuildable. Start with `Store` (every layer) or `MemoryManager`
(the AgentOS face for one agent).

Names are loaded on first use (PEP 562), so `import memstrata` costs almost
nothing: the CLI starts on every agent start and must stay fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"  # the package version (pyproject.toml reads it from here)

_ERRORS = (
    "AlreadyExists",
    "AlreadySuperseded",
    "Conflict",
    "EntryTooLarge",
    "IndexError_",
    "InvalidInput",
    "LockTimeout",
    "MalformedInput",
    "MemstrataError",
    "NotFound",
    "NotUnique",
    "PathOutsideStore",
    "ProviderError",
    "Refused",
    "ReservedFile",
    "ScopeDenied",
    "StaleWrite",
    "SupersedeDenied",
    "UnknownKind",
    "UnknownLayer",
    "UnknownSupersedes",
    "StorageError",
    "StorageFull",
    "ReadOnlyStore",
)
_WHERE: dict[str, str] = {
    **{name: "memstrata.errors" for name in _ERRORS},
    "MemoryManager": "memstrata.operations.manager",
    "initialize_agent_memory": "memstrata.operations.manager",
    "Store": "memstrata.store.view",
    "SearchQuery": "memstrata.search.query",
    "Hit": "memstrata.search.query",
    **{
        name: "memstrata.model"
        for name in ("Fact", "Item", "LedgerEntry", "LogEntry", "SessionMessage", "Task")
    },
}

__all__ = [
    "AlreadyExists",
    "AlreadySuperseded",
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
    "ReadOnlyStore",
    "Refused",
    "ReservedFile",
    "ScopeDenied",
    "SearchQuery",
    "SessionMessage",
    "StaleWrite",
    "StorageError",
    "StorageFull",
    "Store",
    "SupersedeDenied",
    "Task",
    "UnknownKind",
    "UnknownLayer",
    "UnknownSupersedes",
    "initialize_agent_memory",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'memstrata' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:  # pragma: no cover
    from memstrata.errors import (
        AlreadyExists,
        AlreadySuperseded,
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
        ReadOnlyStore,
        Refused,
        ReservedFile,
        ScopeDenied,
        StaleWrite,
        StorageError,
        StorageFull,
        SupersedeDenied,
        UnknownKind,
        UnknownLayer,
        UnknownSupersedes,
    )
    from memstrata.model import Fact, Item, LedgerEntry, LogEntry, SessionMessage, Task
    from memstrata.operations.manager import MemoryManager, initialize_agent_memory
    from memstrata.search.query import Hit, SearchQuery
    from memstrata.store.view import Store
