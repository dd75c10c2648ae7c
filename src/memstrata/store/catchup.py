"""How this host's index catches up with the truth: every source, or only what changed.

Opening a store, a failed index write and a watcher that lost track end here. A
truth that numbers its writes (`files.truth.ChangeFeed`: PostgreSQL) lets the
index remember the feed position it last caught up to (`meta` row `truth_feed`):
catching up then reads the paths written since that position and looks at those
sources alone, so a host reopening after N writes by others reads about N
sources, not the whole engine. Every source is looked at (the truth listed, each
source checked) when the index is new, when the feed cannot tell (a position of
another database, or pruned away), and always for a folder of files, which has
no feed (a long-running process has its watcher there).

The position is read before the sources it covers are caught up and recorded
after they were, so a write racing a catch-up is read again the next time,
never skipped.

    if not catch_up_by_feed(engine):   # at open
        engine.sync()                  # every source, then the feed position
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from memstrata.files.truth import ChangeFeed
from memstrata.index.reconcile import (
    SourceSpec,
    SyncReport,
    known_below,
    knows_outside,
    refresh,
    sync_sources,
)
from memstrata.values import replace

if TYPE_CHECKING:
    from memstrata.store.engine import Engine

FEED_KEY = "truth_feed"


def feed_position(engine: Engine) -> str | None:
    """The truth's feed position now (before a full catch-up), or None without a feed."""
    return engine.truth.feed_position() if isinstance(engine.truth, ChangeFeed) else None


def remember(engine: Engine, position: str | None) -> None:
    """Record that the index holds every change up to `position`."""
    if position is not None:
        engine.db.set_meta(FEED_KEY, position)


def specs_for(engine: Engine, paths: Iterable[str]) -> list[SourceSpec]:
    """The index sources behind changed store-relative paths: the source itself, or,
    for a folder (made, moved or deleted), every source below it now and every one
    the index held below it."""
    handles: dict[tuple[str, str], Any] = {}
    specs: dict[str, SourceSpec] = {}

    def add(rel: str) -> None:
        spec = engine.catalog.source_for(engine, rel, handles)
        if spec is not None:
            specs.setdefault(str(spec.path), spec)

    home = f"{engine.home}/"
    for path in paths:
        spec = engine.catalog.source_for(engine, path, handles)
        if spec is not None:
            specs.setdefault(str(spec.path), spec)
            continue
        entry = engine.truth.stat(path)
        if entry is not None and not entry.is_dir:
            continue  # a file no layer indexes
        if entry is not None:
            for below in engine.truth.list(path):
                if not below.is_dir:
                    add(below.path)
        for key in known_below(engine.db, f"{home}{path.strip('/')}/"):
            add(key[len(home) :])
    return list(specs.values())


def catch_up_paths(engine: Engine, paths: Iterable[str]) -> None:
    """Catch up the sources at changed `paths` (a watcher's batch, or the feed's)."""
    refresh(engine.db, engine.origin, specs_for(engine, paths), SyncReport())


def catch_up_by_feed(engine: Engine) -> bool:
    """Catch up what was written since the index's feed position; False when that
    cannot be told (no feed, no position, another feed, pruned): look at everything."""
    truth = engine.truth
    if not isinstance(truth, ChangeFeed):
        return False
    position = engine.db.meta(FEED_KEY)
    if position is None:
        return False
    found = truth.changes_since(position)
    if found is None:
        return False
    now, paths = found
    if paths:
        catch_up_paths(engine, paths)
    projects = engine.catalog.project_sources(engine)  # this host's project folders: no feed
    if projects or knows_outside(engine.db, f"{engine.home}/"):
        sync_sources(engine.db, replace(engine.origin, with_home=False), projects)
    if now != position:
        remember(engine, now)
    return True
