"""Tool parameters declared once: their JSON schema and their validation, without pydantic.

Every tool parameter is a `Param` (name, JSON type, description, default, allowed
values, bounds). From that one declaration come the `inputSchema` both transports
publish and the check every call goes through, so what an agent reads in the
schema is exactly what is enforced. Plain functions over plain data: the stdio
server must answer its first request in well under a second, and importing
pydantic alone costs a quarter of a second of CPU here.

    Param("kind", "string", "what kind of knowledge", enum=("decision", "warning"))
    -> {"type": "string", "description": "what kind of knowledge",
        "enum": ["decision", "warning"]}
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Any

from memstrata.errors import MalformedInput
from memstrata.values import value_type

REQUIRED: Any = object()
_PY = {"string": str, "integer": int, "boolean": bool, "object": dict, "array": list}


@value_type(frozen=True)
class Param:
    """One tool parameter. `default` REQUIRED means the caller must give it; a
    default of None means optional with no value (left out of the schema)."""

    name: str
    type: str  # "string" | "integer" | "boolean" | "array" | "object"
    description: str
    default: Any = REQUIRED
    enum: tuple[str, ...] | None = None
    items: str | None = None  # an array's item type
    item_enum: tuple[str, ...] | None = None
    minimum: int | None = None
    maximum: int | None = None

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def schema(self) -> dict[str, Any]:
        s: dict[str, Any] = {"type": self.type, "description": self.description}
        if self.enum is not None:
            s["enum"] = list(self.enum)
        if self.items is not None:
            item: dict[str, Any] = {"type": self.items}
            if self.item_enum is not None:
                item["enum"] = list(self.item_enum)
            s["items"] = item
        if self.minimum is not None:
            s["minimum"] = self.minimum
        if self.maximum is not None:
            s["maximum"] = self.maximum
        if not self.required and self.default is not None:
            s["default"] = self.default
        return s


def input_schema(params: Iterable[Param]) -> dict[str, Any]:
    """The JSON schema of a tool's arguments. `validate` also refuses unknown keys
    (with a did-you-mean); the schema leaves `additionalProperties` out to stay short."""
    ps = list(params)
    out: dict[str, Any] = {"type": "object", "properties": {p.name: p.schema() for p in ps}}
    required = [p.name for p in ps if p.required]
    if required:
        out["required"] = required
    return out


def _type_ok(value: Any, json_type: str) -> bool:
    if json_type in ("integer", "string", "object", "array") and isinstance(value, bool):
        return False
    return isinstance(value, _PY[json_type])


def validate(params: Iterable[Param], arguments: Mapping[str, Any] | None) -> dict[str, Any]:
    """Check `arguments` against the declarations; the keyword arguments to call with.

    Raises MalformedInput with one sentence an agent can act on: which parameter,
    what was expected, what came (and the allowed values, or a close parameter name).
    """
    ps = {p.name: p for p in params}
    args = dict(arguments or {})
    for key in args:
        if key not in ps:
            close = difflib.get_close_matches(key, list(ps), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise MalformedInput(f"unknown parameter {key!r}{hint}; parameters: {', '.join(ps)}")
    out: dict[str, Any] = {}
    for name, p in ps.items():
        if name not in args or args[name] is None:
            if p.required:
                raise MalformedInput(f"missing required parameter {name!r}: {p.description}")
            out[name] = p.default
            continue
        value = args[name]
        if not _type_ok(value, p.type):
            raise MalformedInput(f"{name} must be a JSON {p.type}, got {_json_type(value)}")
        if p.enum is not None and value not in p.enum:
            raise MalformedInput(f"{name} must be one of {', '.join(p.enum)}; got {value!r}")
        if p.type == "integer":
            if p.minimum is not None and value < p.minimum:
                raise MalformedInput(f"{name} must be >= {p.minimum}, got {value}")
            if p.maximum is not None and value > p.maximum:
                raise MalformedInput(f"{name} must be <= {p.maximum}, got {value}")
        if p.type == "array" and p.items is not None:
            for v in value:
                if not _type_ok(v, p.items):
                    raise MalformedInput(
                        f"each of {name} must be a JSON {p.items}, got {_json_type(v)}"
                    )
                if p.item_enum is not None and v not in p.item_enum:
                    raise MalformedInput(
                        f"each of {name} must be one of {', '.join(p.item_enum)}; got {v!r}"
                    )
        out[name] = value
    return out


def _json_type(value: Any) -> str:
    for name, py in (
        ("boolean", bool),
        ("integer", int),
        ("number", float),
        ("string", str),
        ("array", list),
        ("object", dict),
    ):
        if isinstance(value, py):
            return name
    return "null" if value is None else type(value).__name__
