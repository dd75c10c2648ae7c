"""The seeds' exact APIs: seed 002's MemoryManager signatures, the five skills with
`agent_name`, `log_metadata` (content hash, compacted, token count) in `log --json`
and in the index, and seed 003's IDENTITY.md as the first prompt section."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memstrata import MalformedInput, MemoryManager, Store
from memstrata.lifecycle import compact_log

EXE = shutil.which("memstrata", path=str(Path(sys.executable).parent)) or "memstrata"


def test_seed002_update_now_status_and_next_steps_keywords(home: Path) -> None:
    m = MemoryManager("finn", home)
    m.update_now(status="Analyzing portfolio data", next_steps=["Load CSV", "Calculate returns"])
    assert m.memory.now.state().objective == "Analyzing portfolio data"
    assert m.memory.now.state().next_steps == ("Load CSV", "Calculate returns")
    m.update_now(
        new_status="Error encountered - Recovery needed",  # the self-annealing example
        next_steps=["Review LOG.md", "Analyze root cause", "Implement fix"],
    )
    assert m.memory.now.state().objective == "Error encountered - Recovery needed"
    m.update_now("Positional works too", ["next"])
    assert m.memory.now.state().next_steps == ("next",)
    with pytest.raises(MalformedInput):
        m.update_now(status="a", new_status="b")
    m.close()


def test_seed002_five_skills_take_agent_name(home: Path) -> None:
    from memstrata.skills import (
        SKILLS,
        get_fact,
        log_activity,
        recall_memory,
        save_fact,
        update_status,
    )
    from memstrata.skills.scripts.update_status import SKILL_METADATA, execute

    assert execute is update_status and SKILL_METADATA["name"] == "update_status"
    assert sorted(SKILLS) == [
        "get_fact",
        "log_activity",
        "recall_memory",
        "save_fact",
        "update_status",
    ]
    assert all("agent_name" in meta["parameters"] for meta in SKILLS.values())
    update_status(
        agent_name="finn",
        new_status="Analyzing portfolio data",
        next_steps=["Load CSV", "Calculate returns", "Generate report"],
    )
    save_fact(agent_name="finn", key="preferred_currency", value="USD", category="preference")
    entry = log_activity(
        agent_name="finn",
        entry_type="TOOL_USE",
        content="asked about NVDA and AAPL last week",
        metadata={"rows": 2},
    )
    assert get_fact(agent_name="finn", key="preferred_currency") == "USD"
    assert get_fact(agent_name="finn", key="missing") is None
    memories = recall_memory(
        agent_name="finn", query="What stocks did the user ask about?", n_results=3
    )
    assert memories and memories[0]["uid"].endswith(entry["id"]) and len(memories) <= 3
    with Store(home, agent="finn") as s:
        assert s.agent().now.state().next_steps == (
            "Load CSV",
            "Calculate returns",
            "Generate report",
        )
        assert s.agent().facts.get("preferred_currency").category == "preference"
    with Store(home, agent="ivy") as s:  # agent isolation: another agent's memory is untouched
        assert not s.agent().now.exists()


def test_seed002_log_metadata_in_log_json_and_the_index(home: Path) -> None:
    from memstrata.model import estimate_tokens

    r = subprocess.run(
        [
            EXE,
            "--home",
            str(home),
            "--agent",
            "finn",
            "--json",
            "log",
            "append",
            "TOOL_USE",
            "loaded prices.csv: 1200 rows",
            "--meta",
            '{"rows": 1200}',
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    appended = json.loads(r.stdout)
    assert appended["content_hash"].startswith("sha256:") and appended["compacted"] is False
    assert appended["token_count"] == estimate_tokens("loaded prices.csv: 1200 rows")
    assert appended["metadata"] == {
        "rows": 1200
    }  # the record is not mixed into the user's metadata
    tail = subprocess.run(
        [EXE, "--home", str(home), "--agent", "finn", "--json", "log", "tail"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    [listed] = json.loads(tail.stdout)
    assert {k: listed[k] for k in ("content_hash", "token_count", "compacted")} == {
        k: appended[k] for k in ("content_hash", "token_count", "compacted")
    }
    with Store(home, agent="finn") as s:
        for i in range(3):
            s.agent().log.append("THOUGHT", f"thought {i}")
        compact_log(s, "finn", summary="Loaded prices and thought three times.")
        with s.db.read() as conn:
            rows = conn.execute(
                "SELECT layer, json_extract(meta, '$.content_hash'), "
                "json_extract(meta, '$.token_count'), json_extract(meta, '$.compacted') "
                "FROM docs WHERE layer IN ('log', 'archive') ORDER BY layer, pos"
            ).fetchall()
    archived = [r for r in rows if r[0] == "archive"]
    assert len(archived) == 4 and all(r[3] == 1 for r in archived)  # marked compacted=1
    assert archived[0][1] == appended["content_hash"] and archived[0][2] == appended["token_count"]
    assert [r[3] for r in rows if r[0] == "log"] == [0]  # the summary entry itself


def test_log_metadata_marks_a_hand_edited_entry(home: Path) -> None:
    with Store(home, agent="finn") as s:
        s.agent().log.append("THOUGHT", "the cache uses SQLite")
        path = s.agent().log.path
    path.write_text(path.read_text().replace("uses SQLite", "uses Redis"))
    with Store(home, agent="finn") as s:
        [entry] = s.agent().log.entries()
    assert entry.content == "the cache uses Redis" and entry.edited is True


def test_seed003_identity_md_is_the_first_prompt_section(home: Path) -> None:
    m = MemoryManager("finn", home)
    (home / "agents" / "finn" / "IDENTITY.md").write_text("# Finn\nA careful portfolio analyst.\n")
    m.memory.context.write("Prefers concise answers.\n")
    m.update_now("Analyse Q3", [])
    with Store(home, agent="finn") as s:
        text = s.agent().identity.read()
        context = MemoryManager("finn", store=s).format_context_for_prompt()
    assert "careful portfolio analyst" in text
    sections = [line for line in context.splitlines() if line.startswith("## ")]
    assert sections[0] == "## Identity" and sections[1] == "## Persistent memory"
    assert context.index("careful portfolio analyst") < context.index("Prefers concise answers")
    assert "agents/finn/IDENTITY.md" in context
    m.close()
