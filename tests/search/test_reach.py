"""A recall's candidates that cannot reach the places `rank_pool` asks for are held back
before they are copied, passed through the question rules and weighed (`search.reach`):
the hits are those the whole pool gives, every field, and fewer candidates are weighed."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from tests.search.test_prune import SETTINGS, TERMS, _pool, _shown

from memstrata.search import reach, worth
from memstrata.search.priors import PriorSettings, apply_priors
from memstrata.search.query import Hit
from memstrata.store.view import Store

QUERIES = ["database export", "what did we decide about the cache", "what do we ask about pdf"]


def _head(pool: list[Hit], held: set[int]) -> list[Hit]:
    return [h for n, h in enumerate(pool) if n not in held]


@pytest.mark.parametrize("settings", SETTINGS)
def test_what_is_held_back_changes_no_field_of_the_places_asked_for(
    settings: PriorSettings,
) -> None:
    """Random pools (decisions that replace, facts, notes that ask, tool traces and
    errors of shared calls, prompts): the priors over what is not held back give the
    first `limit` places of the whole pool, every field, for k and 3k places."""
    rng = random.Random(21)
    held_in_all = 0
    for _ in range(150):
        pool = sorted(_pool(rng, rng.randrange(5, 70)), key=lambda h: -h.score)
        query = rng.choice(QUERIES)
        terms = TERMS if rng.random() < 0.8 else []
        near = 1.0 - settings.newer if terms and settings.newer > 0 else 1.0
        for limit in (1, 3, 10, 30):
            held = reach.held_back(
                pool,
                [h.score for h in pool],
                query,
                settings,
                places=limit,
                near=near,
                idle=lambda: True,
            )
            held_in_all += len(held)
            head, whole = (
                _shown(apply_priors(hits, query, settings, limit=limit, terms=terms))
                for hits in (_head(pool, held), pool)
            )
            assert head == whole
    if settings.coverage > 0:
        assert held_in_all == 0  # worth needs the held terms: nothing is known before
    else:
        assert held_in_all > 200


def test_a_negative_score_or_a_weight_of_zero_holds_nothing_back() -> None:
    rng = random.Random(3)
    pool = sorted(_pool(rng, 60, tools=False), key=lambda h: -h.score)
    scores = [h.score for h in pool]
    kw = {"places": 3, "near": 0.8, "idle": lambda: True}
    assert reach.held_back(pool, scores, "database", PriorSettings(), **kw)  # type: ignore[arg-type]
    assert not reach.held_back(pool, [*scores[:-1], -0.1], "database", PriorSettings(), **kw)  # type: ignore[arg-type]
    zero = PriorSettings(weights={**PriorSettings().weights, "tool": 0.0})
    assert not reach.held_back(pool, scores, "database", zero, **kw)  # type: ignore[arg-type]
    assert not reach.held_back(pool, scores, "database", PriorSettings(), **{**kw, "idle": lambda: False})  # type: ignore[arg-type]  # fmt: skip


def _weighed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many candidates each call of the priors weighs."""
    sizes: list[int] = []
    real = worth.apply_priors

    def spy(pool: list[Hit], *args: object, **kw: object) -> list[Hit]:
        sizes.append(len(pool))
        return real(pool, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(worth, "apply_priors", spy)
    return sizes


def test_a_recall_weighs_only_the_candidates_that_can_place(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """40 facts match, 5 of them every word: the priors weigh fewer than the pool (every one of them on main),
    and the hits are those of the whole pool, every field. A question one of the rules
    answers ("why ...", a prompt in the pool) holds nothing back."""
    from memstrata import SearchQuery, Store

    store = Store(home, agent="finn", watch=False)
    for i in range(40):
        said = "heron nest by the weir" if i % 8 == 0 else "a heron was seen"
        store.agent().facts.set(f"heron{i}", f"{said} {i}")
        for j in range(2):  # otters: heron is a rare word
            store.agent().facts.set(f"otter{i}.{j}", f"an otter swam upstream {i}")
    sizes = _weighed(monkeypatch)
    q = SearchQuery(text="heron nest weir", k=3, mode="lexical", now=1_800_000_000.0)
    shown = [h.to_dict(full=True) for h in store.search(q)]
    assert len(shown) == 3 and sizes and sizes[0] < 20, sizes
    monkeypatch.setattr(reach, "held_back", lambda *a, **kw: set())
    assert [h.to_dict(full=True) for h in store.search(q)] == shown
    assert sizes[1] == 40
    monkeypatch.undo()
    sizes = _weighed(monkeypatch)
    why = SearchQuery(text="why the heron nest weir", k=3, mode="lexical", now=1_800_000_000.0)
    store.search(why)
    assert sizes == [40]
    store.close()


def test_hundreds_of_recalls_give_the_same_hits_held_back_or_not(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The identity check of the change, kept: 200 recalls of `bench ops`' query shapes
    (and questions the rules answer) over a synthetic store, a fixed `now`, every hit as a
    JSON line, with candidates held back and with the whole pool weighed: byte-identical,
    and candidates were held back in many of them."""
    import json

    from memstrata import SearchQuery, Store
    from memstrata.bench.synth import Writer, populate

    populate(home, 2000)
    (home / "config.toml").write_text('[search]\nembedder = "none"\n', encoding="utf-8")
    store = Store(home, agent="bench", watch=False)
    w, rng = Writer(99), random.Random(5)
    shapes = ["{q}", "why {q}", "how long did {q} take", "who {q}", "{q} failed"]
    queries = [
        SearchQuery(
            text=rng.choice(shapes).format(q=w.query()),
            k=rng.choice((3, 10, 25)),
            mode="lexical",
            now=1_800_000_000.0,
            include_superseded=rng.random() < 0.1,
        )
        for _ in range(200)
    ]
    real, held = reach.held_back, []

    def counting(*a: object, **kw: object) -> set[int]:
        out = real(*a, **kw)  # type: ignore[arg-type]
        held.append(len(out))
        return out

    def lines() -> str:
        return "\n".join(
            json.dumps(h.to_dict(full=True)) for q in queries for h in [*store.search(q), None] if h
        )

    monkeypatch.setattr(reach, "held_back", counting)
    with_cut = lines()
    monkeypatch.setattr(reach, "held_back", lambda *a, **kw: set())
    assert lines() == with_cut
    assert sum(1 for n in held if n) >= 20, held
    store.close()


def test_no_candidate_is_held_back_while_a_record_points_to_a_fact_the_question_asks(
    store: Store,
) -> None:
    """`search.pointers` (rank19i) lifts the fact a good record names by key; a fact that
    could not place on its own worth would have been held back before it ran, and come
    back without its own explain. `rules_idle` says no while a pointer names a key the
    question holds a word of (perf21e and rank19i, merged: the guard was missing)."""
    from memstrata.search.query import SearchQuery

    pointer = Hit(
        "ledger:d1",
        "ledger",
        0.9,
        "Production database",
        "Production database: RDS "
        "PostgreSQL 16.4, Multi-AZ; the instance class is in the rds_instance_class fact",
        "",
        0.0,
        "ledger.jsonl",
        kind="decision",
    )
    other = Hit("log:a:1", "log", 0.5, "THOUGHT", "vacuum finished", "", 0.0, "LOG.md")
    asked = SearchQuery(text="What size is the production database instance right now?")
    assert not worth.rules_idle(asked, [pointer, other], {}, store)
    elsewhere = SearchQuery(text="Is the production database Multi-AZ?")  # no word of the key
    assert worth.rules_idle(elsewhere, [pointer, other], {}, store)


@pytest.mark.parametrize("settings", SETTINGS)
def test_a_decision_that_replaces_nothing_is_held_back_like_any_candidate(
    settings: PriorSettings,
) -> None:
    """Random pools of decisions (some replacing another, many of one ts), facts and notes:
    decisions that replace nothing and share no other decision's ts are held back when
    they cannot place (on main every decision reached the priors), and the first places
    are the whole pool's, every field."""
    rng = random.Random(8)
    held_decisions = 0
    for _ in range(150):
        pool = sorted(_pool(rng, rng.randrange(5, 70), tools=False), key=lambda h: -h.score)
        query = rng.choice(QUERIES)
        terms = TERMS if rng.random() < 0.8 else []
        near = 1.0 - settings.newer if terms and settings.newer > 0 else 1.0
        for limit in (1, 3, 10):
            held = reach.held_back(
                pool,
                [h.score for h in pool],
                query,
                settings,
                places=limit,
                near=near,
                idle=lambda: True,
            )
            held_decisions += sum(1 for n in held if pool[n].kind == "decision")
            head, whole = (
                _shown(apply_priors(hits, query, settings, limit=limit, terms=terms))
                for hits in (_head(pool, held), pool)
            )
            assert head == whole
    if settings.coverage > 0:
        assert held_decisions == 0
    else:
        assert held_decisions > 100


def test_a_decision_that_replaces_another_or_shares_its_ts_is_not_held_back() -> None:
    """`recall.replaced` (0.5) of a decision reads the others: one that says it replaces
    something, or one of several decisions of one ts (read in file order), stays."""
    t0 = 1_700_000_000.0
    facts = [
        Hit(f"f{n}", "fact", 1.0 - n / 100, "k", "cache is set", "", t0 + n, "f", kind="config")
        for n in range(20)
    ]

    def decision(uid: str, text: str, ts: float) -> Hit:
        return Hit(uid, "ledger", 0.1, text, text, "", ts, "l", kind="decision")

    pool = [
        *facts,
        decision("alone", "use redis for the cache", t0 + 100),
        decision("replacer", "replace memcached with redis", t0 + 200),
        decision("tied1", "use lru for the cache", t0 + 300),
        decision("tied2", "use ttl for the cache", t0 + 300),
    ]
    kw = {"places": 3, "near": 0.8, "idle": lambda: True}
    held = reach.held_back(pool, [h.score for h in pool], "cache", PriorSettings(), **kw)  # type: ignore[arg-type]
    assert {pool[n].uid for n in held if pool[n].kind == "decision"} == {"alone"}
    same = PriorSettings(replaced=1.0)  # nothing is demoted: any decision may go
    held = reach.held_back(pool, [h.score for h in pool], "cache", same, **kw)  # type: ignore[arg-type]
    assert {pool[n].uid for n in held if pool[n].kind == "decision"} == {
        "alone",
        "replacer",
        "tied1",
        "tied2",
    }
