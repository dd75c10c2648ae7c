"""A flushed decision and the records that say it: the rules, as pure functions.

The pre-compact flush (`lifecycle.flush`) writes the decisions, constraints and
preferences of a transcript into CONTEXT.md, a file nothing can supersede. When one of
them is also a first-class record (`layers.decisions`: the agent's `record_decision`, a
hook's "we decided"), the line is a copy that would outlive the record: once a newer
decision replaces the record, the context went on showing the copy as current (issue 19:
"Decision: ... Let's do that with WeasyPrint" under "(memory flush)" after fpdf2 had
replaced WeasyPrint). One test of "says the same" for three rules:

* at flush time, an item a record already says (in force or replaced) is not written
  (`covered`, `lifecycle.flushed`);
* when the context is assembled, a flushed line that a replaced record says, and no
  record in force says, or that a newer record says it replaces ("fpdf2 instead of
  WeasyPrint"), is shown as replaced (`mark_replaced`), with the id of what replaced it;
* in recall, a flushed section comes back with the same marks, and a section whose every
  item is replaced is no hit at all, as a superseded record is not (`flushed_state`,
  applied by `search.worth`).

"Says the same": the two texts share at least `MIN_SHARED` content words (FTS5 porter
stems, stopwords out), and those are at least half of the shorter one's. "Members want a
PDF receipt ... Let's do that with WeasyPrint, I like HTML templates" and "Render PDF
receipts with WeasyPrint from a Jinja2 HTML template" share pdf, receipt, weasyprint,
html, template: five of the record's seven.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from memstrata.search.replaces import REPLACES
from memstrata.search.terms import stems
from memstrata.search.text import query_terms
from memstrata.values import value_type

MIN_SHARED = 3
FLUSH_HEADING = re.compile(r"^#{2,6} (\d{4}-\d\d-\d\d)? ?.*\bmemory flush\)\s*$")
FLUSH_TITLE = re.compile(r"^(\d{4}-\d\d-\d\d)? ?.*\bmemory flush\)\s*$")
_ITEM = re.compile(r"^- (Decision|Constraint|Preference): (.+)$")
_LABELS = frozenset({"decision", "decid", "constraint", "prefer", "use", "let"})


@value_type(frozen=True)
class Said:
    """A record as these rules read it: its id, its text, and what replaced it (None: in
    force)."""

    id: str
    text: str
    replaced_by: str | None = None
    ts: str = ""  # ISO time it was recorded


@value_type(frozen=True)
class Flushed:
    """A flushed section as recall shows it: its text with each replaced item marked
    (`mark_replaced`), the ids that replaced them, and whether every item is replaced."""

    text: str
    replaced_by: tuple[str, ...]
    items: int
    all_replaced: bool


def subject(text: str) -> frozenset[str]:
    """The content words of `text` as FTS5 stems (so "receipts" is "receipt")."""
    words = [w for w in query_terms(text) if len(w) > 2 and not w.isdigit()]
    if not words:
        return frozenset()
    by_word = stems(words)
    return frozenset(s for w in words for s in by_word[w]) - _LABELS


def says_same(a: frozenset[str], b: frozenset[str]) -> bool:
    """Two subjects (`subject`) say the same thing (see the module doc)."""
    shared = len(a & b)
    return shared >= MIN_SHARED and shared * 2 >= min(len(a), len(b))


def covered(item: str, records: Sequence[Said]) -> Said | None:
    """The first record (in force first) that says what the flush item says, or None."""
    mine = subject(item)
    for r in sorted(records, key=lambda r: r.replaced_by is not None):
        if says_same(mine, subject(r.text)):
            return r
    return None


def mark_replaced(text: str, records: Sequence[Said]) -> str:
    """CONTEXT.md text with each flushed item that a replaced record says (and no record
    in force does), or that a record in force says it replaces, shown as replaced:
    `- Decision (replaced by mem-1a2b3c4d): ...`. Lines outside a "(memory flush)"
    subsection, and every other line, are left as they are."""
    return _marked(text, records)[0]


def flushed_state(title: str, text: str, records: Sequence[Said]) -> Flushed | None:
    """A recalled Markdown section (`title`, `text`) as recall shows it when it is a
    "(memory flush)" section (its text may start with its heading or not), else None.

    Example:
        >>> old = Said("mem-1", "Render PDF receipts with WeasyPrint", "mem-2")
        >>> new = Said("mem-2", "Render PDF receipts with fpdf2 instead of WeasyPrint",
        ...            ts="2026-03-03T10:00:00Z")
        >>> f = flushed_state("2026-03-02 (memory flush)",
        ...                   "- Decision: PDF receipts rendered with WeasyPrint", [old, new])
        >>> f.text, f.all_replaced
        ('- Decision (replaced by mem-2): PDF receipts rendered with WeasyPrint', True)
    """
    head = FLUSH_TITLE.match(title.strip())
    if head is None:
        return None
    first = text.split("\n", 1)[0]
    synthetic = not FLUSH_HEADING.match(first)
    body = f"### {title.strip()}\n{text}" if synthetic else text
    marked, by, items = _marked(body, records)
    if synthetic:
        marked = marked.split("\n", 1)[1]
    return Flushed(marked, tuple(dict.fromkeys(b for b in by if b)), items, bool(items) and all(by))


def _marked(text: str, records: Sequence[Said]) -> tuple[str, list[str | None], int]:
    """`mark_replaced`'s text, what replaced each flushed item (None: in force), their
    number."""
    if "memory flush)" not in text:
        return text, [], 0
    live = [r for r in records if r.replaced_by is None]
    replaced_terms = _replaced_terms(live)
    subjects: dict[str, frozenset[str]] = {}
    out: list[str] = []
    by_item: list[str | None] = []
    inside, day = False, ""
    for line in text.split("\n"):
        if line.startswith("#"):
            head = FLUSH_HEADING.match(line)
            inside, day = head is not None, (head.group(1) or "") if head else ""
        item = _ITEM.match(line) if inside else None
        if item is not None:
            newer = {t: [r for r in rs if r.ts[:10] >= day] for t, rs in replaced_terms.items()}
            by = _replaced_by(item.group(2), records, live, newer, subjects)
            by_item.append(by)
            if by is not None:
                line = f"- {item.group(1)} (replaced by {by}): {item.group(2)}"
        out.append(line)
    return "\n".join(out), by_item, len(by_item)


def _replaced_terms(live: Sequence[Said]) -> Mapping[str, list[Said]]:
    """term -> the records in force that say they replace it."""
    out: dict[str, list[Said]] = {}
    for r in live:
        for m in REPLACES.finditer(r.text):
            out.setdefault(m.group(1).lower(), []).append(r)
    return out


def _replaced_by(
    item: str,
    records: Sequence[Said],
    live: Sequence[Said],
    replaced_terms: Mapping[str, list[Said]],
    subjects: dict[str, frozenset[str]],
) -> str | None:
    """The id of what replaced a flushed item, or None while it is current."""
    mine = subject(item)

    def subj(r: Said) -> frozenset[str]:
        if r.id not in subjects:
            subjects[r.id] = subject(r.text)
        return subjects[r.id]

    own = {m.group(1).lower() for m in REPLACES.finditer(item)}
    lowered = item.lower()
    for term, newer in replaced_terms.items():
        if term in own or not re.search(rf"\b{re.escape(term)}\b", lowered):
            continue
        for r in newer:  # names the term and shares another word: the same choice
            if len((mine & subj(r)) - set(stems([term])[term])) >= 1:
                return r.id
    if any(says_same(mine, subj(r)) for r in live):
        return None  # a record in force says it: current
    for r in records:
        if r.replaced_by is not None and says_same(mine, subj(r)):
            return r.replaced_by
    return None
