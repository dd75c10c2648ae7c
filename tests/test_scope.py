"""Seed 004 scope table, checked on every read and write path, including search; on both
truths (local files and PostgreSQL: the gate is the same code above either)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from functools import cached_property
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
        m.facts.set("motto", f"{agent} zebra")  # (a key naming a credential is never indexed)
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
        "now": m.now.read,
        "context": m.context.read,
        "identity": m.identity.read,
        "log.tail": lambda: m.log.tail(5),
        "log.entries": m.log.entries,
        "facts.get": lambda: m.facts.get("motto"),
        "facts.list": m.facts.list,
        "files.read": lambda: m.files.read("notes.md"),
        "files.list": m.files.list,
        "tasks": m.tasks.list,
        "sessions.list": m.sessions.list,
        "sessions.messages": lambda: m.sessions.messages("s1"),
        "episodes": m.episodes.list,
        "scratch": m.scratch.list,
        # sizes, counts and listings say something about the memory too
        "log.count": m.log.count,
        "log.size": m.log.size,
        "log.read_text": m.log.read_text,
        "sessions.ids": m.sessions.ids,
        "now.exists": m.now.exists,
        "context.exists": m.context.exists,
        "files.exists": lambda: m.files.exists("notes.md"),
        "files.stat": lambda: m.files.stat("notes.md"),
        "episodes.files": lambda: m.episodes.files("zebra-task"),
        "episodes.read": lambda: m.episodes.read("zebra-task", "report.md"),
        "archives.list": m.archives.list,
        "archives.all_entries": m.archives.all_entries,
    }


def _writes(store: Store, agent: str) -> dict[str, Callable[[], Any]]:
    m = store.agent(agent)
    return {
        "now": lambda: m.now.update("hijack"),
        "context": lambda: m.context.write("hijack"),
        "log": lambda: m.log.append("THOUGHT", "hijack"),
        "facts": lambda: m.facts.set("motto", "hijack"),
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
    assert alice.engine.truth.read_from("agents/bob/memory/notes.md") == b"bob notes zebra"
    alice.close()


# A value for every parameter name a public handle method takes (without a default):
# a method with a parameter missing here fails the walk below until someone decides
# what its scope is. Values are valid, so a refusal can only be the gate's.
SAMPLE: dict[str, Any] = {
    "key": "motto",
    "value": "hijack",
    "rel": "notes.md",
    "old": "zebra",
    "new": "hijack",
    "line": 1,
    "text": "hijack",
    "content": "hijack",
    "session_id": "s1",
    "role": "user",
    "messages": [{"role": "user", "content": "hijack"}],
    "slug": "zebra-task",
    "task_id": "t-1",
    "event": {"kind": "x"},
    "items": ["hijack"],
    "title": "hijack",
    "name": "scratch.md",
    "status": "hijack",
    "description": "hijack",
    "entry_type": "THOUGHT",
    "archives": {"s1": "x.jsonl"},
    "rec": {"compacted": True},
    "rooms": ["room-a"],
    "entry_id": "x",
    "kind": "decision",
    "summary": "hijack",
    "ids": ["x"],
    "source_file": "notes.md",
    "drafts": [],
    "archive_id": "arc-00000000",
    "replaces": "zebra",
    "pos": 0,
    "path": "CONTEXT.md",  # file versions (issue 24)
    "version": "current",
    "a": "current",
    "start": 0.0,  # a span of time (epoch seconds): the sessions active in it
    "end": 4e9,
}
# Seed 000 layer 2: a room's artifacts, and where it sits in the DAG, are readable by
# every agent (skills aside); everything else of a room is its agents' (and admins').
ROOM_READABLE_BY_ALL = frozenset(
    {"artifacts", "read_artifact", "info", "upstream", "ancestors", "check_open"}
)


def _every_method(handle: object) -> dict[str, Callable[[], Any]]:
    """Every public method and property of a handle, ready to call with SAMPLE values."""
    out: dict[str, Callable[[], Any]] = {}
    for name in dir(type(handle)):
        if name.startswith("_"):
            continue
        attr = inspect.getattr_static(type(handle), name)
        if isinstance(attr, property | cached_property):
            out[name] = lambda n=name: getattr(handle, n)
            continue
        fn = getattr(handle, name)
        if not callable(fn):
            continue
        params = [
            p
            for p in inspect.signature(fn).parameters.values()
            if p.default is inspect.Parameter.empty
            and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ]
        missing = [p.name for p in params if p.name not in SAMPLE]
        assert not missing, f"{type(handle).__name__}.{name}: add {missing} to SAMPLE"
        out[name] = lambda fn=fn, kw={p.name: SAMPLE[p.name] for p in params}: fn(**kw)
    return out


def _layers(store: Store, agent: str) -> dict[str, object]:
    """An agent handle and every layer handle it gives (found by introspection too)."""
    m = store.agent(agent)
    handles: dict[str, object] = {"agent": m}
    for name in dir(type(m)):
        if isinstance(getattr(type(m), name, None), cached_property):
            handles[name] = getattr(m, name)
    assert len(handles) >= 12  # now, context, identity, log, files, facts, tasks, ...
    return handles


def _denied(handles: dict[str, object], allowed: frozenset[str] = frozenset()) -> list[str]:
    """The `layer.method` names that did NOT raise ScopeDenied (and are not `allowed`)."""
    slipped = []
    for layer, handle in handles.items():
        for name, call in _every_method(handle).items():
            if name in allowed:
                continue
            if isinstance(getattr(type(handle), name, None), cached_property):
                continue  # a layer handle: walked as a handle of its own
            try:
                result = call()
            except ScopeDenied:
                continue
            slipped.append(f"{layer}.{name} -> {str(result)[:60]}")
    return slipped


def test_every_method_of_another_agents_layers_is_denied(populated: Path) -> None:
    before = {p: p.read_bytes() for p in (populated / "agents/bob").rglob("*") if p.is_file()}
    with Store(populated, agent="alice", room="room-a") as alice:
        assert _denied(_layers(alice, "bob")) == []
    after = {p: p.read_bytes() for p in (populated / "agents/bob").rglob("*") if p.is_file()}
    assert after == before


def test_every_method_of_another_room_is_denied_but_what_seed_000_shares(populated: Path) -> None:
    with Store(populated, agent="alice", room="room-a") as alice:
        room = alice.room("room-b")
        assert _denied({"room-b": room}, ROOM_READABLE_BY_ALL) == []
        assert room.artifacts() and room.info().name == "room-b"
    with Store(populated, agent="seo") as seo:
        assert _denied({"room-b": seo.room("room-b")}) == []  # skills: nothing at all


def test_every_method_of_the_shared_handles_is_denied_to_a_skill(populated: Path) -> None:
    with Store(populated, agent="seo") as seo:
        assert _denied({"ledger": seo.ledger, "items": seo.items, **_layers(seo, "seo")}) == []


def test_project_agent_reads_admin_but_cannot_write_it(populated: Path) -> None:
    alice = Store(populated, agent="alice", room="room-a")
    for fn in _reads(alice, "wilco").values():
        fn()
    assert "wilco secret objective" in alice.agent("wilco").now.read()
    assert alice.agent("wilco").facts.get("motto").value == "wilco zebra"
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
    for fn in [
        *_reads(seo, "seo").values(),
        *_reads(seo, "alice").values(),
        lambda: seo.ledger.query(),
        lambda: seo.ledger.publish("decision", "x"),
        lambda: seo.ledger.get(entry.id),
        lambda: seo.ledger.is_superseded(entry.id),
        lambda: seo.ledger.entries(),
        lambda: seo.items.list(),
    ]:
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
    assert {h.layer for h in hits} >= {
        "now",
        "context",
        "log",
        "fact",
        "file",
        "task",
        "session",
        "episode",
        "scratch",
        "ledger",
        "channel",
        "artifact",
    }
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
