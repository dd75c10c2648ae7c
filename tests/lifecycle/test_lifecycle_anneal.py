"""Self-annealing: errors leave an ERROR entry with traceback and a recovery NOW.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstrata import MalformedInput, MemoryManager, Store
from memstrata.lifecycle import annealing
from memstrata.lifecycle.anneal import RECOVERY_STATUS, RECOVERY_STEPS


class Boom(RuntimeError):
    pass


def test_context_manager_records_and_reraises(store: Store) -> None:
    mem = store.agent("finn")
    mem.now.update("Analyze portfolio data", ["Load CSV"])
    with pytest.raises(Boom, match="disk on fire"), annealing(store, "finn"):
        raise Boom("disk on fire")
    entry = mem.log.entries()[-1]
    assert entry.entry_type == "ERROR" and "Boom: disk on fire" in entry.content
    assert "Traceback" in entry.metadata["traceback"]
    assert "test_context_manager_records_and_reraises" in entry.metadata["traceback"]
    state = mem.now.state()
    assert state.objective == RECOVERY_STATUS
    assert state.next_steps == RECOVERY_STEPS
    assert any("Analyze portfolio data" in b for b in state.blockers)


def test_no_error_no_trace(store: Store) -> None:
    with annealing(store):
        store.agent("finn").facts.set("step", "done")
    assert store.agent("finn").facts.get("step").value == "done"  # the block ran
    assert not store.agent("finn").log.path.exists()


def test_decorator_with_manager(home: Path) -> None:
    m = MemoryManager("finn", home)

    @annealing(m)
    def step(x: int) -> int:
        return 10 // x

    assert step(2) == 5
    with pytest.raises(ZeroDivisionError):
        step(0)
    assert m.read_log(1)[0]["entry_type"] == "ERROR"
    assert RECOVERY_STATUS in m.read_now()
    with pytest.raises(ZeroDivisionError):
        step(0)  # the decorator works again on each call
    assert [e["entry_type"] for e in m.read_log(5)].count("ERROR") == 2
    m.close()


def test_memory_failure_does_not_mask_the_error(home: Path) -> None:
    with Store(home, agent="seo", role="skill") as skill:  # skills may write nothing
        with pytest.raises(Boom) as info, annealing(skill):
            raise Boom("original")
        assert any("could not record" in n for n in info.value.__notes__)
    with Store(home) as anonymous, pytest.raises(MalformedInput), annealing(anonymous):
        pass
