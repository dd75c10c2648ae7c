"""`bench locomo` is fair: every system gets the same text for a turn; the log row exists."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memstrata.bench import locomo

CONV = [
    {
        "sample_id": "t1",
        "conversation": {
            "speaker_a": "Caroline",
            "speaker_b": "Mel",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Caroline", "dia_id": "D1:1", "text": "I went to a support group."},
                {"speaker": "Mel", "dia_id": "D1:2", "text": "That sounds lovely."},
            ],
            "session_2_date_time": "3:00 pm on 20 June, 2023",
            "session_2": [
                {"speaker": "Mel", "dia_id": "D2:1", "text": "I painted a sunrise."},
                {"speaker": "Caroline", "dia_id": "D2:2", "text": "Beautiful colours."},
            ],
        },
        "qa": [
            {"question": "What did Mel do in June 2023?", "evidence": ["D2:1"], "category": 2},
            {"question": "Who went to a support group?", "evidence": ["D1:1"], "category": 1},
        ],
    }
]


@pytest.fixture(autouse=True)
def _bench_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Built stores are kept in this test's folder, not the user's temp dir."""
    monkeypatch.setenv("MEMSTRATA_BENCH_CACHE", str(tmp_path / "bench-cache"))


def test_turn_text_gives_baselines_the_date_and_speaker() -> None:
    assert (
        locomo.turn_text(
            "Mel", "I painted a sunrise.", locomo.parse_date("3:00 pm on 20 June, 2023")
        )
        == "(20 June 2023) Mel: I painted a sunrise."
    )


def test_baseline_finds_what_only_the_date_and_speaker_say(tmp_path: Path) -> None:
    path = tmp_path / "conv.json"
    path.write_text(json.dumps(CONV))
    convs = locomo.load(path)
    rows = {r["system"]: r for r in locomo.run_fts5_baseline(convs).summary("fts5")}
    # "June" and "Mel" are only in the date and the speaker: raw turn text misses it
    assert rows["fts5"]["hit@5"] == 1.0


def test_rows_for_each_ingest_path(tmp_path: Path) -> None:
    path = tmp_path / "conv.json"
    path.write_text(json.dumps(CONV))
    rows = locomo.run(path, baselines=False)
    systems = [r["system"] for r in rows if r["category"] == "all"]
    assert systems == [
        "memstrata",
        "memstrata-log",
        "memstrata-log-nodecay",
        "memstrata-log-neighbours",
    ]
    assert all(r["hit@20"] == 1.0 for r in rows if r["category"] == "all")
    assert "memstrata-log-nodecay" in locomo.format_rows(rows)
    assert not any("stale_first" in r for r in rows)  # no updated facts in this set


def long_conversation(turns: int = 130) -> list[dict]:
    """A conversation long enough for LOG auto-compaction (past 100 entries) to archive
    its first turns, with a question only the date answers."""
    early = [{"speaker": "Caroline", "dia_id": "D1:1", "text": "I went to a support group."}]
    filler = [
        {
            "speaker": "Mel" if i % 2 else "Caroline",
            "dia_id": f"D1:{i}",
            "text": f"Small talk, remark {i}.",
        }
        for i in range(2, turns)
    ]
    return [
        {
            "sample_id": "long",
            "conversation": {
                "speaker_a": "Caroline",
                "speaker_b": "Mel",
                "session_1_date_time": "1:56 pm on 8 May, 2023",
                "session_1": early + filler,
                "session_2_date_time": "3:00 pm on 20 June, 2023",
                "session_2": [{"speaker": "Mel", "dia_id": "D2:1", "text": "I painted a sunrise."}],
            },
            "qa": [
                {"question": "Who went to a support group?", "evidence": ["D1:1"], "category": 1},
                {"question": "What happened in June?", "evidence": ["D2:1"], "category": 2},
            ],
        }
    ]


def test_log_rows_recall_what_compaction_archived(tmp_path: Path, monkeypatch) -> None:
    """The LOG rows run with the store's defaults (auto-compaction on) and search what an
    agent's recall searches, the log and its archive: the first turn, archived by the
    time the questions are asked, is still found; the date is part of each entry."""
    from memstrata.lifecycle import compaction

    compacted: list[int] = []
    real = compaction.compact_log

    def counting(*args, **kwargs):
        record = real(*args, **kwargs)
        compacted.append(record.entries_count)
        return record

    monkeypatch.setattr(compaction, "compact_log", counting)
    path = tmp_path / "conv.json"
    path.write_text(json.dumps(long_conversation()))
    convs = locomo.load(path)
    for config in ("", "[decay]\nlog = 0\narchive = 0\n", locomo.NEIGHBOURS):
        compacted.clear()
        tally = locomo.run_memstrata_log(convs, config)
        assert sum(compacted) > 0  # compaction did run: D1:1 is in archive/
        by_cat = {r["category"]: r for r in tally.summary("log")}
        assert by_cat[1]["hit@10"] == 1.0  # found in the archive
        assert by_cat[2]["hit@5"] == 1.0  # "June" is only in the entry's date


def test_lexical_semantic_and_hybrid_rows_side_by_side(
    tmp_path: Path, semantic_default: None
) -> None:
    """One run, one store per conversation, three search modes, each row with its
    query latency (the fake embedder stands in for MiniLM: rows, not their values)."""
    path = tmp_path / "conv.json"
    path.write_text(json.dumps(CONV))
    rows = locomo.run(path, modes=locomo.MODES, embedder="fake", baselines=False)
    first = [r for r in rows if r["category"] == "all"]
    assert [r["system"] for r in first][:3] == [
        "memstrata",
        "memstrata-semantic",
        "memstrata-hybrid",
    ]
    for r in first:
        assert 0.0 <= r["p50_ms"] <= r["p95_ms"]
        assert 0.0 <= r["recall@5"] <= r["recall@10"] <= r["recall@20"] <= 1.0
        assert 0.0 <= r["session_recall@10"] <= 1.0
    for r in first[:3]:  # memstrata's rows: the CPU time of the same searches too
        assert 0.0 <= r["cpu_p50_ms"] <= r["cpu_p95_ms"]
    assert "embed_s" in first[1] and "embed_s" not in first[0]
    text = locomo.format_rows(rows)
    assert "memstrata-semantic" in text and "p95ms" in text


UPDATED = [
    {
        "sample_id": "u1",
        "conversation": {
            "speaker_a": "Priya",
            "speaker_b": "Assistant",
            "session_1_date_time": "10:00 am on 8 January, 2024",
            "session_1": [
                {"speaker": "Priya", "dia_id": "D1:1", "text": "The API port is 8080 for now."},
            ],
            "session_2_date_time": "10:00 am on 9 March, 2024",
            "session_2": [
                {"speaker": "Priya", "dia_id": "D2:1", "text": "We moved it: 8443."},
            ],
        },
        "qa": [
            {
                "question": "Which API port do we use?",
                "answer": "8443",
                "evidence": ["D2:1"],
                "outdated_evidence": ["D1:1"],
                "category": 3,
            }
        ],
    }
]


def test_outdated_statement_ranked_first_is_counted(tmp_path: Path) -> None:
    """A gzip file loads; the outdated statement shares the question's words and plain
    FTS5 ranks it first: stale_first says so, on the updated-fact rows only."""
    import gzip

    path = tmp_path / "conv.json.gz"
    path.write_bytes(gzip.compress(json.dumps(UPDATED).encode()))
    convs = locomo.load(path)
    assert convs[0][2][0][3] == {"D1:1"}  # outdated evidence
    rows = {r["category"]: r for r in locomo.run_fts5_baseline(convs).summary("fts5")}
    assert rows["all"]["stale_first"] == 1.0 and rows["all"]["updated"] == 1
    assert "stale" in locomo.format_rows(list(rows.values()))
    tally = locomo.Tally()
    tally.add(3, ["D2:1", "D1:1"], {"D2:1"}, {"D1:1"})
    tally.add(3, ["D9:9"], {"D2:1"}, {"D1:1"})  # neither found: not stale
    assert tally.summary("x")[0]["stale_first"] == 0.0


def test_a_second_run_searches_a_copy_of_the_kept_store(
    tmp_path: Path, semantic_default: None
) -> None:
    """`bench.cache`: the store built by the first run is kept, the second run searches a
    copy (no ingest time to report) and gets the same rows."""
    path = tmp_path / "conv.json"
    path.write_text(json.dumps(CONV))
    keep = ("recall@5", "recall@10", "hit@10", "session_recall@10")

    def first_row() -> dict[str, object]:
        rows = locomo.run(path, modes=("lexical", "hybrid"), embedder="fake", baselines=False,
                          log_rows=False)  # fmt: skip
        return rows[0]

    built, copied = first_row(), first_row()
    assert built["ingest_s"] is not None and copied["ingest_s"] is None
    assert [built[k] for k in keep] == [copied[k] for k in keep]
    assert len(list((tmp_path / "bench-cache").iterdir())) == 1


def test_sessions_are_ranked_by_their_best_turn() -> None:
    """`session_rank@10`: the first 10 distinct sessions of the deep ranking, where
    `session_recall@10` only sees the sessions of the top 10 turns."""
    deep = ["D1:1", "D1:2", "D1:3", *[f"D{n}:1" for n in range(2, 12)]]  # 11 sessions
    tally = locomo.Tally()
    tally.add(4, deep[:10], {"D10:5"}, None, deep)  # session 10 is the 10th distinct one
    tally.add(4, deep[:10], {"D11:5"}, None, deep)  # session 11 is the 11th
    rows = tally.rows["all"]
    assert [r["session_recall@10"] for r in rows] == [0.0, 0.0]
    assert [r["session_rank@10"] for r in rows] == [1.0, 0.0]


def test_a_change_to_ingest_builds_the_store_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `bench` counts as query-side for the cache's code version, yet `_ingest` decides
    # what the store holds: a store built by an earlier `_ingest` was searched again
    # (as in `bench paraphrase`, 77dcdbd). Fails before: the third run copied the store.
    path = tmp_path / "conv.json"
    path.write_text(json.dumps(CONV))
    convs = locomo.load(path)
    said: list[str] = []

    def built() -> bool:
        said.clear()
        locomo.run_memstrata(convs, ("lexical",), progress=said.append)
        assert said
        return not any("from the cache" in s for s in said)

    assert built()
    assert not built()  # the same ingest: copied
    ingest = locomo._ingest

    def another_ingest(home: Path, config: str, turns: list, semantic: bool) -> dict:
        return ingest(home, config, turns, semantic)

    monkeypatch.setattr(locomo, "_ingest", another_ingest)
    assert built()


def _log_split(home: Path, turns: list, compact_late: bool) -> list[list[str]]:
    """`locomo.log_ingest` into a fresh store whose LOG compactions run at once, or only
    once someone waits for the background work (`compact_late`: a busy machine); the
    turn ids in LOG.md, then in each archive."""
    import re
    import threading

    from memstrata.lifecycle import triggers
    from memstrata.store.engine import Engine
    from memstrata.store.view import Store

    home.mkdir()
    (home / "config.toml").write_text("[log]\ncompact_entries = 10\n")
    release = threading.Event()
    if not compact_late:
        release.set()
    compact, drain = triggers.compact_log_if_due, Engine.drain

    def held(store, agent):  # type: ignore[no-untyped-def]
        release.wait(timeout=60)
        return compact(store, agent)

    def draining(engine, timeout=None):  # type: ignore[no-untyped-def]
        release.set()
        drain(engine, timeout)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(triggers, "compact_log_if_due", held)
        mp.setattr(Engine, "drain", draining)
        with Store(home, agent="locomo") as store:
            locomo.log_ingest(store, turns)
    agent = home / "agents" / "locomo"
    dia = re.compile(r'"dia": "(D\d+:\d+)"')
    log = dia.findall((agent / "memory" / "LOG.md").read_text())
    archives = sorted(dia.findall(p.read_text()) for p in (agent / "archive").glob("*.md"))
    return [log, *archives]


def test_the_log_rows_store_does_not_depend_on_when_a_compaction_thread_runs(
    tmp_path: Path,
) -> None:
    # The LOG rows appended every turn back to back and waited for the compactions only
    # at the end: the entries a compaction archived were those written by the time its
    # thread ran (as in `bench paraphrase`, 79a238c). Fails before: `late` archived
    # everything in one compaction.
    path = tmp_path / "conv.json"
    path.write_text(json.dumps(long_conversation(60)))
    ((_sample, turns, _qs),) = locomo.load(path)
    prompt = _log_split(tmp_path / "prompt", turns, compact_late=False)
    late = _log_split(tmp_path / "late", turns, compact_late=True)
    assert prompt == late
    assert len(prompt) > 2  # compacted more than once
