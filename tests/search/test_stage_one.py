"""Stage 1 (FTS5 ranks) and stage 2 (rows, scope and filters) give the best matches
that pass the filters, however far stage 1 has to widen (`engine._best_matches`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memstrata.index.db import Database
from memstrata.search import engine


def _index(tmp_path: Path) -> Database:
    """1,900 transcript messages and 100 ledger entries holding "alpha", then 100 without."""
    db = Database(tmp_path / "index.db")
    rows = []
    for i in range(2100):
        layer = "session" if i % 20 else "ledger"  # one in twenty is a ledger entry
        body = " ".join(["alpha"] * (1 + i % 7) + ["filler"] * (i % 11)) if i < 2000 else "beta"
        rows.append((f"u{i}", layer, float(i), f"t{i}", body, "src"))
    with db.write() as conn:
        conn.executemany(
            "INSERT INTO docs (uid, layer, ts, title, body, source) VALUES (?, ?, ?, ?, ?, ?)",
            rows,
        )
    return db


def _truth(conn: Any, fetch: int) -> list[Any]:
    """Every match ranked by bm25 (ties by rowid), the ledger's first `fetch`."""
    weights = ", ".join(str(x) for x in engine.COLUMN_WEIGHTS)
    ranked = conn.execute(
        f"SELECT rowid, bm25(docs_fts, {weights}) FROM docs_fts WHERE docs_fts MATCH "
        "'\"alpha\"' ORDER BY 2, rowid"
    ).fetchall()
    layer = dict(conn.execute("SELECT id, layer FROM docs").fetchall())
    return [r for r in ranked if layer[r[0]] == "ledger"][:fetch]


@pytest.mark.parametrize("widen", [1, 8])
def test_stage_one_widens_until_enough_pass_the_filters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, widen: int
) -> None:
    """`widen` 1 asks FTS5 again at each widening; 8 (the default) reads on."""
    monkeypatch.setattr(engine._Ranked, "WIDEN", widen)
    db = _index(tmp_path)
    with db.read() as conn:
        rows, fetch = engine._best_matches(
            conn, '"alpha"', ["d.layer = ?"], ["ledger"], fetch=10, k=10
        )
        # 10 wanted: the best 40 matches hold about 2 ledger entries, the best 320
        # about 16, so stage 1 widens twice (to 2,560: past the 2,000 matches)
        assert fetch == 640
        assert [(r[0], r[-1]) for r in rows] == _truth(conn, 100)
        assert {r[2] for r in rows} == {"ledger"}
    db.close()
