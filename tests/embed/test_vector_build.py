"""Vectors stay correct and cheap (issue 22 item 4): built after the write, resumable
after a kill without duplicates, a changed record's old vector never used."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from memstrata import SearchQuery, Store
from memstrata.embed.base import FakeEmbedder
from memstrata.index.generations import live_database

# These stores name their embedder in config.toml: no MEMSTRATA_EMBEDDER over it.
pytestmark = pytest.mark.usefixtures("semantic_default")


pytest.importorskip("numpy")


class Embeddings:
    """An OpenAI-compatible /embeddings endpoint on 127.0.0.1 (fake vectors) that can be
    made to hold a request until released: the embedder a killed build was waiting on."""

    def __init__(self, hold_from: int | None = None, hold_to: int | None = None) -> None:
        self.fake = FakeEmbedder(16)
        self.texts: list[str] = []
        self.requests = 0
        self.hold = range(hold_from or 0, (hold_to or 10**9) + 1) if hold_from else range(0)
        self.holding = threading.Event()  # a request is being held
        self.release = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests += 1
                if outer.requests in outer.hold:
                    outer.holding.set()
                    outer.release.wait(120)
                outer.texts.extend(t for t in body["input"] if t != "dimension probe")
                data = [
                    {"index": i, "embedding": v}
                    for i, v in enumerate(outer.fake.embed(body["input"]))
                ]
                out = json.dumps({"data": data}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(out)  # (the client of a held request was killed)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def spec(self) -> str:
        return f"openai:fake16@http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def endpoint() -> Iterator[Embeddings]:
    e = Embeddings()
    yield e
    e.close()


def _vectors(home: Path) -> tuple[int, int]:
    with sqlite3.connect(live_database(home / "index") or "") as conn:
        total, distinct = conn.execute(
            "SELECT count(*), count(DISTINCT uid || ':' || model || ':' || unit) FROM vectors"
        ).fetchone()
    return int(total), int(distinct)


def _reindex(home: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "memstrata",
            "--home",
            str(home),
            "--json",
            "reindex",
            "--vectors",
            "--quiet",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "MEMSTRATA_EMBED_DAEMON": "0"},
    )


def test_a_killed_build_resumes_where_it_stopped_without_duplicates(home: Path) -> None:
    messages = 600
    held = Embeddings(hold_from=6)  # a dimension probe, 4 batches of 64 (a step), then held
    try:
        home.mkdir(parents=True)
        (home / "config.toml").write_text(
            f'[search]\nembedder = "{held.spec}"\nprovider = "fts5"\n'
        )
        with Store(home, agent="a") as store:
            store.agent().sessions.append_many(
                "s1",
                [
                    {"role": "user", "content": f"message number {i} about topic {i % 37}"}
                    for i in range(messages)
                ],
            )
        proc = _reindex(home)
        try:
            assert held.holding.wait(120), proc.communicate(timeout=5)
            proc.send_signal(signal.SIGKILL)  # mid-build: a step committed, the next one not
            proc.wait(30)
        finally:
            if proc.poll() is None:
                proc.kill()
        committed, distinct = _vectors(home)
        assert committed == distinct == 256  # the first step (256 changes), once each
        embedded_before = len(held.texts)
    finally:
        held.close()

    again = Embeddings()
    try:
        (home / "config.toml").write_text(
            f'[search]\nembedder = "{again.spec}"\nprovider = "fts5"\n'
        )
        proc = _reindex(home)
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        assert json.loads(out)["embedded"] == messages - committed
        assert len(again.texts) == messages - committed  # none of the stored ones again
        assert embedded_before >= committed
        total, distinct = _vectors(home)
        assert total == distinct == messages
    finally:
        again.close()


def test_vectors_are_built_after_the_write_not_during_it(home: Path) -> None:
    slow = Embeddings(hold_from=1, hold_to=1)  # holds the first request (the build's)
    try:
        home.mkdir(parents=True)
        (home / "config.toml").write_text(f'[search]\nembedder = "{slow.spec}"\n')
        with Store(home, agent="a") as store:
            store.agent().log.append("THOUGHT", "the kettle whistles at dawn")  # returns: acked
            assert slow.holding.wait(60)  # the build runs, in the background
            hits = store.search(SearchQuery(text="kettle"))  # default mode: never waits
            assert hits and hits[0].explain.get("vectors_pending", 0) >= 1
            assert hits[0].explain["dense"] is None  # found by its words meanwhile
            slow.release.set()
            store.drain()
            hits = store.search(SearchQuery(text="kettle"))
            assert hits[0].explain["dense"] is not None and "vectors_pending" not in hits[0].explain
    finally:
        slow.close()


def test_a_changed_record_is_never_scored_by_its_old_vector(store: Store) -> None:
    emb = FakeEmbedder(64)
    store.use_embedder(emb)
    store.semantic.builds = "off"  # builds only when this test says so
    facts = store.agent().facts
    facts.set("pet", "a tabby cat called Miso")
    vi = store.vectors(emb)
    vi.build()
    tabby, parrot = emb.embed(["a tabby cat called Miso", "a grey parrot called Kiwi"])
    (uid, score), *_ = vi.search(tabby, k=1)
    assert score > 0.9
    facts.set("pet", "a grey parrot called Kiwi")  # same uid, new text, not embedded yet
    assert vi.search(tabby, k=5) == []  # the old vector is left out, not scored
    assert vi.pending_records() == 1
    hits = store.search(SearchQuery(text="grey parrot"))  # default mode: no catch-up
    assert hits[0].uid == uid and hits[0].explain["dense"] is None  # found by its words
    vi.build()
    assert vi.search(parrot, k=1)[0][0] == uid and vi.search(parrot, k=1)[0][1] > 0.9
    assert vi.search(tabby, k=1)[0][1] < score - 0.25  # scored by the new text only


class Recording(FakeEmbedder):
    def __init__(self) -> None:
        super().__init__(dim=16)
        self.texts: list[str] = []

    def embed(self, texts):  # type: ignore[no-untyped-def]
        self.texts.extend(texts)
        return super().embed(texts)


def test_a_context_section_is_embedded_whole_and_bullet_by_bullet(store: Store) -> None:
    """CONTEXT.md's sections get a unit per list item (`index.units`); a LOG entry
    with a list in it stays one unit (transcripts and logs are embedded whole)."""
    emb = Recording()
    store.use_embedder(emb)
    m = store.agent()
    m.context.write("# Project\n\n## Decisions\n- Database: PostgreSQL 16\n- Hashes: argon2id\n")
    m.log.append("THOUGHT", "two options:\n- one\n- two")
    store.vectors(emb).build(wait=True)
    assert any(t.endswith("\nDatabase: PostgreSQL 16") for t in emb.texts), emb.texts
    assert any(t.endswith("\nHashes: argon2id") for t in emb.texts)
    assert not any(t.endswith("\none") for t in emb.texts)
    hits = store.search(SearchQuery(text="which database?", mode="semantic", layers=("context",)))
    assert hits[0].explain["dense_from"].endswith(" of 3")  # the whole and two bullets
