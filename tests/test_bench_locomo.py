"""`bench locomo` is fair: every system gets the same text for a turn; the log row exists."""

from __future__ import annotations

import json
from pathlib import Path

from memstrata.bench import locomo

CONV = [{
    "sample_id": "t1",
    "conversation": {
        "speaker_a": "Caroline", "speaker_b": "Mel",
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
}]


def test_turn_text_gives_baselines_the_date_and_speaker() -> None:
    assert locomo.turn_text("Mel", "I painted a sunrise.", locomo.parse_date(
        "3:00 pm on 20 June, 2023")) == "(20 June 2023) Mel: I painted a sunrise."


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
    assert systems == ["memstrata", "memstrata-log", "memstrata-log-nodecay"]
    assert all(r["hit@20"] == 1.0 for r in rows if r["category"] == "all")
    assert "memstrata-log-nodecay" in locomo.format_rows(rows)
