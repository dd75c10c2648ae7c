"""Seed 004's pre-compaction flush into a long-term memory that is nearly full
(`maxMemorySize`): no durable item is lost and the result never claims a flush that
did not happen."""

from __future__ import annotations

import json
from pathlib import Path

from memstrata import Store
from memstrata.lifecycle.flush import flush_session


def test_flush_into_a_full_memory_keeps_the_items_in_log_and_says_not_flushed(home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text("[memory]\nmax_chars = 2000\n")
    with Store(home, agent="finn") as s:
        mem = s.agent()
        filler = "# Agent Memory\n\n" + "".join(
            f"- note {i:03d} about the old parser\n" for i in range(100)
        )
        mem.context.write(filler[:1990])
        before = mem.context.read()
        mem.sessions.append("s1", "user", "Decision: we ship on Friday. Never deploy on weekends.")
        result = flush_session(s, "finn", "s1")
        entry = mem.log.entries()[-1]
        assert mem.context.read() == before  # nothing fitted, nothing half-written
    assert result.flushed is False and result.items == ()
    assert "is full (1990 of 2000 characters)" in result.reason and "LOG.md" in result.reason
    assert result.left_over and result.log_entry == entry.id
    assert entry.metadata["event"] == "memory_flush_overflow"
    for item in result.left_over:
        assert item in entry.content
    assert "we ship on Friday" in entry.content and "Never deploy on weekends" in entry.content
    events = [json.loads(x) for x in (home / "events.jsonl").read_text().splitlines()]
    assert [e["payload"] for e in events if e["event"] == "memory:flush"] == [{"sessionId": "s1"}]


def test_flush_with_room_for_some_items_writes_those_and_keeps_the_rest(home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text("[memory]\nmax_chars = 400\n")
    with Store(home, agent="finn") as s:
        mem = s.agent()
        mem.context.write("# Agent Memory\n\n" + "x" * 200 + "\n")
        mem.sessions.append("s1", "user", "Decision: the API uses Fastify, not Express.")
        mem.sessions.append(
            "s1",
            "user",
            "Decision: billing moves to PostgreSQL 16 next quarter "
            "once the migration scripts are reviewed by the data team.",
        )
        result = flush_session(s, "finn", "s1")
        memory = mem.context.read()
        log = mem.log.entries()
    assert result.items and result.left_over and result.flushed is False
    assert all(i in memory for i in result.items) and len(memory) <= 400
    assert all(i in log[-1].content and i not in memory for i in result.left_over)
    assert "1 durable item(s) written" in result.reason


def test_flush_with_nothing_durable_says_so(home: Path) -> None:
    with Store(home, agent="finn") as s:
        s.agent().sessions.append("s1", "user", "hello there")
        result = flush_session(s, "finn", "s1")
    assert (
        result.flushed is True and result.reason == "no new durable items" and not result.left_over
    )
