"""Query text: unicode61-equivalent tokens, stopwords, and MATCH strings FTS5 always accepts."""

from __future__ import annotations

import sqlite3

import pytest

from memstrata.search.text import (
    QUERY_STOPWORDS,
    QUESTION_WORDS,
    STOPWORDS,
    mentioned,
    query_terms,
    quote,
    tokenize,
)

TOKENIZER = "porter unicode61 remove_diacritics 2"


def match_expression(text: str, max_terms: int = 64) -> str | None:
    """The MATCH string the search engine builds: the OR of the quoted query terms."""
    terms = query_terms(text, max_terms=max_terms)
    return " OR ".join(quote(t) for t in terms) if terms else None


@pytest.fixture(scope="module")
def fts() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute(
        f"CREATE VIRTUAL TABLE docs_fts USING fts5(title, body, tags, context, tokenize='{TOKENIZER}')"
    )
    conn.executemany(
        "INSERT INTO docs_fts(rowid, title, body, tags, context) VALUES (?, ?, ?, ?, ?)",
        [
            (1, "Caroline", "I went running at the LGBTQ support group meeting", "", ""),
            (2, "Melanie", "We painted a sunrise by the lake, café au lait after", "t", ""),
            (3, "Melanie", "NEAR the AND gate, OR not: x^2 - (y*)", "", "Zoë's café"),
        ],
    )
    conn.execute(
        "CREATE VIRTUAL TABLE plain USING fts5(x, tokenize='unicode61 remove_diacritics 2')"
    )
    conn.execute("CREATE VIRTUAL TABLE plain_v USING fts5vocab(plain, 'instance')")
    return conn


def run(conn: sqlite3.Connection, expr: str) -> list[int]:
    rows = conn.execute(
        "SELECT rowid FROM docs_fts WHERE docs_fts MATCH ? ORDER BY bm25(docs_fts)", (expr,)
    ).fetchall()
    return [r[0] for r in rows]


def fts_tokens(conn: sqlite3.Connection, text: str) -> list[str]:
    conn.execute("DELETE FROM plain")
    conn.execute("INSERT INTO plain(rowid, x) VALUES (1, ?)", (text,))
    return [r[0] for r in conn.execute("SELECT term FROM plain_v ORDER BY offset")]


@pytest.mark.parametrize(
    "text",
    [
        "Don't STOP-me, now!",
        "Zoë's naïve café, Ærø and São Paulo",
        "snake_case x2 3.14 v1.2.3 ünïcödé",
        "email: a.b@example.org #tag @mention",
        "日本語 テキスト 123",
        "emoji 🎉 between😀words ™ © a\u200bb",
        "ℌ𝔢𝔩𝔩𝔬 ² Ⅻ",
    ],
)
def test_tokenize_agrees_with_fts5_unicode61(fts: sqlite3.Connection, text: str) -> None:
    assert tokenize(text) == fts_tokens(fts, text)


def test_tokenize_basics() -> None:
    assert tokenize("Don't STOP-me, Zoë!") == ["don", "t", "stop", "me", "zoe"]
    assert tokenize("") == []
    assert tokenize("  \t\n ") == []
    assert tokenize("🎉🎉 !!! ---") == []


def test_stopword_lists() -> None:
    for w in ("the", "what", "did", "when", "how", "where", "who", "is", "t", "don"):
        assert w in STOPWORDS
    for w in ("would", "could", "kind", "ever"):
        assert w in QUESTION_WORDS and w in QUERY_STOPWORDS
    # content words stay searchable
    for w in ("paint", "sunrise", "caroline", "support", "group", "lake"):
        assert w not in QUERY_STOPWORDS
    # every entry is a single unicode61 token
    assert all(tokenize(w) == [w] for w in QUERY_STOPWORDS)


def test_query_terms_drop_stopwords_dedupe_and_cap() -> None:
    assert query_terms("What did Caroline paint? Caroline painted a sunrise") == [
        "caroline",
        "paint",
        "painted",
        "sunrise",
    ]
    # all stopwords -> fall back to the unfiltered tokens rather than nothing
    assert query_terms("The Who") == ["the", "who"]
    assert query_terms("w " * 10 + "x y z", max_terms=2) == ["w", "x"]
    assert query_terms("Paint the lake", stopwords=()) == ["paint", "the", "lake"]
    assert query_terms("   ") == []


def test_match_expression_shape(fts: sqlite3.Connection) -> None:
    assert match_expression("What did Caroline do at the support group?") == (
        '"caroline" OR "support" OR "group"'
    )
    expr = match_expression("Where did Melanie paint the sunrise?")
    assert expr == '"melanie" OR "paint" OR "sunrise"'
    assert run(fts, expr)[0] == 2
    # porter stemming happens inside FTS5: "runs" finds "running"
    assert run(fts, match_expression("Who runs?") or "") == [1]
    # diacritics folded on both sides
    assert set(run(fts, match_expression("cafe") or "")) == {2, 3}
    assert set(run(fts, match_expression("CAFÉ") or "")) == {2, 3}


def test_quote_doubles_inner_quotes(fts: sqlite3.Connection) -> None:
    assert quote('a"b') == '"a""b"'
    run(fts, quote('a"b') + " OR " + quote("NEAR(") + " OR " + quote("*"))


HOSTILE = [
    '"',
    '""',
    '"unterminated',
    "'single' quotes'",
    "*",
    "foo*",
    "* OR *",
    "NEAR",
    "NEAR(a b, 2)",
    "NEAR/3",
    "AND",
    "OR",
    "NOT",
    "a AND b OR NOT c",
    "AND OR NOT NEAR",
    "-",
    "-foo --bar",
    ":",
    "title:evil",
    "body : x",
    "{title body}: x",
    "^",
    "^start",
    "(",
    ")",
    "((a) OR (b",
    "a + b",
    'col:"x" * ^ - ( ) { } [ ] \\ / ; -- DROP TABLE docs;',
    "🎉🔥💀",
    "emoji🎉glued",
    "\x00null\x00byte",
    "\u200b\u200d zero width",
    "ℌ𝔢𝔩𝔩𝔬 ﬁ",
    "   ",
    "\t\n\r",
    "",
    "SELECT * FROM docs_fts WHERE 1=1",
    "x" * 10_000,
    "word " * 2_000 + '"',
    " ".join(f"w{i}" for i in range(3_000)),
]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_input_never_breaks_fts5(fts: sqlite3.Connection, text: str) -> None:
    expr = match_expression(text)
    if expr is None:
        assert not tokenize(text)
        return
    run(fts, expr)  # must not raise sqlite3.OperationalError
    terms = expr.split(" OR ")
    assert 1 <= len(terms) <= 64
    assert all(t.startswith('"') and t.endswith('"') and '"' not in t[1:-1] for t in terms)


def test_operators_are_searched_as_words(fts: sqlite3.Connection) -> None:
    # "NEAR" and "AND" are plain words of row 3, not operators
    assert run(fts, match_expression("NEAR AND") or "") == [3]


def test_empty_queries_give_none() -> None:
    for text in ("", "   ", "\n\t", "?!...", "🎉", '"" ** () ^ - :'):
        assert match_expression(text) is None


def test_long_query_truncated() -> None:
    expr = match_expression(" ".join(f"term{i}" for i in range(500)), max_terms=10)
    assert expr is not None and expr.count(" OR ") == 9
    assert match_expression("x" * 10_000) == quote("x" * 10_000)
    huge = "a " * 1_000_000  # beyond the character cap: still fast and bounded
    assert match_expression(huge) == '"a"'


def test_mentioned_names() -> None:
    names = ["Caroline", "Melanie", "Anne Marie"]
    assert mentioned("What did Caroline tell Melanie?", names) == {"Caroline", "Melanie"}
    assert mentioned("what did caroline's friend say", names) == {"Caroline"}
    assert mentioned("Did Anne go?", names) == set()
    assert mentioned("Did Marie and Anne go?", names) == {"Anne Marie"}
    assert mentioned("", names) == set()
    assert mentioned("Caroline", ["", "  "]) == set()
