"""Where a record lives, as a link: `search.present.Place` -> a path of this web app.

    href(place_of(hit))   '/a/finn/timeline?at=log%3Afinn%3Alog-1a2b#r-3f2a...'

Each place opens its record in context: a LOG entry among its neighbours in the timeline,
a transcript at the message, a file at the line, a fact, task or item in its list, a
ledger entry in its chain, anything else on the page of the record itself. The fragment
(`anchor`) is the id the target page gives that record, so the browser scrolls to it and
the page marks it (`:target`).
"""

from __future__ import annotations

import hashlib
from urllib.parse import quote, urlencode

from memstrata.files.versions import versioned
from memstrata.search.present import Place, explain_in_words, place_of, title_of
from memstrata.search.query import Hit
from memstrata.values import value_type


def anchor(key: str) -> str:
    """An HTML id for a record key (a uid, a fact key): any text, always a valid id."""
    return "r-" + hashlib.sha1(key.encode("utf-8")).hexdigest()[:12]


def _agent(agent: str | None) -> str:
    return f"/a/{quote(agent or '', safe='')}"


def href(place: Place) -> str:
    """The path (and fragment) that shows `place` in context."""
    a = _agent(place.agent)
    if place.kind == "log":
        return f"{a}/timeline?{urlencode({'at': place.key})}#{anchor(place.key)}"
    if place.kind == "session":
        base = f"{a}/sessions/{quote(place.key, safe='')}"
        return f"{base}?at={place.pos}#m-{place.pos}" if place.pos is not None else base
    if place.kind in ("hot", "file"):
        if place.kind == "hot":
            base = f"{a}/edit/{place.key}"
            query: dict[str, object] = {}
        else:
            base, query = f"{a}/file", {"path": place.key}
        if place.line is not None:
            query["line"] = place.line
        tail = f"#L{place.line}" if place.line is not None else ""
        return base + (f"?{urlencode(query)}" if query else "") + tail
    if place.kind == "fact":
        return f"{a}/facts#{anchor(place.key)}"
    if place.kind == "task":
        return f"{a}/tasks#{anchor(place.key)}"
    if place.kind == "ledger":
        return f"/ledger/{quote(place.key, safe='')}"
    if place.kind == "item":
        query = {"source_file": place.path} if place.path else {}
        return "/items" + (f"?{urlencode(query)}" if query else "") + f"#{anchor(place.key)}"
    return f"/memory?{urlencode({'uid': place.key})}"


def history_href(agent: str, layer: str, source: str) -> str | None:
    """The history page of a whole memory file (`source` store-relative, under the
    agent's folder), or None for a record of another kind or a file whose replaces keep
    no versions (an episode's files, a scratch file)."""
    prefix = f"agents/{agent}/"
    if not source.startswith(prefix):
        return None
    if layer not in ("now", "context", "identity") and (
        layer != "file" or versioned(source) is None
    ):
        return None
    return f"{_agent(agent)}/history?{urlencode({'path': source.removeprefix(prefix)})}"


@value_type(frozen=True)
class ShownHit:
    """A search hit as the search page shows it: a title, a link to it in context, its
    explain in words."""

    hit: Hit
    title: str
    href: str
    why: tuple[str, ...]


def shown(hit: Hit) -> ShownHit:
    """`hit` (with a store-relative source) as the page shows it."""
    return ShownHit(hit, title_of(hit), href(place_of(hit)), tuple(explain_in_words(hit.explain)))
