"""The search value types: one `SearchQuery` in, a list of `Hit`s out, and what a
search reads through (`Searchable`: a principal's view of a store provides it)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from memstrata.errors import MalformedInput, UnknownLayer
from memstrata.limits import TAGS_PER_ENTRY
from memstrata.model import check_utf8, parse_ts
from memstrata.values import field, value_type

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from memstrata.config import Config
    from memstrata.embed.base import Embedder
    from memstrata.index.db import Database
    from memstrata.index.frequencies import DocFrequencies
    from memstrata.index.vectors import VectorIndex
    from memstrata.policy.scope import Gate
    from memstrata.store.events import EventBus
    from memstrata.store.semantic import Semantic


class Searchable(Protocol):
    """What one search reads through: the index and its caches, the principal's gate
    (every statement adds its filter), the config, the embedder, the event face."""

    @property
    def gate(self) -> Gate: ...

    @property
    def events(self) -> EventBus: ...

    @property
    def config(self) -> Config: ...

    @property
    def db(self) -> Database: ...

    @property
    def df_cache(self) -> DocFrequencies: ...

    def embedder(self) -> Embedder: ...

    def vectors(self, embedder: Embedder) -> VectorIndex: ...

    @property
    def semantic(self) -> Semantic: ...

    def semantic_embedder(self) -> Embedder | None: ...

    def build_vectors_later(self) -> None: ...


LAYERS: tuple[str, ...] = (
    "ledger",
    "log",
    "archive",
    "now",
    "context",
    "identity",
    "file",
    "scratch",
    "episode",
    "fact",
    "session",
    "item",
    "task",
    "channel",
    "artifact",
    "gate",
    "compaction",
    "source",
)
# The search scopes, by their names, and the layers each one searches.
SCOPES: dict[str, tuple[str, ...]] = {
    "memory": ("context",),  # MEMORY.md content (memstrata: CONTEXT.md / MEMORY.md)
    "items": ("item",),  # extracted knowledge
    "sessions": ("session",),  # session transcripts
    "sources": ("source",),  # indexed project source files (`memstrata sources add`)
}
# Searched only when named ("Session transcripts (opt-in)").
OPT_IN_LAYERS: tuple[str, ...] = ("session",)
MAX_K = 50
MAX_QUERY_CHARS = 4000


@value_type(frozen=True)
class SearchQuery:
    """What to look for and where. `text` may be empty for a structured (newest-first) query.

    Example:
        >>> SearchQuery(text="auth flow", layers=("ledger",), exclude_room="room-042", k=5)
        ... # doctest: +ELLIPSIS
        SearchQuery(...)
    """

    text: str = ""
    layers: tuple[str, ...] = ()  # layer names or search scopes (memory, items, sessions,
    # sources); empty: every layer the principal may read except the opt-in ones (sessions)
    kind: str | None = None
    tags: tuple[str, ...] = ()
    tags_match: str = "any"
    agent: str | None = None
    in_room: str | None = None  # only this room's memories (CLI --in-room, MCP in_room)
    rooms: tuple[str, ...] = ()  # only entries of these rooms (predecessor context's DAG)
    exclude_room: str | None = None
    since: float | str | None = None
    until: float | str | None = None
    include_superseded: bool = False
    k: int = 10
    mode: str | None = None  # "lexical" | "hybrid" | "semantic"; None: `[search] provider`
    now: float | None = None  # the clock decay is measured against (default: time.time())
    room: str | None = None  # the old name of `in_room`, kept as an alias

    def __post_init__(self) -> None:
        if self.in_room is None and self.room is not None:
            object.__setattr__(self, "in_room", self.room)
        object.__setattr__(self, "room", self.in_room)
        if not isinstance(self.text, str):
            raise MalformedInput("query text must be a string")
        check_utf8(self.text, "query text")
        if len(self.text) > MAX_QUERY_CHARS:
            object.__setattr__(self, "text", self.text[:MAX_QUERY_CHARS])
        if isinstance(self.layers, str):
            object.__setattr__(self, "layers", (self.layers,))
        unknown = [x for x in self.layers if x not in LAYERS and x not in SCOPES]
        if unknown:
            raise UnknownLayer(
                f"unknown layer {unknown[0]!r}; layers are {', '.join(LAYERS)}; "
                f"scopes are {', '.join(SCOPES)}"
            )
        expanded = tuple(dict.fromkeys(layer for x in self.layers for layer in SCOPES.get(x, (x,))))
        object.__setattr__(self, "layers", expanded)
        if isinstance(self.rooms, str):
            object.__setattr__(self, "rooms", (self.rooms,))
        if isinstance(self.tags, str):
            object.__setattr__(self, "tags", (self.tags,))
        if len(self.tags) > TAGS_PER_ENTRY:
            raise MalformedInput(f"at most {TAGS_PER_ENTRY} tags in a filter, got {len(self.tags)}")
        if self.tags_match not in ("any", "all"):
            raise MalformedInput("tags_match must be 'any' or 'all'")
        if not isinstance(self.k, int) or isinstance(self.k, bool) or not 1 <= self.k <= MAX_K:
            raise MalformedInput(f"k must be an integer from 1 to {MAX_K}, got {self.k!r}")
        if self.mode is not None and self.mode not in ("lexical", "hybrid", "semantic"):
            raise MalformedInput("mode must be 'lexical', 'hybrid' or 'semantic'")
        for name in ("since", "until"):
            v = getattr(self, name)
            if v is not None:
                object.__setattr__(self, name, parse_ts(v))


# Where `search.features` keeps what it read of a hit's stored fields (not a field: not
# compared, shown or copied by `dataclasses.replace`); `Hit.but` keeps it across a copy
# that changes only what it never reads.
MEMO_SLOT = "_features"
_UNREAD_BY_MEMO = frozenset({"score", "explain", "snippet"})


@value_type(frozen=True)
class Hit:
    """One recalled memory, with where it came from and why it ranked where it did."""

    uid: str
    layer: str
    score: float
    title: str
    text: str
    snippet: str
    ts: float
    source: str
    owner: str | None = None
    room: str | None = None
    kind: str | None = None
    tags: tuple[str, ...] = ()
    line: int | None = None
    superseded: bool = False
    meta: dict[str, Any] = field(default_factory=dict)
    explain: dict[str, Any] = field(default_factory=dict)

    def but(self, **changes: Any) -> Hit:
        """A copy with `changes` (`dataclasses.replace` without its per-field work: a
        search copies every candidate of its pool, hundreds per query)."""
        if not changes.keys() <= self.__dict__.keys():
            raise TypeError(f"Hit has no field {sorted(changes.keys() - self.__dict__.keys())}")
        new = object.__new__(Hit)
        new.__dict__.update(self.__dict__, **changes)
        if MEMO_SLOT in new.__dict__ and not changes.keys() <= _UNREAD_BY_MEMO:
            del new.__dict__[MEMO_SLOT]  # a stored field changed: `search.features` reads it afresh
        return new

    def to_dict(self, *, full: bool = True) -> dict[str, Any]:
        d: dict[str, Any] = {
            "uid": self.uid,
            "layer": self.layer,
            "score": round(self.score, 6),
            "title": self.title,
            "snippet": self.snippet,
            "ts": self.ts,
            "source": self.source,
            "owner": self.owner,
            "room": self.room,
            "kind": self.kind,
            "tags": list(self.tags),
            "line": self.line,
            "superseded": self.superseded,
            "explain": self.explain,
        }
        if full:
            d["text"] = self.text
            d["meta"] = self.meta
        return d


def rescored(hit: Hit, score: float, explain: dict[str, Any]) -> Hit:
    """`hit.but(score=score, explain=explain)` without its checks (neither field is read by
    `search.features`, so the remembered features stay): the copy every candidate of a
    pool gets, about 130 per search."""
    new = object.__new__(Hit)
    values = new.__dict__
    values.update(hit.__dict__)
    values["score"] = score
    values["explain"] = explain
    return new


def weighed(
    pool: Sequence[Hit], factor: float, key: str, said_of: Callable[[Hit], str | None]
) -> list[Hit]:
    """`pool` with each hit `said_of` finds something in weighed by `factor`, its explain
    naming the factor (`key`) and what was read (`<key>_said`): the question rules of
    `search.durations`, `search.reasons` and `search.fixes`."""
    out: list[Hit] = []
    for h in pool:
        said = said_of(h)
        if said is None:
            out.append(h)
            continue
        explain = {**h.explain, key: factor, f"{key}_said": said}
        out.append(h.but(score=h.score * factor, explain=explain))
    return out
