"""The words that frame a question ("these days", "last time", "how long") are not matched
as its topic (`search.frames`), through `store.search`.

bench agent: chatbot-otterbrook's "Where do the embeddings of the help pages live these
days?" found the "30 days" of a retention rule; infra-saltmarsh's "How long do resolvers
cache the booking hostname now?" found "longer" in an unrelated decision, which ranked
first; "What stopped the evaluation run last time?" found NOW's "Last turn" section.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memstrata.embed.base import FakeEmbedder
from memstrata.search.frames import frame_words, topic_terms
from memstrata.search.query import SearchQuery
from memstrata.store.view import Store

ANSWER = "booking hostname TTL lowered to 60 s ahead of the switch"
RETENTION = "Transcripts are kept 30 days, then purged"
LAST_TURN = "Last time: answered the question about the ferry timetable"


def _store(home: Path) -> Store:
    """Facts about the booking site, and records that hold only a question's frame words."""
    s = Store(home, agent="infra")
    a = s.agent()
    a.facts.set("booking_dns_ttl", ANSWER)
    a.facts.set("booking_site", "the booking site sells ferry tickets")
    a.facts.set("booking_db", "the booking database is 58 GB")
    a.log.append("THOUGHT", RETENTION)
    a.log.append("THOUGHT", LAST_TURN)
    a.log.append("THOUGHT", "The booking API answers in 200 ms")
    return s


@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
def test_a_frame_word_does_not_rank_a_record_on_another_subject(tmp_path: Path, mode: str) -> None:
    with _store(tmp_path / "h") as s:
        if mode == "hybrid":
            s.use_embedder(FakeEmbedder(dim=64, tokens=True))
        for query in (
            "Where does the booking hostname point these days?",
            "What did we lower for the booking hostname last time?",
        ):
            hits = s.search(SearchQuery(text=query, k=5, mode=mode))
            texts = [h.text for h in hits]
            assert texts[:1] == [ANSWER], (query, texts)
            assert RETENTION not in texts and LAST_TURN not in texts, (query, texts)


@pytest.mark.parametrize(
    ("query", "framing"),
    [
        ("How long do resolvers cache the booking hostname now?", {"long"}),
        ("Where do the embeddings of the help pages live these days?", {"days"}),
        ("What stopped the evaluation run last time?", {"last", "time"}),
        ("Where did the pretrained audio checkpoint come from in the end?", {"end"}),
        ("How many people tune in, and how much RAM is left so far?", {"many", "much", "far"}),
        ("What sort of address slipped through?", {"sort"}),
        ("are we still flashing with espflash?", {"still"}),
        ("How fast are answers at the slow end, as last measured?", {"fast", "last"}),
        ("Which encryption key protects the database, and why that one?", {"one"}),
        ("Which long-lived token do we use, and for one user or all?", set()),
        ("What did the first restore trip over?", set()),
        ("The debugger wouldn't connect at first. What did we do?", set()),
        ("What is in the last section of the end-of-year report?", set()),
    ],
)
def test_what_frames_a_question(query: str, framing: set[str]) -> None:
    assert frame_words(query) == framing


def test_the_topic_is_what_is_left_when_two_terms_are() -> None:
    assert topic_terms("Where do the embeddings live these days?") == ["embeddings", "live"]
    assert topic_terms("How long should the feature be?") == ["long", "feature"]  # one left
    assert topic_terms("How long?") == ["long"]
    assert topic_terms("What fixed the login error?") == ["fixed", "login", "error"]
