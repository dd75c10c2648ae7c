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


def test_a_word_of_its_own_is_not_taken_for_an_abbreviation(store: Store) -> None:
    """bench agent, ml-wrensong: the fact key `mel_params` made "mel" an identifier word,
    and "mel" has m, e, l in order in "model", so every question about the model also
    searched "mel": "How large may the model file be for the app?" ranked the decision
    about the app's mel parameters first and the 20 MB limit below it. A word is
    shortened by keeping its start, then consonants only (`cfg` <- config, `env` <-
    environment); `mel` skips letters and keeps a vowel: a word of its own."""
    facts = store.agent().facts
    facts.set("mel_params", "32 kHz, n_fft 1024, hop 320, 64 bands", "config")
    facts.set("cfg_path", "configs/train.yaml", "config")
    store.ledger.publish("constraint", "The on-device model file must be at most 20 MB")
    hits = store.search("How large may the model file be?", k=5, mode="lexical")
    assert hits and hits[0].uid.startswith("ledger:"), [h.uid for h in hits]
    assert not any("mel_params" in h.uid for h in hits), [(h.uid, h.explain) for h in hits]
    assert "mel" not in hits[0].explain.get("abbreviations", []), hits[0].explain
    cfg = store.search("where is the training config?", k=5, mode="lexical")
    assert cfg and cfg[0].uid.endswith("cfg_path"), [(h.uid, h.explain) for h in cfg]


def test_one_word_is_shortened_by_its_start_then_consonants() -> None:
    assert abbreviations(["model"], {"mel", "mdl"}) == {"model": ["mdl"]}
    assert abbreviations(["position"], {"pin", "pos"}) == {"position": ["pos"]}
    assert abbreviations(["user", "interface"], {"ui"}) == {"userinterface": ["ui"]}
