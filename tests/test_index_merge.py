"""A bulk catch-up merges the full-text index into one segment (issue 21 item 7): a
search reads each query term's postings once instead of once per segment, and finds
what it found before, scored alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import memstrata.index.db as index_db
from memstrata import Store
from memstrata.bench.synth import Writer, populate
from memstrata.search.query import SearchQuery

NOW = 1_800_000_000.0


def _segments(store: Store) -> int:
    with store.db.read() as conn:
        return int(conn.execute("SELECT count(DISTINCT segid) FROM docs_fts_idx").fetchone()[0])


def _results(store: Store) -> list[str]:
    w = Writer(3)
    out = []
    for _ in range(40):
        q = SearchQuery(text=w.query(), k=10, mode="lexical", now=NOW)
        hits = json.dumps([[repr(h.score), h.to_dict()] for h in store.search(q)])
        out.append(hits.replace(str(store.home), "HOME"))  # `source` names the store
    return out


def test_a_bulk_catch_up_leaves_one_segment_and_the_same_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    populate(tmp_path / "merged", 1500)
    populate(tmp_path / "as-written", 1500)
    merged = Store(tmp_path / "merged", agent="bench")
    monkeypatch.setattr(index_db, "MERGE_AFTER", 10**9)  # the catch-up as it was
    plain = Store(tmp_path / "as-written", agent="bench")
    assert _segments(merged) == 1
    assert _segments(plain) > 4
    assert _results(merged) == _results(plain)
    merged.close()
    plain.close()


def test_only_a_bulk_write_merges(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    populate(tmp_path, 1500)
    store = Store(tmp_path, agent="bench")
    merges: list[int] = []
    monkeypatch.setattr(store.db, "merge_text", lambda: merges.append(1))
    store.db.merge_text_after(index_db.MERGE_AFTER - 1)  # too few documents
    assert merges == []
    monkeypatch.setattr(index_db, "MERGE_AFTER", 100)
    store.db.merge_text_after(300)  # a fifth of the ~1,500 indexed
    assert merges == []
    store.db.merge_text_after(400)  # more than a quarter
    assert merges == [1]
    store.close()
