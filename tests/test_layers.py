"""Every per-agent layer through the public API, files checked on disk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memstrata import (
    AlreadyExists,
    EntryTooLarge,
    MalformedInput,
    MemoryManager,
    NotFound,
    NotUnique,
    ReservedFile,
    StaleWrite,
    Store,
)
from memstrata.store.editing import sha256_text


def test_now_is_overwritten_and_parsed(store: Store, home: Path) -> None:
    now = store.agent().now
    now.update(
        "Analyzing portfolio data",
        ["Load CSV", "Calculate returns"],
        blockers=["no API key"],
        phase="2 of 6",
    )
    now.update("Generating report", ["Write summary"])
    text = (home / "agents/finn/memory/NOW.md").read_text()
    assert "Generating report" in text and "Analyzing" not in text
    st = now.state()
    assert st.objective == "Generating report" and st.next_steps == ("Write summary",)


def test_notes_md_is_accepted_as_now(home: Path) -> None:
    mem = home / "agents/finn/memory"
    mem.mkdir(parents=True)
    (mem / "NOTES.md").write_text("# NOTES\n\n## Objective\nShip feature X\n")
    (mem / "MEMORY.md").write_text("# Agent Memory\n- prefers concise answers\n")
    s = Store(home, agent="finn")
    assert s.agent().now.state().objective == "Ship feature X"
    assert "concise" in s.agent().context.read()
    s.agent().now.update("Ship feature Y")
    assert "feature Y" in (mem / "NOTES.md").read_text()
    assert not (mem / "NOW.md").exists()
    s.close()


def test_log_append_tail_and_format(store: Store, home: Path) -> None:
    log = store.agent().log
    for i in range(25):
        log.append("TOOL_USE", f"step {i}", {"i": i})
    log.append("error", "boom\n### not a header\n<!-- log-00000000 {} -->\n\\backslash")
    tail = log.tail(3)
    assert [e.content for e in tail[:2]] == ["step 23", "step 24"]
    assert tail[-1].entry_type == "ERROR"
    assert tail[-1].content == "boom\n### not a header\n<!-- log-00000000 {} -->\n\\backslash"
    assert len(log.entries()) == 26 == log.count()
    raw = (home / "agents/finn/memory/LOG.md").read_text()
    assert raw.startswith("# LOG") and "### " in raw and "· TOOL_USE" in raw


def test_log_rejects_bad_input(store: Store) -> None:
    log = store.agent().log
    with pytest.raises(MalformedInput):
        log.append("DREAM", "x")
    with pytest.raises(MalformedInput):
        log.append("THOUGHT", "   ")
    with pytest.raises(MalformedInput):
        log.append("THOUGHT", "x", {"bad": object()})  # type: ignore[dict-item]
    assert log.count() == 0


def test_memory_files_tools(store: Store, home: Path) -> None:
    files = store.agent().files
    info = files.write("strategy.md", "# Strategy\nbuy low\nsell high\n")
    assert info.sha256 == sha256_text("# Strategy\nbuy low\nsell high\n")
    files.replace("strategy.md", "buy low", "buy lower")
    files.insert("strategy.md", 0, "<!-- top -->")
    files.insert("strategy.md", 4, "hold")
    assert (
        files.read("/memories/strategy.md")
        == "<!-- top -->\n# Strategy\nbuy lower\nsell high\nhold\n"
    )
    with pytest.raises(NotUnique):
        files.write("dup.md", "a a")
        files.replace("dup.md", "a", "b")
    with pytest.raises(NotUnique):
        files.replace("strategy.md", "absent", "b")
    with pytest.raises(MalformedInput):
        files.insert("strategy.md", 99, "x")
    with pytest.raises(StaleWrite):
        files.write("strategy.md", "lost update", expected_sha=info.sha256)
    assert "hold" in files.read("strategy.md")
    files.rename("strategy.md", "plans/strategy.md")
    with pytest.raises(AlreadyExists):
        files.rename("dup.md", "plans/strategy.md")
    assert [f.path for f in files.list() if not f.is_dir] == ["dup.md", "plans/strategy.md"]
    archived = files.delete("dup.md")
    assert (home / archived).read_text() == "a a"
    with pytest.raises(NotFound):
        files.read("dup.md")
    with pytest.raises(ReservedFile):
        files.write("LOG.md", "overwrite the log")


def test_context_md_size_cap(home: Path) -> None:
    (home).mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text("[memory]\nmax_chars = 100\n")
    s = Store(home, agent="finn")
    with pytest.raises(EntryTooLarge):
        s.agent().context.write("x" * 101)
    s.agent().context.write("# Memory\nshort\n")
    s.close()


def test_facts_set_get_forget_and_categories(store: Store, home: Path) -> None:
    facts = store.agent().facts
    first = facts.set("preferred_currency", "USD", "preference")
    second = facts.set("preferred_currency", "EUR", "preference")
    assert second.created_at == first.created_at and facts.get("preferred_currency").value == "EUR"
    facts.set("test_command", "cd evals && npm test", "reference", citations=["evals/package.json"])
    assert [f.key for f in facts.list("reference")] == ["test_command"]
    facts.forget("preferred_currency")
    with pytest.raises(NotFound):
        facts.get("preferred_currency")
    with pytest.raises(MalformedInput):
        facts.set("k", "v", "gossip")
    ops = [
        json.loads(line)["op"]
        for line in (home / "agents/finn/facts.jsonl").read_text().splitlines()
    ]
    assert ops == ["set", "set", "set", "forget"]


def test_tasks(store: Store, home: Path) -> None:
    tasks = store.agent().tasks
    a = tasks.add(
        "Implement session locking",
        milestone="M1",
        priority=2,
        acceptance_criteria=["Lock acquired before execution", "Lock released after"],
    )
    b = tasks.add("Write docs", priority=1, blocked_by=[a.id])
    assert [t.id for t in tasks.list()] == [b.id, a.id]  # prioritized
    done = tasks.update(a.id, status="done")
    assert done.completed is not None
    with pytest.raises(MalformedInput):
        tasks.update(a.id, status="finished")
    with pytest.raises(NotFound):
        tasks.add("x", blocked_by=["TASK-999"])
    data = json.loads((home / "agents/finn/tasks.json").read_text())
    assert set(data["tasks"][0]) == {
        "id",
        "milestone",
        "priority",
        "status",
        "description",
        "acceptance_criteria",
        "created",
        "completed",
        "blocked_by",
    }


def test_sessions(store: Store, home: Path) -> None:
    sess = store.agent().sessions
    sess.start("sess-1", title="greeting")
    sess.append("sess-1", "user", "Hello")
    sess.append_many(
        "sess-1",
        [
            {"role": "assistant", "content": "Hi there!"},
            {"id": "tool_001", "role": "tool_call", "name": "read", "input": {"path": "README.md"}},
            {"id": "tool_001", "role": "tool_result", "content": "# Project..."},
        ],
    )
    msgs = sess.messages("sess-1")
    assert [m.role for m in msgs] == ["user", "assistant", "tool_call", "tool_result"]
    assert msgs[2].input == {"path": "README.md"} and msgs[3].id == "tool_001"
    [info] = sess.list()
    assert info.id == "sess-1" and info.messages == 4 and info.title == "greeting"
    line = json.loads((home / "agents/finn/sessions/sess-1.jsonl").read_text().splitlines()[0])
    assert set(line) == {"id", "role", "content", "timestamp"}
    with pytest.raises(MalformedInput):
        sess.append("sess-1", "robot", "beep")
    with pytest.raises(AlreadyExists):
        sess.start("sess-1")


def test_scratch_episodes_and_identity(store: Store, home: Path) -> None:
    mem = store.agent()
    mem.identity.write("# Finn\nA research agent.\n")
    mem.scratch.start_notes()
    assert [f.path for f in mem.scratch.list()] == ["session/notes.md"]
    assert "## Worklog" in mem.scratch.read("notes.md")
    archived = mem.scratch.clear()
    assert archived is not None and (home / archived / "notes.md").exists()
    assert mem.scratch.list() == []
    slug = mem.episodes.create("Implement Feature X!")
    assert slug == "implement-feature-x"
    mem.episodes.append(slug, "verified_items.md", "- login works")
    mem.episodes.append(slug, "verified_items.md", "- logout works")
    assert mem.episodes.read(slug, "verified_items.md") == "- login works\n\n- logout works\n"
    mem.episodes.log_gate_event(slug, "T1", {"gate": "review", "verdict": "pass"})
    assert mem.episodes.gate_events(slug, "T1")[0]["verdict"] == "pass"


def test_memory_manager_face(home: Path) -> None:
    m = MemoryManager("finn")
    assert (home / "agents/finn/memory/NOW.md").exists() and (
        home / "agents/finn/memory/LOG.md"
    ).exists()
    m.update_now("Analyzing portfolio data", ["Load CSV", "Calculate returns", "Generate report"])
    entry_id = m.append_log("TOOL_USE", "loaded prices.csv", {"rows": 1200})
    m.save_fact("preferred_currency", "USD", "preference")
    assert m.get_fact("preferred_currency") == "USD" and m.get_fact("missing") is None
    assert m.read_log(1)[0]["id"] == entry_id
    assert "Analyzing portfolio data" in m.read_now()
    m.close()


def test_agents_are_isolated(home: Path) -> None:
    a = MemoryManager("finn", home)
    b = MemoryManager("code-agent", home)
    a.save_fact("secret", "finn only")
    assert b.get_fact("secret") is None
    assert not (home / "agents/code-agent/facts.jsonl").exists()
    a.close()
    b.close()
