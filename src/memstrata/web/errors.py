"""The one place where memstrata's typed errors become HTTP status codes.

Every error `errors.py` defines has a `code`; `status_of` walks the class's MRO and
takes the first code in `STATUS`, so a new subclass inherits its parent's status
until it is given its own. Bodies are always

    {"error": {"code": "stale_write", "message": "NOW.md changed since it was read; ..."}}

| error                                    | status |
|------------------------------------------|--------|
| InvalidInput (malformed, unknown kind)   | 400    |
| EntryTooLarge                            | 413    |
| (request body fails the schema)          | 422    |
| NotFound                                 | 404    |
| Conflict (stale write, already superseded, not unique, exists) | 409 |
| ScopeDenied / SupersedeDenied            | 403    |
| Refused (a policy refused the write)     | 422    |
| ProviderError (embedder / LLM)           | 502    |
| IndexError_, LockTimeout, read-only store| 503    |
| StorageFull                              | 507    |
"""

from __future__ import annotations

from typing import Any

from memstrata.errors import MemstrataError

STATUS: dict[str, int] = {
    "invalid_input": 400,
    "entry_too_large": 413,
    "not_found": 404,
    "conflict": 409,
    "scope_denied": 403,
    "refused": 422,
    "index_error": 503,
    "provider_error": 502,
    "lock_timeout": 503,
    "storage_error": 503,
    "storage_full": 507,
    "read_only_store": 503,
}
RETRY_AFTER = {"lock_timeout": "1", "index_error": "5"}


def status_of(exc: MemstrataError) -> int:
    for cls in type(exc).__mro__:
        code = cls.__dict__.get("code")
        if isinstance(code, str) and code in STATUS:
            return STATUS[code]
    return 500


def error_body(code: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, **extra}}


def translate(exc: MemstrataError) -> tuple[int, dict[str, Any], dict[str, str]]:
    """(status, JSON body, extra headers) for a library error."""
    extra: dict[str, Any] = {}
    head = getattr(exc, "head", None)
    if isinstance(head, str):
        extra["head"] = head  # AlreadySuperseded: the entry to supersede instead
    headers: dict[str, str] = {}
    for cls in type(exc).__mro__:
        code = cls.__dict__.get("code")
        if isinstance(code, str) and code in RETRY_AFTER:
            headers["Retry-After"] = RETRY_AFTER[code]
            break
    return status_of(exc), error_body(exc.code, str(exc), **extra), headers
