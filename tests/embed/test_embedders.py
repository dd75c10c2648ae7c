"""Embedder contract: the fake is deterministic and meaningful, the factory parses specs."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest

from memstrata.embed import make_embedder
from memstrata.embed.base import Embedder, FakeEmbedder, l2_normalise
from memstrata.embed.openai_compat import OpenAICompatEmbedder
from memstrata.errors import InvalidInput, MalformedInput


def cos(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_fake_vectors_are_unit_length_and_of_the_declared_dim() -> None:
    e = FakeEmbedder(dim=48)
    vecs = e.embed(["alpha beta", "", "   ", "a a a a", "émigré café ünïcode"])
    assert len(vecs) == 5
    for v in vecs:
        assert len(v) == 48
        assert math.isclose(math.sqrt(sum(x * x for x in v)), 1.0, rel_tol=1e-9)


def test_fake_is_deterministic_across_instances_and_processes() -> None:
    a = FakeEmbedder(64).embed(["the quick brown fox"])[0]
    b = FakeEmbedder(64).embed(["the quick brown fox"])[0]
    assert a == b
    code = (
        "from memstrata.embed.base import FakeEmbedder;"
        "print(repr(FakeEmbedder(64).embed(['the quick brown fox'])[0]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "12345"},
    )
    assert eval(out.stdout) == a


def test_fake_shared_words_are_closer_than_unrelated_text() -> None:
    e = FakeEmbedder(256)
    q, near, far = e.embed(
        [
            "sqlite index rebuild",
            "rebuild the sqlite index tonight",
            "purple elephants dance slowly",
        ]
    )
    assert cos(q, near) > 0.6
    assert abs(cos(q, far)) < 0.3
    assert cos(q, near) > cos(q, far) + 0.4


def test_fake_is_case_insensitive_and_counts_calls() -> None:
    e = FakeEmbedder(32)
    a, b = e.embed(["Hello World", "hello world"])
    assert a == b
    e.embed(["x"])
    assert (e.calls, e.texts_embedded) == (2, 3)


def test_fake_satisfies_the_protocol_and_rejects_bad_input() -> None:
    assert isinstance(FakeEmbedder(), Embedder)
    with pytest.raises(InvalidInput):
        FakeEmbedder().embed("a single string")  # type: ignore[arg-type]
    for bad in (0, 1, -5, 10**6, True):
        with pytest.raises(InvalidInput):
            FakeEmbedder(bad)


def test_l2_normalise() -> None:
    assert l2_normalise([3.0, 4.0]) == [0.6, 0.8]
    assert l2_normalise([0.0, 0.0]) == [0.0, 0.0]


@pytest.mark.parametrize(("spec", "dim"), [("fake", 64), ("fake:128", 128), (" fake:16 ", 16)])
def test_factory_builds_fakes(spec: str, dim: int) -> None:
    e = make_embedder(spec)
    assert isinstance(e, FakeEmbedder)
    assert e.dim == dim
    assert e.model_id == f"fake-hash-{dim}"


def test_factory_builds_openai_compatible_clients(monkeypatch: pytest.MonkeyPatch) -> None:
    e = make_embedder("openai:nomic-embed-text:latest@http://127.0.0.1:11434/v1/")
    assert isinstance(e, OpenAICompatEmbedder)
    assert e.url == "http://127.0.0.1:11434/v1/embeddings"
    assert e.model == "nomic-embed-text:latest"
    assert e.model_id == "openai:nomic-embed-text:latest"
    monkeypatch.setenv("MEMSTRATA_EMBED_BASE_URL", "http://10.0.0.1:8000/v1")
    e2 = make_embedder("openai:text-embedding-3-small")
    assert isinstance(e2, OpenAICompatEmbedder)
    assert e2.url == "http://10.0.0.1:8000/v1/embeddings"


@pytest.mark.parametrize(
    "spec",
    [
        "",
        "fake:abc",
        "fake:-3",
        "bogus",
        "openai:",
        "openai:@http://x",
        "openai:m@ftp://host",
        "openai:m@not a url",
    ],
)
def test_factory_rejects_bad_specs(spec: str) -> None:
    with pytest.raises(MalformedInput):
        make_embedder(spec)


def test_importing_the_packages_loads_no_optional_dependency() -> None:
    code = (
        "import sys, memstrata.embed, memstrata.embed.base, memstrata.llm, memstrata.llm.base, "
        "memstrata.index.vectors, memstrata.embed.openai_compat, memstrata.llm.extractive;"
        "from memstrata.embed import make_embedder; make_embedder('fake:8').embed(['x']);"
        "print(sorted(m for m in ('numpy', 'torch', 'sentence_transformers', 'httpx') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
