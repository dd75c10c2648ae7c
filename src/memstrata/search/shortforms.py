"""Short forms: a name and its initials find each other ("Weights & Biases" <-> "W&B").

People write a name out once and its initials ever after ("Track experiments in Weights &
Biases", then "Log in to W&B", "no W&B at all"), and a question may use either form. Word
matching sees nothing in common: unicode61 splits "W&B" into `w` and `b`. Both directions
are found the same way, deterministically, from the question's own text and the store's:

* **a name in the question** -> its initials: a run of two or more capitalised words
  ("Weights & Biases", "Mean Time To Recovery", "Bank of America": "&", "and", "of",
  "for", "the", "to" may join them, a hyphen too) gives the letters of its capitalised
  words (W B). The records are searched for those letters as adjacent tokens (the
  phrase `"w b"`: "W&B", "W-B", "W/B") and as one token (`"wb"`: "WB").
* **initials in the question** ("W&B", "GPU", "R&D": two to five capitals, optionally
  joined by "&", ".", "/" or "-") -> the names the store spells them out with: records
  with adjacent words starting with those letters (an FTS5 prefix phrase, `NEAR` one
  word apart for a joining "of"/"and") are read, and a run of capitalised words whose
  initials are the letters is taken as a long form (at most `LONG_FORMS`, the most
  frequent first), then searched as a phrase (`"weights biases"`).

* **words in the question -> their initials with a value** ("spreading factor" -> SF10,
  SF7): two or three adjacent words of the question, none a stopword, give their initials
  (sf); the records are searched for the tokens that are those letters then a number
  (`sf10`, `sf7`) when the records the principal reads hold at least `VALUES` different
  ones: the store writes the letters as the name of a setting with its value, as an
  engineer writes SF10, CR5 or TX14. One such token alone ("ec2" for "error code") is a
  name of its own, not a setting, and is left alone.

Only capitalised runs count as names, so ordinary words in a row ("we believe") are never
taken for one (nor do they give initials with a value: the store holds no `wb7`, `wb10`);
the long forms and the valued tokens come only from records the principal may read.
Each phrase joins the lexical OR query as one more branch (`engine.lexical_pool`), and
`explain` lists them under `short_forms`. A store with more than `MAX_DOCS` documents is
not scanned for long forms (a one-letter prefix query reads a large share of the
vocabulary); the name -> initials direction needs no scan and always applies.
"""

from __future__ import annotations

import re
import sqlite3
from collections import Counter
from collections.abc import Sequence
from typing import Any

from memstrata.search import scoring
from memstrata.search.expand import Phrase
from memstrata.search.terms import stems as stem_words
from memstrata.search.text import QUERY_STOPWORDS, quote, tokenize
from memstrata.values import value_type

LONG_FORMS = 2  # long forms searched per initialism
VALUES = 2  # different values an initialism must be written with ("SF7", "SF10")
VALUED = 3  # valued tokens searched per run of words, the most frequent first
SCANNED = 200  # records read to find an initialism's long forms
MAX_DOCS = 200_000  # a larger store is not scanned for long forms
MIN_LETTERS, MAX_LETTERS = 2, 5
_JOINERS = frozenset({"&", "and", "of", "for", "the", "to", "-", "+"})
# A word (capitalised or not) or a joining symbol, in order.
_WORD = re.compile(r"[^\W\d_][\w'’]*|&|\+|-")
_INITIALISM = re.compile(r"(?<![\w&./-])([A-Z](?:[&./-]?[A-Z]){1,4})\.?(?![\w&/-])")


def names(text: str) -> list[tuple[str, str]]:
    """(name, initials) of the runs of capitalised words in `text`.

    Example:
        >>> names("Why aren't we on Weights & Biases any more?")
        [('Weights & Biases', 'WB')]
        >>> names("What did Bank of America say?")
        [('Bank of America', 'BA')]
    """
    out: list[tuple[str, str]] = []
    run: list[str] = []

    def close() -> None:
        while run and run[-1].lower() in _JOINERS:
            run.pop()
        caps = [w for w in run if _capitalised(w)]
        if len(caps) >= MIN_LETTERS:
            letters = "".join(w[0] for w in caps).upper()
            if len(letters) <= MAX_LETTERS + 1:
                out.append((" ".join(run), letters))
        run.clear()

    end = 0
    for m in _WORD.finditer(text):
        w = m.group(0)
        if run and text[end : m.start()].strip():  # a comma or full stop ends a name
            close()
        end = m.end()
        opens = _capitalised(w) and (run or w.lower() not in QUERY_STOPWORDS)
        if opens or (run and w.lower() in _JOINERS):  # a sentence's "Why" opens no name
            run.append(w)
        else:
            close()
    close()
    return out


def _capitalised(word: str) -> bool:
    """A capital then at least one small letter: "Weights", "MLflow"; not "W", "CNN14"."""
    return word[0].isupper() and any(ch.islower() for ch in word[1:])


def initialisms(text: str) -> list[str]:
    """The initialisms `text` uses, as their capital letters ("W&B" -> "WB").

    Example:
        >>> initialisms("Is W&B down, or the GPU? I asked IT.")
        ['WB', 'GPU', 'IT']
    """
    if text.upper() == text:
        return []
    out: list[str] = []
    for m in _INITIALISM.finditer(text):
        letters = "".join(ch for ch in m.group(1) if ch.isalpha())
        if MIN_LETTERS <= len(letters) <= MAX_LETTERS and letters not in out:
            out.append(letters)
    return out


def long_forms(letters: str, texts: Sequence[str]) -> list[str]:
    """The capitalised runs in `texts` whose initials are `letters`, the most frequent first.

    Example:
        >>> long_forms("WB", ["Track runs in Weights & Biases.", "we believe it", "W&B"])
        ['Weights & Biases']
    """
    seen: Counter[str] = Counter()
    for text in texts:
        for name, initials in names(text):
            if initials == letters:
                seen[name] += 1
            elif letters in initials:  # "Set up Weights & Biases" -> "Weights & Biases"
                words = name.split()
                caps = [n for n, w in enumerate(words) if _capitalised(w)]
                at = initials.find(letters)
                first, last = caps[at], caps[at + len(letters) - 1]
                seen[" ".join(words[first : last + 1])] += 1
    return [n for n, _ in sorted(seen.items(), key=lambda x: (-x[1], x[0]))][:LONG_FORMS]


@value_type(frozen=True)
class Form:
    """One more MATCH branch, and the query words whose place it takes in a record that
    holds it (word, FTS5 stems, document frequency): "W&B" stands for "weights biases"."""

    phrase: Phrase
    tokens: tuple[str, ...]  # the branch's words as `text.tokenize` gives them, in order
    stands_for: tuple[tuple[str, tuple[str, ...], int], ...]
    said: str = ""  # the other form as written ("W&B", "Weights & Biases")


def forms(
    conn: sqlite3.Connection,
    text: str,
    scope_sql: str,
    params: list[Any],
    total: int,
    searched: set[str],
) -> list[Form]:
    """The extra MATCH branches for `text`'s names and initialisms (see the module doc):
    each one the index holds, none that only repeats a searched branch (`searched`)."""
    out: list[Form] = []
    seen = set(searched)

    def add(word: str, tokens: list[str], said: list[str], why: str, shown: str) -> None:
        match = quote(" ".join(tokens))
        if match in seen or not tokens:
            return
        seen.add(match)
        n = _count(conn, match)
        if n:
            phrase = Phrase(word, match, n, (), why)
            out.append(Form(phrase, tuple(tokens), _stands_for(conn, said), shown))

    for name, letters in names(text):
        low = letters.lower()
        said = [w for w in tokenize(name) if w not in _JOINERS]
        joined = "&".join(letters) if len(letters) == 2 else letters
        add(letters, list(low), said, f"initials of {name}", joined)
        add(letters, [low], said, f"initials of {name}", letters)
    for words in word_runs(text):
        letters = "".join(w[0] for w in words)
        for token in _valued(conn, letters, scope_sql, params):
            add(
                letters.upper(),
                [token],
                list(words),
                f"initials of {' '.join(words)}",
                token.upper(),
            )
    found = initialisms(text) if total <= MAX_DOCS else []
    for letters in found:
        said = tokenize(_spelled(text, letters))
        for name in _long_forms(conn, letters, scope_sql, params):
            add(letters, tokenize(name), said, f"long form of {letters}", name)
    return out


def word_runs(text: str) -> list[tuple[str, ...]]:
    """The runs of two or three words of `text` that may be spelled by their initials: the
    words right after a word that opens a noun phrase ("what", "which", "the", "our":
    `_OPENERS`), letters only, three or more of them, no stopword (lower case as written).
    A run elsewhere is more often a verb and its neighbour ("are we still flashing", "the
    gateway stops forwarding"), which no setting is named after.

    Example:
        >>> word_runs("what spreading factor are the nodes on?")
        [('spreading', 'factor')]
        >>> word_runs("are we still flashing with it?")
        []
    """
    words = [m.group(0).lower() for m in re.finditer(r"[\w'’]+", text)]
    out: list[tuple[str, ...]] = []
    for n, w in enumerate(words[:-2]):
        if w not in _OPENERS:
            continue
        run: list[str] = []
        for x in words[n + 1 : n + 4]:
            if not (x.isalpha() and len(x) >= 3 and x not in QUERY_STOPWORDS):
                break
            run.append(x)
            if len(run) >= 2:
                out.append(tuple(run))
    return list(dict.fromkeys(out))


# Words after which a noun phrase starts: the question's interrogatives, articles and
# possessives ("what spreading factor", "the replication factor", "our log level").
_OPENER_WORDS = "what which whose the a an our your their its my his her this that these those"
_OPENERS = frozenset(_OPENER_WORDS.split())


_VALUED = re.compile(r"[a-z]{2,5}(\d+)")


def _valued(conn: sqlite3.Connection, letters: str, scope_sql: str, params: list[Any]) -> list[str]:
    """The index's tokens that are `letters` then a number (`sf10`), when records the
    principal may read hold `VALUES` different ones or more: the most frequent `VALUED`."""
    if not MIN_LETTERS <= len(letters) <= MAX_LETTERS:
        return []
    rows = conn.execute(
        "SELECT term, doc FROM docs_vocab WHERE term > ? AND term < ? LIMIT 200",
        (letters, letters + "{"),
    ).fetchall()
    tokens = [(str(t), int(n)) for t, n in rows if _is_valued(str(t), letters)]
    if len(tokens) < VALUES:
        return []
    sql = (
        "SELECT 1 FROM docs_fts JOIN docs d ON d.id = docs_fts.rowid "
        f"WHERE docs_fts MATCH ? AND {scope_sql} LIMIT 1"
    )
    read = [
        t
        for t, _n in sorted(tokens, key=lambda x: (-x[1], x[0]))
        if conn.execute(sql, [quote(t), *params]).fetchone() is not None
    ]
    return read[:VALUED] if len(read) >= VALUES else []


def _is_valued(token: str, letters: str) -> bool:
    m = _VALUED.fullmatch(token)
    return m is not None and token[: m.start(1)] == letters


def spelled_both_ways(text: str, found: Sequence[Form]) -> str:
    """`text` with the other form of each name or initialism it uses, for the embedder:
    "Why aren't we on Weights & Biases (W&B) any more?" reads like records that say W&B.

    Example:
        >>> f = Form(Phrase("WB", '"w b"', 1, (), "initials"), ("w", "b"), (), "W&B")
        >>> spelled_both_ways("Why not Weights & Biases?", [f])
        'Why not Weights & Biases? (W&B)'
    """
    shown = list(dict.fromkeys(f.said for f in found if f.said))
    return f"{text} ({', '.join(shown)})" if shown else text


def credit(rows: Sequence[Any], found: Sequence[Form], total: int) -> list[float]:
    """BM25 (`scoring.bm25_term`, tf 1) of the query words a row's short form stands for and
    the row lacks: a record saying "W&B" holds "Weights & Biases" as much as one saying it
    in full. `rows` are docs rows (title, body, tags at 8, 9, 6)."""
    out = [0.0] * len(rows)
    if not found or not rows:
        return out
    tokens = [tokenize(f"{r[8]} {r[9]} {r[6]}") for r in rows]
    avg = sum(max(1, len(t)) for t in tokens) / len(tokens)
    for i, toks in enumerate(tokens):
        held = set(toks)
        owed: dict[str, float] = {}
        for form in found:
            if not _holds(toks, form.tokens):
                continue
            for word, stems, df in form.stands_for:
                if word in owed or _has(held, word, stems):
                    continue
                owed[word] = scoring.bm25_term(1, df, total, max(1, len(toks)), avg)
        out[i] = sum(owed.values())
    return out


def _has(held: set[str], word: str, stems: tuple[str, ...]) -> bool:
    """A row holds a query word: the word, or (three letters or more) a word on its stem."""
    if word in held:
        return True
    long = tuple(st for st in stems if len(st) >= 3)
    return bool(long) and any(t.startswith(long) for t in held)


def _holds(tokens: Sequence[str], part: Sequence[str]) -> bool:
    n = len(part)
    return any(list(tokens[i : i + n]) == list(part) for i in range(len(tokens) - n + 1))


def _stands_for(
    conn: sqlite3.Connection, words: list[str]
) -> tuple[tuple[str, tuple[str, ...], int], ...]:
    by_word = stem_words(words)
    out = []
    for w in words:
        st = tuple(by_word.get(w) or [w])
        row = conn.execute("SELECT doc FROM docs_vocab WHERE term = ?", (st[0],)).fetchone()
        out.append((w, st, int(row[0]) if row else 0))
    return tuple(out)


def _spelled(text: str, letters: str) -> str:
    """How `text` writes the initialism `letters` ("W&B")."""
    for m in _INITIALISM.finditer(text):
        if "".join(ch for ch in m.group(1) if ch.isalpha()) == letters:
            return m.group(1)
    return letters


def _long_forms(
    conn: sqlite3.Connection, letters: str, scope_sql: str, params: list[Any]
) -> list[str]:
    """The long forms of `letters` in the records the principal may read: records with
    words starting with the letters in order, adjacent (then at most one word apart),
    the initialism itself left out."""
    low = letters.lower()
    itself = quote(" ".join(low)) + " OR " + quote(low)
    adjacent = " + ".join(f"{quote(ch)}*" for ch in low)
    near = "NEAR(" + " ".join(f"{quote(ch)}*" for ch in low) + f", {len(low) - 1})"
    sql = (
        "SELECT d.title, d.body FROM docs_fts JOIN docs d ON d.id = docs_fts.rowid "
        f"WHERE docs_fts MATCH ? AND {scope_sql} LIMIT ?"
    )
    for match in (adjacent, near):
        try:
            rows = conn.execute(sql, [f"({match}) NOT ({itself})", *params, SCANNED]).fetchall()
        except sqlite3.OperationalError:
            continue
        found = long_forms(letters, [f"{t}\n{b}" for t, b in rows])
        if found:
            return found
    return []


def _count(conn: sqlite3.Connection, match: str) -> int:
    """Documents matching `match` (0 on an expression FTS5 rejects)."""
    try:
        row = conn.execute(
            "SELECT count(*) FROM docs_fts WHERE docs_fts MATCH ?", (match,)
        ).fetchone()
    except sqlite3.OperationalError:
        return 0
    return int(row[0]) if row else 0


__all__ = [
    "Form",
    "credit",
    "forms",
    "initialisms",
    "long_forms",
    "names",
    "spelled_both_ways",
    "word_runs",
]
