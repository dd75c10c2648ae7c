"""A question that asks how a problem was got past finds what the agent wrote after the
error (`search.resolutions`), through `store.search`: infra-saltmarsh's "What did the first
restore into the staging database trip over, and what got it through?" found the ERROR and
left the THOUGHT "... Fix: pg_restore --no-owner ..." out of the top 5."""

from __future__ import annotations

from pathlib import Path

from memstrata.search.query import SearchQuery
from memstrata.store.view import Store

ERROR = (
    'pg_restore: error: could not execute query: ERROR: role "saltmarsh" does not exist '
    "Command was: GRANT ALL ON SCHEMA public TO saltmarsh; the restore into the staging "
    "database stopped"
)
FIX = "Ownership on RDS is different from the old box. Fix: pg_restore --no-owner --no-acl"


def _store(home: Path) -> Store:
    """An MCP agent's own log: notes on the restore that share the question's words, the
    failed restore's ERROR, a trace, the note that says how it was got past, and later
    errors and fixes on other subjects."""
    s = Store(home, agent="infra")
    log = s.agent().log
    log.append("THOUGHT", "Restore rehearsal planned for Thursday")
    log.append("THOUGHT", "The staging environment gets its own VPC")
    log.append("TOOL_USE", "run_terminal_cmd(pg_restore to salt-staging-db) -> 214 errors")
    log.append("ERROR", ERROR)
    log.append("TOOL_USE", "run_terminal_cmd(psql -c 'select 1') -> ok")
    log.append("THOUGHT", FIX)
    log.append("THOUGHT", "Listeners asked for a stream at 64 kbps on mobile")
    log.append("ERROR", "Error acquiring the state lock: ConditionalCheckFailedException")
    log.append("THOUGHT", "The lock was stale; released it with terraform force-unlock")
    return s


def test_what_got_it_through_finds_the_fix_written_after_the_error(tmp_path: Path) -> None:
    query = (
        "What did the first restore into the staging database trip over, and what got it through?"
    )
    with _store(tmp_path / "h") as s:
        hits = s.search(SearchQuery(text=query, k=5))
        texts = [h.text for h in hits]
        assert FIX in texts[:2], texts
        fix = next(h for h in hits if h.text == FIX)
        assert fix.explain.get("resolves") or fix.explain.get("fix"), fix.explain
        assert texts.index(FIX) < texts.index(ERROR), texts


def test_a_question_not_about_a_fix_lends_nothing(tmp_path: Path) -> None:
    with _store(tmp_path / "h") as s:
        hits = s.search(SearchQuery(text="When is the restore into the staging database?", k=5))
        assert not any(h.explain.get("resolves") for h in hits), [h.explain for h in hits]
