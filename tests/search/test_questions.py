"""A user's earlier question ranks below the records that state something
(`search.questions`), through MemoryManager's turns and `store.search`.

renovation-ashgrove q-forecast: a question the user asked minutes before ("How much money
do we have for the whole job now?") came 3rd for a later one, above the reply that held the
answer. The store here is of another domain: the rule reads no scenario's words."""

from __future__ import annotations

from pathlib import Path

from memstrata import MemoryManager
from memstrata.search.query import SearchQuery

ASKED = "How much of the kitchen money have we spent so far?"
RULE = "Kitchen money goes on units first, worktops second, appliances third and the fitter last"


def _manager(home: Path, *, last: bool = False) -> MemoryManager:
    """`last`: the question is the last turn (NOW.md restates it)."""
    m = MemoryManager("finn", home)
    mem = m.store.agent()
    mem.log.append("THOUGHT", "The kitchen fitter measured the room on Tuesday")
    mem.log.append("THOUGHT", "Ordered kitchen handles in brushed brass")
    m.save_fact(
        "kitchen_budget",
        "£12,000 of kitchen money, £8,900 of it gone on units and the fitter",
        "general",
    )
    m.save_fact("kitchen_left", "£3,100 of kitchen money left after the units", "general")
    m.record_decision(RULE)
    with m.turn(ASKED, session_id="s2") as turn:
        turn.final_response("Checking.")
    if not last:
        with m.turn("Thanks, that's all.", session_id="s3") as turn:
            turn.final_response("Bye.")
    return m


def test_an_earlier_question_of_the_user_ranks_below_a_statement(home: Path) -> None:
    """The user's question holds every word of the later one; the fact that answers it
    holds two. The question, demoted, stays in the results below it (fails before: the
    question was worth 1.0 x 0.5 x 0.5 = 0.25, the fact 0.23)."""
    m = _manager(home)
    hits = m.store.search(SearchQuery(text="Where are we with the kitchen money spent?", k=6))
    texts = [f"{h.title} {h.text}" for h in hits]
    asked = next(i for i, t in enumerate(texts) if ASKED in t)  # demoted, not hidden
    spent = next(i for i, t in enumerate(texts) if "£8,900 of it gone" in t)
    assert spent < asked, texts
    assert hits[asked].explain["only_asks"] == 0.5
    m.close()


def test_a_prompt_that_states_something_is_not_demoted(home: Path) -> None:
    """ "The sheet went wrong after we cut the loft. What broke?" says what happened."""
    m = MemoryManager("finn", home)
    said = "The kitchen sheet went wrong after we cut the loft rows. What broke in it?"
    with m.turn(said, session_id="s1") as turn:
        turn.final_response("The total named the loft rows.")
    with m.turn("Thanks.", session_id="s2") as turn:
        turn.final_response("Bye.")
    hits = m.store.search(SearchQuery(text="kitchen sheet loft rows", k=6))
    prompt = next(h for h in hits if said in h.text)
    assert "only_asks" not in prompt.explain
    m.close()


def test_nows_task_complete_restating_a_question_ranks_as_the_question(home: Path) -> None:
    """AgentLoop leaves NOW.md saying "Task complete: <prompt>" after the turn; that copy
    of the user's question came back as an `intent` hit (renovation-ashgrove q-forecast).
    It is the question again: demoted as the prompt is, and never shown for the same
    question (fails before: worth 0.23 with no `only_asks`, twice the prompt it restates,
    and shown 4th for the same words, where that prompt is left out)."""
    m = _manager(home, last=True)
    for n in range(8):  # "kitchen" held by fewer than half of the memories (FTS5's IDF)
        m.store.agent().log.append("THOUGHT", f"Garden shed note {n}: the roof felt is fine")
    assert f"Task complete: {ASKED}" in (m.store.agent().now.read() or "")
    hits = m.store.search(SearchQuery(text="Where are we with the kitchen money spent?", k=8))
    texts = [f"{h.layer} {h.text}" for h in hits]
    copy = next(i for i, h in enumerate(hits) if h.layer == "now")
    spent = next(i for i, t in enumerate(texts) if "£8,900 of it gone" in t)
    assert spent < copy, texts
    assert hits[copy].explain["only_asks"] == 0.5
    again = m.store.search(SearchQuery(text=ASKED, k=8))
    assert again and all(h.layer != "now" and ASKED not in h.text for h in again), [
        (h.layer, h.text) for h in again
    ]
    m.close()
