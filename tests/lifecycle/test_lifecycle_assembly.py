"""Context assembly: hard budget, priorities, whole lines, determinism, ignore memory, framing."""

from __future__ import annotations

import random
import re

import pytest

from memstrata import MalformedInput, Store
from memstrata.assembly.context import FRAME, assemble_context, wants_no_memory

NOW_TS = 1_800_000_000.0
MARKER = re.compile(r"^\[… \d+ line\(s\) omitted to fit the context budget\]$")


@pytest.fixture
def full(store: Store) -> Store:
    mem = store.agent("finn")
    mem.identity.write("# Finn\n\nA careful research agent.\n")
    mem.context.write("# Memory\n\n" + "".join(f"- durable point {i}\n" for i in range(40)))
    mem.now.update("Ship the billing migration", [f"step {i}" for i in range(8)])
    for i in range(30):
        mem.log.append("TOOL_USE", f"ran tool number {i} on billing tables")
    for i in range(25):
        mem.facts.set(f"fact-{i:02d}", f"billing value {i}", "project", citations=["billing.md"])
    mem.tasks.add("Migrate invoices table", priority=1)
    mem.scratch.write("scratch.md", "# scratch\n")
    for i in range(6):
        mem.decisions.record(f"Billing decision {i}: invoices in EUR from March")
        mem.decisions.record(f"Billing preference {i}: totals rounded half up", "preference")
    mem.log.append("ERROR", "Error: ValueError: bad invoice row")
    return store


def _ctx(store: Store, budget: int, **kw: object) -> str:
    return assemble_context(
        store, "finn", budget_chars=budget, now=NOW_TS, workspace="/ws", **kw
    ).text  # type: ignore[arg-type]


def test_budget_never_exceeded_and_lines_whole(full: Store) -> None:
    unbounded = _ctx(full, 1_000_000)
    whole = set(unbounded.splitlines())
    rng = random.Random(7)
    budgets = sorted({rng.randint(200, len(unbounded) + 500) for _ in range(150)} | {200, 201})
    for budget in budgets:
        res = assemble_context(full, "finn", budget_chars=budget, now=NOW_TS, workspace="/ws")
        assert res.chars == len(res.text) <= budget, budget
        for line in res.text.splitlines():
            assert line in whole or MARKER.match(line), (budget, line)
    assert len(unbounded) < 1_000_000 and "durable point 39" in unbounded


PRIORITY = {  # issue 19: ranked by value (NOW, tasks, decisions before the activity)
    "identity": 100,
    "now": 95,
    "time": 90,
    "tasks": 89,
    "decisions": 88,
    "context": 86,
    "preferences": 84,
    "workspace": 80,
    "errors": 76,
    "facts": 70,
    "log": 50,
    "ledger": 40,
    "scratch": 30,
}
TITLES = {
    "## Identity": "identity",
    "## Current status (NOW)": "now",
    "## Current date and time": "time",
    "## Persistent memory": "context",
    "## Workspace": "workspace",
    "## Known facts": "facts",
    "## Open tasks": "tasks",
    "## Decisions and constraints in force": "decisions",
    "## Preferences": "preferences",
    "## Open errors (nothing later resolved them)": "errors",
    "## Session scratch files (read on demand)": "scratch",
}


def _trimmed(text: str) -> set[str]:
    """Keys of the sections that carry an omission marker."""
    out, current = set(), None
    for line in text.splitlines():
        if line in TITLES or line.startswith("## Recent activity"):
            current = TITLES.get(line, "log")
        elif MARKER.match(line) and current:
            out.add(current)
    return out


def test_highest_priority_parts_survive(full: Store) -> None:
    unbounded = assemble_context(full, "finn", budget_chars=1_000_000, now=NOW_TS, workspace="/ws")
    assert not unbounded.truncated and set(unbounded.sections) == set(PRIORITY) - {"ledger"}
    tight = assemble_context(full, "finn", budget_chars=1200, now=NOW_TS, workspace="/ws")
    assert tight.truncated and "Ship the billing migration" in tight.text
    assert {"identity", "now"} <= set(tight.sections) and "scratch" not in tight.sections
    rng = random.Random(11)
    for budget in [rng.randint(400, unbounded.chars) for _ in range(60)]:
        res = assemble_context(full, "finn", budget_chars=budget, now=NOW_TS, workspace="/ws")
        lost = _trimmed(res.text) | (set(unbounded.sections) - set(res.sections))
        # a section loses lines only once every lower-priority section is gone entirely
        for key in lost:
            lower = [k for k in res.sections if PRIORITY[k] < PRIORITY[key]]
            assert not lower, (budget, key, lower)


def test_log_keeps_its_newest_lines(full: Store) -> None:
    seen = 0
    for budget in range(1500, 6000, 100):
        res = assemble_context(full, "finn", budget_chars=budget, now=NOW_TS, workspace="/ws")
        if "log" in res.sections and "log" in _trimmed(res.text) and "ran tool" in res.text:
            seen += 1
            assert "ran tool number 29 " in res.text + " "
            assert "ran tool number 10 " not in res.text + " "
    assert seen > 0


def test_deterministic(full: Store) -> None:
    assert _ctx(full, 2500) == _ctx(full, 2500)
    assert _ctx(full, 100_000) == _ctx(full, 100_000)


def test_ignore_memory_reads_nothing(full: Store) -> None:
    with full.events.capture() as seen:
        res = assemble_context(full, "finn", ignore_memory=True, now=NOW_TS, workspace="/ws")
    assert [e for e in seen if e.name == "memory:read"] == []
    assert "Ship the billing migration" not in res.text and "durable point" not in res.text
    assert "ignored for this turn" in res.text
    with full.events.capture() as seen:
        assemble_context(full, "finn", now=NOW_TS, workspace="/ws")
    assert any(e.name == "memory:read" for e in seen)
    assert wants_no_memory("Please ignore memory for this one")
    assert wants_no_memory("fresh context please") and not wants_no_memory("use memory")


def test_recalled_text_is_framed_as_data_with_source(full: Store) -> None:
    text = _ctx(full, 100_000)
    assert FRAME in text
    now_rel = full.rel(full.agent("finn").now.path)
    assert f'<memory source="{now_rel}">' in text
    start = text.index(f'<memory source="{now_rel}">')
    assert "Ship the billing migration" in text[start : text.index("</memory>", start)]


def test_bad_budget(full: Store) -> None:
    with pytest.raises(MalformedInput):
        assemble_context(full, "finn", budget_chars=50)
