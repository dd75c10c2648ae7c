"""The priors weigh only the candidates that can still reach the places asked for
(`search.prune`): the hits shown are those the whole pool gives, and the others are
not given their held terms or a place in the near-tie pass."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from memstrata.search import priors
from memstrata.search.coverage import QueryTerm
from memstrata.search.durations import with_durations
from memstrata.search.priors import PriorSettings, apply_priors
from memstrata.search.query import Hit

T0 = 1_790_000_000.0
WORDS = ["api", "database", "export", "pdf", "cache", "deploy", "token", "schema"]
TERMS = [QueryTerm(w, (w[:5],), 1.0 + i / 4) for i, w in enumerate(WORDS)]


def _hit(rng: random.Random, n: int) -> Hit:
    """One candidate of a random kind: ledger decisions (some replacing another), facts,
    notes that ask, LOG tool traces and errors (some of one tool call), prompts."""
    words = " ".join(rng.sample(WORDS, rng.randrange(0, 4)))
    score = rng.choice([1.0, 0.97, 0.9, 0.85, 0.8, 0.6, 0.5, 0.3, 0.1]) * rng.uniform(0.9, 1.0)
    ts = T0 + rng.randrange(50) * 60
    shape = rng.randrange(7)
    if shape == 0:
        text = rng.choice([f"use {words}", f"replace pdf with {words}", f"drop cache {words}"])
        return Hit(f"d{n}", "ledger", score, text, text, "", ts, "l", kind="decision")
    if shape == 1:
        return Hit(f"f{n}", "fact", score, "k", f"{words} is set", "", ts, "f", kind="config")
    if shape == 2:
        text = rng.choice([f"Does the {words} pay?", f"{words} notes"])
        return Hit(f"n{n}", "file", score, "Notes", text, "", ts, "n.md")
    if shape in (3, 4):
        entry = "TOOL_USE" if shape == 3 else "ERROR"
        text = f'Bash(command="pytest {words}") -> ok, 9 chars'
        meta = {"tool": "Bash", "tool_use_id": f"toolu_{rng.randrange(6)}", "session": "s1"}
        full = {"entry_type": entry, "content": text, "metadata": meta}
        return Hit(f"t{n}", "log", score, entry, text, "", ts, "LOG.md", kind=entry, meta=full)
    if shape == 5:
        meta = {
            "entry_type": "USER_FEEDBACK",
            "content": words,
            "metadata": {"event": "user_intent"},
        }
        return Hit(f"p{n}", "log", score, "USER_FEEDBACK", f"what about {words}", "", ts, "LOG.md",
                   kind="USER_FEEDBACK", meta=meta)  # fmt: skip
    return Hit(
        f"c{n}", "ledger", score, f"{words} rule", f"{words} rule", "", ts, "l", kind="convention"
    )


def _pool(rng: random.Random, n: int, *, tools: bool = True) -> list[Hit]:
    pool = [_hit(rng, i) for i in range(n)]
    return pool if tools else [h for h in pool if h.layer != "log"]


def _shown(hits: Sequence[Hit]) -> list[str]:
    """Every field of every hit, the score to the last bit."""
    return [json.dumps([repr(h.score), h.to_dict()], default=str) for h in hits]


SETTINGS = [
    PriorSettings(),
    PriorSettings(newer=0.0),
    PriorSettings(newer=0.5),
    PriorSettings(coverage=0.5),
    PriorSettings(replaced=1.0, asked=3.0),
]


@pytest.mark.parametrize("settings", SETTINGS)
def test_the_first_places_are_the_whole_pools(settings: PriorSettings) -> None:
    rng = random.Random(7)
    for _ in range(120):
        pool = _pool(rng, rng.randrange(1, 90), tools=rng.random() < 0.5)
        query = " ".join(rng.sample(WORDS, 2)) + rng.choice(["", " decided", " rules", " ask"])
        terms = [t for t in TERMS if t.word in query] or TERMS[:1]
        whole = apply_priors(pool, query, settings, terms=terms)
        for limit in (1, 3, 10, 30):
            got = apply_priors(pool, query, settings, limit=limit, terms=terms)
            assert _shown(got) == _shown(whole[:limit])


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """(candidates, contenders) of every `apply_priors` call from now on."""
    seen: list[tuple[int, int]] = []
    real = priors.contenders

    def spy(kept: Sequence[Any], worth: Callable[[Any], float], *a: Any) -> list[Any]:
        out = real(kept, worth, *a)
        seen.append((len(kept), len(out)))
        return out

    monkeypatch.setattr(priors, "contenders", spy)
    return seen


def _held(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The uids whose held terms `apply_priors` reads."""
    read: list[str] = []
    real = priors.coverage_of

    def counting(terms: Sequence[QueryTerm]) -> Callable[[Hit], tuple[float, list[str]]]:
        cover = real(terms)

        def spy(hit: Hit) -> tuple[float, list[str]]:
            read.append(hit.uid)
            return cover(hit)

        return spy

    monkeypatch.setattr(priors, "coverage_of", counting)
    return read


def test_candidates_that_cannot_place_are_not_weighed(monkeypatch: pytest.MonkeyPatch) -> None:
    # 40 facts, each worth 0.9 of the one before: with limit 10 and `recall.newer` 0.2 the
    # tenth is worth 0.9^9, and a fact below 0.8 x that cannot pass it (0.9^12 < 0.8 x 0.9^9)
    pool = [Hit(f"f{i}", "fact", 0.9**i, "k", f"api {i}", "", T0 - i, "f") for i in range(40)]
    read = _held(monkeypatch)
    seen = _counting(monkeypatch)
    got = apply_priors(pool, "api", limit=10, terms=TERMS[:1])
    assert [h.uid for h in got] == [f"f{i}" for i in range(10)]
    assert seen == [(40, 12)]  # 0.9^11 >= 0.8 x 0.9^9 > 0.9^12
    assert sorted(read) == sorted(f"f{i}" for i in range(12))
    read.clear()
    apply_priors(pool, "api", terms=TERMS[:1])  # no limit: the whole pool
    assert len(read) == 40


def test_random_pools_skip_work_and_keep_the_tool_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _counting(monkeypatch)
    rng = random.Random(11)
    for _ in range(60):
        apply_priors(_pool(rng, 80, tools=False), "api pdf", limit=10, terms=TERMS[:4])

    assert sum(n for n, _ in seen) > 2 * sum(m for _, m in seen)  # most were not weighed
    # every record of a tool call is a contender: collapse reads their order
    pool = [Hit(f"f{i}", "fact", 0.9**i, "k", f"api {i}", "", T0 - i, "f") for i in range(30)]
    meta = {"entry_type": "TOOL_USE", "content": "x", "metadata": {"tool": "Bash"}}
    trace = Hit("t", "log", 0.001, "TOOL_USE", 'Bash(command="a") -> ok', "", T0, "LOG.md",
                kind="TOOL_USE", meta=meta)  # fmt: skip
    seen.clear()
    apply_priors([*pool, trace], "api", limit=5, terms=TERMS[:1])
    assert seen == [(31, 31)]


def test_a_negative_worth_prunes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _counting(monkeypatch)
    pool = [Hit(f"f{i}", "fact", 1.0 - i / 10, "k", "api", "", T0, "f") for i in range(30)]
    got = apply_priors(pool, "api", limit=3, terms=TERMS[:1])
    assert [h.uid for h in got] == ["f0", "f1", "f2"] and seen == [(30, 30)]


def test_the_pool_a_duration_question_weighs_prunes_as_the_whole() -> None:
    """`search.durations` weighs the pool before the priors: the first places of the
    pruned ranking are still the whole pool's, with the weighed scores."""
    rng = random.Random(11)
    seen = 0
    for _ in range(60):
        pool = [
            h.but(title=f"{rng.choice(['', '7 days', '30 s timeout'])} {h.title}")
            for h in _pool(rng, rng.randrange(1, 80), tools=False)
        ]
        pool = [h.but(text=f"{h.title} {h.text}") for h in pool]  # the lead of every layer
        query = "how long " + " ".join(rng.sample(WORDS, 2))
        weighed = with_durations(query, pool)
        seen += sum(1 for h in weighed if "duration" in h.explain)
        terms = [t for t in TERMS if t.word in query]
        whole = apply_priors(weighed, query, terms=terms)
        for limit in (1, 3, 10):
            got = apply_priors(weighed, query, limit=limit, terms=terms)
            assert _shown(got) == _shown(whole[:limit])
    assert seen > 100  # the rule weighed candidates in these pools
