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


def _blocks(tmp_path: Path) -> Database:
    """1,000 transcript messages holding "alpha", then 200 ledger entries holding it: the
    ledger's row ids are one run (a store built by catching up its files)."""
    db = Database(tmp_path / "index.db")
    rows = [
        (
            f"u{i}",
            "session" if i < 1000 else "ledger",
            float(i),
            f"t{i}",
            "alpha " * (1 + i % 5),
            "s",
        )
        for i in range(1200)
    ]
    with db.write() as conn:
        conn.executemany(
            "INSERT INTO docs (uid, layer, ts, title, body, source) VALUES (?, ?, ?, ?, ?, ?)",
            rows,
        )
    return db


def test_stage_one_reads_a_run_of_row_ids_as_bounds_and_no_function(tmp_path: Path) -> None:
    """The ledger's rows are one run of ids: stage 1 bounds the row id (FTS5 skips the other
    postings itself) instead of calling the layer function per match; same pool."""
    db = _blocks(tmp_path)
    mask = LayerMask()
    ledger = frozenset({"ledger"}).__contains__
    stage1: list[str] = []
    with db.read() as conn:
        ranges = mask.ranges(conn, ledger)
        assert ranges == ((1001, None),)  # the last run is open above
        plain = engine._best_matches(conn, '"alpha"', ["d.layer = ?"], ["ledger"], 100, k=10)
        conn.set_trace_callback(stage1.append)
        bounded = engine._best_matches(
            conn, '"alpha"', ["d.layer = ?"], ["ledger"], 100, 10, ranges=ranges
        )
        conn.set_trace_callback(None)
        assert bounded == plain and len(bounded) == 100
        [sql] = [s for s in stage1 if "bm25(" in s]
        assert "rowid >= 1001" in sql and "memstrata_layer_read" not in sql
    db.close()


def test_a_default_search_hands_stage_one_the_ledger_as_row_id_bounds(home: Path) -> None:
    """A store built from its files (transcripts, then the ledger): a default search (no
    transcripts) gives stage 1 the ledger's run of row ids, not the layer function; a
    mask over interleaved layers (`_index`: one ledger entry in twenty) has no ranges."""
    from memstrata import Store
    from memstrata.bench.synth import populate

    populate(home, 400)
    seen: list[tuple[Any, Any]] = []
    real = engine._best_matches

    def spy(*args: Any, **kw: Any) -> list[Any]:
        seen.append((args[6], args[8]))  # keep, ranges
        return real(*args, **kw)

    with Store(home, agent="bench") as store, pytest.MonkeyPatch.context() as mp:
        mp.setattr(engine, "_best_matches", spy)
        assert store.search("the api token", mode="lexical")
        with store.db.read() as conn:
            ledger = [r[0] for r in conn.execute("SELECT id FROM docs WHERE layer = 'ledger'")]
    assert len(ledger) == 100
    assert seen == [(None, ((min(ledger), None),))]  # before: (the function, no ranges)
    (home / "interleaved").mkdir()
    db = _index(home / "interleaved")
    with db.read() as conn:
        assert LayerMask().ranges(conn, frozenset({"ledger"}).__contains__) is None
    db.close()


def test_ranges_let_through_exactly_the_row_ids_the_function_does() -> None:
    """Random masks, up to and past `MAX_RANGES` runs: `within`'s SQL keeps exactly the
    ids `keep` does (ids past the codes: the last run's, open above)."""
    import random
    import sqlite3

    from memstrata.search.layermask import _runs, within

    rng = random.Random(3)  # row id 0 is never a doc's: masks from 1
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (rowid INTEGER PRIMARY KEY)")
    conn.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(0, 80)])
    checked = 0
    for _ in range(400):
        n = rng.randint(1, 60)
        kept = bytearray(rng.choice(b"\x00\x01\x01") if rng.random() < 0.3 else 1 for _ in range(n))
        if rng.random() < 0.5:  # long runs, as a store built from its files has
            kept = bytearray(
                b"".join(bytes([rng.randint(0, 1)]) * rng.randint(1, 12) for _ in range(6))
            )
        ranges = _runs(kept, LayerMask.MAX_RANGES)
        runs = len([1 for i in range(1, len(kept)) if kept[i] and (i == 1 or not kept[i - 1])])
        if runs > LayerMask.MAX_RANGES:
            assert ranges is None
            continue
        assert ranges is not None
        sql, args = within(ranges)
        got = [r[0] for r in conn.execute(f"SELECT rowid FROM t WHERE rowid > 0{sql}", args)]
        want = [i for i in range(1, 80) if (kept[i] if i < len(kept) else kept[-1])]
        if len(kept) < 2:
            continue
        assert got == want, (bytes(kept), ranges)
        checked += 1
    assert checked > 200
