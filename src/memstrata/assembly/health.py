"""One agent's memory health at a glance (the web app's home and Health pages): how
current its index is, what could not be read cleanly, how big it is. A few index queries
(`index.overview.agent_sources`) and at most one listing of the agent's folder; never a
parse (`operations.doctor.examine` does that, store-wide).

    h = agent_health(store, "finn", compare=False)
    h.current, h.problems, h.bytes
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstrata.files.versions import history_folder
from memstrata.index import overview
from memstrata.model import check_name
from memstrata.values import value_type

if TYPE_CHECKING:
    from memstrata.store.view import Store

SHOW_UIDS = 5


@value_type(frozen=True)
class Health:
    """One agent's memory at a glance (the web app's home page): how current its index is,
    what could not be read cleanly, how big it is. Cheap: a few index queries and, when
    `compared`, one listing of the agent's folder; never a parse (`examine` does that,
    store-wide)."""

    files: int  # the agent's files (when compared; else the sources the index holds)
    bytes: int
    docs: int  # index records of the agent
    indexed: int  # sources the index has a record of
    behind: tuple[str, ...]  # sources changed since the index read them (store-relative)
    bad_lines: tuple[dict[str, Any], ...]  # the first of what could not be read cleanly
    problems: int  # how many such records the index holds
    notices: tuple[str, ...] = ()  # the store's own: an index that could not catch up
    compared: bool = True  # the index was compared with the files (else: the index's word)

    @property
    def current(self) -> bool:
        return not self.behind and not self.notices


def agent_health(
    store: Store, agent: str, *, show: int = SHOW_UIDS, compare: bool = True
) -> Health:
    """`agent`'s `Health` (see there); a read of the agent's memory, scope-checked.

    `compare=False` takes the index's word for the files (their count and size as last
    indexed) instead of listing the folder: a long-running server catches its index up
    before every read (`index.freshness`), so what it would find behind is only what
    changed in the last instant, while the listing costs a stat per file. The store's
    notices still say when catching up failed.
    """
    check_name(agent, "agent")
    store.gate.check("read", "log", agent)
    folder = store.rel(store.layout.agent(agent))
    entries = (
        [e for e in store.engine.listing(folder, skip=history_folder) if not e.is_dir]
        if compare
        else []
    )
    now = {e.path: e for e in entries}
    prefix = f"{store.layout.agent(agent)}/"
    held = overview.agent_sources(store.db, prefix, agent, show=show)
    known, docs, bad, problems = held.sources, held.docs, held.bad_lines, held.problems
    behind = []
    home = f"{store.home}/"
    for path, size, version in known:
        rel = path.removeprefix(home)  # (every row is below the agent's folder)
        e = now.get(rel)
        if e is not None and ((version is not None and version != e.version) or size != e.size):
            behind.append(rel)
    return Health(
        files=len(entries) if compare else len(known),
        bytes=sum(e.size for e in entries) if compare else sum(k[1] or 0 for k in known),
        docs=int(docs),
        indexed=len(known),
        behind=tuple(sorted(behind)),
        bad_lines=tuple(
            {"source": store.rel(Path(s)), "offset": o, "reason": r} for s, o, r in bad
        ),
        problems=int(problems),
        notices=tuple(store.notices),
        compared=compare,
    )
