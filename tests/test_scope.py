"""Seed 004 scope table, checked on every read and write path, including search; on both
truths (local files and PostgreSQL: the gate is the same code above either)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memstrata import ScopeDenied, Store


@pytest.fixture(autouse=True)
def _on_both_truths(backend: str) -> str:
    return backend


@pytest.fixture
def populated(home: Path) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text('[roles]\nadmin = ["wilco"]\nskill = ["seo"]\n')
    for agent, room in (("alice", "room-a"), ("bob", "room-b"), ("wilco", None)):
        s = Store(home, agent=agent, room=room)
        m = s.agent()
        m.now.update(f"{agent} secret objective zebra")
        m.context.write(f"# {agent} memory zebra\n")
        m.log.append("THOUGHT", f"{agent} private thought zebra")
        m.facts.set("secret", f"{agent} zebra")
        m.files.write("notes.md", f"{agent} notes zebra")
        m.tasks.add(f"{agent} task zebra")
        m.sessions.append("s1", "user", f"{agent} said zebra")
        slug = m.episodes.create("zebra task")
        m.episodes.write(slug, "report.md", f"{agent} report zebra")
        m.scratch.write("scratch.md", f"{agent} scratch zebra")
        if room:
            s.room().post(f"{agent} channel zebra")
            s.room().write_artifact("a.md", f"{agent} artifact zebra")
        s.ledger.publish("decision", f"{agent} ledger zebra", room_id=room)
        s.close()
    return home


def _reads(store: Store, agent: str) -> dict[str, Callable[[], Any]]:
    m = store.agent(agent)
    return {
        "now": m.now.read, "context": m.context.read, "identity": m.identity.read,
        "log.tail": lambda: m.log.tail(5), "log.entries": m.log.entries,
        "facts.get": lambda: m.facts.get("secret"), "facts.list": m.facts.list,
        "files.read": lambda: m.files.read("notes.md"), "files.list": m.files.list,
        "tasks": m.tasks.list, "sessions.list": m.sessions.list,
        "sessions.messages": lambda: m.sessions.messages("s1"),
        "episodes": m.episodes.list, "scratch": m.scratch.list,
        # sizes, counts and listings say something about the memory too
        "log.count": m.log.count, "log.size": m.log.size, "log.read_text": m.log.read_text,
        "sessions.ids": m.sessions.ids, "now.exists": m.now.exists,
        "context.exists": m.context.exists, "files.exists": lambda: m.files.exists("notes.md"),
        "files.stat": lambda: m.files.stat("notes.md"),
        "episodes.files": lambda: m.episodes.files("zebra-task"),
        "episodes.read": lambda: m.episodes.read("zebra-task", "report.md"),
    }


def _writes(store: Store, agent: str) -> dict[str, Callable[[], Any]]:
    m = store.agent(agent)
    return {
        "now": lambda: m.now.update("hijack"), "context": lambda: m.context.write("hijack"),
        "log": lambda: m.log.append("THOUGHT", "hijack"),
        "facts": lambda: m.facts.set("secret", "hijack"),
        "files": lambda: m.files.write("notes.md", "hijack"),
        "replace": lambda: m.files.replace("notes.md", "zebra", "hijack"),
        "delete": lambda: m.files.delete("notes.md"),
        "tasks": lambda: m.tasks.add("hijack"),
        "sessions": lambda: m.sessions.append("s1", "user", "hijack"),
        "episodes": lambda: m.episodes.write("zebra-task", "x.md", "hijack"),
    }


def test_project_agent_cannot_touch_another_project_agent(populated: Path) -> None:
    alice = Store(populated, agent="alice", room="room-a")
    for name, fn in {**_reads(alice, "bob"), **_writes(alice, "bob")}.items():
        with pytest.raises(ScopeDenied):
            fn()
            pytest.fail(f"{name} leaked")
    assert alice.truth.read_from("agents/bob/memory/notes.md") == b"bob notes zebra"
    alice.close()


def test_project_agent_reads_admin_but_cannot_write_it(populated: Path) -> None:
    alice = Store(populated, agent="alice", room="room-a")
    for fn in _reads(alice, "wilco").values():
        fn()
    assert "wilco secret objective" in alice.agent("wilco").now.read()
    assert alice.agent("wilco").facts.get("secret").value == "wilco zebra"
    for name, fn in _writes(alice, "wilco").items():
        with pytest.raises(ScopeDenied):
            fn()
            pytest.fail(f"{name} leaked")
    alice.close()


def test_rooms_are_private_to_their_agents(populated: Path) -> None:
    alice = Store(populated, agent="alice", room="room-a")
    other = alice.room("room-b")
    for fn in (other.messages, lambda: other.post("hi"), lambda: other.write_artifact("b.md", "x")):
        with pytest.raises(ScopeDenied):
            fn()
    # seed 000 layer 2: artifacts are readable by all agents, writable only in their room
    assert other.artifacts() and other.read_artifact(other.artifacts()[0])
    assert alice.room().messages()[0]["content"] == "alice channel zebra"
    alice.close()


def test_skill_agent_reads_and_writes_nothing(populated: Path) -> None:
    seo = Store(populated, agent="seo")
    entry = Store(populated, role="admin").ledger.query()[0]
    for fn in [*_reads(seo, "seo").values(), *_reads(seo, "alice").values(),
               lambda: seo.ledger.query(), lambda: seo.ledger.publish("decision", "x"),
               lambda: seo.ledger.get(entry.id), lambda: seo.ledger.is_superseded(entry.id),
               lambda: seo.ledger.entries(), lambda: seo.items.list()]:
        with pytest.raises(ScopeDenied):
            fn()
    assert seo.search("zebra") == []
    seo.close()


def test_search_never_returns_out_of_scope_memory(populated: Path) -> None:
    alice = Store(populated, agent="alice", room="room-a")
    hits = alice.search("zebra", k=50) + alice.search("zebra", k=50, layers=("sessions",))
    owners = {h.owner for h in hits if h.layer not in ("ledger", "item", "channel", "artifact")}
    assert owners == {"alice", "wilco"}
    assert {h.room for h in hits if h.layer == "channel"} == {"room-a"}
    assert {h.room for h in hits if h.layer == "artifact"} == {"room-a", "room-b"}  # seed 000
    assert {h.layer for h in hits} >= {"now", "context", "log", "fact", "file", "task", "session",
                                       "episode", "scratch", "ledger", "channel", "artifact"}
    assert all("bob" not in h.text or h.layer in ("ledger", "artifact") for h in hits)
    with pytest.raises(ScopeDenied):
        alice.search("zebra", agent="bob")
    alice.close()


def test_admin_reads_and_writes_everything(populated: Path) -> None:
    wilco = Store(populated, agent="wilco")
    for fn in _reads(wilco, "bob").values():
        fn()
    assert "bob secret objective" in wilco.agent("bob").now.read()
    assert [e.content for e in wilco.agent("bob").log.tail(5)] == ["bob private thought zebra"]
    wilco.agent("bob").facts.set("note", "from admin")
    assert Store(populated, agent="bob").agent().facts.get("note").value == "from admin"
    assert {h.owner for h in wilco.search("zebra", k=50)} >= {"alice", "bob", "wilco"}
    wilco.close()
