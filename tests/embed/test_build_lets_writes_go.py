"""A background vector build lets a burst of writes go first (`store.semantic`): before
each embedding batch it waits for a quiet moment (no write for QUIET_S, at most
MAX_WAIT_S), and `drain()` hurries it. The waiting is checked on a fake clock (no
sleeps); the end-to-end test shows a hurried build leaves every write embedded."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstrata import SearchQuery, Store
from memstrata.embed.base import FakeEmbedder
from memstrata.store import semantic


class Clock:
    """time.monotonic for `store.semantic`, moved on by the waits of its event."""

    def __init__(self) -> None:
        self.now = 100.0

    def monotonic(self) -> float:
        return self.now


class Wake:
    """The build's wake-up event: each wait moves the clock on, and `on_wait` may write."""

    def __init__(self, clock: Clock, on_wait: object = None) -> None:
        self.clock = clock
        self.flag = False
        self.waits: list[float] = []
        self.on_wait = on_wait

    def is_set(self) -> bool:
        return self.flag

    def set(self) -> None:
        self.flag = True

    def clear(self) -> None:
        self.flag = False

    def wait(self, seconds: float) -> bool:
        self.waits.append(round(seconds, 6))
        self.clock.now += seconds
        if callable(self.on_wait):
            self.on_wait()
        return self.flag


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    c = Clock()
    monkeypatch.setattr(semantic, "time", c)
    return c


def _semantic(store: Store, clock: Clock, on_wait: object = None) -> semantic.Semantic:
    sem = store.engine.semantic
    sem._wake = Wake(clock, on_wait)  # type: ignore[assignment]
    return sem


def test_a_build_waits_for_a_quiet_moment_after_a_write(tmp_path: Path, clock: Clock) -> None:
    with Store(tmp_path / "s", agent="finn") as store:
        sem = _semantic(store, clock)
        sem._last_write = clock.now - 0.1  # a write 0.1 s ago
        sem._let_writes_go()
        assert sem._wake.waits == [pytest.approx(semantic.QUIET_S - 0.1)]  # type: ignore[attr-defined]
        sem._wake.waits.clear()  # type: ignore[attr-defined]
        sem._let_writes_go()  # quiet already: no wait
        assert sem._wake.waits == []  # type: ignore[attr-defined]


def test_writes_that_keep_coming_delay_a_batch_at_most_max_wait(
    tmp_path: Path, clock: Clock
) -> None:
    with Store(tmp_path / "s", agent="finn") as store:

        def another_write() -> None:
            sem._last_write = clock.now

        sem = _semantic(store, clock, another_write)
        sem._last_write = clock.now
        start = clock.now
        sem._let_writes_go()
        assert clock.now - start == pytest.approx(semantic.MAX_WAIT_S)


def test_a_hurried_or_stopping_build_does_not_wait(tmp_path: Path, clock: Clock) -> None:
    with Store(tmp_path / "s", agent="finn") as store:
        sem = _semantic(store, clock)
        sem._last_write = clock.now
        with sem.hurried():
            sem._let_writes_go()
        assert sem._wake.waits == []  # type: ignore[attr-defined]
        assert not sem._wake.is_set()  # no longer hurried: the next batch waits again
        sem.stop()
        sem._let_writes_go()
        assert sem._wake.waits == []  # type: ignore[attr-defined]


def test_a_burst_of_writes_is_embedded_once_drained(tmp_path: Path) -> None:
    """drain() right after a burst of appends returns with every entry embedded: a
    semantic search over the built vectors alone (no catch-up) finds the last one."""
    with Store(tmp_path / "s", agent="finn") as store:
        store.use_embedder(FakeEmbedder(32))
        log = store.agent().log
        for i in range(30):
            log.append("THOUGHT", f"step {i} of the burst: checked shard {i}")
        log.append("THOUGHT", "zebra migration plan finished")
        store.drain()
        vi = store.vectors(store.embedder())
        assert vi.build() == 0  # nothing left to embed
        hits = store.search(SearchQuery(text="zebra migration plan finished", k=3))
        assert hits and "zebra" in hits[0].text
