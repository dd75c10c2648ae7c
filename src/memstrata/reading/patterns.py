"""A regular expression compiled the first time it is used, not when its module loads.

Compiling a pattern costs 0.1-1 ms; a module of write-side rules (the durable-fact
exclusions, the statement and activity readers) compiled a dozen at import, and
`memstrata context` imports them without running most of them. `LazyPattern` has the
methods those modules call, each compiling once (`re.compile`) and delegating.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

# An agent's words that it fixed something ("fixed with keep rules for ...", "works now"):
# `lifecycle.activity` reads a note by them, `search.fixes` a record (with re.I).
FIXED_SAID = (
    r"\b(?:fixed|solved|resolved)\s+(?:it\s+|that\s+|this\s+)?(?:with|by)\b|"
    r"\bfix(?:es|ed)\s+(?:it|that|this)\b|\b(?:works|passes|builds|runs)\s+now\b"
)


class LazyPattern:
    """`re.compile(pattern, flags)`, compiled on first use (module docstring)."""

    __slots__ = ("_compiled", "_flags", "_source")

    def __init__(self, pattern: str, flags: int | re.RegexFlag = 0) -> None:
        self._source, self._flags = pattern, flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self._source, self._flags)
        return self._compiled

    def search(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.search(string, pos, endpos)

    def match(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.match(string, pos, endpos)

    def fullmatch(
        self, string: str, pos: int = 0, endpos: int = sys.maxsize
    ) -> re.Match[str] | None:
        return self.compiled.fullmatch(string, pos, endpos)

    def finditer(self, string: str) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(string)

    def findall(self, string: str) -> list[Any]:
        return self.compiled.findall(string)

    def split(self, string: str, maxsplit: int = 0) -> list[str | Any]:
        return self.compiled.split(string, maxsplit)

    def sub(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> str:
        return self.compiled.sub(repl, string, count)


# Calendar words: names, not content, wherever a reader weighs words (lifecycle.retired's
# content words, search.people's person names).
MONTHS = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
]
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
