"""Edit a JSON settings file the way a careful person would: change what must change, keep
the rest byte for byte.

A coding agent's settings file holds other tools' hooks and servers, in the order and
layout someone chose. Parsing it and dumping it again would reformat all of that. Instead
`parse` keeps the position of every value in the text, and `render(new, text)` writes
`new` reusing the exact text of every part whose value did not change (the whole document,
a member, an item of an array): only what changed is written fresh, in the file's own
indentation and line endings (`indent_unit`; two spaces and LF for a new file, as Claude
Code writes). So a setup that changes nothing leaves the file as it was, and a removal that
restores the old value restores the old text.

    >>> text = '{"a": [1,2],  "b": {"x": true}}\\n'
    >>> print(render({"a": [1, 2], "b": {"x": True}, "c": 3}, text), end="")
    {
      "a": [1,2],
      "b": {"x": true},
      "c": 3
    }

Strict JSON only: a file with comments or trailing commas (VS Code allows them) is refused
with its line and column, never rewritten.
"""

from __future__ import annotations

import json
from typing import Any

from memstrata.errors import MalformedInput
from memstrata.values import value_type

_DECODE = json.JSONDecoder()
_WS = " \t\n\r"
MAX_DEPTH = 200


@value_type
class Node:
    """A value with its span in the text; an object keeps its members' nodes, an array its
    items'."""

    value: Any
    start: int
    end: int
    members: dict[str, Node] | None = None
    items: list[Node] | None = None
    key_start: int | None = None  # a member's value: where its `"key": ` begins


def parse(text: str, where: str = "the file") -> Node:
    """The document's root node. MalformedInput (with line and column) if not JSON."""
    try:
        i = _skip(text, 0)
        node, i = _value(text, i, 0)
        i = _skip(text, i)
        if i != len(text):
            raise ValueError("extra data after the JSON value", i)
    except (ValueError, IndexError, RecursionError) as exc:
        pos = exc.args[1] if len(exc.args) > 1 and isinstance(exc.args[1], int) else 0
        pos = getattr(exc, "pos", pos)
        line = text.count("\n", 0, pos) + 1
        col = pos - (text.rfind("\n", 0, pos) + 1) + 1
        why = getattr(exc, "msg", None) or (exc.args[0] if exc.args else "not JSON")
        raise MalformedInput(
            f"{where} is not strict JSON ({why} at line {line} column {col}); "
            "nothing was changed: fix it, or remove its comments and trailing commas"
        ) from None
    return node


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    return i


def _value(text: str, i: int, depth: int) -> tuple[Node, int]:
    if depth > MAX_DEPTH:
        raise ValueError("nested too deeply", i)
    c = text[i : i + 1]
    if c == "{":
        return _object(text, i, depth)
    if c == "[":
        return _array(text, i, depth)
    if c in ("", "/", ",", "]", "}"):
        raise ValueError("expected a value", i)
    value, end = _DECODE.raw_decode(text, i)
    return Node(value, i, end), end


def _object(text: str, start: int, depth: int) -> tuple[Node, int]:
    members: dict[str, Node] = {}
    i = _skip(text, start + 1)
    if text[i : i + 1] == "}":
        return Node({}, start, i + 1, members=members), i + 1
    while True:
        if text[i : i + 1] != '"':
            raise ValueError("expected a quoted key", i)
        key_start = i
        key, i = _DECODE.raw_decode(text, i)
        i = _skip(text, i)
        if text[i : i + 1] != ":":
            raise ValueError("expected ':'", i)
        node, i = _value(text, _skip(text, i + 1), depth + 1)
        node.key_start = key_start
        members[key] = node
        i = _skip(text, i)
        if text[i : i + 1] == ",":
            i = _skip(text, i + 1)
            continue
        if text[i : i + 1] == "}":
            value = {k: n.value for k, n in members.items()}
            return Node(value, start, i + 1, members=members), i + 1
        raise ValueError("expected ',' or '}'", i)


def _array(text: str, start: int, depth: int) -> tuple[Node, int]:
    items: list[Node] = []
    i = _skip(text, start + 1)
    if text[i : i + 1] == "]":
        return Node([], start, i + 1, items=items), i + 1
    while True:
        node, i = _value(text, i, depth + 1)
        items.append(node)
        i = _skip(text, i)
        if text[i : i + 1] == ",":
            i = _skip(text, i + 1)
            continue
        if text[i : i + 1] == "]":
            return Node([n.value for n in items], start, i + 1, items=items), i + 1
        raise ValueError("expected ',' or ']'", i)


def same(a: Any, b: Any) -> bool:
    """Equal as JSON values (Python's `1 == True` is not JSON's)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def indent_unit(text: str) -> str:
    """The indentation a file uses: the leading whitespace of its first indented line
    (two spaces if none is)."""
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and stripped != line:
            return line[: len(line) - len(stripped)]
    return "  "


def render(new: Any, text: str | None = None, where: str = "the file") -> str:
    """The text of `new`, reusing `text`'s own text for every unchanged part."""
    if text is None or not text.strip():
        return _render(new, None, "", 0, "  ", "\n") + "\n"
    root = parse(text, where)
    newline = "\r\n" if "\r\n" in text else "\n"
    body = _render(new, root, text, 0, indent_unit(text), newline)
    return text[: root.start] + body + text[root.end :]


def _render(new: Any, node: Node | None, text: str, depth: int, unit: str, nl: str) -> str:
    if node is not None and same(new, node.value):
        return text[node.start : node.end]
    pad = nl + unit * (depth + 1)
    close = nl + unit * depth
    if isinstance(new, dict):
        if not new:
            return "{}"
        old = node.members if node is not None and node.members is not None else {}
        parts = []
        for k, v in new.items():
            was = old.get(k)
            if was is not None and was.key_start is not None and same(v, was.value):
                parts.append(pad + text[was.key_start : was.end])  # the member as written
            else:
                key = json.dumps(k, ensure_ascii=False)
                parts.append(pad + key + ": " + _render(v, was, text, depth + 1, unit, nl))
        return "{" + ",".join(parts) + close + "}"
    if isinstance(new, list):
        if not new:
            return "[]"
        olds = node.items if node is not None and node.items is not None else []
        used: set[int] = set()
        parts = []
        for n, v in enumerate(new):
            match = next(
                (k for k, o in enumerate(olds) if k not in used and same(o.value, v)), None
            )
            if (
                match is None
                and n < len(olds)
                and n not in used
                and type(olds[n].value) is type(v)  # the same item, changed inside
            ):
                match = n
            if match is not None:
                used.add(match)
            parts.append(
                pad
                + _render(v, olds[match] if match is not None else None, text, depth + 1, unit, nl)
            )
        return "[" + ",".join(parts) + close + "]"
    return json.dumps(new, ensure_ascii=False)
