"""The lexical hot path's shortcuts give what the plain code gave (issue 21 item 7):
each compared with the code it replaced, kept here as the reference."""

from __future__ import annotations

import dataclasses
import json
import random
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from memstrata.search import engine, features, scoring
from memstrata.search.coverage import holders, holds
from memstrata.search.newer import newer_first
from memstrata.search.priors import (
    ACCOUNTS,
    STATES,
    Signal,
    _Worth,
    excluded,
    is_question,
)
from memstrata.search.query import Hit, SearchQuery
from memstrata.search.toolcalls import FIRST_LINE_CHARS, first_line
from memstrata.search.worth import excluded_from

T0 = 1_790_000_000.0


def _newer_first_before(kept: list[_Worth], band: float) -> None:
    """The pass as it was: every hit that may move scans the near-ties above it."""

    def older(a: _Worth, b: _Worth) -> bool:
        return (
            a.hit.ts < b.hit.ts
            and a.held == b.held
            and (a.signal.name == b.signal.name or a.signal.name in ACCOUNTS)
        )

    worth = [w.worth for w in kept]
    for j in range(1, len(kept)):
        b = kept[j]
        if not b.held or b.signal.name not in STATES:
            continue
        top, near, bw = j, 1.0 - band, worth[j]
        while top > 0 and bw >= near * worth[top - 1]:
            top -= 1
        to = next((i for i in range(top, j) if older(kept[i], b)), None)
        if to is not None:
            b.prior["newer_than"] = kept[to].hit.uid
            b.prior["newer_key"] = "recall.newer"
            kept.insert(to, kept.pop(j))
            worth.insert(to, worth.pop(j))


def _pool(rng: random.Random, n: int) -> list[_Worth]:
    signals = sorted(STATES | ACCOUNTS)
    helds = [[], ["api"], ["api", "db"], ["db"], ["pdf", "export"]]
    out = []
    for i in range(n):
        hit = Hit(f"h:{i}", "log", rng.choice([1.0, 0.98, 0.95, 0.9, 0.7]), "t", "x", "", 0.0, "f")
        hit = hit.but(ts=T0 + rng.randrange(5))  # ties in time too
        item = _Worth(hit, Signal(rng.choice(signals), "why"), 1.0, {}, list(rng.choice(helds)))
        out.append(item)
    out.sort(key=lambda w: (-w.worth, -w.hit.ts, w.hit.uid))
    return out


@pytest.mark.parametrize(("band", "most"), [(0.05, 40), (0.2, 120), (0.5, 120)])
def test_newer_first_moves_exactly_what_the_pairwise_scan_moved(band: float, most: int) -> None:
    """Also with pools of near-ties a hundred long, pools with no account of the past
    (the places of a signal found by `list.index`) and a worth that is not a number."""
    rng = random.Random(21)
    moved = 0
    for n in range(300):
        pool = _pool(rng, rng.randrange(1, most))
        if n % 2:  # no account of the past among them (`newer_first` finds places in C)
            for w in pool:
                w.signal = Signal(rng.choice(sorted(STATES)), "why")
        if n % 50 == 49:
            pool[rng.randrange(len(pool))].factor = float("nan")
        before, after = list(pool), list(pool)
        plain = [(w.hit.uid, dict(w.prior)) for w in pool]
        for w in pool:
            w.prior.clear()
        _newer_first_before(before, band)
        expected = [(w.hit.uid, dict(w.prior)) for w in before]
        for w in pool:
            w.prior.clear()
        newer_first(after, band, STATES, ACCOUNTS)
        assert [(w.hit.uid, dict(w.prior)) for w in after] == expected
        moved += expected != plain
    assert moved > 30  # the pools had near-ties that moved


def _log(uid: str, entry: str, text: str, superseded: bool = False, **metadata: Any) -> Hit:
    kind = entry
    meta = {"entry_type": kind, "content": text, "metadata": metadata}
    hit = Hit(uid, "log", 1.0, kind, text, text, T0, "LOG.md", kind=kind, meta=meta)
    return hit.but(superseded=superseded)


def test_exclusions_of_a_pool_are_each_records_exclusion() -> None:
    hits = [
        _log("log:1", "USER_FEEDBACK", "Which database do we use?", event="user_intent"),
        _log("log:2", "USER_FEEDBACK", "which database do we use", event="user_intent"),
        _log("log:3", "SYSTEM", "stop hook: captured 3 new message(s) of session s1"),
        _log("log:4", "THOUGHT", "Decision: PostgreSQL", superseded=True),
        _log("log:5", "THOUGHT", "Decision: PostgreSQL", kind="bookkeeping"),
        _log("log:6", "THOUGHT", "we use PostgreSQL for the database"),
        Hit("s:1", "session", 1.0, "user", "which database do we use", "", T0, "t", kind="user"),
    ]
    for include_superseded in (False, True):
        for prompts in ((), ("log:1",), ("log:6", "s:1")):
            each = {
                h.uid: why
                for h in hits
                if (
                    why := excluded(
                        h,
                        "Which database do we use?",
                        prompts,
                        include_superseded=include_superseded,
                    )
                )
            }
            got = excluded_from(
                hits, "Which database do we use?", prompts, include_superseded=include_superseded
            )
            assert got == each
    assert set(excluded_from(hits, "Which database do we use?", include_superseded=False)) == {
        "log:1",
        "log:2",
        "log:3",
        "log:4",
        "log:5",
        "s:1",
    }


def test_first_line_and_whether_a_record_asks() -> None:
    assert first_line("\n\n  Decision: use httpx  \nsecond line\nthird") == "Decision: use httpx"
    assert first_line("one line") == "one line"
    assert first_line("x" * 500 + "\nmore") == "x" * FIRST_LINE_CHARS
    assert first_line("   ") == ""
    plain = Hit("n:1", "file", 1.0, "Notes", "We ship on Fridays. Nobody asks.", "", 0.0, "f")
    asks = Hit("n:2", "file", 1.0, "Notes", "Do we ship on Fridays?", "", 0.0, "f")
    assert not is_question(plain) and is_question(asks)


def _scoring_extra_before(
    rows: list[Any], extra: list[tuple[str, list[str], int]], total: int
) -> list[float]:
    """`engine.scoring_extra` with a pattern compiled per call and a Counter, as it was."""
    texts = [f"{r[8]} {r[9]} {r[6]}".lower() for r in rows]
    lengths = [max(1, len(t.split())) for t in texts]
    avg = sum(lengths) / len(lengths) if lengths else 1.0
    out = [0.0] * len(rows)
    union = sorted({st for _w, stem_list, _df in extra for st in stem_list}, key=len, reverse=True)
    pat = re.compile(r"\b(" + "|".join(re.escape(st) for st in union) + ")")
    covers = [
        (df, {u for u in union if u.startswith(tuple(stem_list))}) for _w, stem_list, df in extra
    ]
    for i, t in enumerate(texts):
        found = Counter(pat.findall(t))
        for df, owned in covers:
            tf = sum(n for st, n in found.items() if st in owned)
            if tf:
                out[i] += scoring.bm25_term(tf, df, total, lengths[i], avg)
    return out


def test_rescoring_the_pruned_common_words_is_unchanged() -> None:
    def row(title: str, body: str, tags: str) -> tuple[Any, ...]:
        return (1, "u", "fact", None, None, None, tags, 0.0, title, body)

    rows = [
        row("database", "the databases and data of the db", "data"),
        row("notes", "nothing here", ""),
        row("Data", "datum data-driven database database", "db databases"),
    ]
    extra = [("database", ["databas"], 900), ("data", ["data", "datum"], 2000)]
    for _ in range(2):  # the second call reads the remembered pattern
        assert engine.scoring_extra(rows, extra, 10_000) == _scoring_extra_before(
            rows, extra, 10_000
        )
    assert engine.scoring_extra(rows, extra, 10_000)[1] == 0.0


def test_rescoring_without_a_pattern_counts_what_the_pattern_did() -> None:
    """Plain ASCII stems are found at word starts with `str.find` (no pattern compiled);
    random records with punctuation, underscores, digits and other scripts score as the
    pattern scored them (`_scoring_extra_before`)."""
    rng = random.Random(21)
    pieces = [
        "data",
        "databas",
        "db",
        "datum",
        "_data",
        "x_data",
        "1data",
        "ödata",
        "édb",
        "Data-driven",
        "data.db",
        "DATABASES",
        "a",
        "the",
        "ΔATA",
        "dataa",
        "-",
        " ",
        "\n",
    ]
    for _ in range(300):
        rows = [
            (
                1,
                "u",
                "fact",
                None,
                None,
                None,
                rng.choice(["", "db data", "x"]),
                0.0,
                "".join(rng.choice(pieces) + rng.choice([" ", "", ".", "_"]) for _ in range(3)),
                " ".join(rng.choice(pieces) for _ in range(rng.randrange(1, 12))),
            )
            for _ in range(5)
        ]
        stems = rng.sample(["data", "databas", "db", "datum", "dat", "d"], rng.randrange(1, 4))
        extra = [(st, [st], rng.randrange(1, 5000)) for st in stems]
        assert engine.scoring_extra(rows, extra, 10_000) == _scoring_extra_before(
            rows, extra, 10_000
        )


def test_a_record_holds_a_stem_as_its_sorted_words_say() -> None:
    """`coverage.holds` searches an ASCII record's text for a stem at a word start; the
    sorted words (`features.words`, bisected as before) must say the same, also for
    punctuation, digits, capitals, non-ASCII records and stems that are not plain words."""
    rng = random.Random(7)
    pieces = ["db", "Database", "data-base", "_data", "x2data", "DATA", "zoë", "über", "2fa", "a.b"]
    pieces += ["(data)", "naïve", "日本", "base", "databases", "a", "-", "'", "\n"]
    stems = ["data", "databas", "db", "base", "zoe", "uber", "2fa", "b", "日本", "a.b", "", "naive"]
    for n in range(400):
        text = " ".join(rng.choice(pieces) for _ in range(rng.randrange(0, 9)))
        tags = tuple(rng.sample(["db", "Ops", "données"], rng.randrange(0, 3)))
        hit = Hit(f"f:{n}", "fact", 1.0, rng.choice(["", "Title", "Über"]), text, "", 0.0, "f")
        hit = hit.but(tags=tags)
        words = features.words(hit)
        for stem in rng.sample(stems, 3):
            expected = any(w.startswith(stem) for w in words)
            assert holds(hit, (stem,)) == expected, (text, tags, stem)
        # the engine's `matched`: the words of a query a hit holds, in one look-up
        pairs = [(f"w{i}", tuple(rng.sample(stems, rng.randrange(1, 3)))) for i in range(4)]
        for pick in (pairs, [p for p in pairs if all(s.isalpha() for s in p[1])]):
            want = [w for w, st in pick if holds(hit, st)]
            assert holders(pick)(hit) == want, (text, pick)
        pair = tuple(rng.sample(stems, 2))
        assert holds(hit, pair) == any(w.startswith(pair) for w in words)


def test_a_row_read_as_a_hit_is_the_hit_its_constructor_makes() -> None:
    """`engine._hit` fills a Hit's fields without its __init__: every field is there and
    equal, the object behaves as one made by `Hit(...)` (copies, dicts, equality)."""
    meta = {"entry_type": "FACT", "metadata": {"event": "x"}}
    row = (7, "ledger:a", "ledger", "finn", "r1", "decision", "db ops", 5.0, "Title")
    row += ("Body text here", "ledger.jsonl", 3, 1, json.dumps(meta), None, None, -1.5)
    hit = engine._hit(row, 0.5, {"why": 1}, ["body"])
    made = Hit(
        uid="ledger:a",
        layer="ledger",
        score=0.5,
        title="Title",
        text="Body text here",
        snippet="Body text here",
        ts=5.0,
        source="ledger.jsonl",
        owner="finn",
        room="r1",
        kind="decision",
        tags=("db", "ops"),
        line=3,
        superseded=True,
        meta=meta,
        explain={"why": 1},
    )
    assert hit == made and hit.__dict__ == made.__dict__
    assert hit.to_dict() == made.to_dict() and hit.but(score=1.0) == made.but(score=1.0)
    assert {f.name for f in dataclasses.fields(Hit)} == set(hit.__dict__)


def test_identifier_words_keep_their_set_while_a_write_adds_no_word(tmp_path: Path) -> None:
    """The abbreviation caches (`expand._spans`, `_by_initial`) are keyed by the set: an
    equal set of another object made each query word compare every identifier word."""
    from memstrata.index.db import Database
    from memstrata.index.docs import Doc, upsert_docs
    from memstrata.search.expand import IdentifierWords

    db = Database(tmp_path / "index.db")

    def put(uid: str, tags: tuple[str, ...]) -> None:
        with db.write() as conn:
            upsert_docs(conn, [Doc(uid=uid, layer="task", ts=0.0, body="b", source="s", tags=tags)])

    put("u1", ("cfg",))
    ids = IdentifierWords()
    with db.read() as conn:
        first = ids.get(conn, "1", [])
    put("u2", ())  # a write without an identifier word
    put("u3", ("cfg",))  # one more holder of a known word
    with db.read() as conn:
        assert ids.get(conn, "1", []) is first == {"cfg"}
    put("u4", ("env",))
    with db.read() as conn:
        assert ids.get(conn, "1", []) == {"cfg", "env"}
    db.close()


def test_the_rescoring_lowers_a_candidates_text_once() -> None:
    """Its lowered text and word count are kept per (title, body, tags): a second query
    over the same candidates lowers none again, and scores as a fresh one."""
    from memstrata.search import rescore

    rows = [
        (i, f"u{i}", "fact", None, None, None, "Db", 0.0, f"Data {i}", "DATABASE x")
        for i in range(5)
    ]
    extra = [("database", ["databas"], 900)]
    rescore._lowered_texts.clear()
    first = rescore.scoring_extra(rows, extra, 10_000)
    kept = dict(rescore._lowered_texts)
    assert len(kept) == 5 and kept[("Data 0", "DATABASE x", "Db")] == ("data 0 database x db", 5)
    again = rescore.scoring_extra(rows, extra, 10_000)
    assert rescore._lowered_texts == kept and again == first == _scoring_extra_before(
        rows, extra, 10_000
    )


def test_a_search_copies_its_pool_without_hit_but(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pool's copies with their scores (`query.rescored`, ~130 a search) skip `Hit.but`'s
    checks; what `but` is still asked for is the few hits a later stage changes."""
    from memstrata import Store

    store = Store(tmp_path / "home", agent="finn", watch=False)
    for i in range(40):
        store.agent().facts.set(f"otter{i}", f"otter habitat number {i} by the river")
    q = SearchQuery(text="otter habitat", k=5, mode="lexical", now=T0)
    before = [h.to_dict(full=True) for h in store.search(q)]
    calls: list[int] = []
    real = Hit.but

    def counted(self: Hit, **changes: Any) -> Hit:
        calls.append(1)
        return real(self, **changes)

    monkeypatch.setattr(Hit, "but", counted)
    assert [h.to_dict(full=True) for h in store.search(q)] == before and len(before) == 5
    assert len(calls) <= len(before), len(calls)  # (the snippet and own meta: one copy)
    store.close()


def test_exclusions_read_only_prompts_for_a_bare_prompt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`intent.bare_prompt` says something only of a prompt (a USER_FEEDBACK intent, a
    transcript's user turn), `priors.is_intent` only of a USER_FEEDBACK entry: the other
    candidates are not handed to them (on main every candidate of every recall was). That a bare prompt is never a hit:
    `tests/test_recall_intent.py`."""
    from memstrata.search import worth
    from memstrata.store.view import Store

    asked: list[str] = []
    real = worth.bare_prompt

    def spy(hit: Hit) -> str | None:
        asked.append(hit.kind or "")
        return real(hit)

    monkeypatch.setattr(worth, "bare_prompt", spy)
    intents: list[str] = []
    is_intent = worth.is_intent

    def spy_intent(hit: Hit) -> bool:
        intents.append(hit.kind or "")
        return is_intent(hit)

    monkeypatch.setattr(worth, "is_intent", spy_intent)  # `open_prompts`, `rules_idle`
    with Store(tmp_path / "h", agent="finn", watch=False) as store:
        mem = store.agent()
        for i in range(12):
            mem.facts.set(f"heron{i}", f"a heron nest by the weir {i}")
        mem.log.append("USER_FEEDBACK", "ok heron go on", {"event": "user_intent"})
        mem.log.append("SYSTEM", "answered", {"event": "final_response"})  # not the open one
        hits = store.search(SearchQuery(text="heron nest", k=20, mode="lexical"))
    assert asked == ["USER_FEEDBACK"], asked
    assert intents and set(intents) == {"USER_FEEDBACK"}, intents
    assert sum(1 for h in hits if h.layer == "fact") == 12
