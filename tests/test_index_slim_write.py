"""Migration 017 (issue 21 item 7): an append writes fewer index pages. `docs_owner` goes
(a prefix of `docs_owner_layer_ts`) and `doc_changes` is keyed by its sequence number;
an index made before it migrates to exactly the schema a new index gets, keeping every
change's sequence number, and the change feed goes on from there."""

from __future__ import annotations

from pathlib import Path

import pytest

import memstrata.index.db as index_db
from memstrata import Store
from memstrata.index.schema import MIGRATIONS


def _schema(store: Store) -> set[tuple[str, str, str]]:
    with store.db.read() as conn:
        rows = conn.execute(
            "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL "
            "AND name NOT LIKE 'docs_fts_%' AND name NOT LIKE 'sqlite_%'"
        ).fetchall()
    return {(t, n, " ".join(s.split())) for t, n, s in rows}


def _changes(store: Store) -> dict[str, int]:
    with store.db.read() as conn:
        return dict(conn.execute("SELECT uid, seq FROM doc_changes").fetchall())


def test_an_index_made_before_017_migrates_to_the_new_schema_keeping_its_changes(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = [m for m in MIGRATIONS if m[0] != "017_slim_write"]
    assert len(before) == len(MIGRATIONS) - 1
    monkeypatch.setattr(index_db, "MIGRATIONS", before)
    with Store(home, agent="finn") as old:
        mem = old.agent()
        for i in range(5):
            mem.log.append("TOOL_USE", f"step {i}")
        mem.now.update("first", ["a"])
        mem.now.update("second", ["b"])  # NOW's doc changed: its uid's seq moved on
        kept = _changes(old)
        with old.db.read() as conn:
            assert conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'docs_owner'").fetchone()
    monkeypatch.undo()
    with Store(home, agent="finn") as migrated:
        assert _changes(migrated) == kept
        top = max(kept.values())
        entry = migrated.agent().log.append("TOOL_USE", "after the migration")
        after = _changes(migrated)
        new = [uid for uid in after if uid not in kept]
        assert len(new) == 1 and entry.id in new[0] and after[new[0]] == top + 1
        schema = _schema(migrated)
        with migrated.db.read() as conn:
            plan = " ".join(
                str(r[-1])
                for r in conn.execute(
                    "EXPLAIN QUERY PLAN SELECT id FROM docs WHERE owner = ? AND layer = ?",
                    ("finn", "log"),
                )
            )
    assert "docs_owner_layer_ts" in plan
    fresh_home = tmp_path / "fresh"
    with Store(fresh_home, agent="finn") as fresh:
        assert _schema(fresh) == schema
    names = {n for _, n, _ in schema}
    assert "docs_owner" not in names and "doc_changes_seq" not in names
    assert any("seq INTEGER PRIMARY KEY" in s for t, n, s in schema if n == "doc_changes")
