"""What every layer handle shares: what it acts with, its owner, scope checks, events.

A layer is handed an `Acting`: the engine's doors and reads (never the truth
itself), the gate of the principal acting, and that principal's face of the
audit bus. Nothing else: a layer does not reach the store's other layers,
search or lifecycle (what should follow a write is announced on the engine's
signals, see `store.signals`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstrata import limits
from memstrata.errors import EntryTooLarge, MalformedInput
from memstrata.files.jsondoc import RecordList
from memstrata.files.jsonl import Decoded, decode
from memstrata.index import queries
from memstrata.model import Principal, check_utf8, name_problem
from memstrata.policy.scope import Gate
from memstrata.policy.secrets import screen, screen_json
from memstrata.values import value_type

if TYPE_CHECKING:
    from collections.abc import Callable

    from memstrata.files.truth import Entry
    from memstrata.search.query import Hit, SearchQuery
    from memstrata.store.engine import Engine
    from memstrata.store.events import EventBus

    # A ranked search as the store runs it (handed to the layers that offer one).
    Find = Callable[[SearchQuery], list[Hit]]


@value_type(frozen=True)
class Acting:
    """What a layer acts with: the engine's doors, the gate, the event face."""

    engine: Engine
    gate: Gate
    events: EventBus

    @property
    def principal(self) -> Principal:
        return self.gate.principal

    @classmethod
    def plumbing(cls, engine: Engine) -> Acting:
        """Index plumbing (which files are sources, how to parse them): the owner of
        the files, reading nothing through the gate."""
        return cls(engine, Gate(Principal(None, "admin", None), engine.config), engine.events)


class Layer:
    """Base for layer handles bound to one owner agent (or to shared memory when owner is None)."""

    layer = "layer"

    def __init__(self, acting: Acting, owner: str | None = None, room: str | None = None) -> None:
        self.acting = acting
        self.engine = acting.engine
        self.gate = acting.gate
        self.events = acting.events
        self.owner = owner
        self.room = room

    def _check(self, action: str, layer: str | None = None) -> None:
        self.gate.check(action, layer or self.layer, self.owner, self.room)

    def _screen(self, text: str, what: str, *, shared: bool = False) -> str:
        """Apply the store's secrets policy to text about to be written (see `policy.secrets`)."""
        return screen(self.engine, text, what, shared=shared)

    def _screen_json(self, value: Any, what: str) -> Any:
        """`_screen` every string inside a JSON-like value (metadata, tool input)."""
        return screen_json(self.engine, value, what)

    def _read_event(self, path: Path, size: int, kind: str | None = None) -> None:
        self.events.emit(
            "memory:read", {"type": kind or self.layer, "path": self._rel(path), "size": size}
        )

    def _write_event(self, path: Path, delta: int, kind: str | None = None) -> None:
        self.events.emit(
            "memory:write", {"type": kind or self.layer, "path": self._rel(path), "delta": delta}
        )

    def _index_problems(self, path: Path) -> list[str]:
        """What the index could not read cleanly in one of this layer's files, one line each
        (`memstrata doctor` lists the same)."""
        rows = queries.bad_lines(self.engine.db, str(path))
        return [f"{path}: byte {offset}: {reason}" for offset, reason in rows]

    def _rel(self, path: Path) -> str:
        return self.engine.rel(path)

    def _stat(self, path: Path) -> Entry | None:
        """The truth's entry for a path below the home (None: it does not exist)."""
        return self.engine.stat(path)

    def _bytes(self, path: Path) -> bytes:
        """A whole source's bytes (b'' if it does not exist)."""
        found = self.engine.read(path)
        return found.data if found is not None else b""

    def _records(self, path: Path) -> Decoded:
        """The records of a JSONL source, torn or corrupt lines reported, not raised."""
        return decode(self.engine.read_from(path), 0, str(path))

    def _document(self, path: Path, key: str | None) -> RecordList:
        """A JSON source as a document that keeps what it does not understand."""
        return RecordList.parse(self._bytes(path), str(path), key=key)


def check_text(value: object, what: str, max_bytes: int, *, allow_empty: bool = False) -> str:
    if not isinstance(value, str):
        raise MalformedInput(f"{what} must be a string, got {type(value).__name__}")
    if len(value) > max_bytes:  # every character is at least one byte: no need to encode
        raise EntryTooLarge(
            f"{what} is at least {len(value)} bytes; the limit is {max_bytes} bytes"
        )
    if "\x00" in value:
        raise MalformedInput(f"{what} contains a NUL byte")
    if not allow_empty and not value.strip():
        raise MalformedInput(f"{what} must not be empty")
    size = len(check_utf8(value, what).encode("utf-8"))
    if size > max_bytes:
        raise EntryTooLarge(f"{what} is {size} bytes; the limit is {max_bytes} bytes")
    return value


def check_count(values: object, what: str, max_items: int) -> list[Any] | tuple[Any, ...]:
    """A list (or tuple) of at most `max_items`, checked before any item is looked at."""
    if isinstance(values, str) or not isinstance(values, list | tuple):
        raise MalformedInput(f"{what} must be a list")
    if len(values) > max_items:
        raise EntryTooLarge(f"{len(values)} {what}; the limit is {max_items}")
    return values


def check_tags(tags: object, max_tags: int = limits.TAGS_PER_ENTRY) -> tuple[str, ...]:
    """At most `max_tags` one-line tags of <= 100 characters, stripped, duplicates dropped.

    The count is checked first (duplicates count), then each tag once: linear time.
    """
    if tags is None:
        return ()
    if isinstance(tags, str) or not isinstance(tags, list | tuple):
        raise MalformedInput("tags must be a list of strings")
    if len(tags) > max_tags:
        raise EntryTooLarge(f"{len(tags)} tags; at most {max_tags} tags per entry")
    out: dict[str, None] = {}
    for t in tags:
        if (
            not isinstance(t, str)
            or not t.strip()
            or len(t) > limits.TAG_CHARS
            or name_problem(t) is not None
        ):
            raise MalformedInput(
                f"invalid tag {t!r}: tags are non-empty one-line strings of "
                f"<= {limits.TAG_CHARS} chars, valid UTF-8 in NFC, without control or "
                "bidirectional formatting characters"
            )
        out[t.strip()] = None
    return tuple(out)


def check_json(
    value: object, what: str, max_bytes: int, max_depth: int = limits.JSON_DEPTH
) -> None:
    """A JSON-serialisable value at most `max_depth` deep and about `max_bytes` big.

    One iterative walk (no recursion, so 100,000 levels cannot raise RecursionError)
    that stops at the first container too deep or once the running size estimate
    passes the limit; only a value that passed is then serialised for the exact size.
    """
    too_large = EntryTooLarge(f"{what} is larger than {max_bytes} bytes")
    budget = max_bytes  # a lower bound on the serialised size is subtracted as we go
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list | tuple):
            if depth > max_depth:
                raise MalformedInput(f"{what} is nested more than {max_depth} levels deep")
            budget -= 2 + len(node)  # brackets and separators, before looking inside
            if budget < 0:
                raise too_large
            if isinstance(node, dict):
                for k, v in node.items():
                    if not isinstance(k, str):
                        raise MalformedInput(f"{what}: object keys must be strings, got {k!r}")
                    budget -= len(k) + 3
                    if budget < 0:
                        raise too_large
                    stack.append((v, depth + 1))
            else:
                stack.extend((v, depth + 1) for v in node)
        elif isinstance(node, str):
            budget -= len(node) + 2
        elif node is None or isinstance(node, bool | int | float):
            budget -= 1
        else:
            raise MalformedInput(
                f"{what} is not JSON: {type(node).__name__} values are not allowed"
            )
        if budget < 0:
            raise too_large
    try:
        size = len(json.dumps(value, ensure_ascii=False).encode("utf-8"))
    except (TypeError, ValueError) as exc:
        raise MalformedInput(f"{what} is not JSON-serialisable: {exc}") from None
    if size > max_bytes:
        raise EntryTooLarge(f"{what} is {size} bytes; the limit is {max_bytes} bytes")
