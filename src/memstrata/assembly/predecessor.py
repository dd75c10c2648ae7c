"""Predecessor context (`memory_get_context`): what other rooms learned.

The most relevant ledger entries from the rooms upstream of `room` in the DAG
(every room its `room.json` declares upstream, and theirs, transitively:
"memories from upstream rooms in the DAG"), or, for a room that declares none,
from every room other than `room`; for a brief's keywords (BM25 x decay through
the one search), else the newest ones; at most
`bounds.context_entries` (15) entries and about `bounds.context_bytes` (10 KB)
of Markdown, grouped by kind. Entries that look like they hold a secret are not
shown to other rooms (`policy.scope.Gate`), and any secret-looking span left is masked.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from memstrata.lifecycle.retired import fixed_by
from memstrata.model import LedgerEntry
from memstrata.policy.secrets import mask
from memstrata.search.query import SearchQuery

if TYPE_CHECKING:
    from memstrata.store.view import Store


def predecessor_lines(
    store: Store,
    *,
    room: str | None,
    keywords: str | list[str] | tuple[str, ...] = "",
    max_entries: int | None = None,
    max_bytes: int | None = None,
    later: Callable[[], list[LedgerEntry]] | None = None,
) -> list[str]:
    """The lines of the predecessor context; a warning a later record fixed or dropped
    (`lifecycle.retired`) says so: "[warning, out of date by mem-...]". `later` gives the
    live ledger records to look for that in (default: the newest of every readable room)."""
    bounds = store.config.bounds
    n = min(max_entries or bounds.context_entries, bounds.context_entries)
    limit = min(max_bytes or bounds.context_bytes, bounds.context_bytes)
    text = " ".join(keywords) if isinstance(keywords, list | tuple) else keywords
    upstream = _upstream(store, room)
    q = (
        SearchQuery(text=text, layers=("ledger",), rooms=tuple(upstream), k=max(n, 1))
        if upstream
        else SearchQuery(text=text, layers=("ledger",), exclude_room=room, k=max(n, 1))
    )
    hits = store.search(q)
    lines: list[str] = []
    size = 0
    retired = _retired([h.meta for h in hits[:n]], store, later)
    for h in hits[:n]:
        m = h.meta
        by = retired.get(str(m.get("id")))
        kind = f"{m.get('kind')}, out of date by {by}" if by else m.get("kind")
        line = (
            f"- [{kind}] {' '.join(m.get('summary', '').split())} "
            f"(room {m.get('room_id') or '-'}, {str(m.get('ts', ''))[:10]}, {m.get('id')}"
            + (f"; tags: {', '.join(m.get('tags') or [])}" if m.get("tags") else "")
            + ")"
        )
        detail = " ".join((m.get("detail") or "").split())
        if detail:
            line += f"\n  {detail[:600]}{'…' if len(detail) > 600 else ''}"
        line = mask(line)
        if size + len(line.encode()) + 1 > limit:
            break
        lines.append(line)
        size += len(line.encode()) + 1
    return lines


def _retired(
    metas: list[dict[str, object]],
    store: Store,
    later: Callable[[], list[LedgerEntry]] | None,
) -> dict[str, str]:
    """By warning id, the id of the later record that fixed or dropped it."""
    if not any(m.get("kind") == "warning" for m in metas):
        return {}
    seen = later() if later is not None else store.ledger.query(include_own_room=True)
    out = {}
    for m in metas:
        if m.get("kind") == "warning":
            by = fixed_by(LedgerEntry.from_dict(dict(m)), seen)
            if by is not None:
                out[str(m.get("id"))] = by.id
    return out


def _upstream(store: Store, room: str | None) -> list[str]:
    if room is None:
        return []
    return store.room(room).ancestors()


def predecessor_context(
    store: Store,
    *,
    room: str | None,
    keywords: str | list[str] | tuple[str, ...] = "",
    max_entries: int | None = None,
    max_bytes: int | None = None,
) -> str:
    """The Markdown document injected into a new room's initial context."""
    lines = predecessor_lines(
        store, room=room, keywords=keywords, max_entries=max_entries, max_bytes=max_bytes
    )
    head = f"# Predecessor context for {room or 'this room'}\n\n"
    if not lines:
        return head + "_No relevant entries from other rooms._\n"
    return head + "\n".join(lines) + "\n"
