"""Issue 22 (tconv22l): on a question about the present, a later turn that says
something changes ranks above the best match it changes, even when it words the subject
differently; only that one turn moves, and a question about the past is left alone.

Real store, the deterministic fake embedder with token vectors, hybrid search as every
surface runs it (`store.search`)."""

from __future__ import annotations

from pathlib import Path

from memstrata import SearchQuery, Store
from memstrata.embed.base import FakeEmbedder
from memstrata.search.changes import states_change

DAY = 86_400.0
T0 = 1_700_000_000.0

EARLY = "CI: the tests run on Travis CI with two parallel jobs per pull request."
LATER = "The runners keep timing out, so we're switching the tests over to GitHub Actions."
ASKS = "Could you tell me which parts of the tests you would change?"


def _store(home: Path) -> Store:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text('[search]\nembedder = "fake"\n')
    store = Store(home, agent="a")
    store.use_embedder(FakeEmbedder(256, tokens=True))
    return store


def _ranked(home: Path, question: str) -> list[str]:
    filler = [
        "Lunch is at noon on Fridays, the pizza place near the office.",
        "The logo should be green, with the leaf a bit larger.",
        "Release notes go in the wiki, one page per version.",
    ]
    turns = [(T0, EARLY), *((T0 + (i + 1) * DAY, t) for i, t in enumerate(filler))]
    turns += [(T0 + 10 * DAY, ASKS), (T0 + 40 * DAY, LATER)]
    with _store(home) as store:
        store.agent().sessions.append_many(
            "s1", [{"role": "user", "content": text, "timestamp": ts} for ts, text in turns]
        )
        hits = store.search(SearchQuery(text=question, layers=("session",), mode="hybrid", k=5))
    return [h.text.split("\n")[-1] for h in hits]


def test_a_later_change_ranks_above_what_it_changes_on_a_question_about_now(home: Path) -> None:
    ranked = _ranked(home, "Which CI service runs the tests now?")
    assert ranked.index(LATER) == 0, ranked  # main: the earlier statement first, LATER below
    assert ranked.index(EARLY) == 1  # the best match is passed, never buried


def test_a_question_not_about_now_keeps_the_best_match_first(home: Path) -> None:
    ranked = _ranked(home, "Which CI service runs the tests?")
    assert ranked[0] == EARLY
    assert ranked.index(EARLY) < ranked.index(LATER)


def test_a_question_that_asks_what_to_change_states_no_change() -> None:
    assert states_change(LATER)
    assert not states_change(ASKS)
    assert not states_change(EARLY)
