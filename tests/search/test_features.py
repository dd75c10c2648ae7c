"""What ranking reads of a record is remembered by the record's fields (`search.features`),
and the faster search hot path ranks exactly as before (issue 21 item 7)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from memstrata import Store
from memstrata.bench.synth import Writer, populate
from memstrata.search import engine, expand, features, worth
from memstrata.search.coverage import QueryTerm, coverage
from memstrata.search.priors import apply_priors, signal_of
from memstrata.search.query import Hit
from memstrata.search.text import query_terms

T0 = 1_790_000_000.0


def _log(uid: str, entry_type: str, text: str, **metadata: Any) -> Hit:
    meta = {"entry_type": entry_type, "content": text, "metadata": metadata}
    return Hit(uid, "log", 1.0, entry_type, text, text, T0, "LOG.md", kind=entry_type, meta=meta)


def _section(uid: str, title: str, text: str) -> Hit:
    return Hit(uid, "file", 1.0, title, text, text, T0, "notes.md")


@pytest.fixture(autouse=True)
def _fresh_memo() -> None:
    features.clear()


def test_a_log_entry_whose_metadata_changed_is_read_afresh() -> None:
    """Same uid, type and text; the second says it is bookkeeping in its metadata."""
    plain = _log("log:a", "SYSTEM", "stop hook ran", event="stop")
    tagged = _log("log:a", "SYSTEM", "stop hook ran", event="stop", kind="bookkeeping")
    assert [h.uid for h in apply_priors([plain], "stop hook")] == ["log:a"]
    assert apply_priors([tagged], "stop hook") == []  # a memo keyed without meta keeps it
    assert [h.uid for h in apply_priors([plain], "stop hook")] == ["log:a"]


def test_an_edited_record_is_read_afresh() -> None:
    """A section renamed from notes to decisions changes its signal; a changed text
    changes the words coverage finds in it."""
    before = _section("file:n:1", "Notes", "we keep PostgreSQL")
    after = _section("file:n:1", "Decisions", "we keep PostgreSQL")
    assert signal_of(before).name == "note"
    assert features.remember(before, "signal", signal_of).name == "note"
    assert features.remember(after, "signal", signal_of).name == "decision"
    terms = [QueryTerm("postgresql", ("postgresql",), 2.0), QueryTerm("redis", ("redi",), 3.0)]
    assert coverage(before, terms) == (0.4, ["postgresql"])
    edited = _section("file:n:1", "Notes", "we keep Redis")
    assert coverage(edited, terms) == (0.6, ["redis"])


def test_the_memo_stays_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(features, "SIZE", 64)
    for n in range(500):
        features.words(_section(f"file:n:{n}", "Notes", f"word{n} and more"))
    assert 0 < len(features._memo) <= 64
    assert features.words(_section("file:n:1", "Notes", "word1 and more")) == [
        "and",
        "more",
        "notes",
        "word1",
    ]


def _varied_store(home: Path) -> Store:
    """A synthetic store (ledger entries and transcripts) with records of every kind the
    priors tell apart: traces of one tool call, intents, replies, bookkeeping, decisions
    (one replacing another), facts, a questions section."""
    populate(home, 400, agent="finn")
    store = Store(home, agent="finn")
    mem = store.agent()
    w = Writer(7)
    for i in range(12):
        topic = " ".join(w.words(3))
        mem.log.append(
            "TOOL_USE", f'Read(file_path="{topic}.py") -> ok, {i} chars', {"tool": "Read"}
        )
        mem.log.append("USER_FEEDBACK", f"which {topic}?", {"event": "user_intent"})
        mem.log.append("SYSTEM", f"Final response: {topic} done", {"event": "final_response"})
        mem.log.append("THOUGHT", f"Decision: use {topic} for the api")
        mem.log.append("SYSTEM", f"stop hook: captured {i} new message(s) of session s{i}")
        mem.facts.set(f"cfg_{i}", f"{topic} setting {i}", "config")
    for n in range(6):  # sections of one heading, told apart by their text alone
        body = "\n\n".join(f"## Notes\n\n{' '.join(w.words(12))}?" for _ in range(4))
        mem.files.write(f"notes/n{n}.md", f"# Notes {n}\n\n{body}\n")
    mem.log.append("THOUGHT", "Decision: replace WeasyPrint with ReportLab for the pdf export")
    mem.log.append("THOUGHT", "Decision: WeasyPrint for the pdf export")
    store.drain()
    return store


def _rankings(store: Store, queries: list[str]) -> str:
    out = []
    for q, kw in itertools.product(queries, ({}, {"k": 3}, {"layers": ("log", "fact", "file")})):
        hits = store.search(q, mode="lexical", now=T0, **{"k": 10, **kw})
        out.append([h.to_dict() for h in hits])
    return json.dumps(out, sort_keys=True)


def test_rankings_are_the_same_with_the_memo_and_without(tmp_path: Path) -> None:
    """Every field of every hit (scores, explain, order) over a few hundred searches:
    computed afresh, then from a cold memo, then from a warm one."""
    store = _varied_store(tmp_path / "s")
    w = Writer(99)
    queries = [w.query() for _ in range(40)] + ["which database", "pdf export", "stop hook"]
    with features.disabled():
        fresh = _rankings(store, queries)
    assert '"signal": "tool"' in fresh and '"signal": "intent"' in fresh  # the kinds are there
    assert _rankings(store, queries) == fresh
    assert _rankings(store, queries) == fresh  # warm
    store.close()


def test_the_plan_reads_the_query_terms_rank_pool_would(tmp_path: Path) -> None:
    """`engine._plan` hands rank_pool the terms `worth.query_terms_of` reads itself."""
    populate(tmp_path / "s", 600, agent="finn")
    store = Store(tmp_path / "s", agent="finn")
    w = Writer(5)
    for q in [w.query() for _ in range(40)] + ["zzzunheard database"]:
        words = query_terms(q)
        assert engine._plan(store, words)[4] == worth.query_terms_of(store, q)
    store.close()


def test_a_span_of_words_abbreviates_only_as_its_initials() -> None:
    """`expand.abbreviations` looks up a span's initials alone: the same as filtering
    every abbreviation of the joined span down to the initials, as it did."""
    w = Writer(3)
    ids = frozenset({"tz", "dr", "dns", "db", "cfg", "api", "tzdata", *w.words(300)})

    def before(words: list[str]) -> dict[str, list[str]]:
        present = set(words)
        spans = [(x,) for x in words] + list(itertools.pairwise(words))
        spans += list(zip(words, words[1:], words[2:], strict=False))
        out = {}
        for parts in spans:
            span = "".join(parts)
            initials = "".join(p[0] for p in parts) if len(parts) > 1 else None
            if initials is None:  # one word: shortened as words are
                found = [t for t in expand._abbreviating(span, ids) if t not in present]
            else:  # words typed together: their initials, whatever letters those are
                ok = initials in ids and expand.is_abbreviation(initials, span)
                found = [initials] if ok and initials not in present else []
            if found:
                out[span] = found
        return out

    queries = [["time", "zone", "settings"], ["disaster", "recovery"], ["database"]]
    queries += [w.words(4) for _ in range(200)]
    assert expand.abbreviations(["time", "zone"], ids) == {"timezone": ["tz"]}
    for words in queries:
        assert expand.abbreviations(words, ids) == before(words)
