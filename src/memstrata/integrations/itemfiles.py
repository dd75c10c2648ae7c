"""Key/value items kept as JSON memory files: the names, the file format, the filters.

A namespace (a tuple of labels) and a key become a path below `langgraph/`, each
label a folder and the key the file name, percent-encoded so that any string
round-trips and no name hides (`.` leading) or climbs (`/`, `..`):

    ("memories", "u/1"), "a.b"  ->  langgraph/memories/u%2F1/a.b.json

The file is the item, pretty-printed for the person who opens it:

    {"namespace": [...], "key": "...", "value": {...},
     "created_at": "...Z", "updated_at": "...Z", "expires_at": "...Z", "ttl_minutes": 5}

Only `value` is required (a file written by hand); the path, not the copy of the
namespace and key inside, says where the item is. Framework-neutral: no LangGraph here.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote, unquote

from memstrata.values import replace, value_type

ROOT = "langgraph"
SUFFIX = ".json"
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _quote(label: str) -> str:
    q = quote(label, safe="")
    return "%2E" + q[1:] if q.startswith(".") else q


def encode_folder(labels: tuple[str, ...]) -> str:
    """The folder of a namespace, relative to the memory (or artifacts) folder."""
    return "/".join((ROOT, *(_quote(label) for label in labels)))


def encode_path(labels: tuple[str, ...], key: str) -> str:
    """The file of one item, relative to the memory (or artifacts) folder."""
    return f"{encode_folder(labels)}/{_quote(key)}{SUFFIX}"


def decode_parts(rel: str) -> tuple[tuple[str, ...], str] | None:
    """(namespace labels, key) of an item file's relative path; None if it is no item."""
    parts = rel.split("/")
    if len(parts) < 2 or parts[0] != ROOT or not parts[-1].endswith(SUFFIX):
        return None
    labels = tuple(unquote(p) for p in parts[1:-1])
    return labels, unquote(parts[-1][: -len(SUFFIX)])


def _when(value: Any, default: datetime) -> datetime:
    if not isinstance(value, str):
        return default
    try:
        dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return default
    return dt if dt.tzinfo is not None else dt.replace(tzinfo=UTC)


def _iso(dt: datetime) -> str:
    return dt.astimezone(UTC).isoformat().replace("+00:00", "Z")


@value_type(frozen=True)
class ItemFile:
    """One item as its file holds it."""

    value: dict[str, Any]
    created: datetime
    updated: datetime
    ttl_minutes: float | None = None
    expires: datetime | None = None

    def __post_init__(self) -> None:
        if self.ttl_minutes is not None and self.expires is None:
            object.__setattr__(self, "expires", self.updated + timedelta(minutes=self.ttl_minutes))

    @classmethod
    def parse(cls, text: str) -> ItemFile | None:
        """The item in a file's text, or None if the text holds no item."""
        try:
            doc = json.loads(text)
        except ValueError:
            return None
        if not isinstance(doc, dict) or not isinstance(doc.get("value"), dict):
            return None
        updated = _when(doc.get("updated_at"), EPOCH)
        ttl = doc.get("ttl_minutes")
        ttl = float(ttl) if isinstance(ttl, int | float) and not isinstance(ttl, bool) else None
        expires = _when(doc.get("expires_at"), EPOCH) if doc.get("expires_at") else None
        return cls(doc["value"], _when(doc.get("created_at"), updated), updated, ttl, expires)

    def dumps(self, namespace: tuple[str, ...], key: str) -> str:
        doc: dict[str, Any] = {
            "namespace": list(namespace),
            "key": key,
            "value": self.value,
            "created_at": _iso(self.created),
            "updated_at": _iso(self.updated),
        }
        if self.ttl_minutes is not None and self.expires is not None:
            doc["expires_at"] = _iso(self.expires)
            doc["ttl_minutes"] = self.ttl_minutes
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"

    def expired(self, now: datetime | None = None) -> bool:
        return self.expires is not None and self.expires <= (now or datetime.now(UTC))

    def refreshed(self) -> ItemFile:
        """The same item with its expiry moved `ttl_minutes` past now (a read refreshes it)."""
        if self.ttl_minutes is None:
            return self
        return replace(self, expires=datetime.now(UTC) + timedelta(minutes=self.ttl_minutes))


def matches_filter(value: dict[str, Any], filter: dict[str, Any] | None) -> bool:
    """LangGraph's search filter: exact values (nested objects compared field by field,
    lists as wholes) and the operators `$eq`, `$ne`, `$gt`, `$gte`, `$lt`, `$lte`."""
    return not filter or all(_compare(value.get(k), want) for k, want in filter.items())


def _compare(have: Any, want: Any) -> bool:
    if isinstance(want, dict):
        if any(k.startswith("$") for k in want):
            return all(_operator(have, op, arg) for op, arg in want.items())
        return isinstance(have, dict) and all(_compare(have.get(k), v) for k, v in want.items())
    if isinstance(want, list | tuple):
        return (
            isinstance(have, list | tuple)
            and len(have) == len(want)
            and all(_compare(h, w) for h, w in zip(have, want, strict=True))
        )
    return bool(have == want)


def _operator(have: Any, op: str, arg: Any) -> bool:
    if op == "$eq":
        return bool(have == arg)
    if op == "$ne":
        return bool(have != arg)
    if op not in ("$gt", "$gte", "$lt", "$lte"):
        raise ValueError(f"unsupported filter operator {op!r}")
    try:
        a, b = float(have), float(arg)
    except (TypeError, ValueError):
        return False
    return {"$gt": a > b, "$gte": a >= b, "$lt": a < b, "$lte": a <= b}[op]
