"""Words typed together reach an identifier's abbreviation only as their initials (`search.expand`)."""

from __future__ import annotations

from memstrata.search.expand import abbreviations
from memstrata.store.view import Store


def test_words_typed_together_are_abbreviated_word_by_word() -> None:
    ids = {"tz", "cron", "dr", "cli"}
    assert abbreviations(["time", "zone"], ids) == {"timezone": ["tz"]}
    assert abbreviations(["disaster", "recovery"], ids)["disasterrecovery"] == ["dr"]
    assert abbreviations(["courier", "mobile", "client"], ids) == {"client": ["cli"]}


def test_a_question_does_not_reach_an_unrelated_fact_through_its_joined_letters(
    store: Store,
) -> None:
    """The paraphrase benchmark's "how does the courier mobile client find out about new
    jobs?" answered first with a fact keyed `cron...`: "cron" had its letters in order in
    "couriermobileclient". A real abbreviation of words typed together still reaches its
    fact ("time zone" -> `user_tz`)."""
    facts = store.agent().facts
    facts.set("cron.schedules", "All schedules are written in UTC", "config")
    facts.set("user_tz", "Europe/Oslo", "config")
    store.ledger.publish("interface", "The courier app polls GET /v1/assignments every 30 s")
    hits = store.search("how does the courier mobile client find out about new jobs?", k=5)
    assert hits and hits[0].uid.startswith("ledger:"), [h.uid for h in hits]
    assert not any("cron" in h.uid for h in hits), [(h.uid, h.explain) for h in hits]
    tz = store.search("which time zone is the user in?", k=5)
    assert tz and tz[0].uid == "fact:finn:user_tz", [h.uid for h in tz]
