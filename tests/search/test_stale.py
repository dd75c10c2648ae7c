"""A decision in force that carries a value a fact updated since has changed
(`search.stale`, applied by `search.restated`), through `store.search`.

renovation-ashgrove q-start: "Builder: Nowak Build ..., starting Monday 8 March" stayed in
force (the builder did not change) while the fact `start_date` was updated to "Monday 15
March ... a week later because of the party wall award"; "When do the builders actually
turn up?" ranked the decision, its date stale, above the fact. The store here is of
another domain: the rule reads no scenario's words."""

from __future__ import annotations

from pathlib import Path

from tests.search.test_restated import clock  # noqa: F401

from memstrata.search.query import SearchQuery
from memstrata.search.stale import carries, changed_frames, frames
from memstrata.search.text import tokenize
from memstrata.store.view import Store

VENUE = "Venue: Granary Hall in Leeds, the main room for 120, from Saturday 12 June, £2,400"


def _venue_store(home: Path) -> Store:
    s = Store(home, agent="events")
    s.agent().decisions.record(VENUE, detail="the only hall with step-free access")
    s.agent().facts.set("event_date", "Saturday 12 June 2027 (Granary Hall, Leeds)")
    s.agent().facts.set("catering_quote", "£1,900 including VAT for 120 (Granary Hall kitchen)")
    s.agent().log.append("THOUGHT", "Sent the save-the-date to the speakers")
    s.agent().facts.set(
        "event_date",
        "Saturday 19 June 2027 (Granary Hall, Leeds), a week later because the floor is relaid",
    )
    return s


def _order(hits: list) -> list[str]:  # type: ignore[type-arg]
    return [h.uid for h in hits]


def test_a_fact_updated_since_ranks_above_the_decision_carrying_its_old_value(
    tmp_path: Path,
    clock: None,  # noqa: F811
) -> None:
    """ "When ...?" of a date the decision still says: the updated fact comes above it, the
    decision stays next (fails before: the decision ranked above the fact)."""
    with _venue_store(tmp_path / "h") as s:
        hits = s.search(SearchQuery(text="When do we actually get into the Granary Hall in Leeds?"))
        uids = _order(hits)
        fact = "fact:events:event_date"
        decision = next(h.uid for h in hits if h.layer == "ledger")
        assert uids.index(fact) < uids.index(decision), [h.text for h in hits]
        lifted = hits[uids.index(fact)]
        assert lifted.explain.get("updates") == decision, lifted.explain


def test_no_lift_for_a_why_question_or_one_that_asks_no_date(
    tmp_path: Path,
    clock: None,  # noqa: F811
) -> None:
    """ "Why the Granary Hall?" asks the decision's reason; "how many does the Granary Hall
    seat?" asks no date and no present: the ranking is left alone."""
    with _venue_store(tmp_path / "h") as s:
        for asked in (
            "Why did we go with the Granary Hall in Leeds?",
            "How many does the Granary Hall in Leeds seat?",
        ):
            hits = s.search(SearchQuery(text=asked))
            assert not any("updates" in h.explain for h in hits), [h.explain for h in hits]


def test_frames_hold_a_number_by_the_words_either_side() -> None:
    said = tokenize("Builder: Nowak, £74,880 including VAT, starting Monday 8 March")
    assert frames(said) == {("nowak", "including"): {"74 880"}, ("monday", "march"): {"8"}}
    new = tokenize("start_date: Monday 15 March 2027 (Nowak Build)")
    assert changed_frames(said, new) == [("monday", "march")]
    assert changed_frames(said, tokenize("start_date: Monday 8 March 2027")) == []


def test_a_frame_two_subjects_share_is_not_a_changed_value() -> None:
    """ "£2,950 including VAT" (worktops) and "£99,650 including VAT" (the forecast) share a
    frame but no subject: the record does not carry the fact's value."""
    tops = tokenize("Worktops: quartz at £2,950 including VAT")
    forecast = tokenize("budget_forecast: the spend at £99,650 including VAT")
    assert changed_frames(tops, forecast)  # the same frame, another number
    shared = {"including", "vat"}
    assert carries(tops, forecast, shared) == []
    assert carries(tops, forecast, shared | {"quartz", "worktops"})  # a subject shared
