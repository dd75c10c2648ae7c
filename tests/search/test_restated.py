"""A fact updated in place stands above the older records that stated its earlier value
(`search.restated`), through `store.search`: chatbot-otterbrook's q-deploy ranked the
decision naming the replaced deployment above the updated fact; firmware-larkspur's
q-current never found the updated fact ("draw on average" against "avg", "uA") while the
archived line with the old measurement ranked first. The stores here are of another
domain: the rule reads no scenario's words."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from memstrata.search import worth
from memstrata.search.query import SearchQuery
from memstrata.store.view import Store

T0 = 1_790_000_000.0


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each write an hour after the one before: a fact set, then updated a day later."""
    ticks = itertools.count()
    now = lambda: T0 + 3600.0 * next(ticks)  # noqa: E731
    for module in ("memstrata.layers.log", "memstrata.layers.ledger", "memstrata.layers.facts"):
        monkeypatch.setattr(f"{module}.now_ts", now)


QUEUE = "Queue: RabbitMQ on the ops cluster, a quorum queue named orders-q1 with 3 replicas"
ASKED = "Which queue on the ops cluster do the orders go through?"


def _queue_store(home: Path, *, update: bool = True) -> Store:
    s = Store(home, agent="ops")
    s.agent().decisions.record(QUEUE, detail="the managed broker costs three times as much")
    s.agent().facts.set("orders_queue", "orders-q1: quorum queue, 3 replicas, RabbitMQ 3.12")
    s.agent().log.append("THOUGHT", "Vacuumed the reporting database; the orders table is smaller")
    if update:
        s.agent().facts.set("orders_queue", "orders-q2: quorum queue, 5 replicas, RabbitMQ 3.13")
    return s


def test_a_fact_updated_since_a_decision_ranks_above_it(tmp_path: Path, clock: None) -> None:
    """The decision names the old queue and shares the question's words; the fact that
    changed it since comes first (fails before: the decision was first)."""
    with _queue_store(tmp_path / "h") as s:
        hits = s.search(SearchQuery(text=ASKED))
        assert "orders-q2" in hits[0].text, [h.text for h in hits]
        assert hits[0].explain["updates"].startswith("ledger:"), hits[0].explain
        assert any(QUEUE in f"{h.title} {h.text}" for h in hits[1:3])


def test_a_fact_never_updated_is_not_lifted(tmp_path: Path, clock: None) -> None:
    """Set once: nothing changed what the decision says, the ranking is left alone."""
    with _queue_store(tmp_path / "h", update=False) as s:
        hits = s.search(SearchQuery(text=ASKED))
        assert not any("updates" in h.explain for h in hits), [h.text for h in hits]


def test_a_why_question_keeps_the_decision_first(tmp_path: Path, clock: None) -> None:
    """ "Why RabbitMQ?" asks the decision's reason, which the fact does not hold."""
    with _queue_store(tmp_path / "h") as s:
        hits = s.search(SearchQuery(text="Why did we put the orders queue on RabbitMQ?"))
        assert not any("updates" in h.explain for h in hits), [h.text for h in hits]


START = "Cold start measured: 840 ms p50 over 200 launches (Pixel 6, release build), no profile"


def _startup_store(home: Path) -> Store:
    s = Store(home, agent="mobile")
    s.agent().log.append("THOUGHT", START)
    s.agent().facts.set("p50_startup", "840 ms p50 over 200 launches (Pixel 6, release build)")
    s.agent().log.append("THOUGHT", "Measured the settings screen: nothing to gain there")
    s.agent().facts.set(
        "p50_startup", "310 ms p50 over 200 launches (Pixel 6, release build), baseline profile"
    )
    return s


def test_a_fact_the_question_words_miss_comes_with_the_line_that_stated_it(
    tmp_path: Path, clock: None
) -> None:
    """ "How long does the app take to open now, measured?" holds no word of the fact
    (`p50_startup`: "310 ms p50 ..."): only the old line ("measured") was found, and its
    old figure came first (fails before: the fact was not returned at all)."""
    with _startup_store(tmp_path / "h") as s:
        hits = s.search(SearchQuery(text="How long does the app take to open now, measured?"))
        assert "310 ms" in hits[0].text, [h.text for h in hits]
        assert hits[0].explain["own_score"] == 0.0  # found through the line, not its words


def test_a_record_written_after_the_update_lends_nothing(tmp_path: Path, clock: None) -> None:
    """A line written after the fact's update states the new value or another subject."""
    with _startup_store(tmp_path / "h") as s:
        s.agent().log.append("THOUGHT", "Cold start measured again: 305 ms p50 over 200 launches")
        hits = s.search(SearchQuery(text="cold start measured again"))
        again = next(h.uid for h in hits if "305 ms" in h.text)
        assert all(h.explain.get("updates") != again for h in hits), [h.explain for h in hits]


def test_no_candidate_is_held_back_while_a_fact_updated_since_a_good_record_is_asked(
    tmp_path: Path, clock: None
) -> None:
    """`search.reach` holds candidates back only when no question rule acts: the lifted
    fact, not in the pool by its own words, would otherwise be weighed without its loan."""
    with _startup_store(tmp_path / "h") as s:
        pool = s.search(SearchQuery(text="cold start measured", mode="lexical", k=20))
        line = [h for h in pool if h.text == START]
        assert line
        asked = SearchQuery(text="How long does the app take to open now, measured?")
        assert not worth.rules_idle(asked, line, {}, s)
        assert not worth.rules_idle(asked, line, {})  # without the store: cannot say
        elsewhere = SearchQuery(text="Which phone did we test on?")  # no present, no word
        assert worth.rules_idle(elsewhere, line, {}, s)


def test_stated_needs_four_shared_words_and_a_share_of_the_fact() -> None:
    from memstrata.search.restated import content_words, stated

    fact = content_words("orders_queue: orders-q2: quorum queue, 5 replicas, RabbitMQ 3.13")
    assert stated(content_words(QUEUE), fact)
    assert not stated(content_words("the orders queue is slow"), fact)  # two words
    many = content_words("orders quorum replicas rabbitmq " + " ".join(f"w{n}" for n in range(40)))
    assert stated(many, fact)  # the share is of the fact's words
    # three shared words happen by chance: support-marlin's "latest", "release" and "v0"
    assert not stated(content_words("orders queue quorum"), fact)
    twelve = content_words("orders queue quorum replicas alpha beta gamma delta epsilon zeta")
    assert not stated(content_words("orders queue quorum replicas"), twelve | {"eta", "iota"})
