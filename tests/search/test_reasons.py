"""A question that asks why a choice was made is answered by a record that states a reason.

bench agent, web-quillmark: "Why did we take the newsletter off Resend?" ranked the
CONTEXT.md Decisions section ("Weekly issue: Amazon SES ...; Resend only for magic
links") above the decision whose why says "11,800 subscribers would exceed Resend's
50,000 emails a month" (`search.reasons`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memstrata import MemoryManager
from memstrata.search.priors import apply_priors
from memstrata.search.query import Hit, SearchQuery
from memstrata.search.reasons import asks_reason, reason_of, with_reasons

T0 = 1_790_000_000.0

DECISION = Hit(
    "ledger:d",
    "ledger",
    0.55,
    "Send the weekly issue through Amazon SES; Resend stays for sign-in mails only",
    "11,800 subscribers would exceed Resend's 50,000 emails a month",
    "",
    T0,
    "ledger.jsonl",
    kind="decision",
    meta={"kind": "decision", "detail": "11,800 subscribers would exceed Resend's 50,000"},
)
SECTION = Hit(
    "md:context#2",
    "context",
    0.70,
    "Decisions",
    "## Decisions\n- Weekly issue: Amazon SES, batches of 50; Resend only for magic links",
    "",
    T0,
    "CONTEXT.md",
)


def _order(query: str) -> list[str]:
    return [h.uid for h in apply_priors(with_reasons(query, [DECISION, SECTION]), query)]


def test_a_why_question_ranks_the_record_that_gives_the_reason_first() -> None:
    assert _order("Why did we take the newsletter off Resend?") == ["ledger:d", "md:context#2"]
    [weighed] = [h for h in with_reasons("why did we drop Resend?", [DECISION])]
    assert weighed.score == pytest.approx(0.55 * 1.5)
    assert weighed.explain["reason"] == 1.5 and weighed.explain["reason_said"] == "rationale"
    # asked what is, not why: the records keep their own scores
    assert _order("which service sends the newsletter, Resend?") == ["md:context#2", "ledger:d"]


def test_a_why_about_a_failure_asks_for_its_cause_not_a_rationale() -> None:
    """pipeline-harvest: "Why couldn't we download the sales files at first?" is answered by
    the SFTP error, not by a decision with a rationale on the sales files."""
    assert _order("Why couldn't we send the newsletter through Resend at first?")[0] == (
        "md:context#2"
    )
    assert _order("Why did the Resend send crash?")[0] == "md:context#2"


@pytest.mark.parametrize(
    ("query", "asks"),
    [
        ("Why did we give up on SQLite?", True),
        ("why'd we ditch google maps", True),
        ("why aren't we using my gpg key for releases anymore?", True),
        ("What was the reason we dropped pandas?", True),
        ("how come we moved the schedule?", True),
        ("Why did the price display test crash?", False),
        ("Why could we not download the hospital study at first?", False),
        ("What database does the service run on now?", False),
        ("Whyte & Mackay invoice total", False),
    ],
)
def test_what_asks_why_a_choice_was_made(query: str, asks: bool) -> None:
    assert asks_reason(query) is asks


def test_what_states_a_reason() -> None:
    def note(text: str) -> Hit:
        return Hit("n", "log", 1.0, "THOUGHT", text, "", T0, "LOG.md", kind="THOUGHT")

    assert reason_of(DECISION) == "rationale"
    assert reason_of(note("Decision: Hugo for the docs Why: pip conflicts every release")) == (
        "Why:"
    )
    assert reason_of(note("Dropped pandas because it ran out of memory")) == "because"
    assert reason_of(note("Due to the paywall we used the preprint")) == "due to"
    assert reason_of(note("Weekly issue: Amazon SES, batches of 50")) is None
    assert reason_of(SECTION) is None


def test_a_conversations_turns_keep_their_scores_on_a_why_question() -> None:
    """LoCoMo dev: "Why did Gina combine her clothing business with dance?" ranked a turn on
    another subject that says "because" above the turn that answers; every turn of a chat is
    talk, and "because" in it is no recorded rationale (as `search.people` leaves turns)."""
    query = "Why did Gina combine her clothing business with dance?"
    talk = Hit(
        "session:s:3",
        "session",
        0.8,
        "Gina",
        "I started the store because I lost my job",
        "",
        T0,
        "s.jsonl",
        kind="user",
    )
    answer = Hit(
        "session:s:8",
        "session",
        0.9,
        "Gina",
        "Dance and fashion both let me express myself",
        "",
        T0,
        "s.jsonl",
        kind="user",
    )
    assert asks_reason(query) and reason_of(talk) == "because"
    kept = {h.uid: h for h in with_reasons(query, [talk, answer])}
    assert kept["session:s:3"].score == 0.8 and "reason" not in kept["session:s:3"].explain
    assert [h.uid for h in apply_priors(list(kept.values()), query)] == [
        "session:s:8",
        "session:s:3",
    ]
    # the same words in a curated record still give a reason
    [noted] = with_reasons(query, [talk.but(uid="log:1", layer="log")])
    assert noted.score == pytest.approx(0.8 * 1.5)


def test_a_users_change_of_plan_states_no_reason_by_its_bookkeeping_detail(home: Path) -> None:
    """renovation-ashgrove q-worktop-why: the record a user's change of plan writes
    (`lifecycle.reversal`) carries "Changed by the user on <date>; it replaces <id>" as its
    detail; read as a rationale, it ranked 3rd for a why-question on another subject. The
    detail says when and what, not why (fails before: `reason` 1.5 on it)."""
    m = MemoryManager("finn", home)
    for n in range(8):  # "kitchen" held by fewer than half of the memories (FTS5's IDF)
        m.store.agent().log.append("THOUGHT", f"Garden shed note {n}: the roof felt is fine")
    m.record_decision("Worktop: laminate in oak effect, 38 mm, for the kitchen")
    m.record_decision(
        "Flooring: engineered oak in the kitchen",
        detail="solid oak would cup over the underfloor heating",
    )
    with m.turn("Change of plan on the worktop: white quartz, 20 mm, for the kitchen.") as t:
        t.final_response("Noted: quartz it is.")
    hits = m.store.search(SearchQuery(text="Why did we go for oak in the kitchen?", k=8))
    by = {h.text or h.title: h for h in hits if h.layer == "ledger"}
    [changed] = [h for h in by.values() if str(h.meta.get("ref", "")).startswith("stated by")]
    assert "Changed by the user" in changed.meta["detail"]
    assert "reason" not in changed.explain, changed.explain
    floor = next(h for h in hits if "engineered oak" in h.title + h.text)
    assert floor.explain["reason"] == 1.5
    m.close()
