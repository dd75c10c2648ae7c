"""Issue 22 (fusion22): MaxSim reads the question's content pieces, and an updated
statement ranks above its earlier version on a near-tie, never over a strong match.

Real stores, the deterministic fake embedder with token vectors (each word its own
piece), hybrid search as every surface runs it (`store.search`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstrata import SearchQuery, Store
from memstrata.embed.base import FakeEmbedder
from memstrata.search.pieces import content_pieces, is_content
from memstrata.search.present import explain_in_words
from memstrata.search.updates import newer_first

DAY = 86_400.0
NOW = 1_750_000_000.0


def _store(home: Path, config: str = "") -> Store:
    if config:
        home.mkdir(parents=True, exist_ok=True)
        (home / "config.toml").write_text(config)
    store = Store(home, agent="a")
    store.use_embedder(FakeEmbedder(256, tokens=True))
    return store


def test_function_words_and_punctuation_are_not_content() -> None:
    assert [
        w for w in ("what", "did", "?", "'", "the", "Caroline", "research", "2023") if is_content(w)
    ] == [
        "Caroline",
        "research",
        "2023",
    ]
    fake = FakeEmbedder(8, tokens=True)
    assert content_pieces(fake, "what did Caroline research?", 4) == (
        [2, 3],
        ["caroline", "research"],
    )
    assert content_pieces(fake, "the who", 2) == (None, ["the", "who"])  # nothing left: all kept
    assert content_pieces(FakeEmbedder(8), "what did", 2) == (None, [])  # no word of how it cuts


def test_maxsim_reads_the_question_content_pieces_only(home: Path) -> None:
    """A turn full of the question's grammar ("what did she do about the ...") used to
    get the better MaxSim than the turn that names its subject: the function words
    matched their twins one for one. Now only "boiler" counts, and explain says so."""
    with _store(home, '[search]\nmaxsim_pieces = "content"\nembedder = "fake"\n') as store:
        store.agent().sessions.append_many(
            "s1",
            [
                {
                    "role": "user",
                    "content": "what did she do about the weather then, and what did you do?",
                },
                {"role": "user", "content": "the boiler got fixed on Monday"},
            ],
        )
        hits = store.search(
            SearchQuery(
                text="what did she do about the boiler?", layers=("session",), mode="hybrid"
            )
        )
    by_text = {h.text.split("\n")[-1]: h.explain for h in hits}
    grammar = by_text["what did she do about the weather then, and what did you do?"]
    subject = by_text["the boiler got fixed on Monday"]
    assert subject["maxsim"] == pytest.approx(1.0, abs=0.02)
    assert subject["maxsim"] > grammar["maxsim"] + 0.5
    assert subject["maxsim_pieces"] == ["boiler"]
    assert f"word-by-word meaning {subject['maxsim']:.2f} of “boiler”" in " ".join(
        explain_in_words(subject)
    )


def _turns(store: Store, turns: list[tuple[float, str]]) -> None:
    store.agent().sessions.append_many(
        "s1", [{"role": "user", "content": text, "timestamp": ts} for ts, text in turns]
    )


def test_an_updated_statement_ranks_above_its_earlier_version(home: Path) -> None:
    """Both statements of a changed fact match the question; history a year old keeps
    decay's floor for both, so decay cannot order them. The newer one comes first,
    and explain says which record it moved above."""
    import time

    year_ago = time.time() - 400 * DAY
    old_text = "Payment terms: members get 14 days to pay an invoice."
    new_text = "Payment terms are changing: from next month members get 21 days to pay an invoice."
    with _store(home, '[search]\nupdate_band = 0.05\nembedder = "fake"\n') as store:
        filler = [
            "The members like the new coffee machine on the second floor.",
            "The invoice PDF should show the coworking logo at the top.",
            "Pay day for the staff is the last Friday of the month.",
            "Two new members joined the Utrecht space this week.",
            "How many desks does the Utrecht space have again?",
            "The days are getting shorter, the lights go on at five.",
        ]
        _turns(
            store,
            [(year_ago - (n + 1) * DAY, t) for n, t in enumerate(filler)]
            + [(year_ago, old_text), (year_ago + 40 * DAY, new_text)],
        )
        # "Utrecht" matches a filler line, as "many" did before it framed the question
        # (`search.frames`): the two versions are a near-tie only with such a line.
        q = SearchQuery(
            text="how many days do Utrecht members get to pay an invoice?",
            layers=("session",),
            mode="hybrid",
        )
        hits = store.search(q)
        assert [h.text.split("\n")[-1] for h in hits[:2]] == [new_text, old_text]
        assert hits[0].explain["newer_than"] == hits[1].uid
        assert hits[0].explain["update_band"] == 0.05
        assert hits[0].explain["before_prior"] <= hits[1].explain["before_prior"] * 1.05 + 1e-6
    with _store(home, '[search]\nupdate_band = 0\nembedder = "fake"\n') as store:
        hits = store.search(q)
        assert [h.text.split("\n")[-1] for h in hits[:2]] == [old_text, new_text]
        assert "newer_than" not in hits[0].explain


def test_a_newer_version_moves_over_near_ties_only() -> None:
    """The bound: a newer statement passes an older one only within the band, and only
    one that says nearly the same thing (cosine of the matching units)."""
    import numpy

    same = numpy.array([1.0, 0.0])
    other = numpy.array([0.0, 1.0])
    vectors = {"old": same, "new": same, "newer_other": other}
    ranked = [(1.0, 10.0, "old"), (0.95, 20.0, "new")]
    moved = newer_first(numpy, ranked, vectors.get, band=0.1)
    assert moved["new"][1:] == ("old", 1.0) and moved["new"][0] > 1.0
    assert newer_first(numpy, [(1.0, 10.0, "old"), (0.85, 20.0, "new")], vectors.get, 0.1) == {}
    assert (
        newer_first(numpy, [(1.0, 10.0, "old"), (0.99, 20.0, "newer_other")], vectors.get, 0.1)
        == {}
    )
    assert newer_first(numpy, [(1.0, 30.0, "old"), (0.99, 20.0, "new")], vectors.get, 0.1) == {}
    assert newer_first(numpy, ranked, vectors.get, band=0.0) == {}
