"""A failed tool call's ERROR shares its call's relevance (`search.failures`), through
`store.search`."""

from __future__ import annotations

from pathlib import Path

from memstrata.search.query import SearchQuery
from memstrata.store.view import Store

SID = "5e047e7b-6a07-5188-ba7b-8f14598440c6"
CRASH = "TypeError: amount.toFixed is not a function (amount_cents arrived as a string)"


def _store(home: Path) -> Store:
    """An MCP agent's own log (no hook ids): the failed test run's trace, its ERROR right
    after it, the run that passed, and notes that share the question's words."""
    s = Store(home, agent="me")
    log = s.agent().log
    log.append("THOUGHT", "The price display formats amounts with Intl.NumberFormat")
    log.append("THOUGHT", "Wrote the price display test for the cart page")
    log.append("TOOL_USE", 'Bash(command="pnpm test -- price-display") -> error, 1 failed')
    log.append("ERROR", CRASH)
    log.append("TOOL_USE", 'Bash(command="pnpm test -- price-display") -> ok, 11 passed')
    log.append("THOUGHT", "Listeners asked for a stream at 64 kbps on mobile")
    return s


def test_a_failed_calls_error_is_found_by_what_the_call_did(tmp_path: Path) -> None:
    """ "Why did the price display test crash?" shares no word with the ERROR; it finds the
    failed call's trace, and with it the error, lent the trace's score."""
    with _store(tmp_path / "h") as s:
        hits = s.search(SearchQuery(text="Why did the price display test crash?", k=5))
        texts = [h.text for h in hits]
        assert CRASH in texts[:3], texts
        error = next(h for h in hits if h.text == CRASH)
        assert error.explain.get("failure_of"), error.explain


def test_an_error_is_lent_nothing_when_the_question_is_not_about_a_failure(
    tmp_path: Path,
) -> None:
    """A question that does not ask what went wrong leaves errors as they are."""
    with _store(tmp_path / "h") as s:
        hits = s.search(SearchQuery(text="Which command runs the price display test?", k=5))
        assert not any(h.explain.get("failure_of") for h in hits), [h.explain for h in hits]


def test_an_error_is_lent_by_the_record_of_its_call_with_the_same_id(tmp_path: Path) -> None:
    """Hook records: the ERROR and the call's trace share a `tool_use_id` (a passed call's
    trace lends nothing: no ERROR has its id)."""
    with Store(tmp_path / "h", agent="me") as s:
        log = s.agent().log
        log.append("THOUGHT", "Apply the fees migration to the loans table next")
        log.append(
            "TOOL_USE",
            'Bash(command="alembic upgrade head") -> error',
            {"tool": "Bash", "tool_use_id": "toolu_1", "outcome": "error", "session": SID},
        )
        for n in range(3):
            log.append("THOUGHT", f"Unrelated note {n} about the listeners' stream")
        log.append(
            "ERROR",
            'column "due_at" of relation "loans" already exists',
            {"tool": "Bash", "tool_use_id": "toolu_1", "outcome": "error", "session": SID},
        )
        hits = s.search(SearchQuery(text="What broke when we ran alembic upgrade?", k=5))
        assert "already exists" in hits[0].text, [h.text for h in hits]
        assert hits[0].explain.get("failure_of"), hits[0].explain
