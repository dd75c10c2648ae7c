"""Warnings and facts a later record made out of date: kept in history, not shown as current.

rooms-checkout: checkout-web warned "The payment events stream sends amount_cents as a
string; ... payments-api should send an integer"; payments-api then published "amount_cents
is always a JSON integer, in the events stream too (fixed May 19)". The warning was still
listed "in force" in checkout-web's context, and as knowledge in payments-api's. Nobody
superseded it: the fix came from the other room, which may not supersede another room's
entry. A warning is retired, not deleted (the ledger keeps it, readable by id), when a
record published after it, in force:

* says it fixed or resolved something ("fixed", "resolved", "solved", "no longer
  happens") and is about what the warning is about: at least two of its content words
  (stems, four letters or more; dates and the fix words aside), and half of them, are
  the warning's; or
* drops the warning's subject (the names it negates, `lifecycle.moot.dropped`, hold one
  of the warning's first three content words: "Polling GET ... hits the 429 rate limit"
  after "...; no polling").

ml-wrensong: the fact `baseline_result` ("validation top-1 accuracy 0.844 ...") was shown
as current after `baseline_site_split` ("... 0.713 ... (the 0.844 was inflated by the
leak)"). A fact is replaced when a fact written after it under another key repeats a
number of its value (with a decimal point, or of 3+ digits: a measured value, not a
metric's name; "40,000" is one number; a year is a date, not a value) and shares a word of its key; or when a decision in force, recorded after the
fact was last written, drops the name its value opens with. The context shows it as
replaced, after the current facts. A past session's outcome that restates a replaced
decision loses that sentence (`without_replaced`). Pure functions.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from memstrata.lifecycle.moot import dropped, norm
from memstrata.lifecycle.statements import sentences
from memstrata.reading.patterns import MONTHS, LazyPattern

if TYPE_CHECKING:
    from memstrata.model import Fact, LedgerEntry

_FIXED = LazyPattern(
    r"\b(?:fixed|resolved|solved|no longer (?:happens|occurs|the case|an issue|a problem))\b",
    re.I,
)
_TOKEN = LazyPattern(r"[A-Za-z0-9][\w./+-]*[A-Za-z0-9]|[A-Za-z0-9]")
# A measured value: a decimal, a number of 3+ digits, read whole with its thousands
# separators ("40,000", not "000": research-scooters' two cities' fleets shared that).
_VALUE = LazyPattern(r"(?<![\w.,])(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+\.\d+|\d{3,})(?![\w.]|,\d)")
# A year, not a measured value: in a range ("2019-2022") or after a word that dates it
# ("in 2022", "since 2019", "April 2023"), not followed by what it measures ("2048 tokens").
_YEAR = LazyPattern(
    r"(?:\b(?:in|since|from|until|till|by|for|of|during|before|after|around|between)\s+|"
    r"(?<=\d)\s*[-\u2013/]\s*)((?:19|20)\d\d)(?![\w.]|,\d|\s+(?!(?:and|or|but|with|when|"
    r"while|in|on|at|from|to|for|the|a|an|by|until|was|were|is|are)\b)[A-Za-z])"
    r"|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+((?:19|20)\d\d)\b"
    r"|\b((?:19|20)\d\d)(?=\s*[-\u2013/]\s*(?:19|20)\d\d\b)",
    re.I,
)
_COMMON = frozenset(
    [
        "that",
        "this",
        "with",
        "from",
        "have",
        "been",
        "were",
        "will",
        "would",
        "should",
        "could",
        "about",
        "after",
        "before",
        "their",
        "there",
        "them",
        "they",
        "what",
        "when",
        "where",
        "which",
        "while",
        "into",
        "onto",
        "than",
        "then",
        "also",
        "only",
        "just",
        "every",
        "always",
        "never",
        "more",
        "most",
        "some",
        "such",
        "each",
        "other",
        "same",
        "does",
        "done",
        "over",
        "under",
        "again",
        "still",
        "fixed",
        "resolved",
        "solved",
        "longer",
        "happens",
        "occurs",
        "case",
        "issue",
        "problem",
        *MONTHS,  # "may" is under four letters: never a content word
    ]
)


def _stem(word: str) -> str:
    w = word.lower().strip("./+-")
    for end in ("ing", "ed", "es", "s"):
        if len(w) > len(end) + 3 and w.endswith(end):
            return w[: -len(end)]
    return w


def content_words(text: str) -> list[str]:
    """The words that say what a text is about, stemmed, in order."""
    out = []
    for t in _TOKEN.findall(text):
        stem = _stem(t)
        if len(stem) >= 4 and not stem.isdigit() and stem not in _COMMON:
            out.append(stem)
    return out


def _text(e: LedgerEntry) -> str:
    return f"{e.summary}\n{e.detail or ''}"


def fixed_by(warning: LedgerEntry, later: Sequence[LedgerEntry]) -> LedgerEntry | None:
    """The record published after `warning` that fixed or dropped what it warns of (see
    module docstring), or None. `later`: live ledger records, newest first as the ledger
    lists them (`Ledger.query`): of records of one millisecond, the one written later (later
    in `ledger.jsonl`) comes first, so a fix written in the warning's millisecond, after
    it, is after it (when `warning` is among them; else only a later time is)."""
    return fixed_each([warning], later)[0]


def fixed_each(
    warnings: Sequence[LedgerEntry], later: Sequence[LedgerEntry]
) -> list[LedgerEntry | None]:
    """`fixed_by` of each of `warnings`, in their order: each record of `later` is read
    (its fix words, its dropped names) once for all the warnings, not once per warning."""
    written = list(reversed(later))  # oldest first, in the order written
    order = sorted(enumerate(written), key=lambda x: (x[1].ts, x[0]))
    fixes: dict[int, set[str] | None] = {}  # a record -> its content words if it says fixed
    drops: dict[int, set[str]] = {}  # a record -> the stems of the names it drops
    out: list[LedgerEntry | None] = []
    for warning in warnings:
        own = set(content_words(_text(warning)))
        lead = content_words(warning.summary)[:3]
        at = next((n for n, r in enumerate(written) if r.id == warning.id), len(written))
        found = None
        for i, r in order:
            if r.ts < warning.ts or r.id == warning.id or (r.ts == warning.ts and i < at):
                continue
            if i not in fixes:
                said = _text(r)
                fixes[i] = set(content_words(said)) if _FIXED.search(said) else None
            theirs = fixes[i]
            if theirs is not None:
                shared = theirs & own
                if len(shared) >= 2 and 2 * len(shared) >= len(theirs):
                    found = r
                    break
            if lead:
                if i not in drops:
                    drops[i] = {_stem(n) for n in dropped(r, [])}
                if set(lead) & drops[i]:
                    found = r
                    break
        out.append(found)
    return out


def replaced_facts(
    facts: Sequence[Fact], history: Sequence[tuple[LedgerEntry, str | None]]
) -> list[tuple[str, str] | None]:
    """For each of `facts`, in their order, (what replaced it, when) — a later fact's key
    or a decision's id — or None. `history`: `Decisions.history()`, every record with the
    id that replaced it. Each fact's key words and values, and each decision's dropped
    names, are read once for all the facts (read again for each fact, 300 facts before 500
    decisions cost `memstrata context` 3.2 to 4.0 s of CPU; read once, 0.17 s)."""
    ordered = sorted(facts, key=lambda f: f.updated_at)  # a later fact: the first that fits
    times = [f.updated_at for f in ordered]
    values = [_values(f.value) for f in ordered]
    by_word: dict[str, list[int]] = {}
    for i, f in enumerate(ordered):
        for w in set(f.key.lower().replace("-", "_").split("_")):
            by_word.setdefault(w, []).append(i)
    by_id = {e.id: e for e, _ in history}
    decisions = [d for d, by in sorted(history, key=lambda x: x[0].ts) if by is None]
    heads = [_head(f) for f in facts]
    first = min((f.updated_at for f, h in zip(facts, heads, strict=True) if h), default=None)
    drops: dict[str, list[int]] = {}  # a dropped name -> the decisions dropping it, in order
    for i, d in enumerate(decisions):
        if first is not None and d.ts > first:
            old = [by_id[d.supersedes]] if d.supersedes in by_id else []
            for name in dropped(d, old):
                drops.setdefault(name, []).append(i)
    decided = [d.ts for d in decisions]
    out: list[tuple[str, str] | None] = []
    for fact, head in zip(facts, heads, strict=True):
        key_words = {w for w in fact.key.lower().replace("-", "_").split("_") if len(w) >= 3}
        tokens = _values(fact.value)
        after = bisect.bisect_right(times, fact.updated_at)
        later = sorted({i for w in key_words for i in by_word.get(w, ()) if i >= after})
        hit = next((i for i in later if ordered[i].key != fact.key and tokens & values[i]), None)
        if hit is not None:
            out.append((ordered[hit].key, ordered[hit].updated_at[:10]))
            continue
        at = drops.get(head, []) if head else []
        n = bisect.bisect_right(at, bisect.bisect_right(decided, fact.updated_at) - 1)
        out.append((decisions[at[n]].id, decisions[at[n]].ts[:10]) if n < len(at) else None)
    return out


def _values(text: str) -> set[str]:
    """The measured values a fact's text holds: its numbers, the years aside."""
    years = {"".join(m) for m in _YEAR.findall(text)}
    return {v for v in _VALUE.findall(text) if v not in years}


def _head(fact: Fact) -> str:
    """The name a fact's value opens with, written loosely ("" when under three letters)."""
    first = _TOKEN.findall(fact.value)[:1]
    head = norm(first[0]) if first else ""
    return head if len(head) >= 3 else ""


# A past session's outcome (its final response) that restates a decision since replaced:
# chatbot-otterbrook's s02 answered "... Transcripts are kept 90 days and then purged
# nightly."; the user changed it to 30 days in s08, and every later context's activity
# line still quoted the 90 days (3 of 38 stale checks). The account of the past keeps its
# other sentences; the one that restates the replaced record is left out.
RESTATES_SHARE = 0.8  # of a sentence's content words a replaced record holds
RESTATES_WORDS = 3  # fewer content words say too little to be told apart
_CLAUSE = re.compile(r"(;\s+|\s+-\s+|\n+)")  # the clauses of a reply in bullets


def _loosely(word: str, words: Sequence[str]) -> bool:
    """`word` is one of `words`, written loosely ("purged" ~ "purge", "nightly")."""
    return any(
        w == word or (min(len(w), len(word)) >= 4 and (w.startswith(word) or word.startswith(w)))
        for w in words
    )


def _held(words: Sequence[str], record: Sequence[str]) -> int:
    return sum(1 for w in dict.fromkeys(words) if _loosely(w, record))


def without_replaced(text: str, history: Sequence[tuple[LedgerEntry, str | None]]) -> str:
    """`text` (a past session's outcome) without the sentences that restate a decision or
    constraint since replaced: at least 80% of a sentence's content words (three or more)
    are a replaced record's, and no record in force holds as many. `history`:
    `Decisions.history()`. Pure; the text unchanged when nothing was replaced."""
    replaced = [content_words(_text(e)) for e, by in history if by is not None]
    if not replaced or not text:
        return text
    in_force = [content_words(_text(e)) for e, by in history if by is None]

    def restates(said: str) -> bool:
        words = list(dict.fromkeys(content_words(said)))
        if len(words) < RESTATES_WORDS:
            return False
        old = max(_held(words, r) for r in replaced)
        now = max((_held(words, r) for r in in_force), default=0)
        return old >= RESTATES_SHARE * len(words) and old > now

    kept = []
    for said in sentences(text):
        # a reply in bullets is one sentence of clauses ("a; b; c", "a - b - c"): each is
        # told apart, the separators kept
        parts = _CLAUSE.split(said)
        clauses = [(parts[i], "".join(parts[i + 1 : i + 2])) for i in range(0, len(parts), 2)]
        told = [(c, sep) for c, sep in clauses if c.strip() and not restates(c)]
        if told:
            kept.append("".join(c + sep for c, sep in told[:-1]) + told[-1][0])
    return " ".join(kept)
