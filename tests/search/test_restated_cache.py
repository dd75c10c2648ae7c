"""`search.restated` reads the facts updated in place once while the index is unchanged
(`restated.UpdatedFacts`), and a fact updated since, by this store, another store of the
home or another process, is seen by the next search. The stores are `test_restated`'s."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from tests.search.test_restated import ASKED, _queue_store, clock  # noqa: F401

from memstrata.search.query import SearchQuery
from memstrata.store.view import Store

pytestmark = pytest.mark.usefixtures("clock")  # each write an hour after the one before

UPDATED_FACTS = "$.updated_at"  # what only `restated._read_updated`'s statement holds
NEWER = "orders-q3: quorum queue, 7 replicas, RabbitMQ 4.0"


@contextmanager
def _reads(store: Store) -> Iterator[list[str]]:
    """The statements that read the updated facts, while inside."""
    seen: list[str] = []
    store.db.conn.set_trace_callback(seen.append)
    try:
        yield seen
    finally:
        store.db.conn.set_trace_callback(None)
        seen[:] = [s for s in seen if UPDATED_FACTS in s]


def _lifted(store: Store) -> list[str]:
    """The texts of the hits `with_restated` lifted above a record that stated them."""
    return [h.text for h in store.search(SearchQuery(text=ASKED)) if "updates" in h.explain]


@pytest.mark.parametrize("update", [True, False], ids=["updated", "never-updated"])
def test_searches_of_an_unchanged_store_read_the_updated_facts_once(
    tmp_path: Path, update: bool
) -> None:
    """Five searches, one read (fails before: one read a search, or two when
    `search.reach` asked `rules_idle` first); the same hits each time."""
    with _queue_store(tmp_path / "h", update=update) as s:
        with _reads(s) as seen:
            found = [_lifted(s) for _ in range(5)]
        assert len(seen) == 1, seen
        assert found == [found[0]] * 5
        assert bool(found[0]) == update and (not update or "orders-q2" in found[0][0])


def test_a_fact_updated_between_two_searches_is_seen_by_the_second(tmp_path: Path) -> None:
    with _queue_store(tmp_path / "h", update=False) as s:
        assert _lifted(s) == []
        s.agent().facts.set("orders_queue", "orders-q2: quorum queue, 5 replicas, RabbitMQ 3.13")
        assert ["orders-q2" in t for t in _lifted(s)] == [True]
        s.agent().facts.set("orders_queue", NEWER)  # updated again: the new value
        assert _lifted(s) == [NEWER]
        s.agent().facts.set("rollout_window", "Tuesdays 10:00-12:00 UTC")  # a new fact
        s.agent().facts.set("rollout_window", "Thursdays 10:00-12:00 UTC")
        assert _lifted(s) == [NEWER]  # read again, and still the one asked about


def test_a_fact_updated_by_another_store_of_the_home_is_seen(tmp_path: Path) -> None:
    home = tmp_path / "h"
    with _queue_store(home, update=False) as s:
        assert _lifted(s) == []
        with Store(home, agent="ops") as other:
            other.agent().facts.set("orders_queue", NEWER)
        assert _lifted(s) == [NEWER]


def test_a_fact_updated_by_another_process_is_seen(tmp_path: Path) -> None:
    """The other process's update is acknowledged (it exited) before the search."""
    home = tmp_path / "h"
    with _queue_store(home, update=False) as s:
        assert _lifted(s) == []
        script = (
            "from memstrata import Store\n"
            f"with Store({str(home)!r}, agent='ops') as s:\n"
            f"    s.agent().facts.set('orders_queue', {NEWER!r})\n"
        )
        r = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
        )
        assert r.returncode == 0, r.stderr
        assert _lifted(s) == [NEWER]


def test_facts_read_inside_a_transaction_rolled_back_are_never_given_again(tmp_path: Path) -> None:
    """A search inside the caller's transaction sees its writes; once rolled back, the
    next search does not (the stamp alone would not say: `total_changes` stays counted)."""
    with _queue_store(tmp_path / "h", update=False) as s:
        assert _lifted(s) == []
        updated = "json_set(meta, '$.updated_at', '2999-01-01T00:00:00.000Z')"  # after created_at
        with pytest.raises(RuntimeError), s.db.write() as conn:
            conn.execute(f"UPDATE docs SET meta = {updated} WHERE layer = 'fact'")
            inside = _lifted(s)
            raise RuntimeError("roll back")
        assert ["orders-q1" in t for t in inside] == [True]
        assert _lifted(s) == []
