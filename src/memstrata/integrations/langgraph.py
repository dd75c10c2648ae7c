"""LangGraph's long-term memory store (`BaseStore`) over memstrata: one JSON file per item.

Every item is a memory file a person can open, edit, search and see in the web app;
the namespace is its folder, so the mapping is a bijection:

    ("memories", "u1"), "k1"          -> agents/<agent>/memory/langgraph/memories/u1/k1.json
    ("rooms", "room-042", "notes"), k -> rooms/room-042/artifacts/langgraph/notes/<k>.json

A namespace is the store's agent's own (its memory files, scope as for every memory
file) unless it starts with `"rooms", <room>`: then it is that room's shared space
(its artifacts: every agent reads them, the room's agents write them).
Labels and keys are percent-encoded into file names (`a/b` -> `a%2Fb`), so any string
round-trips. The file holds `{"namespace", "key", "value", "created_at", "updated_at"}`
(and `expires_at`, `ttl_minutes` under a TTL); a file written by hand needs only
`{"value": {...}}`.

* `search(query=...)` ranks with memstrata's own search (`Store.search`: BM25 x decay,
  hybrid when `[search] embedder` is set), keeps the hits inside the namespace prefix
  that pass `filter`, then fills up to `limit` with the prefix's other items, newest
  first, with `score=None`, as LangGraph's stores fill with items that have no vector.
* `delete` (and a put of `None`) archives the file (`archive/deleted/...`): supersede,
  don't delete. `memstrata purge file` removes it for good.
* `index=` on `put` is accepted and not used: memstrata indexes every record it holds
  (nothing acknowledged is invisible to search), whatever fields LangGraph would embed.
* TTL is supported: `put(..., ttl=minutes)` (or `TTLConfig(default_ttl=...)`) records
  `expires_at`; reads refresh it unless `refresh_ttl=False`; an expired item is never
  returned or listed, and `sweep_ttl()` moves expired items to the archive.

Example:
    >>> from memstrata import Store  # doctest: +SKIP
    >>> store = MemstrataStore(Store(agent="assistant"))
    >>> store.put(("memories", "u1"), "food", {"text": "likes pizza"})
    >>> store.search(("memories", "u1"), query="pizza")[0].value
    {'text': 'likes pizza'}
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    validate_op_namespace,
)

from memstrata.errors import NotFound, ScopeDenied
from memstrata.integrations.itemfiles import (
    ROOT,
    ItemFile,
    decode_parts,
    encode_folder,
    encode_path,
    matches_filter,
)
from memstrata.model import check_name
from memstrata.search.query import MAX_K, SearchQuery
from memstrata.values import value_type

if TYPE_CHECKING:
    from memstrata.layers.files import MemoryFiles
    from memstrata.layers.rooms import Room
    from memstrata.store.view import Store

ROOMS = "rooms"  # the first label of a shared (room) namespace


class _Space:
    """Where the items of one agent, or of one room, live: read, write, archive, list."""

    def __init__(self, store: Store, prefix: tuple[str, ...], base: str) -> None:
        self.store = store
        self.prefix = prefix  # the namespace labels that lead here ((), or ("rooms", r))
        self.base = base  # its folder, store-relative, with a trailing slash

    def read(self, rel: str) -> str | None:
        raise NotImplementedError

    def write(self, rel: str, text: str) -> None:
        raise NotImplementedError

    def archive(self, rel: str) -> None:
        raise NotImplementedError

    def files(self, folder: str) -> list[str]:
        """The item files below `folder` (relative to the space, under ROOT)."""
        raise NotImplementedError

    def ranked(self, text: str) -> list[tuple[str, float]]:
        """(file, score) of memstrata's search over this space, best first."""
        raise NotImplementedError


class _AgentSpace(_Space):
    def __init__(self, store: Store, files: MemoryFiles) -> None:
        super().__init__(store, (), store.rel(files.root) + "/")
        self.memory = files

    def read(self, rel: str) -> str | None:
        try:
            return self.memory.read(rel)
        except NotFound:
            return None

    def write(self, rel: str, text: str) -> None:
        self.memory.write(rel, text)

    def archive(self, rel: str) -> None:
        self.memory.delete(rel)

    def files(self, folder: str) -> list[str]:
        try:
            return [f.path for f in self.memory.list(folder) if not f.is_dir]
        except NotFound:
            return []

    def ranked(self, text: str) -> list[tuple[str, float]]:
        q = SearchQuery(text=text, layers=("file",), agent=self.memory.owner, k=MAX_K)
        return _in_base(self.store, q, self.base)


class _RoomSpace(_Space):
    def __init__(self, store: Store, room: Room) -> None:
        super().__init__(store, (ROOMS, room.name), store.rel(room.artifacts_dir) + "/")
        self.room = room

    def read(self, rel: str) -> str | None:
        try:
            return self.room.read_artifact(rel)
        except NotFound:
            return None

    def write(self, rel: str, text: str) -> None:
        self.room.write_artifact(rel, text)

    def archive(self, rel: str) -> None:
        self.room.delete_artifact(rel)

    def files(self, folder: str) -> list[str]:
        return [p for p in self.room.artifacts() if p.startswith(folder + "/")]

    def ranked(self, text: str) -> list[tuple[str, float]]:
        q = SearchQuery(text=text, layers=("artifact",), in_room=self.room.name, k=MAX_K)
        return _in_base(self.store, q, self.base)


def _in_base(store: Store, query: SearchQuery, base: str) -> list[tuple[str, float]]:
    out: dict[str, float] = {}
    for hit in store.search(query):
        where = str(hit.meta.get("path") or "")
        if where.startswith(base + ROOT + "/"):
            rel = where[len(base) :]
            out[rel] = max(out.get(rel, hit.score), hit.score)  # a long file has several chunks
    return sorted(out.items(), key=lambda kv: -kv[1])


@value_type(frozen=True)
class _Found:
    namespace: tuple[str, ...]
    key: str
    space: _Space
    rel: str
    file: ItemFile

    def item(self, score: float | None = None, *, scored: bool = False) -> Item:
        f = self.file
        if scored:
            return SearchItem(self.namespace, self.key, f.value, f.created, f.updated, score)
        return Item(
            value=f.value,
            key=self.key,
            namespace=self.namespace,
            created_at=f.created,
            updated_at=f.updated,
        )


class MemstrataStore(BaseStore):
    """A LangGraph `BaseStore` whose items are memstrata memory files (see the module).

    Args:
        store: an opened `memstrata.Store`; it acts as its principal (agent, role, room),
            so every read and write passes memstrata's scope rules.
        agent: whose memory plain namespaces map to (default: the store's agent).
        ttl: LangGraph's `TTLConfig` (`default_ttl` minutes, `refresh_on_read`).
    """

    supports_ttl = True

    def __init__(
        self, store: Store, *, agent: str | None = None, ttl: TTLConfig | None = None
    ) -> None:
        self.store = store
        self.agent_name = agent or store.principal.agent
        self.ttl_config = ttl
        self._lock = threading.RLock()  # one batch at a time (async callers use threads)

    # -- BaseStore -----------------------------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run the operations in order, each seeing the ones before it."""
        with self._lock:
            return [self._run(op) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.to_thread(self.batch, list(ops))

    def sweep_ttl(self) -> int:
        """Archive every expired item this store can write; returns how many."""
        gone = 0
        with self._lock:
            for space in self._spaces(()):
                for found in self._items(space, ()):
                    if found.file.expired():
                        try:
                            space.archive(found.rel)
                        except ScopeDenied:
                            break  # a room this agent may read but not write
                        gone += 1
        return gone

    # -- one operation ---------------------------------------------------------------
    def _run(self, op: Op) -> Result:
        validate_op_namespace(op)
        if isinstance(op, GetOp):
            found = self._get(op.namespace, op.key)
            if found is None:
                return None
            if op.refresh_ttl:
                found = self._refresh(found)
            return found.item()
        if isinstance(op, PutOp):
            self._put(op)
            return None
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._list_namespaces(op)
        raise ValueError(f"unknown operation {type(op).__name__}")

    def _locate(self, namespace: tuple[str, ...]) -> tuple[_Space, tuple[str, ...]]:
        """The space a whole namespace lives in, and its labels below that space."""
        if namespace[:1] == (ROOMS,):
            if len(namespace) < 2:
                raise InvalidNamespaceError(
                    f"{namespace}: a shared namespace names its room: ('rooms', <room>, ...)"
                )
            return self._room(namespace[1]), namespace[2:]
        return self._agent(), namespace

    def _agent(self) -> _AgentSpace:
        return _AgentSpace(self.store, self.store.agent(self.agent_name).files)

    def _room(self, name: str) -> _RoomSpace:
        try:
            check_name(name, "room")
        except ValueError as exc:
            raise InvalidNamespaceError(str(exc)) from None
        return _RoomSpace(self.store, self.store.room(name))

    def _get(self, namespace: tuple[str, ...], key: str) -> _Found | None:
        space, labels = self._locate(namespace)
        rel = encode_path(labels, key)
        text = space.read(rel)
        file = ItemFile.parse(text) if text is not None else None
        if file is None or file.expired():
            return None
        return _Found(namespace, key, space, rel, file)

    def _refresh(self, found: _Found) -> _Found:
        if found.file.ttl_minutes is None:
            return found
        file = found.file.refreshed()
        found.space.write(found.rel, file.dumps(found.namespace, found.key))
        return _Found(found.namespace, found.key, found.space, found.rel, file)

    def _put(self, op: PutOp) -> None:
        if not op.namespace or op.namespace[0] == "langgraph":
            raise InvalidNamespaceError(f"invalid namespace {op.namespace!r} for a put")
        space, labels = self._locate(op.namespace)
        rel = encode_path(labels, op.key)
        old_text = space.read(rel)
        old = ItemFile.parse(old_text) if old_text is not None else None
        if op.value is None:
            if old_text is not None:
                space.archive(rel)
            return
        ttl = op.ttl
        if ttl is None and self.ttl_config is not None and "default_ttl" in self.ttl_config:
            ttl = self.ttl_config.get("default_ttl")
        now = datetime.now(UTC)
        created = old.created if old is not None and not old.expired() else now
        file = ItemFile(dict(op.value), created, now, ttl_minutes=ttl)
        space.write(rel, file.dumps(op.namespace, op.key))

    def _spaces(self, prefix: tuple[str, ...]) -> list[_Space]:
        """The spaces a namespace prefix reaches: the agent's own, one room, or every
        room this principal may read (an empty prefix: all of them)."""
        if len(prefix) >= 2 and prefix[0] == ROOMS:
            return [self._room(prefix[1])]
        spaces: list[_Space] = []
        if prefix[:1] != (ROOMS,) and (prefix or self.agent_name is not None):
            spaces.append(self._agent())  # (no agent and a prefix: raises, naming the fix)
        if not prefix or prefix == (ROOMS,):
            for name in self.store.rooms():
                room = self._room(name)
                try:
                    room.room.artifacts()
                except ScopeDenied:
                    continue
                spaces.append(room)
        return spaces

    def _items(self, space: _Space, prefix: tuple[str, ...]) -> Iterator[_Found]:
        """Every live or expired item of `space` whose namespace starts with `prefix`."""
        below = prefix[len(space.prefix) :] if prefix[: len(space.prefix)] == space.prefix else ()
        for rel in space.files(encode_folder(below)):
            parts = decode_parts(rel)
            if parts is None:
                continue
            labels, key = parts
            text = space.read(rel)
            file = ItemFile.parse(text) if text is not None else None
            if file is not None:
                yield _Found((*space.prefix, *labels), key, space, rel, file)

    def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = tuple(op.namespace_prefix)
        spaces = self._spaces(prefix)
        want = max(op.offset, 0) + max(op.limit, 0)
        out: list[tuple[_Found, float | None]] = []
        seen: set[str] = set()

        def keep(found: _Found) -> bool:
            return (
                found.namespace[: len(prefix)] == prefix
                and not found.file.expired()
                and matches_filter(found.file.value, op.filter)
            )

        if op.query:
            ranked: list[tuple[float, _Space, str]] = [
                (score, space, rel) for space in spaces for rel, score in space.ranked(op.query)
            ]
            for score, space, rel in sorted(ranked, key=lambda r: -r[0]):
                parts = decode_parts(rel)
                text = space.read(rel) if parts is not None else None
                file = ItemFile.parse(text) if text is not None else None
                if parts is None or file is None:
                    continue
                found = _Found((*space.prefix, *parts[0]), parts[1], space, rel, file)
                if keep(found):
                    seen.add(space.base + rel)
                    out.append((found, score))
                if len(out) >= want:
                    break
        if len(out) < want:
            rest = [
                f
                for space in spaces
                for f in self._items(space, prefix)
                if space.base + f.rel not in seen and keep(f)
            ]
            rest.sort(key=lambda f: (f.file.updated, f.namespace, f.key), reverse=True)
            out.extend((f, None) for f in rest[: want - len(out)])
        page = out[max(op.offset, 0) : want]
        if op.refresh_ttl:
            page = [(self._refresh(f), s) for f, s in page]
        return [f.item(s, scored=True) for f, s in page]  # type: ignore[misc]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        conditions = op.match_conditions or ()
        prefix: tuple[str, ...] = ()
        for c in conditions:  # narrow the walk by a literal prefix when there is one
            if c.match_type == "prefix" and "*" not in c.path:
                prefix = tuple(c.path)
                break
        found: set[tuple[str, ...]] = set()
        for space in self._spaces(prefix):
            for f in self._items(space, prefix):
                if not f.file.expired() and all(_matches(c, f.namespace) for c in conditions):
                    ns = f.namespace if op.max_depth is None else f.namespace[: op.max_depth]
                    found.add(ns)
        return sorted(found)[op.offset : op.offset + op.limit]


def _matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    """LangGraph's namespace match: a prefix or suffix, where `*` matches any one label."""
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[-len(path) :]
    if not path:
        return True
    return all(p in ("*", n) for p, n in zip(path, part, strict=True))


__all__ = ["MemstrataStore"]
