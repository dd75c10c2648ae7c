"""A question that asks who is answered by a record that names a person.

bench agent, analytics-kestrel: "Who has to approve revenue figures?" ranked the constraint
"Deduplicate Recharge charges on charge_id before any revenue figure" (the question's words)
above the fact naming "Marco Ruiz (finance)", who signs off revenue numbers
(`search.people`).
"""

from __future__ import annotations

import pytest

from memstrata.search.people import asks_who, full_names, with_people
from memstrata.search.priors import apply_priors
from memstrata.search.query import Hit

T0 = 1_790_000_000.0

RULE = Hit(
    "ledger:c",
    "ledger",
    1.0,
    "Deduplicate Recharge charges on charge_id before any revenue figure",
    "",
    "",
    T0,
    "ledger.jsonl",
    kind="constraint",
    meta={"kind": "constraint"},
)
PEOPLE = Hit(
    "fact:f:stakeholders",
    "fact",
    0.83,
    "stakeholders",
    "Ingrid Solberg (head of growth) owns the board deck; Marco Ruiz (finance) signs off "
    "revenue numbers",
    "",
    T0,
    "facts.json",
)
FIRST_NAME = Hit(
    "fact:f:q3", "fact", 0.47, "q3_revenue", "198,950 EUR; Marco signed this one off", "", T0, "f"
)
TURN = Hit("session:s:1", "session", 0.9, "Marco Ruiz", "the revenue is fine", "", T0, "s.jsonl")


def _order(query: str, pool: list[Hit]) -> list[str]:
    return [h.uid for h in apply_priors(with_people(query, pool), query)]


def test_a_who_question_ranks_the_record_that_names_a_person_first() -> None:
    query = "Who has to approve revenue figures?"
    assert _order(query, [RULE, PEOPLE]) == ["fact:f:stakeholders", "ledger:c"]
    weighed = {h.uid: h for h in with_people(query, [RULE, PEOPLE, FIRST_NAME, TURN])}
    assert weighed["fact:f:stakeholders"].explain["who_said"] == "Ingrid Solberg"
    assert weighed["fact:f:q3"].explain["who_said"] == "Marco"  # a first name the pool spells out
    assert "who" not in weighed["ledger:c"].explain
    assert weighed["session:s:1"].score == 0.9  # a conversation's turns are said by people
    # not asked who: the records keep their own order
    assert _order("Which revenue figures need approval?", [RULE, PEOPLE]) == [
        "ledger:c",
        "fact:f:stakeholders",
    ]


@pytest.mark.parametrize(
    ("query", "asks"),
    [
        ("Who has to approve revenue figures?", True),
        ("who wanted the raspberry pi builds back?", True),
        ("Who is the Bolt interview with, and when is it?", True),
        ("The report: who reads it, and by when?", True),
        ("Henrike wants to know who actually reads the issue. Can we turn on open rates?", False),
        ("What fixed the login error?", False),
    ],
)
def test_what_asks_who(query: str, asks: bool) -> None:
    assert asks_who(query) is asks


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("Interview with Jonas Berg (Bolt) on April 23", ["Jonas Berg"]),
        ("Ingrid Solberg (head of growth) owns the deck", ["Ingrid Solberg"]),
        ("ask Priya Raman before renewing", ["Priya Raman"]),
        ("Deduplicate Recharge charges on charge_id", []),
        ("Docker Desktop had restarted overnight", []),
        ("## How Ingrid likes it", []),
        ("due Thursday April 23", []),
    ],
)
def test_what_names_a_person(text: str, names: list[str]) -> None:
    assert full_names(text) == names
