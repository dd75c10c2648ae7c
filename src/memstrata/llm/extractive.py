"""The defaults: summarise and extract with no model at all, deterministically.

`ExtractiveSummarizer` picks whole lines, never rewrites them. Each non-blank
line is a unit (a line longer than the whole budget is split into sentences,
the only way it can appear at all). With N units, df(t) the units containing
term t and cf(t) its count over all units:

    w(t) = cf(t) x ln(1 + N / df(t))                 tf-idf of t over the whole input
    s(u) = prior(u) x sum_{t in terms(u)} w(t) / sqrt(|terms(u)|)
    prior(u) = 1 + 0.5 / (1 + p(u))                  p = position in its own text

so lines about the input's recurring subject outrank one-off asides. Units are
taken greedily by score (ties: earlier first), skipping duplicates and any unit
that would overflow `max_chars`, then printed in source order, one per line.
When the budget binds, units scoring under half the best are not used to fill
leftover room ("ok", "lol"). Same input, same output: no randomness.

`RuleExtractor` reads Markdown or plain text line by line (code fences are
skipped) and proposes at most one item per line, first rule that fires wins:
checkbox/TODO -> task, "Decision:"/"we chose ..." -> decision, heading ->
entity or note, "X is/uses/requires Y" -> claim. Confidences are fixed per rule
and reflect how often that rule is right on real notes, not a probability.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence

from memstrata.errors import InvalidInput
from memstrata.llm.base import ItemDraft, ItemType

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_STOP_WORDS = """
a an and are as at be been but by can could did do does for from had has have he her his
i if in into is it its just me my no not of on or our she so than that the their them
then there these they this to too was we were what when which who will with would you
your
"""
_STOP = frozenset(_STOP_WORDS.split())


def _terms(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if len(w) > 1 and w not in _STOP]


def _units(texts: Sequence[str], max_chars: int) -> Iterator[tuple[str, int]]:
    for text in texts:
        pos = 0
        for line in text.splitlines():
            line = line.strip()
            parts = [line] if len(line) <= max_chars else _SENTENCE.split(line)
            for part in parts:
                part = part.strip()
                if part and len(part) <= max_chars:
                    yield part, pos
                    pos += 1


class ExtractiveSummarizer:
    """`Summarizer` that keeps the most informative whole lines (see module docstring).

    Example:
        >>> s = ExtractiveSummarizer()
        >>> s.summarize(["The cache uses SQLite.\\nok\\nThe SQLite cache is fast."], max_chars=30)
        'The cache uses SQLite.'
    """

    def summarize(self, texts: Sequence[str], *, max_chars: int) -> str:
        if isinstance(texts, str):
            raise InvalidInput("summarize() takes a sequence of texts, not one string")
        if max_chars < 1:
            raise InvalidInput(f"max_chars must be >= 1, got {max_chars}")
        units = [(text, pos, _terms(text)) for text, pos in _units(texts, max_chars)]
        units = [u for u in units if u[2]]  # a line without words carries nothing
        if not units:
            return ""
        n = len(units)
        df: dict[str, int] = {}
        cf: dict[str, int] = {}
        for _, _, terms in units:
            for t in terms:
                cf[t] = cf.get(t, 0) + 1
            for t in set(terms):
                df[t] = df.get(t, 0) + 1
        weight = {t: cf[t] * math.log(1 + n / df[t]) for t in df}
        scores = []
        for i, (_, pos, terms) in enumerate(units):
            distinct = set(terms)
            score = sum(weight[t] for t in distinct) / math.sqrt(len(distinct))
            scores.append((-(1 + 0.5 / (1 + pos)) * score, i))
        fits = sum(len(u[0]) + 1 for u in units) - 1 <= max_chars
        floor = 0.0 if fits else 0.5 * max(-sc for sc, _ in scores)
        chosen: list[int] = []
        seen: set[str] = set()
        used = -1  # no newline before the first line
        for neg, i in sorted(scores):
            if -neg < floor:
                break
            text = units[i][0]
            key = " ".join(units[i][2])
            if key in seen or used + 1 + len(text) > max_chars:
                continue
            seen.add(key)
            chosen.append(i)
            used += 1 + len(text)
        return "\n".join(units[i][0] for i in sorted(chosen))


_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_CHECKBOX = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\[([ xX])\]\s*(.*)$")
_TODO = re.compile(r"\b(?:TODO|FIXME)\b\s*(?:\([^)]*\))?\s*[:\-–]?\s*(.*)$")
_DECISION = re.compile(r"^(?:decision|decided)\s*[:\-–]\s*(.+)$", re.IGNORECASE)
_WE_DECIDED = re.compile(
    r"\bwe(?:'ve| have)?\s+(?:chose|chosen|decided|agreed|settled on|opted|went with|picked)\b",
    re.IGNORECASE,
)
_CLAIM = re.compile(
    r"^(?P<subj>[`A-Z][\w.\-/`'’]*(?:\s+[\w.\-/`'’]+){0,4}?)\s+"
    r"(?P<verb>is|are|uses|use|requires|require|needs|need|depends on|runs on|supports|stores)\s+"
    r"(?P<obj>\S.*)$"
)
_PRONOUN_WORDS = """
it this that there these those he she they we i you which what
"""
_PRONOUNS = frozenset(_PRONOUN_WORDS.split())
_MARKUP = re.compile(r"^\s*(?:>\s*)*(?:[-*+]|\d+[.)])?\s*")
_NOTE_HEADINGS = """
notes overview summary introduction background tasks todo decisions design architecture
status questions steps log changelog references usage installation setup faq goals plan
context ideas meeting agenda misc appendix examples
"""
_NOTE_WORDS = frozenset(_NOTE_HEADINGS.split())


def _clean(text: str) -> str:
    return " ".join(text.replace("**", "").replace("__", "").split())


def _title(text: str, limit: int = 80) -> str:
    text = _clean(text).rstrip(".:;,")
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)
    return text[: cut if cut > limit // 2 else limit].rstrip() + "…"


def _draft(kind: ItemType, body: str, number: int, confidence: float) -> ItemDraft:
    return ItemDraft(kind, _title(body), body[:4000], number, confidence)


def _heading_type(text: str) -> tuple[ItemType, float]:
    words = _clean(text).replace("`", "").split()
    if any(w.lower().strip(":") in _NOTE_WORDS for w in words) or len(words) > 4:
        return "note", 0.5
    if all(w[:1].isupper() or any(c.isdigit() for c in w) or "`" in text for w in words):
        return "entity", 0.55
    return "note", 0.5


class RuleExtractor:
    """`Extractor` from line rules for Markdown and plain text (see module docstring).

    Example:
        >>> [i.type for i in RuleExtractor().extract("n.md", "# Billing\\n- [ ] ship it")]
        ['entity', 'task']
    """

    def extract(self, source_file: str, text: str) -> list[ItemDraft]:
        items: list[ItemDraft] = []
        lines = text.splitlines()
        in_fence = False
        for number, raw in enumerate(lines, start=1):
            if _FENCE.match(raw):
                in_fence = not in_fence
                continue
            if in_fence or not raw.strip():
                continue
            item = self._line(raw, number, lines)
            if item is not None:
                items.append(item)
        return items

    def _line(self, raw: str, number: int, lines: list[str]) -> ItemDraft | None:
        box = _CHECKBOX.match(raw)
        if box:
            body = _clean(box.group(2))
            return _draft("task", body, number, 0.95) if box.group(1) == " " and body else None
        heading = _HEADING.match(raw)
        line = _clean(heading.group(1) if heading else _MARKUP.sub("", raw, count=1))
        todo = _TODO.search(line)
        if todo and todo.group(1).strip():
            return _draft("task", _clean(todo.group(1)), number, 0.85)
        decision = _DECISION.match(line)
        if decision:
            return _draft("decision", _clean(decision.group(1)), number, 0.9)
        if _WE_DECIDED.search(line):
            return _draft("decision", line, number, 0.75)
        if heading:
            kind, confidence = _heading_type(line)
            nxt = next((s.strip() for s in lines[number:] if s.strip()), "")
            content = line if not nxt or _HEADING.match(nxt) else f"{line}: {_clean(nxt)}"
            return ItemDraft(kind, _title(line), content[:4000], number, confidence)
        for sentence in _SENTENCE.split(line):
            claim = _CLAIM.match(sentence.rstrip())
            if (
                claim
                and not sentence.rstrip().endswith(("?", ":"))
                and claim.group("subj").split()[0].lower() not in _PRONOUNS
            ):
                return _draft("claim", sentence.strip(), number, 0.6)
        return None


__all__ = ["ExtractiveSummarizer", "RuleExtractor"]
