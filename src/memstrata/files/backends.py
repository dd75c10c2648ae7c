"""Where a store's truth is kept: the files of its folder (default) or PostgreSQL.

`open_truth` picks the backend from `[backend] url` in the store's config (or
`$MEMSTRATA_DATABASE_URL`): empty means the local files; `postgresql://...` means
`files.postgres.truth.PostgresTruth` (the `postgres` extra, imported only then).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from memstrata.files.local import LocalTruth
from memstrata.files.locks import LockTable

if TYPE_CHECKING:
    from memstrata.config import Config
    from memstrata.files.truth import Truth


def open_truth(home: Path, locks: LockTable, config: Config) -> Truth:
    url = getattr(config, "backend_url", "") or ""
    if not url:
        return LocalTruth(home, locks)
    from memstrata.files.postgres.truth import PostgresTruth

    return PostgresTruth(url, config)
