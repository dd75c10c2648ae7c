"""Decisions, constraints and preferences from Python: one call, one rule (the ledger's
supersede, seed 000), with its scope (issue 19 item 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstrata import MemoryManager, Store
from memstrata.errors import SupersedeDenied, UnknownKind


def test_memory_manager_records_and_replaces_a_decision(home: Path) -> None:
    with MemoryManager("finn", home) as m:
        old = m.record_decision("Store money as float")
        new = m.record_decision("Store money as integer cents", replaces=old)
        m.record_decision("Round half up on invoices", "constraint")
        m.record_decision("Dark mode in every UI", kind="preference")
        context = m.format_context_for_prompt()
        hits = m.recall_memory("how do we store money", n_results=10)
    assert "Store money as integer cents" in context and "Store money as float" not in context
    assert context.index("## Decisions and constraints in force") < context.index("## Preferences")
    assert next(h.uid for h in hits if h.layer == "ledger") == f"ledger:{new}"
    assert f"ledger:{old}" not in [h.uid for h in hits]
    with pytest.raises(UnknownKind):
        MemoryManager("finn", home).record_decision("no", kind="rumour")


def test_record_kinds_hold_whatever_kinds_the_config_lists(home: Path) -> None:
    """A `[kinds]` table replaces seed 000's six; the three record kinds stay usable."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text("[kinds]\nincident = 24\n")
    with Store(home, agent="finn") as s:
        e = s.agent().decisions.record("Never page the on-call twice", "constraint")
        assert [x.id for x in s.agent().decisions.in_force()] == [e.id]


def test_an_agent_cannot_replace_another_agents_decision(home: Path) -> None:
    with Store(home, agent="finn") as finn:
        theirs = finn.agent().decisions.record("Use bcrypt for passwords")
    with Store(home, agent="ada") as ada:
        assert [e.id for e in ada.agent().decisions.in_force()] == [theirs.id]  # shared
        with pytest.raises(SupersedeDenied):
            ada.agent().decisions.record("Use argon2", replaces="bcrypt")
        assert [e.id for e in ada.agent().decisions.in_force()] == [theirs.id]


def test_a_record_in_force_is_found_behind_other_rooms_entries(home: Path) -> None:
    """The records in force were the newest 50 ledger entries of every room filtered to the
    agent's: a room-less decision behind 60 newer decisions of another room was lost (from
    the session-start context and the web app's home page)."""
    with Store(home, agent="me") as s:
        s.agent().decisions.record("Use Postgres for storage")
    with Store(home, agent="other", room="r2") as s:
        for i in range(60):
            s.ledger.publish("decision", f"room decision {i}")
    with Store(home, agent="me") as s:
        d = s.agent().decisions
        assert [e.summary for e in d.in_force(("decision",))] == ["Use Postgres for storage"]
        shown, counts = d.tally(("decision",))
        assert [e.summary for e in shown] == ["Use Postgres for storage"]
        assert counts == {"decision": 1}
        assert [e.summary for e, _ in d.history(("decision",))] == ["Use Postgres for storage"]


def test_a_room_less_agents_records_are_looked_up_not_read_through(home: Path) -> None:
    """The records in force and their history come from `docs_layer_kind` down to its room
    column: SQLite walked `docs_layer_ts` (every room's ledger entries in time order) to
    spare a sort, 2,500 entries of other rooms read on each of a context's four queries."""
    with Store(home, agent="other", room="r2") as s:
        for i in range(30):
            s.ledger.publish("decision", f"room decision {i}")
    with Store(home, agent="me") as s:
        d = s.agent().decisions
        d.record("Use Postgres for storage")
        asked: list[str] = []
        with s.db.read() as conn:
            conn.set_trace_callback(asked.append)
            try:
                assert [e.summary for e in d.in_force(("decision",))] == [
                    "Use Postgres for storage"
                ]
                assert [e.summary for e, _ in d.history(("decision",))] == [
                    "Use Postgres for storage"
                ]
            finally:
                conn.set_trace_callback(None)
            ledger = [q for q in asked if "d.layer = 'ledger'" in q]
            plans = [
                " | ".join(str(r[3]) for r in conn.execute(f"EXPLAIN QUERY PLAN {q}"))
                for q in ledger
            ]
    assert len(plans) == 2
    assert all("docs_layer_kind" in p and "room=?" in p for p in plans), plans
