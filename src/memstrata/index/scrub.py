"""Making deleted index content unrecoverable (used by `memstrata.operations.purge`).

Deleting rows is not enough for "gone": FTS5 keeps a deleted doc's tokens in its
segments until they are merged, SQLite leaves deleted cells in free pages (unless
built with SECURE_DELETE, as Debian's is) and the WAL holds old page images until
a checkpoint resets it. So, after the rows are gone:

    vectors   the purged docs' embeddings (and orphans) deleted; every model's
              generation token changes so other processes reload their matrix
    FTS       'optimize' merges all segments, dropping deleted entries
    pages     secure_delete on, then VACUUM: the file is rebuilt without free space
    WAL       wal_checkpoint(TRUNCATE) copies and truncates it to zero bytes; a
              reader in another process can hold it back (reported, not hidden)
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from memstrata.index.db import BUSY_TIMEOUT_MS, Database


def secure_deletes(db: Database) -> None:
    """Overwrite deleted content from now on, on this connection."""
    with db.read() as conn:
        conn.execute("PRAGMA secure_delete = ON")


def drop_vectors(db: Database, uids: Iterable[str]) -> int:
    """Delete the vectors of `uids` and of every doc that no longer exists."""
    with db.write() as conn:
        models = [r[0] for r in conn.execute("SELECT DISTINCT model FROM vectors")]
        n = sum(conn.execute("DELETE FROM vectors WHERE uid = ?", (u,)).rowcount for u in uids)
        n += conn.execute("DELETE FROM vectors WHERE uid NOT IN (SELECT uid FROM docs)").rowcount
        if n:
            conn.executemany(
                "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                [(f"vectors:{m}:generation", uuid.uuid4().hex) for m in models],
            )
    return n


def compact(db: Database, *, wait_s: float = 2.5) -> bool:
    """Merge FTS segments, VACUUM, and truncate the WAL; False if a reader held it."""
    with db.write() as conn:
        conn.execute("INSERT INTO docs_fts(docs_fts) VALUES ('optimize')")
    secure_deletes(db)
    with db.read() as conn:
        conn.execute("VACUUM")
        # TRUNCATE waits for readers through the busy handler: bound that wait here.
        conn.execute(f"PRAGMA busy_timeout = {int(wait_s * 1000)}")
        try:
            busy, _log, _done = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        finally:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    return not busy
