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
metric's name) and shares a word of its key; or when a decision in force, recorded after the
fact was last written, drops the name its value opens with. The context shows it as
replaced, after the current facts. Pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from memstrata.lifecycle.moot import dropped, norm
from memstrata.reading.patterns import LazyPattern

if TYPE_CHECKING:
    from memstrata.model import Fact, LedgerEntry

_FIXED = LazyPattern(
    r"\b(?:fixed|resolved|solved|no longer (?:happens|occurs|the case|an issue|a problem))\b",
    re.I,
)
_TOKEN = LazyPattern(r"[A-Za-z0-9][\w./+-]*[A-Za-z0-9]|[A-Za-z0-9]")
_VALUE = LazyPattern(r"(?<![\w.])(?:\d+\.\d+|\d{3,})(?![\w.])")
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
        "january",
        "february",
        "march",
        "april",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
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
    own = set(content_words(_text(warning)))
    lead = content_words(warning.summary)[:3]
    written = list(reversed(later))  # oldest first, in the order written
    at = next((n for n, r in enumerate(written) if r.id == warning.id), len(written))
    for i, r in sorted(enumerate(written), key=lambda x: (x[1].ts, x[0])):
        if r.ts < warning.ts or r.id == warning.id or (r.ts == warning.ts and i < at):
            continue
        said = _text(r)
        if _FIXED.search(said):
            theirs = set(content_words(said))
            shared = theirs & own
            if len(shared) >= 2 and 2 * len(shared) >= len(theirs):
                return r
        if lead and set(lead) & {_stem(n) for n in dropped(r, [])}:
            return r
    return None


def replaced_fact(
    fact: Fact, facts: Sequence[Fact], history: Sequence[tuple[LedgerEntry, str | None]]
) -> tuple[str, str] | None:
    """(what replaced `fact`, when) — a later fact's key or a decision's id — or None.
    `history`: `Decisions.history()`, every record with the id that replaced it."""
    key_words = {w for w in fact.key.lower().replace("-", "_").split("_") if len(w) >= 3}
    tokens = set(_VALUE.findall(fact.value))
    for other in sorted(facts, key=lambda f: f.updated_at):
        if other.key == fact.key or other.updated_at <= fact.updated_at:
            continue
        words = set(other.key.lower().replace("-", "_").split("_"))
        if key_words & words and tokens & set(_VALUE.findall(other.value)):
            return other.key, other.updated_at[:10]
    first = _TOKEN.findall(fact.value)[:1]
    head = norm(first[0]) if first else ""
    if len(head) < 3:
        return None
    by_id = {e.id: e for e, _ in history}
    for d, replaced_by in sorted(history, key=lambda x: x[0].ts):
        if replaced_by is not None or d.ts <= fact.updated_at:
            continue
        old = [by_id[d.supersedes]] if d.supersedes in by_id else []
        if head in dropped(d, old):
            return d.id, d.ts[:10]
    return None
