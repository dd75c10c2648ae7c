"""A large batch of docs fills FTS5 in one statement after its rows (issue 21 item 7).

Indexing a store of transcripts made FTS5 take each new row in its own trigger program
(`docs_ai`): half of the SQL time of indexing 100k entries. `index.docs._upsert_bulk`
writes the rows, then their FTS rows in one `INSERT ... SELECT`, inside the caller's
transaction and a savepoint. These tests count the trigger's runs, check FTS5's own
integrity check against the docs table, and that a failure leaves nothing behind.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from memstrata import Store
from memstrata.index.docs import BULK_DOCS, Doc, upsert_docs


def _transcript(home: Path, n: int, agent: str = "bench") -> None:
    folder = home / "agents" / agent / "sessions"
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "s1.jsonl", "w", encoding="utf-8") as fh:
        for i in range(n):
            msg = {
                "timestamp": f"2026-11-01T10:{i // 60:02d}:{i % 60:02d}Z",
                "role": "user" if i % 2 else "assistant",
                "content": f"message {i} about word{i} and the shared topic",
            }
            fh.write(json.dumps(msg) + "\n")


def _fts_ok(conn: sqlite3.Connection) -> None:
    # FTS5 compares its index with the docs table (rank 1: the external content too)
    conn.execute("INSERT INTO docs_fts(docs_fts, rank) VALUES ('integrity-check', 1)")


def _has_trigger(conn: sqlite3.Connection) -> bool:
    row = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = 'docs_ai'")
    return row.fetchone() is not None


def test_a_transcript_is_indexed_without_a_trigger_run_per_message(home: Path) -> None:
    _transcript(home, 200)
    traced: list[str] = []
    real_connect = sqlite3.connect

    def tracing_connect(*args: object, **kw: object) -> sqlite3.Connection:
        conn = real_connect(*args, **kw)  # type: ignore[arg-type]
        conn.set_trace_callback(traced.append)
        return conn

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sqlite3, "connect", tracing_connect)
        store = Store(home, agent="bench")
    with store:
        # one statement fills FTS5 for the 200 messages (before: none, the trigger per row)
        assert (
            sum(
                "INSERT INTO docs_fts(rowid, title, body, tags, context) SELECT" in s
                for s in traced
            )
            == 1
        )
        with store.db.read() as conn:
            _fts_ok(conn)
            assert _has_trigger(conn)
            n = conn.execute("SELECT count(*) FROM docs WHERE layer = 'session'").fetchone()[0]
            assert n == 200
        hits = store.search("word137", layers=("sessions",), mode="lexical")
        assert [h.text for h in hits][:1] == ["message 137 about word137 and the shared topic"]


def _docs(n: int, word: str, start: int = 0) -> list[Doc]:
    return [
        Doc(uid=f"t:{i}", layer="note", ts=1.0e9 + i, body=f"{word} number{i}", source="t.md")
        for i in range(start, start + n)
    ]


def _count(conn: sqlite3.Connection, match: str) -> int:
    sql = "SELECT count(*) FROM docs_fts WHERE docs_fts MATCH ?"
    return int(conn.execute(sql, (match,)).fetchone()[0])


def test_a_bulk_batch_updates_indexed_uids_and_adds_new_ones(home: Path) -> None:
    with Store(home, agent="bench") as store:
        with store.db.write() as conn:
            upsert_docs(conn, _docs(BULK_DOCS, "alpha"))
        with store.db.write() as conn:  # half already indexed (updated), half new
            upsert_docs(conn, _docs(BULK_DOCS, "beta", start=BULK_DOCS // 2))
        with store.db.read() as conn:
            _fts_ok(conn)
            assert _count(conn, "alpha") == BULK_DOCS // 2
            assert _count(conn, "beta") == BULK_DOCS
            assert _has_trigger(conn)


def test_a_batch_repeating_a_uid_takes_the_row_by_row_path(home: Path) -> None:
    docs = _docs(BULK_DOCS, "gamma")
    docs.append(docs[0].but(body="delta again"))
    with Store(home, agent="bench") as store:
        with store.db.write() as conn:
            upsert_docs(conn, docs)
        with store.db.read() as conn:
            _fts_ok(conn)
            assert _count(conn, "gamma") == BULK_DOCS - 1
            assert _count(conn, "delta") == 1


def test_a_failed_bulk_batch_leaves_the_trigger_and_no_rows(home: Path) -> None:
    bad = _docs(BULK_DOCS, "epsilon")
    bad[-1] = bad[-1].but(layer=None)  # docs.layer is NOT NULL: the last row fails
    with Store(home, agent="bench") as store:
        with store.db.write() as conn:
            before = conn.execute("SELECT count(*) FROM docs").fetchone()[0]
            with pytest.raises(sqlite3.IntegrityError):
                upsert_docs(conn, bad)
            # a caller that goes on in the same transaction commits a consistent index
            assert conn.execute("SELECT count(*) FROM docs").fetchone()[0] == before
            assert _has_trigger(conn)
            upsert_docs(conn, _docs(3, "zeta", start=500))  # row by row: the trigger runs
        with store.db.read() as conn:
            _fts_ok(conn)
            assert _count(conn, "epsilon") == 0
            assert _count(conn, "zeta") == 3
