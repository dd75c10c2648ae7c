"""The lexical z's weight in the fusion: the best share of the question's words a lexical
candidate holds (`search.lexweight`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from memstrata import SearchQuery, Store
from memstrata.embed.base import FakeEmbedder
from memstrata.search.coverage import QueryTerm
from memstrata.search.query import Hit

# what the test's "model" takes as saying the same (a stand-in for MiniLM's meaning)
_SAME = {"pet": "dog", "afraid": "scared", "storms": "thunderstorms"}


class _Meaning(FakeEmbedder):
    """Feature hashing after mapping a few words onto the word they mean."""

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        said = [
            " ".join(_SAME.get(w, w) for w in t.lower().replace("?", "").split()) for t in texts
        ]
        return super().embed(said)


_OTHERS = [
    "The pet shop closes at six",
    "Pet food was ordered for the office",
    "The pet policy allows cats",
    "Storms delayed the shipment",
    "Two storms hit the coast this week",
    "Ran the database migration",
    "Revenue grew twelve percent",
    "Reviewed the storage pull request",
    "Edited the billing service",
    "Deploy finished without errors",
    "Lunch is at noon",
    "The printer is out of paper",
    "The night shift starts at ten",
    "Night builds run on the spare runner",
]


def _store(home: Path, answer: str) -> Store:
    store = Store(home, agent="dev")
    store.use_embedder(_Meaning(dim=64))
    m = store.agent()
    m.log.append("THOUGHT", answer)
    for text in _OTHERS:
        m.log.append("THOUGHT", text)
    return store


def test_an_answer_in_other_words_ranks_above_records_sharing_one_of_its_words(
    home: Path,
) -> None:
    # Each word match holds one of the question's three words: on the lexical axis they
    # stood out as far as a record holding all would, and the answer, which holds
    # none, came under records about storms. Fails before.
    with _store(home, "Rex the dog is scared of thunderstorms") as store:
        hits = store.search(
            SearchQuery(text="is the pet afraid of storms at night?", mode="hybrid", k=5)
        )
    assert hits[0].text == "Rex the dog is scared of thunderstorms"
    assert 0.0 < hits[0].explain["lexical_weight"] < 1.0
    assert "w x z(lexical)" in hits[0].explain["formula"]


def test_a_record_holding_every_word_leaves_the_fusion_unweighted(home: Path) -> None:
    with _store(home, "The pet is afraid of storms, says Rex's owner") as store:
        hits = store.search(SearchQuery(text="is the pet afraid of storms?", mode="hybrid", k=5))
    assert hits[0].text.startswith("The pet is afraid of storms")
    assert all("lexical_weight" not in h.explain for h in hits)
    e = hits[0].explain
    assert abs(e["fused"] - (e["z_lexical"] + e["z_dense"] + e.get("z_maxsim", 0.0))) < 1e-5


def test_the_weight_is_the_best_idf_share_of_the_query_terms_held() -> None:
    from memstrata.search.lexweight import lexical_weight

    terms = [QueryTerm("client", ("client",), 1.0), QueryTerm("close", ("close",), 3.0)]

    def hit(text: str) -> Hit:
        return Hit("f:" + text, "fact", 1.0, "k", text, "", 0.0, "f")

    assert lexical_weight(terms, [hit("the client list")]) == 0.25
    # a match holding half the question's information or more counts fully
    assert lexical_weight(terms, [hit("the client list"), hit("we close at six")]) == 1.0
    assert lexical_weight(terms, [hit("close the client")]) == 1.0
    assert lexical_weight([], [hit("anything")]) == 1.0
    assert lexical_weight(terms, []) == 0.0


def test_weighted_zsum_weighs_the_named_feature_only() -> None:
    from memstrata.search.lexweight import weighted_zsum

    z = {"lexical": {"a": 2.0, "b": -2.0}, "dense": {"a": -1.0, "b": 1.0}}
    assert weighted_zsum(z, {"lexical": 0.25}, ["a", "b"]) == {"a": -0.5, "b": 0.5}
    assert weighted_zsum(z, {}, ["a", "b", "c"]) == {"a": 1.0, "b": -1.0, "c": 0.0}
