"""A turn's conclusions answer what its prompt asked (`search.turns`), through `store.search`."""

from __future__ import annotations

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
