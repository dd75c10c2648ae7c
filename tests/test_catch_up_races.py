"""A catch-up racing other writers never leaves an acknowledged write out of the index.

Each test forces one interleaving the 50-client server test (tests/web/test_concurrency.py)
can hit by chance, with a hook at the exact step, no sleeps: a catch-up of LOG.md that
looked at the file (its size) before an append landed and was indexed, then wrote
what it had seen.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memstrata import Store
from memstrata.assembly.timeline import timeline
from memstrata.files.truth import Entry
from memstrata.index import queries
from memstrata.index.reconcile import Origin, SourceSpec
from memstrata.lifecycle.compaction import compact_log


def _log_texts(store: Store, agent: str) -> list[str]:
    """The LOG entries the index holds, as the timeline reads them (no catch-up of
    LOG.md of its own: what the index holds is what is shown)."""
    page = timeline(store, agent, types=("log", "archive"), limit=200)
    assert page.next is None
    return sorted(i.text for i in page.items)


ENTRIES = [f"entry {n}" for n in range(3)]


def _store_with_three_entries(home: Path) -> Store:
    """A store whose agent `finn` logged ENTRIES, each indexed."""
    store = Store(home, agent="finn", watch=False)
    log = store.agent().log
    for text in ENTRIES:
        log.append("THOUGHT", text)
    assert _log_texts(store, "finn") == ENTRIES
    return store


def test_a_catch_up_that_looked_before_an_append_keeps_the_append(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(home, agent="finn", watch=False)
    log = store.agent().log
    log.append("THOUGHT", "first entry")
    assert [e.content for e in log.tail()] == ["first entry"]
    real_stat = Origin.stat
    looked: list[Entry | None] = []

    def stat_then_append(self: Origin, spec: SourceSpec) -> Entry | None:
        entry = real_stat(self, spec)
        if spec.path == log.path and not looked:
            looked.append(entry)
            # Right after this reader looked at LOG.md, another writer's append lands
            # (acknowledged; indexed by the next index access of this process).
            log.append("THOUGHT", "landed after the look")
        return entry

    monkeypatch.setattr(Origin, "stat", stat_then_append)
    log.tail()  # the reader: a catch-up of LOG.md (`Engine.fresh`)
    monkeypatch.undo()
    assert looked, "the hook did not run: the interleaving was not forced"
    # Every later read sees the append acknowledged before it.
    assert _log_texts(store, "finn") == ["first entry", "landed after the look"]
    assert [e.content for e in log.tail()] == ["first entry", "landed after the look"]
    store.close()


def test_a_catch_up_that_looked_before_a_compaction_keeps_what_followed_it(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(home, agent="finn", watch=False)
    log = store.agent().log
    for n in range(3):
        log.append("THOUGHT", f"entry {n}")
    assert len(log.tail()) == 3
    real_stat = Origin.stat
    looked: list[Entry | None] = []
    later = [f"after the compaction {n}: " + "x" * 300 for n in range(4)]

    def stat_then_compact(self: Origin, spec: SourceSpec) -> Entry | None:
        entry = real_stat(self, spec)
        if spec.path == log.path and not looked:
            looked.append(entry)
            # Right after this reader looked at LOG.md, a compaction replaces it, and the
            # appends that follow (indexed) make the new LOG.md longer than the old one.
            assert compact_log(store, "finn", force=True).compacted
            for text in later:
                log.append("THOUGHT", text)
            store.engine.settle()
        return entry

    monkeypatch.setattr(Origin, "stat", stat_then_compact)
    log.tail()  # the reader: a catch-up of LOG.md (`Engine.fresh`)
    monkeypatch.undo()
    assert looked and looked[0] is not None
    assert (home / log.rel).stat().st_size > looked[0].size  # the new LOG.md is longer
    texts = _log_texts(store, "finn")
    assert [t for t in texts if not t.startswith("LOG compacted")] == sorted(ENTRIES + later)
    store.close()


def test_a_full_catch_up_keeps_a_source_made_after_it_listed_the_files(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store_with_three_entries(home)
    catalog = store.engine.catalog
    real_all_sources = catalog.all_sources
    listed: list[int] = []

    def list_then_compact(engine: object) -> list[SourceSpec]:
        specs = real_all_sources(store.engine)
        if not listed:
            listed.append(len(specs))
            # Right after the catch-up listed the files, a compaction moves the entries to
            # a new archive (indexed by the compaction's own index work).
            assert compact_log(store, "finn", force=True).compacted
            store.engine.settle()
        return specs

    monkeypatch.setattr(catalog, "all_sources", list_then_compact)
    store.engine.sync()  # a full catch-up (a watcher's first look, a stale index)
    monkeypatch.undo()
    assert listed, "the hook did not run: the interleaving was not forced"
    (archive,) = store.agent().archives.list()
    assert sorted(e.content for e in store.agent().archives.entries(archive.id)) == [
        f"entry {n}" for n in range(3)
    ]
    # The entries are in the archive, and every later read finds them there.
    texts = _log_texts(store, "finn")
    assert [t for t in texts if t.startswith("entry")] == ENTRIES
    store.close()


def test_a_timeline_page_shows_an_entry_once_when_a_compaction_moves_it_meanwhile(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store_with_three_entries(home)
    other = Store(home, agent="finn", watch=False)  # another process, as far as the index goes
    real_newest = queries.newest
    walked: list[tuple[str, ...]] = []

    def newest_then_compact(db: object, f: queries.DocFilter, *a: object, **kw: object) -> object:
        rows = real_newest(db, f, *a, **kw)  # type: ignore[arg-type]
        walked.append(tuple(f.layers))
        if tuple(f.layers) == ("log",):
            # Between the page's walk of LOG.md's entries and its walk of the archives,
            # another writer's compaction moves the entries (and indexes that).
            assert compact_log(other, "finn", force=True).compacted
            other.engine.settle()
        return rows

    monkeypatch.setattr(queries, "newest", newest_then_compact)
    page = timeline(store, "finn", types=("log", "archive"), limit=200)
    monkeypatch.undo()
    assert walked == [("log",), ("archive",)]
    # The page shows the index in one state: each entry once (before the compaction:
    # in LOG.md; the next page or read shows them in the archive).
    texts = sorted(i.text for i in page.items if not i.text.startswith("LOG compacted"))
    assert texts == ENTRIES
    assert [t for t in _log_texts(store, "finn") if t.startswith("entry")] == texts
    assert len(store.agent().archives.list()) == 1  # and they did move meanwhile
    other.close()
    store.close()


def test_paging_the_timeline_across_a_compaction_skips_no_entry_of_the_same_time(
    home: Path,
) -> None:
    """Two entries logged in the same millisecond, a page ending between them, then a
    compaction (it re-indexes LOG.md and the archive: new index rows) before the next page
    is read: the next page still starts with the entry not shown yet."""
    store = Store(home, agent="finn", watch=False)
    log = store.agent().log
    log.append("THOUGHT", "older", ts="2026-11-20T10:00:00.000Z")
    for text in ("same time a", "same time b"):
        log.append("THOUGHT", text, ts="2026-11-20T10:00:05.123Z")
    shown: list[str] = []
    page = timeline(store, "finn", types=("log", "archive"), limit=1)
    shown += [i.text for i in page.items]
    assert page.next is not None
    assert compact_log(store, "finn", force=True).compacted
    while page.next is not None:
        page = timeline(store, "finn", types=("log", "archive"), limit=1, before=page.next)
        shown += [i.text for i in page.items]
    assert sorted(shown) == ["older", "same time a", "same time b"]
    store.close()
