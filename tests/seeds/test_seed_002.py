"""Seed 002 (AgentOS hot / warm / cold memory): one test per row of docs/seeds.md.

Rows proven by tests elsewhere (the amnesia kill test, log_metadata, the five skills'
signatures, the engine integration) name those tests in docs/seeds.md.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from tests.seeds.conftest import call, tool_names

from memstrata import MemoryManager, Store
from memstrata.errors import MalformedInput, ScopeDenied
from memstrata.model import LOG_TYPES


def test_each_agent_has_its_own_folder_with_agent_md_and_memory(home: Path) -> None:
    with Store(home, agent="finn") as finn:
        finn.agent().now.update("Analyse portfolio", [])
        finn.agent().identity.write("# Finn\nPortfolio analyst.\n")
    assert (home / "agents/finn/AGENT.md").is_file()
    assert (home / "agents/finn/memory/NOW.md").is_file()
    with Store(home, agent="ivy") as ivy:
        with pytest.raises(ScopeDenied):
            ivy.agent("finn").now.read()
        assert not [h for h in ivy.search("portfolio", k=50) if h.owner == "finn"]


def test_now_md_is_hot_memory_overwritten_on_each_update(home: Path) -> None:
    with Store(home, agent="finn") as s:
        s.agent().now.update("First objective", ["a"])
        call(s, "update_status", new_status="Second objective", next_steps=["b", "c"])
        text = (home / "agents/finn/memory/NOW.md").read_text()
    assert "Second objective" in text and "First objective" not in text
    assert "- [ ] b\n- [ ] c" in text


def test_log_md_is_append_only_and_typed(home: Path) -> None:
    assert set(LOG_TYPES) == {"TOOL_USE", "THOUGHT", "USER_FEEDBACK", "ERROR", "SYSTEM"}
    with Store(home, agent="finn") as s:
        log = s.agent().log
        for t in LOG_TYPES:
            log.append(t, f"entry of type {t}", {"n": 1})
        before = (home / "agents/finn/memory/LOG.md").read_bytes()
        call(s, "log_activity", entry_type="THOUGHT", content="one more")
        after = (home / "agents/finn/memory/LOG.md").read_bytes()
        assert after.startswith(before)  # appended, never rewritten
        with pytest.raises(MalformedInput):
            log.append("GOSSIP", "not a type")
        assert [e.entry_type for e in log.entries()] == [*LOG_TYPES, "THOUGHT"]
        assert log.entries()[0].metadata == {"n": 1}


def test_user_facts_key_unique_upsert_with_category_and_times(home: Path) -> None:
    with Store(home, agent="finn") as s:
        facts = s.agent().facts
        first = facts.set("preferred_currency", "USD", "preference")
        again = facts.set("preferred_currency", "EUR", "preference")
        assert [f.key for f in facts.list()] == ["preferred_currency"]  # key unique
        got = facts.get("preferred_currency")
        assert (got.value, got.category) == ("EUR", "preference")
        assert got.created_at == first.created_at and again.updated_at >= first.updated_at
        for cat in ("general", "personal", "config"):
            facts.set(f"k-{cat}", "v", cat)
        assert call(s, "get_fact", key="preferred_currency")["value"] == "EUR"


def test_compaction_history_records_every_compaction(home: Path) -> None:
    from memstrata.lifecycle import compact_log, compaction_history

    with Store(home, agent="finn") as s:
        for i in range(5):
            s.agent().log.append("THOUGHT", f"thought {i}")
        compact_log(s, "finn", summary="Five thoughts about the cache.")
        s.agent().log.append("THOUGHT", "later thought")
        compact_log(s, "finn", summary="One later thought.")
        hist = compaction_history(s, "finn")
    assert [h["summary"] for h in hist] == ["Five thoughts about the cache.", "One later thought."]
    assert all(h["archive_id"] and h["compacted_at"] and h["entries_count"] >= 1 for h in hist)


def test_compacted_entries_are_recalled_from_the_archive(home: Path) -> None:
    from memstrata.lifecycle import compact_log

    with Store(home, agent="finn") as s:
        s.agent().log.append("TOOL_USE", "fetched NVDA quarterly earnings from the API")
        s.agent().log.append("THOUGHT", "filler")
        compact_log(s, "finn", summary="Fetched data.")
        assert "NVDA" not in s.agent().log.path.read_text()
        hits = MemoryManager("finn", store=s).recall_memory("NVDA quarterly earnings")
    assert hits and hits[0].layer == "archive" and "NVDA" in hits[0].text


def test_memory_manager_has_the_seeds_methods(home: Path) -> None:
    m = MemoryManager("finn", home)
    m.update_now("Analyzing portfolio data", ["Load CSV", "Calculate returns"])
    m.append_log("TOOL_USE", "loaded prices.csv", {"rows": 1200})
    m.save_fact("preferred_currency", "USD", "preference")
    assert m.get_fact("preferred_currency") == "USD"
    assert m.recall_memory("prices.csv")[0].text.endswith("loaded prices.csv")
    prompt = m.format_context_for_prompt()
    assert "Analyzing portfolio data" in prompt and "loaded prices.csv" in prompt
    assert "preferred_currency" in prompt
    m.close()


def test_initialisation_creates_now_default_and_log_header(home: Path) -> None:
    MemoryManager("finn", home).close()
    now = (home / "agents/finn/memory/NOW.md").read_text()
    log = (home / "agents/finn/memory/LOG.md").read_text()
    assert "No active objective yet" in now
    assert log.startswith("# LOG")


def test_planner_instruction_follows_the_memory_context(home: Path) -> None:
    """Seed 002's planner prompt: after the memory block, "Use the above memory context to
    understand ... If the user says "continue", check NOW.md"; `[context] instructions =
    false` leaves it out."""
    with MemoryManager("finn", home) as m:
        m.update_now("Outline the decorators post", ["write section 2"])
        text = m.format_context_for_prompt()
    tail = text.split("## How to use this memory\n", 1)[1]
    assert text.index("Outline the decorators post") < text.index("## How to use this memory")
    assert tail.startswith(
        "Use the above memory context to understand: 1. what you are currently working on (NOW.md)"
    )
    assert 'If the user says "continue", check NOW.md to see what you should resume.' in tail
    (home / "config.toml").write_text("[context]\ninstructions = false\n")
    with MemoryManager("finn", home) as m:
        text = m.format_context_for_prompt()
    assert "Outline the decorators post" in text and "How to use this memory" not in text


def test_initialize_agent_memory_creates_now_and_log(home: Path) -> None:
    """Seed 002 "Initialize Agent Memory": `initialize_agent_memory("finn")`."""
    from memstrata import initialize_agent_memory

    where = initialize_agent_memory("finn", home)
    assert where == "agents/finn/memory"
    assert "No active objective yet" in (home / where / "NOW.md").read_text()
    assert (home / where / "LOG.md").read_text().startswith("# ")
    initialize_agent_memory("finn", home)  # idempotent: nothing is overwritten
    assert "No active objective yet" in (home / where / "NOW.md").read_text()


def test_agent_state_has_the_seeds_memory_fields(home: Path) -> None:
    """Seed 002's `AgentState` extension: memory_context, agent_name, auto_log_enabled."""
    with MemoryManager("finn", home) as m:
        m.update_now("Summarise the report", [])
        with m.turn("continue") as turn:
            state = turn.agent_state()
    assert set(state) == {"memory_context", "agent_name", "auto_log_enabled"}
    assert state["agent_name"] == "finn" and state["auto_log_enabled"] is True
    assert "Summarise the report" in state["memory_context"]
    (home / "config.toml").write_text('[memory]\nmode = "agent-controlled"\n')
    with MemoryManager("finn", home) as m, m.turn("continue") as turn:
        assert turn.agent_state()["auto_log_enabled"] is False


def test_skill_md_documents_the_five_skills() -> None:
    """Seed 002's `core/skills/memory/SKILL.md`, made from the skills' own metadata."""
    from memstrata.skills import SKILLS, skill_md

    text = skill_md()
    assert [line[3:] for line in text.splitlines() if line.startswith("## ")] == list(SKILLS)
    assert "| `agent_name` | string | yes |" in text and "| `n_results` |" in text


def test_the_five_skills_are_mcp_tools_of_the_same_names(home: Path) -> None:
    with Store(home, agent="finn") as s:
        assert {
            "update_status",
            "log_activity",
            "recall_memory",
            "save_fact",
            "get_fact",
        } <= tool_names(s)
        call(s, "save_fact", key="tz", value="UTC", category="config")
        call(s, "log_activity", entry_type="TOOL_USE", content="ran the ETL job for March")
        hits = call(s, "recall_memory", query="ETL job March")["results"]
        assert hits and "ETL" in json.dumps(hits)


def test_log_compacts_itself_past_100_entries(home: Path) -> None:
    with Store(home, agent="finn") as s:
        log = s.agent().log
        for i in range(101):
            log.append("TOOL_USE", f"step {i}")
        s.drain(60)  # the append that crossed the limit started a compaction after its ack
        assert s.background_errors == []
        assert log.count() < 101
        from memstrata.lifecycle import compaction_history

        [rec] = compaction_history(s, "finn")
        assert rec["reason"] and rec["entries_count"] >= 100
        assert s.search("step 7", layers=("archive",))


SEED_MS = {
    "read NOW": 1,
    "read LOG tail (20)": 10,
    "append LOG (durable)": 5,
    "update NOW": 5,
    "save fact": 5,
    "get fact": 2,
    "recall (lexical)": 50,
    "compact LOG (100 entries)": 30_000,
}
DURABLE = {"append LOG (durable)", "update NOW", "save fact"}


def test_performance_table_reads_and_recall_meet_the_seeds_latencies() -> None:
    """Every operation of the seed's table, timed (`memstrata bench ops` is the full
    benchmark); reads and recall cost no more CPU time at p50 than the seed's latency.

    CPU time, not wall-clock time: on a machine the suite keeps busy, an operation
    waits for a CPU and its latency grows with the load, while the CPU time it takes
    does not; an operation that got slower still fails. The wall-clock check of every
    row is the MEMSTRATA_SLOW test below (a quiet machine).
    """
    import time

    from memstrata.bench.ops import run_ops

    rows = run_ops(sizes=(300,), repeat=20, clock=time.thread_time)
    assert {r["operation"] for r in rows} == set(SEED_MS)
    assert all(r["p50_ms"] > 0 for r in rows)  # the clock measured something
    slow = {
        r["operation"]: r["p50_ms"]
        for r in rows
        if r["operation"] not in DURABLE and r["p50_ms"] > SEED_MS[r["operation"]]
    }
    assert slow == {}


@pytest.mark.slow
@pytest.mark.skipif(
    not os.environ.get("MEMSTRATA_SLOW"),
    reason="absolute fsync latency needs a quiet machine: MEMSTRATA_SLOW=1",
)
def test_performance_table_meets_the_seeds_latencies_on_a_quiet_machine() -> None:
    """Every row at p50 against the seed's latency, wall-clock (on a loaded 2-core machine
    shared with the suite the fsync'ed writes' p50 was 10-18 ms; quiet, 1.2-2.3 ms)."""
    from memstrata.bench.ops import run_ops

    rows = run_ops(sizes=(300,), repeat=50)
    slow = {r["operation"]: r["p50_ms"] for r in rows if r["p50_ms"] > SEED_MS[r["operation"]]}
    assert slow == {}


def test_correction_fact_is_recalled_after_50_turns(home: Path) -> None:
    m = MemoryManager("finn", home)
    m.save_fact("preferred_currency", "USD", "preference")
    m.save_fact("preferred_currency", "EUR", "preference")  # the user corrects it
    for i in range(50):
        m.append_log("USER_FEEDBACK", f"turn {i}: talk about something else")
    m.close()
    again = MemoryManager("finn", home)  # a fresh process's view
    assert again.get_fact("preferred_currency") == "EUR"
    assert "EUR" in again.format_context_for_prompt()
    again.close()
    assert re.search(r"preferred_currency", (home / "agents/finn/facts.jsonl").read_text())
