"""From query words to the phrases FTS5 is asked for: whole words, prefixes, abbreviations.

Two ways a word the user typed reaches a memory that does not contain it verbatim:

* **Prefix, when nothing matches whole.** A word no document holds (after stemming)
  is searched as a prefix: `argon2` finds `argon2id`, `kube` finds `kubernetes`.
  Only words of at least `MIN_PREFIX` letters, and only when the whole word
  matches nothing, so a word that exists never drags in its longer cousins.
* **Abbreviations used in identifiers.** Fact keys and tags are identifiers, and
  identifiers abbreviate: `db_engine`, `user_tz`, `pwd_policy`, `cfg_path`. A query
  word also searches the identifier words that abbreviate it: same first letter,
  shorter by at least two letters, letters in order (`db` <- database, `tz` <-
  timezone, `pwd` <- password, `cfg` <- config, `env` <- environment). The
  candidates come only from the words of identifiers the principal may read,
  never from free text, so an ordinary short word in a note is not taken for an
  abbreviation. Words typed together are abbreviated word by word, each giving at
  least its first letter (`tz` <- "time zone", not `cron` <- "courier mobile client").
  One word is shortened as words are: its start kept, then consonants only
  (`shortened_as_words_are`): `mel`, a word of its own, does not abbreviate `model`.

Fact keys are already searchable by their words: the tokenizer splits `db_engine`
into `db` and `engine`, as it splits `user-tz`.
"""

from __future__ import annotations

import functools
import itertools
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterable

from memstrata.index.frequencies import MAX_SCOPES
from memstrata.search.terms import stems as stem_words
from memstrata.search.text import QUERY_STOPWORDS, quote, tokenize
from memstrata.values import value_type

MIN_PREFIX = 3
_VOWELS = frozenset("aeiou")  # `y` counts as a consonant: `qty` <- quantity
MAX_ABBREVIATION = 4  # letters
MAX_PREFIX_TERMS = 50
SPANS_KEPT = 4096  # query spans whose abbreviations are remembered per identifier set  # vocabulary terms counted for a prefix's document frequency


@value_type(frozen=True)
class Phrase:
    """One OR-branch of the MATCH expression and why it is there."""

    word: str  # the query word (or the abbreviation) it stands for
    match: str  # FTS5 syntax: "word" or "word"*
    df: int  # documents holding it (a prefix: the sum over its terms, capped)
    stems: tuple[str, ...]  # index terms it covers (for re-scoring pruned terms)
    why: str = "word"  # "word" | "prefix" | "abbreviation"


def is_abbreviation(short: str, long: str) -> bool:
    """True if `short` abbreviates `long`: same first letter, at least two letters
    shorter, its letters in order inside `long`. Pure.

    ``is_abbreviation("db", "database")`` -> True; ``("dba", "database")`` -> True;
    ``("data", "database")`` -> True (a prefix is an abbreviation too);
    ``("bd", "database")`` -> False.
    """
    if not 2 <= len(short) <= MAX_ABBREVIATION or len(long) < len(short) + 2:
        return False
    if short[0] != long[0] or not short.isalpha():
        return False
    it = iter(long[1:])
    return all(ch in it for ch in short[1:])


def shortened_as_words_are(short: str, long: str) -> bool:
    """True if `short` is cut from one word `long` the ways a word is shortened: its start kept
    (truncation: `env` <- environment, `cli` <- client), then consonants only
    (contraction: `db` <- database, `pwd` <- password, `cfg` <- config, `govt` <-
    government). A vowel kept after letters were skipped is not how a word is
    shortened, and such a word is mostly a word of its own: `mel` (log-mel
    spectrograms) is not `model`, `pin` not `position`. Words typed together
    abbreviate as their initials instead (`ui` <- "user interface"), whatever letters
    those are. Pure.

    ``shortened_as_words_are("cfg", "config")`` -> True;
    ``shortened_as_words_are("mel", "model")`` -> False.
    """
    kept = 0
    while kept < len(short) and kept < len(long) and short[kept] == long[kept]:
        kept += 1
    return not any(ch in _VOWELS for ch in short[kept:])


def abbreviations(words: list[str], identifier_words: Iterable[str]) -> dict[str, list[str]]:
    """query word (or two/three adjacent words joined) -> identifier words abbreviating it.

    Words typed together abbreviate only as their initials (`tz` <- "time zone", `dr` <-
    "disaster recovery"). Joined letters alone would let almost any short identifier
    abbreviate two or three words of a question (`cron` <- "courier mobile client",
    `dr` <- "drivers are", `dns` <- "downtime notifications"). Pure."""
    ids = (
        identifier_words if isinstance(identifier_words, frozenset) else frozenset(identifier_words)
    )
    present = set(words)
    spans: list[tuple[str, ...]] = [(w,) for w in words]
    spans += list(itertools.pairwise(words))
    spans += list(zip(words, words[1:], words[2:], strict=False))
    out: dict[str, list[str]] = {}
    for parts in spans:
        span = "".join(parts)
        # words typed together abbreviate as an initialism: tz <- "time zone", never
        # dns <- "downtime notifications" (d, n, s in order across the two words)
        if len(parts) > 1:  # only the initials can be found: look at them alone
            initials = "".join(p[0] for p in parts)
            ok = initials in ids and initials not in present and is_abbreviation(initials, span)
            found = [initials] if ok else []
        else:
            found = [t for t in _abbreviating(span, ids) if t not in present]
        if found:
            out[span] = found
    return out


def _abbreviating(span: str, identifier_words: frozenset[str]) -> tuple[str, ...]:
    """The identifier words that abbreviate `span`, sorted. Remembered per set of
    identifier words (`_spans`): the same query words come back against the same set."""
    seen = _spans(identifier_words)
    found = seen.get(span)
    if found is None:
        if len(seen) >= SPANS_KEPT:
            seen.clear()
        group = _by_initial(identifier_words).get(span[:1], ())
        found = seen[span] = tuple(
            sorted(t for t in group if is_abbreviation(t, span) and shortened_as_words_are(t, span))
        )
    return found


@functools.lru_cache(maxsize=MAX_SCOPES)
def _spans(identifier_words: frozenset[str]) -> dict[str, tuple[str, ...]]:
    """span -> its abbreviations, for one set of identifier words (filled by `_abbreviating`)."""
    return {}


@functools.lru_cache(maxsize=MAX_SCOPES)
def _by_initial(identifier_words: frozenset[str]) -> dict[str, tuple[str, ...]]:
    """The identifier words short enough to be abbreviations, by first letter.

    An abbreviation shares its word's first letter, so a query word is compared with one
    group only. Cached per set: `IdentifierWords.get` hands out the same frozenset until
    the identifiers change (at 100k entries the 25k tagged ledger entries hold ~8,000
    words, and comparing each with every query word took 5 ms a query).
    """
    groups: dict[str, list[str]] = {}
    for w in identifier_words:
        if 2 <= len(w) <= MAX_ABBREVIATION:
            groups.setdefault(w[0], []).append(w)
    return {k: tuple(v) for k, v in groups.items()}


class IdentifierWords:
    """The words of the fact keys and tags one scope may read (stopwords left out),
    kept up to date from the index's change feed.

    Collecting them scans every fact and tagged doc (at 100k entries, the 25k ledger
    entries: about 170 ms), and a cache keyed on the newest row id threw that away at
    every write, so the first search after any write paid it. Instead the words are
    kept per doc and patched from `doc_changes`, whose sequence number is bumped when a
    doc is added, deleted, or its text, tags or scope columns change: a search reads
    the top sequence number (one index lookup) and re-reads only the docs changed
    since. A new index generation starts a new cache (`Store` drops `df_cache`).
    """

    FULL_AFTER = 5000  # more changes than this since the last look: one full scan

    def __init__(self) -> None:
        self._seq = -1
        self._by_uid: dict[str, tuple[str, ...]] = {}
        self._counts: Counter[str] = Counter()
        self._words: frozenset[str] | None = None

    def get(self, conn: sqlite3.Connection, scope_sql: str, params: list[object]) -> frozenset[str]:
        top = int(conn.execute("SELECT coalesce(max(seq), 0) FROM doc_changes").fetchone()[0])
        if top != self._seq:
            # Rows committed after `top` was read may be seen below and again next time:
            # applying a doc's change twice is harmless.
            if self._seq < 0 or top < self._seq or top - self._seq > self.FULL_AFTER:
                self._by_uid.clear()
                self._counts.clear()
                rows = conn.execute(
                    "SELECT d.uid, d.layer, d.title, d.tags, 1 FROM docs d "
                    f"WHERE (d.layer = 'fact' OR d.tags != '') AND {scope_sql}",
                    params,
                )
            else:
                rows = conn.execute(
                    "SELECT c.uid, d.layer, d.title, d.tags, CASE WHEN d.id IS NOT NULL "
                    f"AND (d.layer = 'fact' OR d.tags != '') AND {scope_sql} THEN 1 ELSE 0 END "
                    "FROM doc_changes c LEFT JOIN docs d ON d.uid = c.uid WHERE c.seq > ?",
                    [*params, self._seq],
                )
            for uid, layer, title, tags, readable in rows:
                self._forget(uid)
                if readable:
                    self._remember(uid, layer, title, tags)
            self._seq, self._words, before = top, None, self._words
        else:
            before = None
        if self._words is None:
            now = frozenset(self._counts)
            # The same words as one object: `_spans` and `_by_initial` are cached by this
            # set, and a lookup with an equal set of another object compares every word
            # (at 10k entries a write that adds no word made each query word pay it).
            self._words = before if before is not None and before == now else now
        return self._words

    def _forget(self, uid: str) -> None:
        for w in self._by_uid.pop(uid, ()):
            self._counts[w] -= 1
            if not self._counts[w]:
                del self._counts[w]

    def _remember(self, uid: str, layer: str, title: str, tags: str) -> None:
        key = title if layer == "fact" else ""
        words = tuple(
            {t for t in tokenize(f"{key} {tags}") if t.isalpha() and t not in QUERY_STOPWORDS}
        )
        if words:
            self._by_uid[uid] = words
            self._counts.update(words)


def prefix_df(conn: sqlite3.Connection, stem: str) -> int:
    """Documents holding a term that starts with `stem` (summed over at most
    MAX_PREFIX_TERMS terms: an upper bound for pruning, not an exact count)."""
    hi = stem[:-1] + chr(ord(stem[-1]) + 1)
    rows = conn.execute(
        "SELECT doc FROM docs_vocab WHERE term >= ? AND term < ? LIMIT ?",
        (stem, hi, MAX_PREFIX_TERMS),
    ).fetchall()
    return sum(int(r[0]) for r in rows)


def plan(
    words: list[str],
    stems: dict[str, list[str]],
    df: dict[str, int],
    conn: sqlite3.Connection,
    id_words: Iterable[str] | None,
    term_df: Callable[[str], int] | None = None,
) -> list[Phrase]:
    """The phrases to search for `words` (see the module docstring).

    `stems` maps each word to its index terms, `df` each word to its document
    frequency; `id_words` are the identifier words abbreviations are drawn from;
    `term_df` counts an abbreviation's documents (default: exactly, in the index).
    """
    out: list[Phrase] = []
    for w in words:
        st = tuple(stems.get(w) or [w])
        n = df.get(w, 0)
        if n == 0 and len(w) >= MIN_PREFIX and len(st) == 1:
            pdf = prefix_df(conn, st[0])
            if pdf:
                out.append(Phrase(w, quote(w) + "*", pdf, st, "prefix"))
                continue
        out.append(Phrase(w, quote(w), n, st, "word"))
    found = abbreviations(words, id_words) if id_words else {}
    if found:
        seen = {p.word for p in out}
        stems = {**stems, **stem_words(sorted({a for v in found.values() for a in v}))}
        for abbrevs in found.values():
            for a in abbrevs:
                if a in seen:
                    continue
                seen.add(a)
                st = tuple(stems.get(a) or [a])
                n = term_df(st[0]) if term_df is not None else _vocab_df(conn, st[0])
                if n:
                    out.append(Phrase(a, quote(a), n, st, "abbreviation"))
    return out


def _vocab_df(conn: sqlite3.Connection, term: str) -> int:
    row = conn.execute("SELECT doc FROM docs_vocab WHERE term = ?", (term,)).fetchone()
    return int(row[0]) if row else 0
