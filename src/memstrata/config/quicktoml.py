"""The plain part of TOML read without `tomllib`; anything else is left to `tomllib`.

Importing `tomllib` costs a `memstrata context` more than reading the file does (its
module compiles a dozen regular expressions: ~22M instructions, 5% of a context),
while a store's config file is nearly always a few `[table]` headers and `key = value`
lines. `loads` reads exactly that subset, with the values `tomllib` would give, and
returns None for any other line (an array, an escape, a dotted key, a date, a float
with an exponent, a key or table seen twice...), so the caller asks `tomllib`, which
reads it or says what is wrong. `tests/test_config_quicktoml.py` checks both answers
agree on every line shape the subset accepts.

Example:
    >>> loads('[search]\\nembedder = "fake"  # tests\\n\\n[log]\\nauto_compact = false\\n')
    {'search': {'embedder': 'fake'}, 'log': {'auto_compact': False}}
    >>> loads('tags = ["a", "b"]') is None
    True
"""

from __future__ import annotations

import re
from typing import Any

_KEY = r"[A-Za-z0-9_-]+"
_COMMENT = r"(?:#[^\x00-\x08\x0a-\x1f\x7f]*)?"
_LINE = re.compile(
    r"[ \t]*(?:"
    rf"\[(?P<table>{_KEY}(?:\.{_KEY})*)\]"
    rf"|(?P<key>{_KEY})[ \t]*=[ \t]*(?:"
    r'"(?P<basic>[^"\\\x00-\x08\x0a-\x1f\x7f]*)"'
    r"|'(?P<literal>[^'\x00-\x08\x0a-\x1f\x7f]*)'"
    r"|(?P<bool>true|false)"
    r"|(?P<float>[+-]?(?:0|[1-9][0-9]*)\.[0-9]+)"
    r"|(?P<int>[+-]?(?:0|[1-9][0-9]*))"
    r"))?"
    rf"[ \t]*{_COMMENT}"
)


def loads(text: str) -> dict[str, Any] | None:
    """`text`'s tables and values as `tomllib.loads` gives them, or None when a line is
    outside the plain subset (see the module docstring)."""
    data: dict[str, Any] = {}
    table = data
    headers: set[str] = set()
    for raw in text.split("\n"):
        line = raw[:-1] if raw.endswith("\r") else raw
        m = _LINE.fullmatch(line)
        if m is None:
            return None
        if m["table"] is not None:
            if m["table"] in headers:
                return None
            headers.add(m["table"])
            table = data
            for part in m["table"].split("."):
                child = table.setdefault(part, {})
                if not isinstance(child, dict):
                    return None
                table = child
            if table:  # a table some key or header already filled
                return None
        elif m["key"] is not None:
            if m["key"] in table:
                return None
            table[m["key"]] = _value(m)
    return data


def _value(m: re.Match[str]) -> Any:
    if m["basic"] is not None:
        return m["basic"]
    if m["literal"] is not None:
        return m["literal"]
    if m["bool"] is not None:
        return m["bool"] == "true"
    if m["float"] is not None:
        return float(m["float"])
    return int(m["int"])
