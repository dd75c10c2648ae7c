"""Paging the story down with "Older" and back up with "Newer" shows every event once.

CI failed on `tests/web/test_webapp.py::test_timeline_tells_each_tool_call_once`: on a fast
machine a page ended inside one millisecond, and the page "Newer" led back to repeated
three calls of the page the person came from. The page above one was the `limit` records
just newer than it, then moved down past the records of an event its top records held; at
a cut inside an event (a tool call's tool_use is older than its result and LOG entry)
that move went below where the person's page starts. Here, on the ten-session store of a
coding agent (`tests.web.coding_store`, the hooks in process) and with short pages so that
many cuts fall inside events, whatever the clock: walking down then back up shows each
record once each way, the page reached by "Newer" ends just above the page it came from,
and no walk splits an event into two lines. On a store written by a fast machine (many
records in each millisecond, in index order among them), a call's records can lie further
apart than the look past a cut reads: the look reads on until the event ends.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memstrata import Store
from memstrata.assembly.story import Story, tell


@pytest.fixture(scope="module")
def coding_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    from tests.web.coding_store import build

    home = tmp_path_factory.mktemp("paging") / "store"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MEMSTRATA_EMBEDDER", "none")
        build(home)
        yield home


@pytest.fixture(scope="module")
def slow_clock_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The same store written by a fast machine: its clock moves one millisecond every 30
    reads (the records' `time.time` and the transcripts' `coding_store._now` alike)."""
    from tests.web import coding_store

    from memstrata.model import iso

    reads = itertools.count()

    def clock() -> float:
        return 1_790_000_000.0 + (next(reads) // 30) / 1000

    home = tmp_path_factory.mktemp("fast") / "store"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MEMSTRATA_EMBEDDER", "none")
        mp.setattr(time, "time", clock)
        mp.setattr(coding_store, "_now", lambda: iso(clock()))
        coding_store.build(home)
    yield home


def _uids(page: Story) -> list[str]:
    return [u for line in page.lines for u in line.uids]


def _events(pages: list[Story]) -> set[frozenset[str]]:
    return {frozenset(line.uids) for p in pages for line in p.lines}


@pytest.mark.parametrize("kinds", [(), ("calls",), ("conversation", "calls")])
@pytest.mark.parametrize("limit", [3, 7, 20])
def test_older_then_newer_shows_every_record_once(
    coding_home: Path, kinds: tuple[str, ...], limit: int
) -> None:
    _walk_down_and_up(coding_home, kinds, limit)


@pytest.mark.parametrize("kinds", [(), ("calls",), ("conversation", "calls")])
@pytest.mark.parametrize("limit", [3, 7, 20])
def test_a_fast_machines_store_pages_without_splitting_a_call(
    slow_clock_home: Path, kinds: tuple[str, ...], limit: int
) -> None:
    """CI (fast machine): a call's LOG entry, tool_use and result, indexed among many
    records of their millisecond, lay more than the look past a cut apart; "Newer" showed
    the call as two lines on two pages."""
    _walk_down_and_up(slow_clock_home, kinds, limit)


def _walk_down_and_up(home: Path, kinds: tuple[str, ...], limit: int) -> None:
    with Store(home, agent="wilco") as s:
        down = [tell(s, "finn", kinds=kinds, limit=limit)]
        while down[-1].next is not None:
            down.append(tell(s, "finn", kinds=kinds, before=down[-1].next, limit=limit))
            assert len(down) < 500
        up = [down[-1]]
        while up[-1].newer is not None:
            came_from = up[-1]
            page = tell(s, "finn", kinds=kinds, newer=came_from.newer, limit=limit)
            assert page.records, "a Newer link leads to an empty page"
            assert not set(_uids(page)) & set(_uids(came_from))  # the failure CI saw
            assert page.next == came_from.newer  # it ends just above the page it came from
            up.append(page)
            assert len(up) < 500
    shown_down = [u for p in down for u in _uids(p)]
    shown_up = [u for p in up for u in _uids(p)]
    assert len(shown_down) == len(set(shown_down))
    assert len(shown_up) == len(set(shown_up))
    assert set(shown_up) == set(shown_down)
    assert len(down) > 3  # short pages: many cuts
    assert _events(up) == _events(down)  # neither walk splits an event
    if "calls" in kinds:  # ten sessions: 41 calls, each one line of its three records
        calls = [line for p in down for line in p.lines if line.kind == "call"]
        assert len(calls) == 41 and all(len(c.uids) == 3 for c in calls)


def test_newer_from_the_top_page_is_the_top_page(coding_home: Path) -> None:
    """A "newer" cursor above every record (a stale link) shows the top page, not nothing."""
    with Store(coding_home, agent="wilco") as s:
        top = tell(s, "finn", limit=7)
        assert top.newer is None and top.lines
        stale = tell(s, "finn", newer="99999999999.0:0", limit=7)
        assert _uids(stale) == _uids(top)
