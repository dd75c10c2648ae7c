"""A question that asks how long weighs the records that state a length of time
(`search.durations`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstrata.search.durations import asks_duration, stated_duration, with_durations
from memstrata.search.query import Hit, SearchQuery
from memstrata.store.view import Store


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("7 days, one renewal of 7 more days", "7 days"),
        ("15-minute access tokens", "15-minute"),
        ("30 s timeout on every call", "30 s"),
        ("the restore takes ten hours", "ten hours"),
        ("187 ms per 5-second clip", "187 ms"),
        ("half an hour", "half an hour"),
        ("Python 3.11 on a 40 GB disk", None),
        ("2,500 words, due May 22", None),
        ("50 cents a day per tool", None),
        ("nightly at 03:00", None),
    ],
)
def test_a_stated_duration_is_a_number_and_a_unit_of_time(text: str, said: str | None) -> None:
    assert stated_duration(text) == said


def test_the_questions_that_ask_for_a_duration() -> None:
    asks = ["How long may a member keep a borrowed tool?", "how quickly does it run", "how soon"]
    assert all(asks_duration(q) for q in asks)
    assert not any(asks_duration(q) for q in ["How many tools?", "What is it long for?"])


def test_a_how_long_question_finds_the_record_that_states_a_duration(tmp_path: Path) -> None:
    """The loan period and the loan limit share the question's words alike (the newer
    one first on a tie); only the loan period says how long."""
    with Store(tmp_path / "h", agent="me") as s:
        facts = s.agent().facts
        facts.set("loan_period", "a member may keep a borrowed tool for 7 days")
        facts.set("max_loans", "a member may keep a borrowed tool, three at most")  # newer
        facts.set("tool_kinds", "a member may borrow a drill, a ladder or a saw")
        hits = s.search(SearchQuery(text="How long may a member keep a borrowed tool?", k=3))
        assert hits[0].title == "loan_period", [(h.title, h.score) for h in hits]
        assert hits[0].explain.get("duration_said") == "7 days", hits[0].explain


def test_only_a_question_asking_for_a_duration_weighs_durations() -> None:
    hit = Hit("fact:f:k", "fact", 0.5, "loan_period", "7 days", "", 0.0, "f")
    assert with_durations("Who may keep a tool?", [hit])[0].score == 0.5
    assert with_durations("How long may one keep a tool?", [hit])[0].score == 0.75


def test_each_line_of_a_section_leads_with_its_own_statement() -> None:
    """A Markdown section is a list of statements: the one on its third line states the
    duration (paraphrase dev p050, a "Constraints" section); a clause after the first of
    a line does not lead it."""
    section = Hit(
        "md:c#1",
        "context",
        0.5,
        "Constraints",
        "## Constraints\n- Money in integer cents\n- Tenants never see each other's data\n"
        "- The driver app must keep working offline for up to 8 hours and sync later",
        "",
        0.0,
        "CONTEXT.md",
    )
    weighed = with_durations("How long must the courier client work offline?", [section])[0]
    assert weighed.explain.get("duration_said") == "8 hours", weighed.explain
    late = section.but(text="## Rules\n- Sync when back in coverage; retry after 30 s")
    assert "duration" not in with_durations("How long until it syncs?", [late])[0].explain
