"""Token vectors and MaxSim (issue 22, fusion-maxsim): kept beside each unit's vector
from the same forward pass, rebuilt when the text changes, resumable, bounded in size,
never used for a record changed since, and a fusion feature that `explain` shows."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memstrata import SearchQuery, Store
from memstrata.embed.base import FakeEmbedder
from memstrata.index import tokens as token_vectors
from memstrata.index.generations import live_database
from memstrata.search.maxsim import maxsim
from memstrata.search.pieces import content_pieces
from memstrata.search.present import explain_in_words

np = pytest.importorskip("numpy")


def _rows(home: Path) -> list[tuple[str, int, bytes | None]]:
    with sqlite3.connect(live_database(home / "index") or "") as conn:
        return conn.execute("SELECT uid, unit, tokens FROM vectors ORDER BY uid, unit").fetchall()


def _store(home: Path, emb: FakeEmbedder) -> Store:
    store = Store(home, agent="a")
    store.use_embedder(emb)
    store.semantic.builds = "off"  # builds only when the test says so
    return store


def test_maxsim_is_a_fusion_feature_that_explain_shows(semantic_default: None, home: Path) -> None:
    """With the default embedder (all-MiniLM-L6-v2 in NumPy), a hybrid hit's explain
    has its MaxSim, the feature's z-score and the formula naming it; the MaxSim is the
    one of the message's own text over the question's content pieces (recomputed here
    from its token vectors)."""
    from memstrata.embed import model_files

    if not model_files.runtime_installed() or model_files.find() is None:
        pytest.skip("numpy, tokenizers or the all-MiniLM-L6-v2 files are not installed")
    turns = [
        "I went to an LGBTQ support group yesterday and it was so powerful.",
        "Wow, that sounds great. What did you paint last week?",
        "I'm researching adoption agencies these days, I want to give a kid a home.",
        "My dog chewed the sofa again, so we went to the park instead.",
    ]
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text('[search]\nmaxsim_pieces = "content"\n')
    with Store(home, agent="a") as store:
        store.agent().sessions.append_many(
            "s1", [{"role": "user", "speaker": "Caroline", "content": t} for t in turns]
        )
        hits = store.search(
            SearchQuery(text="What did Caroline research?", layers=("session",), mode="hybrid")
        )
        top = hits[0]
        assert "adoption agencies" in top.text
        ex = top.explain
        assert isinstance(ex["maxsim"], float) and "z_maxsim" in ex
        assert "z(maxsim)" in ex["formula"]
        assert all(isinstance(h.explain["maxsim"], float) for h in hits)
        assert f"word-by-word meaning {ex['maxsim']:.2f}" in " ".join(explain_in_words(ex))
        emb = store.embedder()
        _vec, (q,) = emb.embed_tokens(["What did Caroline research?"])  # type: ignore[attr-defined]
        _vec, (t,) = emb.embed_tokens([f"Caroline\n{turns[2]}"])  # type: ignore[attr-defined]
        keep, read = content_pieces(emb, "What did Caroline research?", len(q))
        assert read == ["caroline", "research"] and ex["maxsim_pieces"] == read
        want = maxsim(
            np,
            token_vectors.project(np, q[keep]),
            {"x": [token_vectors.unpack(np, token_vectors.pack(np, t))]},
        )["x"]
        assert ex["maxsim"] == pytest.approx(want, abs=1e-5)


def test_token_vectors_follow_the_text_and_old_ones_are_never_used(home: Path) -> None:
    emb = FakeEmbedder(64, tokens=True)
    with _store(home, emb) as store:
        facts = store.agent().facts
        facts.set("pet", "a tabby cat called Miso")
        vi = store.vectors(emb)
        vi.build()
        ((uid, _unit, before),) = _rows(home)
        q = SearchQuery(text="tabby cat Miso", layers=("fact",))  # default: hybrid, no catch-up
        assert store.search(q)[0].explain["maxsim"] == pytest.approx(1.0, abs=0.02)
        facts.set("pet", "a grey parrot called Kiwi, not a tabby cat")  # not embedded yet
        hit = store.search(q)[0]
        assert hit.uid == uid and hit.explain["maxsim"] is None  # old tokens left out
        assert hit.explain["fusion"] == "zsum" and hit.explain["vectors_pending"] == 1
        vi.build()
        ((_uid, _unit, after),) = _rows(home)
        _v, (toks,) = emb.embed_tokens(["pet\na grey parrot called Kiwi, not a tabby cat"])
        assert after == token_vectors.pack(np, toks) != before
        hit = store.search(SearchQuery(text="grey parrot Kiwi", mode="hybrid", layers=("fact",)))[0]
        assert hit.explain["maxsim"] == pytest.approx(1.0, abs=0.02)


def test_a_stopped_build_resumes_with_token_vectors_and_no_duplicates(home: Path) -> None:
    emb = FakeEmbedder(16, tokens=True)
    with _store(home, emb) as store:
        store.agent().sessions.append_many(
            "s1",
            [{"role": "user", "content": f"message {i} about topic {i % 37}"} for i in range(600)],
        )
        vi = store.vectors(emb)
        steps = iter(range(10))
        vi.build(stop=lambda: next(steps) >= 1)  # one committed step, then stopped
        first = _rows(home)
        assert len(first) == 256 and all(t for _u, _n, t in first)
        assert vi.build() == 600 - 256  # the rest only
        rows = _rows(home)
        assert len(rows) == len({(u, n) for u, n, _t in rows}) == 600
        assert all(t and len(t) % token_vectors.DIMS == 0 for _u, _n, t in rows)


def test_vectors_stored_without_token_vectors_get_them_on_reindex(home: Path) -> None:
    """Vectors embedded before token vectors were kept (NULL) are searched without
    MaxSim, and `reindex --vectors` (`sync_all`) adds them, embedding those units only."""
    plain = FakeEmbedder(32)  # the same model id, no token vectors
    with _store(home, plain) as store:
        store.agent().log.append("THOUGHT", "the kettle whistles at dawn")
        store.agent().log.append("THOUGHT", "the cat sleeps on the warm laptop")
        store.vectors(plain).build()
        assert [t for _u, _n, t in _rows(home)] == [None, None]
    emb = FakeEmbedder(32, tokens=True)
    with _store(home, emb) as store:
        hit = store.search(SearchQuery(text="kettle dawn", mode="hybrid", layers=("log",)))[0]
        assert hit.explain["maxsim"] is None and hit.explain["dense"] is not None
        assert store.vectors(emb).sync_all() == 2
        assert all(t for _u, _n, t in _rows(home))
        hit = store.search(SearchQuery(text="kettle dawn", mode="hybrid", layers=("log",)))[0]
        assert hit.explain["maxsim"] == pytest.approx(1.0, abs=0.02)


def test_a_long_record_keeps_token_vectors_for_its_first_units_only(home: Path) -> None:
    """The size bound: DIMS bytes a word piece, for the first `UNITS` units; the
    other units' blobs are empty (none by design, not "to compute")."""
    emb = FakeEmbedder(16, tokens=True)
    paragraphs = [f"paragraph {i} " + "word " * 100 for i in range(8)]
    with _store(home, emb) as store:
        store.agent().log.append("THOUGHT", "\n\n".join(paragraphs))
        store.vectors(emb).build()
        rows = _rows(home)
    assert len(rows) == 8
    for _uid, unit, blob in rows:
        if unit < token_vectors.UNITS:
            assert (
                blob and len(blob) == token_vectors.DIMS * 103
            )  # title, 'paragraph', i, 100 x 'word'
        else:
            assert blob == b""


def test_unpack_all_gives_each_blobs_unpack_exactly() -> None:
    """A search unpacks its candidates' token vectors in one conversion (`unpack_all`):
    every array is the per-blob `unpack`'s, bit for bit, empty and malformed blobs too."""
    rng = np.random.default_rng(5)
    blobs = [
        rng.integers(-127, 128, size=(n, token_vectors.DIMS), dtype=np.int8).tobytes()
        for n in (1, 25, 3, 256, 7)
    ]
    blobs[2:2] = [b"", b"\x01" * 5]  # none by design; not a whole row
    got = token_vectors.unpack_all(np, blobs)
    assert len(got) == len(blobs)
    for b, a in zip(blobs, got, strict=True):
        one = token_vectors.unpack(np, b)
        assert a.dtype == one.dtype and a.shape == one.shape
        assert a.tobytes() == one.tobytes()
    assert token_vectors.unpack_all(np, []) == []
    assert [a.shape for a in token_vectors.unpack_all(np, [b""])] == [(0, token_vectors.DIMS)]
