"""A turn's conclusions answer what its prompt asked (`search.turns`), through `store.search`."""

from __future__ import annotations

import time
from pathlib import Path

from memstrata.search.query import SearchQuery
from memstrata.store.view import Store

SID = "5e047e7b-6a07-5188-ba7b-8f14598440c6"


def _turn(s: Store, prompt: str, notes: list[tuple[str, str]], final: str) -> None:
    log = s.agent().log
    log.append("USER_FEEDBACK", prompt, {"event": "user_intent", "session": SID})
    log.append(
        "TOOL_USE",
        'Bash(command="journalctl -u docker --since 06:00") -> ok, 254 chars',
        {"tool": "Bash", "args": {"command": "journalctl -u docker --since 06:00"}},
    )
    for kind, text in notes:
        log.append(kind, text, {"session": SID})
    log.append("SYSTEM", f"Final response: {final}", {"event": "final_response", "session": SID})


def _store(home: Path) -> Store:
    s = Store(home, agent="me")
    _turn(
        s,
        "The stream went silent at 06:10 this morning.",
        [
            (
                "THOUGHT",
                "Prometheus kept every series with no retention limit and filled the root disk",
            )
        ],
        "The root disk was full: Prometheus had 29 GB of data on a 40 GB disk.",
    )
    _turn(
        s,
        "Set up the weekly report for the treasurer.",
        [("THOUGHT", "The treasurer wants an Excel workbook by Monday")],
        "The report is written with xlsxwriter.",
    )
    s.agent().log.append("THOUGHT", "Listeners asked for a stream at 64 kbps on mobile")
    return s


def test_the_answer_in_a_prompts_turn_is_found_by_the_prompts_words(tmp_path: Path) -> None:
    """ "Why did the stream go silent?" shares no word with what the agent concluded in the
    turn that reported it; the prompt is found, and with it the turn's note and reply."""
    with _store(tmp_path / "h") as s:
        hits = s.search(SearchQuery(text="Why did the stream go silent?", k=5, mode="lexical"))
        texts = [h.text for h in hits]
        top3 = " | ".join(texts[:3])
        assert "filled the root disk" in top3 or "root disk was full" in top3, texts
        lifted = [h for h in hits if "root disk" in h.text]
        assert lifted and all(h.explain.get("turn_of") for h in lifted), [h.explain for h in lifted]
        # the other turn's conclusions are not lifted by this question, nor its tool trace
        assert not any("xlsxwriter" in t or "Excel" in t for t in texts), texts
        assert not any(t.startswith("Bash(") for t in texts), texts


def test_a_turn_is_not_lifted_under_filters_that_exclude_it(tmp_path: Path) -> None:
    """A kind filter reads no turn: only records of that kind come back."""
    with _store(tmp_path / "h") as s:
        hits = s.search(
            SearchQuery(text="Why did the stream go silent?", k=5, mode="lexical", kind="THOUGHT")
        )
        assert all(h.kind == "THOUGHT" for h in hits), [(h.kind, h.text) for h in hits]
        assert not any(h.explain.get("turn_of") for h in hits)


def test_what_the_agent_recorded_during_a_turn_is_in_its_turn(tmp_path: Path) -> None:
    """`record_decision` writes to the ledger and `save_fact` to the facts, not the LOG: a
    decision and a fact recorded while the agent answered a prompt share the prompt's
    score as its LOG notes do; what it recorded in another turn does not."""
    with Store(tmp_path / "h", agent="me") as s:
        mem, log = s.agent(), s.agent().log
        log.append("USER_FEEDBACK", "k. how do we push hotfixes w/o store review", {"event": "user_intent", "session": SID})  # fmt: skip
        time.sleep(0.01)
        mem.decisions.record("Ship JS-only fixes over the air with EAS Update")
        mem.facts.set("update_channel", "production, runtimeVersion from the app version")
        time.sleep(0.01)
        log.append("SYSTEM", "Final response: Done.", {"event": "final_response", "session": SID})
        time.sleep(0.01)
        log.append("USER_FEEDBACK", "Now the map tiles.", {"event": "user_intent", "session": SID})
        time.sleep(0.01)
        mem.decisions.record("Host the map tiles on R2")
        time.sleep(0.01)
        log.append("SYSTEM", "Final response: Tiles.", {"event": "final_response", "session": SID})
        hits = s.search(SearchQuery(text="how do hotfixes reach people w/o a store review", k=5))
        by_text = {h.text or h.title: h for h in hits}
        texts = [h.title or h.text for h in hits]
        eas = next((h for h in hits if "EAS Update" in h.title), None)
        assert eas is not None and eas.explain.get("turn_of"), texts
        fact = next((h for h in hits if h.title == "update_channel"), None)
        assert fact is not None and fact.explain.get("turn_of"), texts
        assert not any("R2" in h.title for h in hits if h.explain.get("turn_of")), by_text


def test_members_lifted_alike_keep_the_order_of_their_own_scores(tmp_path: Path) -> None:
    """Two notes of one turn, both lifted to the prompt's share: the one that matches the
    question better stays first (not the newer one)."""
    with Store(tmp_path / "h", agent="me") as s:
        log = s.agent().log
        log.append("THOUGHT", "Two phones were ordered for the lab")  # the pool's weakest
        log.append("USER_FEEDBACK", "The app team tried the model on their phones and the birds come out wrong.", {"event": "user_intent", "session": SID})  # fmt: skip
        log.append("THOUGHT", "The birds' mels are computed at 16 kHz on the phones")
        time.sleep(0.01)
        log.append("THOUGHT", "Golden-file test added to both repos")  # newer
        log.append("SYSTEM", "Final response: Fixed.", {"event": "final_response", "session": SID})
        q = "Why did the model get the birds wrong on the app team's phones?"
        hits = s.search(SearchQuery(text=q, k=5))
        members = [h.text for h in hits if h.explain.get("turn_of")]
        assert members[:1] == ["The birds' mels are computed at 16 kHz on the phones"], [
            (h.text, h.score, h.explain.get("own_score")) for h in hits
        ]


def test_a_prompt_without_a_final_response_lends_nothing_past_the_next_prompt(
    tmp_path: Path,
) -> None:
    """renovation-ashgrove q-forecast (issue 19): a prompt's turn with no final response of
    its own ends at the next prompt; the final response of that next turn is not lent the
    first prompt's score. (A guard, passes before: the final response lent in q-forecast,
    log-a37e7ac1, closed the lending prompt's own turn, right after it in the LOG.)"""
    with Store(tmp_path / "h", agent="me") as s:
        log = s.agent().log
        for n in range(6):  # the question's words held by fewer than half of the memories
            log.append("THOUGHT", f"Garden shed note {n}: the roof felt is fine")
        log.append("USER_FEEDBACK", "The money spreadsheet went strange after we cut the attic room out. What was wrong with it?", {"event": "user_intent", "session": "s09"})  # fmt: skip
        log.append("USER_FEEDBACK", "Can Severn Heat resubmit the grant?", {"event": "user_intent", "session": "s10"})  # fmt: skip
        log.append("SYSTEM", "Final response: Voucher issued, valid three months.", {"event": "final_response", "session": "s10"})  # fmt: skip
        hits = s.search(SearchQuery(text="Where are we against the money spreadsheet?", k=6))
        assert any("money spreadsheet" in h.text for h in hits), [h.text for h in hits]
        lent = [h.text for h in hits if h.explain.get("turn_of")]
        assert not any("Voucher issued" in t for t in lent), lent


def test_a_turn_without_a_final_response_ends_with_its_session(tmp_path: Path) -> None:
    """A session that ended with no final response (the agent stopped, the Stop hook never
    ran): what the next session logs before its own prompt is not the answer to it (fails
    before: the next session's final response was lent the prompt's score)."""
    with Store(tmp_path / "h", agent="me") as s:
        log = s.agent().log
        for n in range(6):  # the question's words held by fewer than half of the memories
            log.append("THOUGHT", f"Garden shed note {n}: the roof felt is fine")
        log.append("USER_FEEDBACK", "The money spreadsheet went strange after we cut the attic room out. What was wrong with it?", {"event": "user_intent", "session": "s09"})  # fmt: skip
        log.append("THOUGHT", "The spreadsheet total still counted the attic room rows", {"session": "s09"})  # fmt: skip
        log.append("SYSTEM", "Final response: Voucher issued, valid three months.", {"event": "final_response", "session": "s10"})  # fmt: skip
        hits = s.search(SearchQuery(text="Where are we against the money spreadsheet?", k=6))
        lent = [h.text for h in hits if h.explain.get("turn_of")]
        assert any("attic room rows" in t for t in lent), [(h.text, h.explain) for h in hits]
        assert not any("Voucher issued" in t for t in lent), lent
