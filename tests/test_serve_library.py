"""The library functions `memstrata serve` stands on: a principal over one shared store,
the timeline, ledger pages and supersede chains, items cleanup, transcript pages, recent
audit events, reviewed prune."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from memstrata import Store
from memstrata.assembly.ledger_pages import ledger_page, supersede_chain
from memstrata.assembly.timeline import timeline
from memstrata.errors import MalformedInput, NotFound, ScopeDenied
from memstrata.store.events import recent_events, tail_events

CONFIG = '[roles]\nadmin = ["wilco"]\nproject = ["finn", "mira"]\n'


@pytest.fixture
def root(home: Path) -> Store:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(CONFIG)
    s = Store(home)
    yield s
    s.close()


def test_acting_as_shares_the_store_and_keeps_each_principal(root: Store) -> None:
    finn = root.acting_as("finn", "room-1")
    mira = root.acting_as("mira", "room-2")
    assert (
        finn.db is root.db and mira.engine.locks is root.engine.locks
    )  # one index, one lock table
    assert (finn.principal.agent, finn.principal.role, finn.principal.room) == (
        "finn",
        "project",
        "room-1",
    )
    assert root.acting_as("wilco").principal.role == "admin"  # the role comes from [roles]
    finn.agent().log.append("THOUGHT", "finn's secret")
    with pytest.raises(ScopeDenied):
        mira.agent("finn").log.tail()
    with pytest.raises(ScopeDenied):  # a role may only be lowered
        root.acting_as("finn", role="admin")
    assert [h.owner for h in root.search("secret")] == ["finn"]
    assert mira.search("secret") == []
    with root.events.capture() as seen:
        mira.agent().now.update("x")
    assert {e.agent for e in seen} == {"mira"}
    audit = [json.loads(x) for x in (root.home / "events.jsonl").read_text().splitlines()]
    assert audit[-1]["agent"] == "mira"
    finn.close()  # a view closes nothing
    assert root.agent("finn").log.count() == 1


def test_timeline_pages_newest_first_by_type_and_time(root: Store) -> None:
    finn = root.acting_as("finn")
    mem = finn.agent()
    t0 = float(int(time.time()) - 1000)  # whole seconds: LOG times keep milliseconds
    for i in range(25):
        mem.log.append("THOUGHT", f"entry {i}", ts=t0 + i)
    mem.facts.set("k", "v")
    mem.sessions.append("s-1", "user", "hello", timestamp=t0 + 100)
    pages, cursor = [], None
    while True:
        page = timeline(finn, "finn", types=("log",), limit=10, before=cursor)
        pages.append(page)
        cursor = page.next
        if cursor is None:
            break
    texts = [i.text for p in pages for i in p.items]
    assert texts == [f"entry {i}" for i in range(24, -1, -1)]  # each once, newest first
    assert [len(p.items) for p in pages] == [10, 10, 5]
    mixed = timeline(finn, "finn", types=("fact", "session"))
    assert {i.type for i in mixed.items} == {"fact", "session"}
    window = timeline(finn, "finn", types=("log",), since=t0 + 5, until=t0 + 7)
    assert [i.text for i in window.items] == ["entry 7", "entry 6", "entry 5"]
    with pytest.raises(ScopeDenied):
        timeline(root.acting_as("mira"), "finn")
    with pytest.raises(MalformedInput):
        timeline(finn, "finn", types=("nope",))
    with pytest.raises(MalformedInput):
        timeline(finn, "finn", before="garbage")


def test_timeline_shows_every_fact_change_and_files_as_they_are_now(root: Store) -> None:
    """Facts: each set and forget is an item (from the journal), with its value. NOW:
    rewritten in place, no earlier version kept: one item, its current text, titled so."""
    finn = root.acting_as("finn")
    mem = finn.agent()
    for i in range(3):
        mem.now.update(f"objective {i}", [f"step {i}"])
    mem.facts.set("k", "v1", "preference")
    mem.facts.set("k", "v2", "preference")
    mem.facts.forget("k")
    items = timeline(finn, "finn", types=("now", "fact")).items
    assert [(i.type, i.kind, i.title) for i in items if i.type == "fact"] == [
        ("fact", "forget", "k"),
        ("fact", "set", "k"),
        ("fact", "set", "k"),
    ]
    facts = [i for i in items if i.type == "fact"]
    assert facts[1].text.startswith("v2") and facts[2].text.startswith("v1")
    assert "preference" in facts[1].text
    assert facts[0].source == facts[1].source == "agents/finn/facts.jsonl"
    [now] = [i for i in items if i.type == "now"]
    assert now.title == "NOW.md (current version)"
    assert "objective 2" in now.text and "step 2" in now.text  # more than its '# NOW' title
    # Fact changes page like the rest, each once, and honour the time window.
    for i in range(23):
        mem.facts.set(f"key{i}", f"value {i}")
    pages, cursor = [], None
    while True:
        page = timeline(finn, "finn", types=("fact",), limit=10, before=cursor)
        pages.append([(i.kind, i.title, i.text.split("\n")[0]) for i in page.items])
        cursor = page.next
        if cursor is None:
            break
    seen = [x for p in pages for x in p]
    assert seen[:23] == [("set", f"key{i}", f"value {i}") for i in range(22, -1, -1)]
    assert seen[23:] == [
        ("forget", "k", "forgotten (the journal keeps its earlier values)"),
        ("set", "k", "v2"),
        ("set", "k", "v1"),
    ]
    assert [len(p) for p in pages] == [10, 10, 6]
    assert timeline(finn, "finn", types=("fact",), since=time.time() + 3600).items == ()
    assert len(timeline(finn, "finn", types=("fact",), until=time.time() + 3600).items) == 26
    # Another project agent sees none of it.
    with pytest.raises(ScopeDenied):
        timeline(root.acting_as("mira"), "finn", types=("fact",))


def test_ledger_pages_chains_and_freshness(root: Store) -> None:
    finn = root.acting_as("finn", "room-1")
    # only an admin may backdate an entry (seed 000 decay): the owner writes it as finn's
    a = root.ledger.publish(
        "decision", "v1", ts=time.time() - 336 * 3600, room_id="room-1", author_role="finn"
    )
    b = finn.ledger.publish("decision", "v2", supersedes=a.id)
    c = finn.ledger.publish("decision", "v3", supersedes=b.id)
    other = root.acting_as("mira", "room-2").ledger.publish("warning", "elsewhere")
    live = ledger_page(finn, room="room-1")
    assert [r.entry.id for r in live.rows] == [c.id]
    every = ledger_page(finn, room="room-1", include_superseded=True)
    rows = {r.entry.id: r for r in every.rows}
    assert rows[a.id].successor == b.id and rows[b.id].successor == c.id
    assert rows[c.id].successor is None and not rows[c.id].superseded
    assert rows[a.id].freshness == pytest.approx(0.5, abs=0.01)  # one half-life old
    for start in (a.id, b.id, c.id):
        assert [r.entry.id for r in supersede_chain(finn, start)] == [a.id, b.id, c.id]
    first = ledger_page(finn, include_superseded=True, limit=2)
    rest = ledger_page(finn, include_superseded=True, limit=2, before=first.next)
    assert len({r.entry.id for r in first.rows + rest.rows}) == 4 and rest.next is None
    assert [r.entry.id for r in ledger_page(finn, exclude_room="room-1").rows] == [other.id]
    with pytest.raises(NotFound):
        supersede_chain(finn, "mem-nope")


def test_items_remove_keeps_a_copy_and_pages(root: Store) -> None:
    stored = root.items.replace_source(
        "a.md", [{"type": "note", "title": f"t{i}", "content": f"c{i}"} for i in range(5)]
    )
    got, nxt = root.items.page(limit=3)
    more, end = root.items.page(limit=3, before=nxt)
    assert len(got) == 3 and len(more) == 2 and end is None
    removed = root.items.remove([stored[0].id])
    assert [i.id for i in removed] == [stored[0].id]
    assert stored[0].id not in {i.id for i in root.items.list()}
    kept = json.loads((root.home / "items.removed.jsonl").read_text().splitlines()[0])
    assert kept["id"] == stored[0].id and kept["removedAt"]
    with pytest.raises(NotFound):
        root.items.remove(["item_nope", stored[1].id])
    assert stored[1].id in {i.id for i in root.items.list()}  # nothing changed


def test_session_pages_follow_the_transcript(root: Store) -> None:
    s = root.acting_as("finn").agent().sessions
    s.append_many("s-1", [{"role": "user", "content": f"m{i}"} for i in range(7)])
    seen, after = [], -1
    while True:
        msgs, nxt = s.page("s-1", after=after, limit=3)
        seen += [m.content for m in msgs]
        if nxt is None:
            break
        after = nxt
    assert seen == [f"m{i}" for i in range(7)]
    with pytest.raises(NotFound):
        s.page("s-nope")


def test_recent_and_tailed_events(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    lines = [
        json.dumps(
            {
                "ts": i,
                "event": "memory:write" if i % 2 else "memory:read",
                "agent": "finn" if i % 3 else "mira",
                "payload": {"i": i},
            }
        )
        for i in range(3000)
    ]
    path.write_text("\n".join(lines) + "\n")
    got, cursor = [], None
    while True:
        recs, cursor = recent_events(path, limit=250, before=cursor)
        got += recs
        if cursor is None:
            break
    assert [r["payload"]["i"] for r in got] == list(range(2999, -1, -1))
    only, _ = recent_events(path, limit=5, agents=frozenset({"mira"}), names=("memory:write",))
    assert all(r["agent"] == "mira" and r["event"] == "memory:write" for r in only)
    recs, offset, ino = tail_events(path, path.stat().st_size, None)
    assert recs == []
    with path.open("a") as fh:
        fh.write(json.dumps({"ts": 1, "event": "memory:search", "agent": "x", "payload": {}}))
    assert tail_events(path, offset, ino)[0] == []  # a line still being written waits
    with path.open("a") as fh:
        fh.write("\n")
    new, _, _ = tail_events(path, offset, ino)
    assert [r["event"] for r in new] == ["memory:search"]
    path.write_text(lines[0] + "\n")  # rotated / rewritten: read from the start
    assert len(tail_events(path, offset, ino)[0]) == 1


def test_prune_acts_only_on_reviewed_findings(root: Store) -> None:
    from tests.planted import plant_fact

    from memstrata.lifecycle.hygiene import audit, prune

    finn = root.acting_as("finn")
    facts = finn.agent().facts
    facts.set("a", "cd evals && npm test", "project", citations=["evals/package.json"])
    facts.set("b", "cd evals && npm test ", "project", citations=["evals/package.json"])
    plant_fact(finn, "finn", "c", "merged PR #41 into main", "project")  # a hand edit's
    report = audit(finn, "finn")
    kinds = {(f.kind, f.target) for f in report.findings}
    assert ("volatile_fact", "c") in kinds
    dup = next(f for f in report.findings if f.kind == "duplicate_fact")
    done = prune(finn, "finn", report, dry_run=False, only=[(dup.kind, dup.target)])
    assert [a.finding.target for a in done.applied] == [dup.target]
    assert facts.get("c").value  # not reviewed: left alone


def test_the_api_names_every_timeline_type() -> None:
    from typing import get_args

    pytest.importorskip("fastapi")
    from memstrata.assembly.timeline import TIMELINE_TYPES
    from memstrata.web.api.agents import TimelineType

    assert set(get_args(TimelineType)) == set(TIMELINE_TYPES)
