"""The disk's refusals as memstrata errors: full (ENOSPC, EDQUOT) and read-only (EROFS).

Every write of the files layer runs inside `disk_errors(path)`, so a full or
read-only disk reaches the adapters as one typed error (one clear line in the
CLI, a tool error in MCP) instead of a traceback. The writers guarantee that
such a write stored nothing: an append is cut back to where it started, a
rewrite's temporary file is removed and the old file stays.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator

from memstrata.errors import ReadOnlyStore, StorageError, StorageFull

FULL = frozenset({errno.ENOSPC, errno.EDQUOT})


def translate(exc: OSError, path: str | os.PathLike[str]) -> StorageError | None:
    """The typed error for a disk refusal, or None for any other OS error."""
    if exc.errno in FULL:
        return StorageFull(
            f"no space left on the disk holding {os.fspath(path)}: the write was not stored "
            "(earlier writes are intact); free some space and retry"
        )
    if exc.errno == errno.EROFS:
        return ReadOnlyStore(
            f"{os.fspath(path)} is on a read-only disk: the store can be read and searched, "
            "not written"
        )
    return None


@contextlib.contextmanager
def disk_errors(path: str | os.PathLike[str]) -> Iterator[None]:
    """Re-raise ENOSPC/EDQUOT as StorageFull and EROFS as ReadOnlyStore."""
    try:
        yield
    except StorageError:
        raise
    except OSError as exc:
        typed = translate(exc, path)
        if typed is None:
            raise
        raise typed from exc


def is_read_only(path: str | os.PathLike[str]) -> bool:
    """True when `path` lies on a file system mounted read-only."""
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False
