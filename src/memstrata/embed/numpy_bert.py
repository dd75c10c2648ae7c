"""all-MiniLM-L6-v2 (any BERT sentence-transformer with mean pooling) in NumPy, no torch.

The pipeline is sentence-transformers' for this model, step for step:

    tokens  = tokenizer.json through HF `tokenizers` ([CLS] ... [SEP], truncated to
              max_seq_length = 256 tokens, as sentence_bert_config.json says)
    x       = LayerNorm(word[id] + position[i] + token_type[0])
    6 x     x = LayerNorm(x + Attention(x) W_o)          12 heads, softmax(QK^T / sqrt(32))
            x = LayerNorm(x + GELU(x W_1) W_2)           GELU with erf, as "hidden_act": "gelu"
    vector  = mean of x over the text's tokens, / ||.||_2

Texts are never padded. They are sorted by token count and packed into batches of
about `TOKENS_PER_BATCH` tokens: every row-wise step (embeddings, the dense layers,
LayerNorm, GELU) runs once over all tokens of the batch, and attention runs over
each group of equally long texts as one (texts, heads, L, L) product. With no
padding, there is no mask and no work on pad tokens, and a text's vector does not
depend on which texts share its batch. Everything is float32; NumPy's matrix
products are deterministic for a given machine and thread count.

The weights stay memory-mapped (`embed.safetensors`) and are used as stored: a
dense layer is `x @ W.T` with `W.T` a transposed view, which BLAS reads without a
copy. Copying them transposed made a query ~25% faster but a process start 40 ms
(and 32 MB) dearer; keeping activations features x tokens (`W @ x`) avoided the copy
too, but then a text's vector changed in its last bits with the batch around it.
As it is, a text gets the same bits alone or in any batch (tests/embed). Loading
takes tens of milliseconds, most of it the tokenizer.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from memstrata.errors import InvalidInput, ProviderError

TOKENS_PER_BATCH = 2048
MIN_SPLIT = 256  # fewer tokens than this are one batch, whatever the thread count
DEFAULT_MAX_SEQ_LENGTH = 256
INSTALL_HINT = "pip install 'memstrata[serve]' (or: pip install numpy tokenizers)"

# erf for float32 as a rational function of x on [-4, 4] (outside, erf is +-1 in float32):
# the coefficients of Eigen's `generic_fast_erf_float`; max error 5e-7 (tests/embed).
_ERF_ALPHA = (
    -2.72614225801306e-10,
    2.77068142495902e-08,
    -2.10102402082508e-06,
    -5.69250639462346e-05,
    -7.34990630326855e-04,
    -2.95459980854025e-03,
    -1.60960333262415e-02,
)
_ERF_BETA = (
    -1.45660718464996e-05,
    -2.13374055278905e-04,
    -1.68282697438203e-03,
    -7.37332916720468e-03,
    -1.42647390514189e-02,
)


def _imports() -> tuple[Any, Any]:
    try:
        import numpy
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise ProviderError(
            f"the built-in MiniLM embedder needs numpy and tokenizers: {INSTALL_HINT} ({exc})"
        ) from exc
    return numpy, Tokenizer


def erf(np: Any, x: Any) -> Any:
    """erf(x) elementwise, float32 in and out (NumPy has no erf, SciPy is not a dependency)."""
    x = np.clip(x, -4.0, 4.0)
    x2 = x * x
    p = np.full_like(x, _ERF_ALPHA[0])
    for a in _ERF_ALPHA[1:]:
        p *= x2
        p += np.float32(a)
    q = np.full_like(x, _ERF_BETA[0])
    for b in _ERF_BETA[1:]:
        q *= x2
        q += np.float32(b)
    p *= x
    p /= q
    return p


def gelu(np: Any, x: Any) -> Any:
    """GELU(x) = x/2 (1 + erf(x / sqrt 2)), a new array (`x` is left as it is)."""
    e = erf(np, x * np.float32(1.0 / math.sqrt(2.0)))
    e += np.float32(1.0)
    e *= x
    e *= np.float32(0.5)
    return e


def layer_norm(np: Any, x: Any, weight: Any, bias: Any, eps: float) -> Any:
    """LayerNorm of each row of `x` (tokens x features), a new array."""
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = np.einsum("ij,ij->i", centred, centred)[:, None] / np.float32(x.shape[-1])
    centred *= 1.0 / np.sqrt(var + np.float32(eps))
    centred *= weight
    centred += bias
    return centred


class _Layer:
    """One transformer block's weights as `x @ W` needs them: transposed views of the
    memory-mapped matrices (BLAS reads them as stored); only Q/K/V are fused (a copy)."""

    def __init__(self, np: Any, t: dict[str, Any], i: int) -> None:
        p = f"encoder.layer.{i}."
        a = p + "attention.self."
        qkv = ("query", "key", "value")
        self.qkv_w = np.concatenate([t[a + n + ".weight"] for n in qkv]).T
        self.qkv_b = np.concatenate([t[a + n + ".bias"] for n in qkv])
        self.out_w = t[p + "attention.output.dense.weight"].T
        self.out_b = t[p + "attention.output.dense.bias"]
        self.ln1 = (
            t[p + "attention.output.LayerNorm.weight"],
            t[p + "attention.output.LayerNorm.bias"],
        )
        self.ff_w = t[p + "intermediate.dense.weight"].T
        self.ff_b = t[p + "intermediate.dense.bias"]
        self.ff_out_w = t[p + "output.dense.weight"].T
        self.ff_out_b = t[p + "output.dense.bias"]
        self.ln2 = (t[p + "output.LayerNorm.weight"], t[p + "output.LayerNorm.bias"])


class BertEncoder:
    """A BERT encoder with mean pooling and L2 normalisation, over NumPy arrays.

    Args:
        model_dir: A folder with `config.json`, `tokenizer.json` and `model.safetensors`
            (and optionally sentence-transformers' `sentence_bert_config.json` and
            `1_Pooling/config.json`).

    Raises:
        ProviderError: numpy/tokenizers missing, a file missing or unreadable, or a
            model this runtime does not compute (not BERT, not mean pooling).
    """

    def __init__(self, model_dir: Path) -> None:
        np, tokenizer_cls = _imports()
        from memstrata.embed import safetensors

        self.np = np
        cfg = _json(model_dir / "config.json")
        if cfg.get("model_type", "bert") != "bert" or cfg.get("hidden_act", "gelu") != "gelu":
            raise ProviderError(
                f"{model_dir}: the NumPy runtime computes BERT models with GELU, "
                f"not {cfg.get('model_type')!r}/{cfg.get('hidden_act')!r}"
            )
        if cfg.get("position_embedding_type", "absolute") != "absolute":
            raise ProviderError(f"{model_dir}: only absolute position embeddings are supported")
        pooling = _json(model_dir / "1_Pooling" / "config.json", optional=True)
        other = [k for k, v in pooling.items() if k.startswith("pooling_mode_") and v]
        if other and other != ["pooling_mode_mean_tokens"]:
            raise ProviderError(f"{model_dir}: only mean pooling is supported, not {other}")
        st = _json(model_dir / "sentence_bert_config.json", optional=True)
        if st.get("do_lower_case"):
            raise ProviderError(f"{model_dir}: do_lower_case models are not supported")
        try:
            self.heads = int(cfg["num_attention_heads"])
            self.hidden = int(cfg["hidden_size"])
            n_layers = int(cfg["num_hidden_layers"])
            self.eps = float(cfg.get("layer_norm_eps", 1e-12))
            max_pos = int(cfg.get("max_position_embeddings", 512))
            self.max_len = min(int(st.get("max_seq_length") or DEFAULT_MAX_SEQ_LENGTH), max_pos)
        except (KeyError, TypeError, ValueError) as exc:
            raise ProviderError(f"{model_dir}/config.json: missing or bad value ({exc})") from exc
        if self.hidden % self.heads:
            raise ProviderError(f"{model_dir}: hidden_size is not a multiple of the heads")
        tensors = {
            k.removeprefix("bert."): v
            for k, v in safetensors.load(model_dir / "model.safetensors").items()
        }
        try:
            self.word = tensors["embeddings.word_embeddings.weight"]
            self.position = tensors["embeddings.position_embeddings.weight"]
            self.type0 = tensors["embeddings.token_type_embeddings.weight"][0]
            self.ln0 = (
                tensors["embeddings.LayerNorm.weight"],
                tensors["embeddings.LayerNorm.bias"],
            )
            self.layers = [_Layer(np, tensors, i) for i in range(n_layers)]
        except KeyError as exc:
            raise ProviderError(f"{model_dir}/model.safetensors: no tensor {exc}") from exc
        not32 = [k for k, v in tensors.items() if v.dtype != np.float32 and "position_ids" not in k]
        if not32:
            raise ProviderError(f"{model_dir}/model.safetensors: {not32[0]} is not float32")
        self.dim = int(self.word.shape[1])
        try:
            self.tokenizer = tokenizer_cls.from_file(str(model_dir / "tokenizer.json"))
        except Exception as exc:  # tokenizers raises its own Exception types for a bad file
            raise ProviderError(f"{model_dir}/tokenizer.json: cannot be loaded ({exc})") from exc
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=self.max_len)

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """The token ids the model sees for each text ([CLS] ... [SEP], truncated)."""
        return [e.ids for e in self.tokenizer.encode_batch(list(texts))]

    def encode(
        self,
        texts: Sequence[str],
        map_fn: Callable[[Callable[[Any], Any], list[Any]], list[Any]] | None = None,
        parts: int = 1,
        *,
        tokens: list[Any] | None = None,
    ) -> Any:
        """Unit vectors of `texts`, a float32 array of shape (len(texts), dim).

        `map_fn(f, batches)` runs the batches (default: one after another); the
        embedder passes a thread pool's map, and `parts`, its thread count: texts of
        more than `MIN_SPLIT` tokens in all are cut into at least that many batches.
        `tokens`, a list, receives each text's token vectors from the same forward
        pass: the last layer's output at each word piece ([CLS] and [SEP] left out),
        L2-normalised, a float32 array of shape (pieces, dim) per text, in order.
        """
        np = self.np
        if isinstance(texts, str):
            raise InvalidInput("encode() takes a sequence of texts, not one string")
        ids = self.token_ids(texts)
        lengths = [len(s) for s in ids]
        total = sum(lengths)
        per_batch = TOKENS_PER_BATCH
        if parts > 1 and total > MIN_SPLIT:
            per_batch = min(per_batch, max(MIN_SPLIT // 2, -(-total // parts)))
        batches = plan_batches(lengths, per_batch)
        run = map_fn or (lambda f, items: [f(x) for x in items])
        keep = tokens is not None
        results = run(lambda batch: self._forward([ids[i] for i in batch], keep), batches)
        out = np.zeros((len(ids), self.dim), dtype=np.float32)
        per_text: list[Any] = [None] * len(ids)
        for batch, (vecs, toks) in zip(batches, results, strict=True):
            out[batch] = vecs
            for i, t in zip(batch, toks, strict=True):
                per_text[i] = t
        if tokens is not None:
            tokens.extend(per_text)
        return out

    def _forward(self, seqs: list[list[int]], keep: bool = False) -> tuple[Any, list[Any]]:
        """Pooled unit vectors of sequences sorted by length (no padding anywhere),
        and (`keep`) each sequence's unit token vectors without [CLS] and [SEP]."""
        np = self.np
        lengths = [len(s) for s in seqs]
        flat = np.fromiter((t for s in seqs for t in s), dtype=np.int64, count=sum(lengths))
        positions = np.concatenate([np.arange(n) for n in lengths])
        x = self.word[flat] + self.position[positions]
        x += self.type0
        x = layer_norm(np, x, *self.ln0, self.eps)
        groups = _equal_runs(lengths)
        for layer in self.layers:
            x = self._block(x, layer, groups)
        bounds = np.cumsum([0, *lengths[:-1]])
        pooled = np.add.reduceat(x, bounds, axis=0) / np.asarray(lengths, np.float32)[:, None]
        norms = np.sqrt(np.einsum("ij,ij->i", pooled, pooled))
        pooled = pooled / np.maximum(norms, np.float32(1e-12))[:, None]
        if not keep:
            return pooled, [None] * len(seqs)
        tn = np.sqrt(np.einsum("ij,ij->i", x, x))
        x = x / np.maximum(tn, np.float32(1e-12))[:, None]
        return pooled, [x[b + 1 : b + n - 1] for b, n in zip(bounds, lengths, strict=True)]

    def _block(self, x: Any, layer: _Layer, groups: list[tuple[int, int, int]]) -> Any:
        np = self.np
        h, d = self.heads, self.hidden // self.heads
        qkv = x @ layer.qkv_w
        qkv += layer.qkv_b
        ctx = np.empty_like(x)
        scale = np.float32(1.0 / math.sqrt(d))
        for row, count, length in groups:
            part = qkv[row : row + count * length].reshape(count, length, 3, h, d)
            q = part[:, :, 0].transpose(0, 2, 1, 3)  # (texts, heads, L, d)
            k = part[:, :, 1].transpose(0, 2, 3, 1)  # (texts, heads, d, L)
            v = part[:, :, 2].transpose(0, 2, 1, 3)
            scores = (q @ k) * scale
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            att = (scores @ v).transpose(0, 2, 1, 3).reshape(count * length, h * d)
            ctx[row : row + count * length] = att
        a = ctx @ layer.out_w
        a += layer.out_b
        a += x
        x = layer_norm(np, a, *layer.ln1, self.eps)
        f = x @ layer.ff_w
        f += layer.ff_b
        f = gelu(np, f) @ layer.ff_out_w
        f += layer.ff_out_b
        f += x
        return layer_norm(np, f, *layer.ln2, self.eps)


def plan_batches(lengths: Sequence[int], tokens_per_batch: int) -> list[list[int]]:
    """Indexes of the texts, sorted by length (then index), cut into batches of at
    most `tokens_per_batch` tokens (a longer text is a batch of its own).

    Example:
        >>> plan_batches([5, 2, 9, 2], 8)
        [[1, 3], [0], [2]]
    """
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    batches: list[list[int]] = []
    tokens = 0
    for i in order:
        if batches and tokens + lengths[i] <= tokens_per_batch:
            batches[-1].append(i)
            tokens += lengths[i]
        else:
            batches.append([i])
            tokens = lengths[i]
    return batches


def _equal_runs(lengths: list[int]) -> list[tuple[int, int, int]]:
    """`(first row, how many texts, length)` of each run of equally long texts."""
    runs: list[tuple[int, int, int]] = []
    row = 0
    for n in lengths:
        if runs and runs[-1][2] == n:
            first, count, _ = runs[-1]
            runs[-1] = (first, count + 1, n)
        else:
            runs.append((row, 1, n))
        row += n
    return runs


def _json(path: Path, *, optional: bool = False) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        if optional:
            return {}
        raise ProviderError(f"{path} is missing") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ProviderError(f"{path}: cannot be read as JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise ProviderError(f"{path}: expected a JSON object")
    return data


__all__ = ["BertEncoder", "erf", "gelu", "plan_batches"]
