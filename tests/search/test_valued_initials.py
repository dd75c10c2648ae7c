"""Words in a question reach a setting the store writes as their initials with a value
(`search.shortforms.word_runs`): firmware-larkspur's "what spreading factor are the nodes
on?" found nothing that says "SF10" (36th), the records writing the setting only so. The
stores here are of another domain, and no table of terms is read: the store's own tokens
(`rf2`, `rf3`) are the evidence that the letters name a setting."""

from __future__ import annotations

import json
from pathlib import Path

from memstrata.search.query import SearchQuery
from memstrata.store.view import Store

ASKED = "what replication factor are the brokers on?"
TOPIC = "orders topic: 12 partitions, RF3, min ISR 2, retention 7 days"


def _store(home: Path) -> Store:
    s = Store(home, agent="data")
    log = s.agent().log
    log.append("THOUGHT", "Moved the orders topic from RF2 to RF3 after losing a broker")
    s.agent().facts.set("orders_topic", TOPIC)
    log.append("THOUGHT", "The replication lag alert fires at 30 s on the brokers")
    log.append("THOUGHT", "The load factor of the session cache is 0.75; the brokers are fine")
    log.append("THOUGHT", "Brokers are on Kafka 3.7 with KRaft, three of them in one rack")
    return s


def test_a_settings_initials_with_a_value_answer_its_name(tmp_path: Path) -> None:
    """ "replication factor" -> `rf3`, `rf2`: the records that say the setting come first
    (fails before: "replication" and "factor" found the lag alert and the load factor)."""
    with _store(tmp_path / "h") as s:
        hits = s.search(SearchQuery(text=ASKED, mode="lexical", k=5))
        said = [f"{h.title} {h.text}" for h in hits]
        assert "RF3" in said[0], said
        assert any(TOPIC in x for x in said[:3]), said


def test_a_single_token_is_a_name_of_its_own(tmp_path: Path) -> None:
    """One value is no setting: a store holding only `ec2` does not turn "error code" into
    it, and the record about error codes stays first."""
    with Store(tmp_path / "h", agent="ops") as s:
        log = s.agent().log
        log.append("THOUGHT", "The API runs on EC2 in eu-west-1 behind an ALB")
        log.append("THOUGHT", "Every error code is listed in docs/errors.md with its meaning")
        hits = s.search(SearchQuery(text="where is each error code explained?", mode="lexical"))
        assert "errors.md" in hits[0].text, [h.text for h in hits]
        assert "ec2" not in json.dumps([h.explain for h in hits]).lower()


def test_word_runs() -> None:
    from memstrata.search.shortforms import word_runs

    assert word_runs("what spreading factor are the nodes on?") == [("spreading", "factor")]
    assert word_runs("is our read latency ok") == [("read", "latency")]
    assert word_runs("what log level and retry budget") == [("log", "level")]  # "and" ends it
    # a verb and its neighbour: firmware-larkspur's "are we still flashing with espflash?"
    # and "when the gateway stops forwarding" searched `sf10` before
    assert word_runs("are we still flashing with espflash?") == []
    assert ("stops", "forwarding") not in word_runs("when the gateway stops forwarding")
