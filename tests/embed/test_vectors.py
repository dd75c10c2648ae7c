"""VectorIndex on a real SQLite index: embed only what changed, search exactly."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from memstrata.embed.base import FakeEmbedder
from memstrata.errors import MalformedInput, ProviderError
from memstrata.index.db import Database
from memstrata.index.vectors import VectorIndex, content_hash

np = pytest.importorskip("numpy")


class Counting(FakeEmbedder):
    """The fake embedder, remembering every text it was asked to embed."""

    def __init__(self, dim: int = 64) -> None:
        super().__init__(dim)
        self.seen: list[str] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.seen.extend(texts)
        return super().embed(texts)


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    d = Database(tmp_path / "index.db")
    yield d
    d.close()


DOCS = [
    ("d1", "sqlite index rebuild after crash"),
    ("d2", "purple elephants dance slowly"),
    ("d3", "rebuild the sqlite index tonight"),
    ("d4", "weekly grocery list milk eggs bread"),
    ("d5", "the elephants at the zoo are purple"),
]


def brute_force(
    emb: FakeEmbedder, docs: list[tuple[str, str]], query: str
) -> list[tuple[str, float]]:
    m = np.asarray(emb.embed([t for _, t in docs]), dtype=np.float64)
    q = np.asarray(emb.embed([query])[0], dtype=np.float64)
    scores = m @ q
    return sorted(
        ((u, float(s)) for (u, _), s in zip(docs, scores, strict=True)), key=lambda p: (-p[1], p[0])
    )


def test_sync_embeds_only_new_or_changed_text(db: Database) -> None:
    emb = Counting()
    vi = VectorIndex(db, emb)
    assert vi.sync(DOCS) == 5
    assert sorted(emb.seen) == sorted(t for _, t in DOCS)
    emb.seen.clear()
    assert vi.sync(DOCS) == 0
    assert emb.seen == []
    changed = [*DOCS[:2], ("d3", "rebuild the sqlite index tomorrow"), *DOCS[3:], ("d6", "new doc")]
    assert vi.sync(changed) == 2
    assert sorted(emb.seen) == ["new doc", "rebuild the sqlite index tomorrow"]
    # A fresh object over the same database knows the hashes too.
    emb2 = Counting()
    assert VectorIndex(db, emb2).sync(changed) == 0
    assert emb2.seen == []


def test_rows_record_model_dim_hash_and_float32_vector(db: Database) -> None:
    emb = FakeEmbedder(32)
    VectorIndex(db, emb).sync(DOCS[:2])
    with db.read() as conn:
        rows = conn.execute(
            "SELECT uid, model, dim, content_hash, vector FROM vectors ORDER BY uid"
        ).fetchall()
    assert [(r[0], r[1], r[2]) for r in rows] == [
        ("d1", "fake-hash-32", 32),
        ("d2", "fake-hash-32", 32),
    ]
    assert rows[0][3] == hashlib.sha256(DOCS[0][1].encode()).hexdigest() == content_hash(DOCS[0][1])
    stored = np.frombuffer(rows[0][4], dtype="<f4")
    assert stored.shape == (32,)
    assert np.allclose(stored, emb.embed([DOCS[0][1]])[0], atol=1e-6)


def test_models_do_not_mix(db: Database) -> None:
    small, big = Counting(16), Counting(64)
    VectorIndex(db, small).sync(DOCS)
    vi_big = VectorIndex(db, big)
    assert vi_big.sync(DOCS[:2]) == 2  # another model: nothing reusable
    hits = vi_big.search(big.embed(["anything"])[0], k=10)
    assert {u for u, _ in hits} == {"d1", "d2"}
    with db.read() as conn:
        assert conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == 7


def test_search_matches_brute_force(db: Database) -> None:
    emb = FakeEmbedder(64)
    vi = VectorIndex(db, emb)
    vi.sync(DOCS)
    for query in ("sqlite index", "purple elephants", "milk and bread", "nothing in common"):
        got = vi.search(emb.embed([query])[0], k=3)
        want = brute_force(emb, DOCS, query)
        exact = dict(want)
        # Same best scores, and each returned score is that doc's true cosine (ties may swap).
        assert np.allclose([s for _, s in got], [s for _, s in want[:3]], atol=1e-5)
        assert all(abs(exact[u] - s) < 1e-5 for u, s in got)
        assert got[0][0] == want[0][0]
    top = vi.search(emb.embed([DOCS[3][1]])[0], k=1)
    assert top[0][0] == "d4"
    assert top[0][1] == pytest.approx(1.0, abs=1e-5)


def test_search_edges(db: Database) -> None:
    emb = FakeEmbedder(64)
    vi = VectorIndex(db, emb)
    q = emb.embed(["sqlite"])[0]
    assert vi.search(q, k=5) == []  # empty index
    vi.sync(DOCS)
    assert len(vi.search(q, k=50)) == 5
    assert vi.search(q, k=0) == []
    assert vi.search([0.0] * 64, k=3) == []
    scaled = [x * 7.5 for x in q]  # the query is normalised, so scale does not matter
    assert vi.search(scaled, k=5) == vi.search(q, k=5)
    with pytest.raises(MalformedInput):
        vi.search(q[:10], k=3)


def test_candidates_restrict_the_search(db: Database) -> None:
    emb = FakeEmbedder(64)
    vi = VectorIndex(db, emb)
    vi.sync(DOCS)
    q = emb.embed(["sqlite index rebuild"])[0]
    got = vi.search(q, k=5, candidates={"d2", "d3", "d4", "unknown"})
    assert got[0][0] == "d3"
    assert {u for u, _ in got} == {"d2", "d3", "d4"}
    assert vi.search(q, k=5, candidates=[]) == []
    assert vi.search(q, k=5, candidates=["unknown"]) == []


def test_cache_sees_writes_from_another_connection(db: Database, tmp_path: Path) -> None:
    emb = FakeEmbedder(64)
    reader = VectorIndex(db, emb)
    reader.sync(DOCS[:2])
    q = emb.embed(["grocery list milk"])[0]
    assert "d4" not in {u for u, _ in reader.search(q, k=10)}
    other_db = Database(tmp_path / "index.db")  # as another process would
    try:
        writer = VectorIndex(other_db, FakeEmbedder(64))
        writer.sync(DOCS)
        assert reader.search(q, k=1)[0][0] == "d4"
        writer.remove(["d4"])
        assert "d4" not in {u for u, _ in reader.search(q, k=10)}
        writer.sync([("d1", "milk eggs bread grocery list")])
        assert reader.search(q, k=1)[0][0] == "d1"
    finally:
        other_db.close()


def test_own_writes_patch_the_cache_consistently(db: Database) -> None:
    """Random upserts and removes through one object, checked against brute force."""
    emb = FakeEmbedder(32)
    vi = VectorIndex(db, emb)
    rng = random.Random(7)
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota"]
    live: dict[str, str] = {}
    vi.search(emb.embed(["x"])[0], k=1)  # load the (empty) cache first
    for step in range(300):
        uid = f"u{rng.randrange(60)}"
        if rng.random() < 0.25:
            assert vi.remove([uid]) == (1 if uid in live else 0)
            live.pop(uid, None)
        else:
            live[uid] = " ".join(rng.choices(words, k=4))
            vi.sync([(uid, live[uid])])
        if step % 25 == 0 and live:
            query = " ".join(rng.choices(words, k=2))
            got = vi.search(emb.embed([query])[0], k=len(live))
            want = brute_force(emb, sorted(live.items()), query)
            assert {u for u, _ in got} == set(live)
            assert np.allclose(sorted(s for _, s in got), sorted(s for _, s in want), atol=1e-5)
    fresh = VectorIndex(db, emb)  # reloaded from SQLite: same answers as the patched cache
    q = emb.embed(["alpha beta"])[0]
    assert [u for u, _ in fresh.search(q, k=100)] == [u for u, _ in vi.search(q, k=100)]


def test_sync_batches_and_validates_the_embedder(db: Database) -> None:
    emb = Counting(16)
    vi = VectorIndex(db, emb, batch_size=3)
    docs = [(f"u{i}", f"text number {i}") for i in range(10)]
    assert vi.sync(iter(docs)) == 10  # any iterable, consumed once
    assert emb.calls == 4

    class Broken(FakeEmbedder):
        def embed(self, texts: Sequence[str]) -> list[list[float]]:
            return super().embed(texts)[:-1]

    with pytest.raises(ProviderError):
        VectorIndex(db, Broken(16)).sync([("a", "one"), ("b", "two")])
    with pytest.raises(MalformedInput):
        vi.sync([("u1", None)])  # type: ignore[list-item]


def test_duplicate_uids_in_one_sync_keep_the_last_text(db: Database) -> None:
    emb = Counting(16)
    vi = VectorIndex(db, emb)
    assert vi.sync([("a", "first"), ("a", "second")]) == 1
    assert emb.seen == ["second"]


def _insert_doc(db: Database, uid: str, title: str, body: str, superseded: int = 0) -> None:
    with db.write() as conn:
        conn.execute(
            "INSERT INTO docs(uid, layer, ts, title, body, source, superseded) "
            "VALUES (?, 'log', 0, ?, ?, 'x.md', ?)",
            (uid, title, body, superseded),
        )


def test_sync_all_embeds_live_docs_prunes_gone_ones_and_sets_the_watermark(db: Database) -> None:
    emb = Counting(32)
    vi = VectorIndex(db, emb)
    _insert_doc(db, "a", "Alpha", "first body")
    _insert_doc(db, "b", "Beta", "second body")
    _insert_doc(db, "c", "Gamma", "old body", superseded=1)
    vi.sync([("ghost", "a doc that is no longer indexed")])
    assert vi.sync_all() == 2
    assert sorted(emb.seen[1:]) == ["Alpha\nfirst body", "Beta\nsecond body"]
    with db.read() as conn:
        uids = [r[0] for r in conn.execute("SELECT uid FROM vectors ORDER BY uid")]
        mark = conn.execute(
            "SELECT value FROM meta WHERE key = 'vectors:fake-hash-32:synced_change'"
        ).fetchone()
        top = conn.execute("SELECT max(seq) FROM doc_changes").fetchone()[0]
    assert uids == ["a", "b"]
    assert mark == (str(top),)
    assert vi.sync_all() == 0
