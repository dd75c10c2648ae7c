"""Stage 1 (FTS5 ranks) and stage 2 (rows, scope and filters) give the best matches
that pass the filters, however far stage 1 has to widen (`engine._best_matches`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memstrata.index.db import Database
from memstrata.search import engine
from memstrata.search.layermask import LayerMask


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
@pytest.mark.parametrize("fetch", [10, 100])
def test_stage_one_widens_until_enough_pass_the_filters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, widen: int, fetch: int
) -> None:
    """`widen` 1 asks FTS5 again at each widening; 8 (the default) reads on. 10 wanted:
    the best 40 matches hold about 2 ledger entries, the best 320 about 16; 100 wanted:
    the best 400 hold about 20, so stage 1 looks at all 2,000 matches."""
    monkeypatch.setattr(engine._Ranked, "WIDEN", widen)
    db = _index(tmp_path)
    with db.read() as conn:
        rows = engine._best_matches(conn, '"alpha"', ["d.layer = ?"], ["ledger"], fetch, k=10)
        assert [(r[0], r[-1]) for r in rows] == _truth(conn, fetch)
        assert {r[2] for r in rows} == {"ledger"}
    db.close()


def test_the_pool_is_the_best_fetch_that_pass_however_deep_stage_one_looked(
    tmp_path: Path,
) -> None:
    """Stage 1 looks deeper than 4 x fetch to find 10 ledger entries (320 matches hold
    about 16); the pool stays the best 10 of them (it used to keep every match that
    passed at the depth it reached: all 100 here, up to 800 in a default search)."""
    db = _index(tmp_path)
    with db.read() as conn:
        rows = engine._best_matches(conn, '"alpha"', ["d.layer = ?"], ["ledger"], 10, k=10)
        assert len(rows) == 10
        assert [(r[0], r[-1]) for r in rows] == _truth(conn, 10)
    db.close()


def test_stage_one_skips_other_layers_and_sees_a_reused_row_id(tmp_path: Path) -> None:
    """The layer codes (`search.layermask`) drop the transcript matches inside stage 1
    with the same pool as stage 2's filter alone; a ledger entry that takes the row id of
    a deleted transcript message (SQLite reuses the highest id) is found at once."""
    db = _index(tmp_path)
    mask = LayerMask()
    ledger = frozenset({"ledger"}).__contains__
    with db.read() as conn:
        keep = mask.keep(conn, ledger)
        assert keep is not None
        plain = engine._best_matches(conn, '"alpha"', ["d.layer = ?"], ["ledger"], 100, k=10)
        masked = engine._best_matches(
            conn, '"alpha"', ["d.layer = ?"], ["ledger"], 100, k=10, keep=keep
        )
        assert masked == plain
        assert [(r[0], r[-1]) for r in masked] == _truth(conn, 100)
        assert len(masked) == 100
    with db.write() as conn:
        top = conn.execute("SELECT max(id) FROM docs").fetchone()[0]
        conn.execute("DELETE FROM docs WHERE id = ?", (top,))  # a "beta" message
        conn.execute(
            "INSERT INTO docs (uid, layer, ts, title, body, source) VALUES (?, ?, ?, ?, ?, ?)",
            ("new", "ledger", 0.0, "t", "gamma", "src"),
        )
        assert conn.execute("SELECT id FROM docs WHERE uid = 'new'").fetchone()[0] == top
    with db.read() as conn:
        keep = mask.keep(conn, ledger)
        assert keep is not None and keep(top)
        rows = engine._best_matches(conn, '"gamma"', ["d.layer = ?"], ["ledger"], 10, 10, keep)
        assert [r[1] for r in rows] == ["new"]
    db.close()


def test_stage_one_without_its_layer_filter_while_a_statement_using_it_is_open(
    tmp_path: Path,
) -> None:
    """SQLite cannot replace a function a pending statement uses: stage 1 then runs
    without the layer filter (stage 2 still filters) rather than failing the search."""
    db = _index(tmp_path)
    ledger = frozenset({"ledger"}).__contains__
    with db.read() as conn:
        keep = LayerMask().keep(conn, ledger)
        first = engine._best_matches(conn, '"alpha"', ["d.layer = ?"], ["ledger"], 10, 10, keep)
        pending = conn.execute("SELECT memstrata_layer_read(id) FROM docs")
        pending.fetchone()
        again = engine._best_matches(conn, '"alpha"', ["d.layer = ?"], ["ledger"], 10, 10, keep)
        pending.close()
        assert again == first and len(first) == 10
    db.close()
