"""A search reads a docs row (stage 2) and makes a hit of it once while the index is
unchanged (`search.rowmemo`), and every change of the index, by this process or another,
in a transaction rolled back or not, is seen by the next search."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from memstrata import SearchQuery, Store
from memstrata.index.db import Database
from memstrata.search.rowmemo import RowMemos

STAGE_TWO = "json_each"  # what only stage 2's statement holds (`engine._best_matches`)


@contextmanager
def _statements(store: Store) -> Iterator[list[str]]:
    seen: list[str] = []
    store.db.conn.set_trace_callback(seen.append)
    try:
        yield seen
    finally:
        store.db.conn.set_trace_callback(None)


def _search(store: Store, text: str) -> list[dict[str, object]]:
    q = SearchQuery(text=text, k=10, mode="lexical", now=1_800_000_000.0)
    return [h.to_dict(full=True) for h in store.search(q)]


def _facts(store: Store) -> None:
    facts = store.agent().facts
    for i in range(30):
        facts.set(f"otter{i}", f"otter habitat number {i} by the river")


def _row_id(store: Store, key: str) -> int:
    with store.db.read() as conn:
        rows = conn.execute("SELECT id, uid FROM docs WHERE layer = 'fact'").fetchall()
    return int(next(rid for rid, uid in rows if uid.endswith(f":{key}") or uid.endswith(key)))


def test_a_search_again_reads_no_row_it_read_while_the_index_is_unchanged(home: Path) -> None:
    store = Store(home, agent="finn", watch=False)
    _facts(store)
    first = _search(store, "otter habitat")
    with _statements(store) as seen:
        again = _search(store, "otter habitat")
    assert again == first and len(first) == 10
    assert not [s for s in seen if STAGE_TWO in s]  # every row kept from the first search
    with _statements(store) as seen:
        other = _search(store, "river otter")  # another query, the same rows
    assert not [s for s in seen if STAGE_TWO in s] and other
    store.close()


def test_a_write_by_another_process_is_read_again(home: Path) -> None:
    """The fact keeps its row id (an upsert) and changes its text: a kept row would show
    the old text."""
    store = Store(home, agent="finn", watch=False)
    _facts(store)
    before = {h["uid"]: h["text"] for h in _search(store, "otter habitat")}
    script = (
        "from memstrata import Store\n"
        f"s = Store({str(home)!r}, agent='finn', watch=False)\n"
        "s.agent().facts.set('otter3', 'otter habitat moved upstream')\n"
        "s.close()\n"
    )
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    with _statements(store) as seen:
        after = {h["uid"]: h["text"] for h in _search(store, "otter habitat")}
    assert [s for s in seen if STAGE_TWO in s]
    changed = [uid for uid in after if after[uid] != before.get(uid)]
    assert changed and all("upstream" in str(after[uid]) for uid in changed)
    store.close()


def test_a_write_of_this_process_is_read_again(home: Path) -> None:
    store = Store(home, agent="finn", watch=False)
    _facts(store)
    _search(store, "otter habitat")
    store.agent().facts.set("otter4", "otter habitat flooded")
    assert any("flooded" in str(h["text"]) for h in _search(store, "otter habitat flooded"))
    store.close()


def test_rows_read_inside_a_transaction_rolled_back_are_never_given_again(home: Path) -> None:
    store = Store(home, agent="finn", watch=False)
    _facts(store)
    before = _search(store, "otter habitat")
    try:
        with store.db.write() as conn:
            conn.execute("UPDATE docs SET body = body || ' (draft)' WHERE layer = 'fact'")
            inside = _search(store, "otter habitat")
            raise RuntimeError("roll back")
    except RuntimeError:
        pass
    assert all("(draft)" in str(h["text"]) for h in inside)
    assert _search(store, "otter habitat") == before
    store.close()


def test_a_hit_returned_has_its_own_meta(home: Path) -> None:
    store = Store(home, agent="finn", watch=False)
    store.agent().log.append("THOUGHT", "walrus colony counted", {"count": 12})
    hits = store.search(SearchQuery(text="walrus colony", k=10, mode="lexical"))
    hits[0].meta["changed by the caller"] = True
    again = store.search(SearchQuery(text="walrus colony", k=10, mode="lexical"))
    assert "changed by the caller" not in again[0].meta
    store.close()


def test_the_stamp_follows_commits_of_this_connection_and_of_others(tmp_path: Path) -> None:
    """Rows of docs written since (by this connection or another) are dropped, by either
    change feed; the other rows are kept, whatever else was committed."""
    one, two = Database(tmp_path / "i.db"), Database(tmp_path / "i.db")
    memos = RowMemos()
    where, params = ["d.layer = ?"], ["fact"]
    with two.write() as conn:
        for uid in ("a", "b"):
            conn.execute(
                "INSERT INTO docs(uid, layer, ts, source, line) VALUES (?, 'fact', 1.0, 'f', 1)",
                (uid,),
            )
    ids = {uid: rid for rid, uid in two.conn.execute("SELECT id, uid FROM docs")}

    def kept_rows() -> set[int]:
        with one.read() as conn:
            conn.execute("BEGIN")
            memo = memos.get(conn, where, params)
            conn.execute("COMMIT")
        found = set(memo.rows)
        memo.rows.update((rid, ("a row",)) for rid in ids.values())
        return found

    assert kept_rows() == set()
    assert kept_rows() == {ids["a"], ids["b"]}  # nothing committed since
    with two.write() as conn:  # another connection (another process alike) changes a text
        conn.execute("UPDATE docs SET body = 'new' WHERE uid = 'a'")
    assert kept_rows() == {ids["b"]}
    with one.write() as conn:  # this connection moves a line (`doc_touches`, not `doc_changes`)
        conn.execute("UPDATE docs SET line = 7 WHERE uid = 'b'")
    assert kept_rows() == {ids["a"]}
    with one.write() as conn:  # a commit that writes no doc drops nothing
        conn.execute("INSERT INTO meta(key, value) VALUES ('y', '1')")
    assert kept_rows() == {ids["a"], ids["b"]}
    with two.write() as conn:
        conn.execute("DELETE FROM docs WHERE uid = 'a'")
        conn.execute("INSERT INTO docs(uid, layer, ts, source) VALUES ('c', 'fact', 2.0, 'f')")
    c = two.conn.execute("SELECT id FROM docs WHERE uid = 'c'").fetchone()[0]
    assert c not in kept_rows()  # a new doc, on a row id used before or not
    assert memos.get(one.conn, ["d.layer = ?"], ["ledger"]) is not None
    one.close()
    two.close()


def test_a_write_drops_only_the_rows_it_wrote(home: Path) -> None:
    """After a fact is set again, the next search reads that row only (stage 2), and
    shows its new text and every other hit as a search from scratch shows them."""
    store = Store(home, agent="finn", watch=False)
    _facts(store)
    _search(store, "otter habitat")
    store.agent().facts.set("otter3", "otter habitat moved upstream")
    with _statements(store) as seen:
        after = _search(store, "otter habitat")
    read = [json.loads(m) for s in seen for m in re.findall(r"json_each\('(\[[^']*\])'\)", s)]
    assert read == [[_row_id(store, "otter3")]]  # main: every row of the pool again
    assert any("upstream" in str(h["text"]) for h in after)
    store.close()
    fresh = Store(home, agent="finn", watch=False)
    assert _search(fresh, "otter habitat") == after
    fresh.close()


def test_a_line_moved_without_its_text_is_read_again(home: Path) -> None:
    """A rewrite that shifts a record's line (or ts, meta, source) leaves `doc_changes`
    alone; `doc_touches` tells the kept rows."""
    store = Store(home, agent="finn", watch=False)
    _facts(store)
    before = _search(store, "otter habitat")
    with store.db.write() as conn:
        conn.execute("UPDATE docs SET line = coalesce(line, 0) + 100 WHERE layer = 'fact'")
    after = _search(store, "otter habitat")
    assert [h["line"] for h in after] == [int(str(h["line"] or 0)) + 100 for h in before]
    store.close()
