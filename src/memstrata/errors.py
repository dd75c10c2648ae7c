"""One exception tree for memstrata.

    MemstrataError
    ├── InvalidInput              bad value from a caller (the store is unchanged)
    │   ├── PathOutsideStore      `..`, absolute, NUL, symlink out, sibling prefix
    │   ├── EntryTooLarge         summary > 4 KB, detail > 16 KB, ...
    │   ├── UnknownKind           kind not in the configured kinds
    │   ├── UnknownLayer          layer name not known to search
    │   ├── MalformedInput        malformed JSON, bad timestamp, bad query value
    │   └── ReservedFile          a path owned by a layer (LOG.md is append-only, ...)
    ├── NotFound                  unknown id, key, file or session
    │   └── UnknownSupersedes     `supersedes` names no ledger entry
    ├── Conflict                  the thing changed under you
    │   ├── NotUnique             replace target matches 0 or 2+ times
    │   ├── AlreadyExists         create-only target exists
    │   ├── StaleWrite            expected-content check failed
    │   └── AlreadySuperseded     the ledger entry already has a successor (supersede its head)
    ├── ScopeDenied               the principal may not read/write that memory
    │   └── SupersedeDenied       the entry belongs to another room or to an admin
    ├── Refused                   a policy refused the write (save exclusions, ...)
    │   ├── SecretDetected        the text looks like a secret and the policy refused it
    │   └── RoomClosed            the room is closed: its channel and artifacts are read-only
    ├── IndexError_               the derived index cannot be used (rebuild it)
    │   └── IndexDamaged          the index file is not a usable database (rebuilt on open)
    ├── ProviderError             an embedder / LLM provider failed (timeout, bad reply)
    │   └── ModelNotFound         the embedding model's files are not on this machine
    ├── LockTimeout               a cross-process lock was not acquired in time
    └── StorageError              the disk refused a write (nothing was stored)
        ├── StorageFull           no space left (ENOSPC, EDQUOT)
        ├── ReadOnlyStore         the store's folder is read-only (EROFS)
        └── BackendUnavailable    PostgreSQL cannot be reached (retried; nothing was stored)

The library raises these; adapters (CLI, MCP, HTTP) translate them. Nothing here
shadows a builtin (`MemoryError`, `IndexError`).
"""

from __future__ import annotations


class MemstrataError(Exception):
    """Root of every error memstrata raises on purpose."""

    code = "error"


class InvalidInput(MemstrataError, ValueError):
    code = "invalid_input"


class PathOutsideStore(InvalidInput):
    code = "path_outside_store"


class EntryTooLarge(InvalidInput):
    code = "entry_too_large"


class UnknownKind(InvalidInput):
    code = "unknown_kind"


class UnknownLayer(InvalidInput):
    code = "unknown_layer"


class MalformedInput(InvalidInput):
    code = "malformed_input"


class ReservedFile(InvalidInput):
    code = "reserved_file"


class NotFound(MemstrataError, LookupError):
    code = "not_found"


class UnknownSupersedes(NotFound):
    code = "unknown_supersedes"


class Conflict(MemstrataError):
    code = "conflict"


class NotUnique(Conflict):
    code = "not_unique"


class AlreadyExists(Conflict):
    code = "already_exists"


class StaleWrite(Conflict):
    code = "stale_write"


class AlreadySuperseded(Conflict):
    """The entry already has a successor; there is never more than one live successor."""

    code = "already_superseded"

    def __init__(self, message: str, head: str | None = None) -> None:
        super().__init__(message)
        self.head = head


class ScopeDenied(MemstrataError, PermissionError):
    code = "scope_denied"


class SupersedeDenied(ScopeDenied):
    """A room may not erase another room's (or an admin's) ledger entry."""

    code = "supersede_denied"


class Refused(MemstrataError):
    code = "refused"


class SecretDetected(Refused):
    """`[secrets] policy` refused a value that looks like a secret (see `policy.secrets`)."""

    code = "secret_detected"


class IndexError_(MemstrataError):
    """The derived SQLite index is unusable; `memstrata reindex` rebuilds it."""

    code = "index_error"


class IndexDamaged(IndexError_):
    code = "index_damaged"


class ProviderError(MemstrataError):
    code = "provider_error"


class ModelNotFound(ProviderError):
    """The embedding model's files were not found (and could not be downloaded); the
    message says how to get them. Semantic recall is off until they are there."""

    code = "model_not_found"


class LockTimeout(MemstrataError, TimeoutError):
    code = "lock_timeout"


class StorageError(MemstrataError, OSError):
    """The disk refused a write; the write was not stored and earlier writes are intact."""

    code = "storage_error"


class StorageFull(StorageError):
    code = "storage_full"


class ReadOnlyStore(StorageError):
    code = "read_only_store"


class RoomClosed(Refused):
    """A closed room (the channel lives for the room's execution) takes no
    new channel messages, artifacts or ledger entries; what it holds stays readable."""

    code = "room_closed"


class BackendUnavailable(StorageError):
    """The store's truth (PostgreSQL) could not be reached within the retry budget;
    searches are still served from this host's index, marked stale."""

    code = "backend_unavailable"


__all__ = [
    "AlreadyExists",
    "AlreadySuperseded",
    "BackendUnavailable",
    "Conflict",
    "EntryTooLarge",
    "IndexDamaged",
    "IndexError_",
    "InvalidInput",
    "LockTimeout",
    "MalformedInput",
    "MemstrataError",
    "ModelNotFound",
    "NotFound",
    "NotUnique",
    "PathOutsideStore",
    "ProviderError",
    "ReadOnlyStore",
    "Refused",
    "ReservedFile",
    "RoomClosed",
    "ScopeDenied",
    "SecretDetected",
    "StaleWrite",
    "StorageError",
    "StorageFull",
    "SupersedeDenied",
    "UnknownKind",
    "UnknownLayer",
    "UnknownSupersedes",
]
