"""Read a `.safetensors` file with NumPy alone, memory-mapped, without copying.

The format (huggingface/safetensors) is three parts:

    8 bytes    N, the header length, unsigned little-endian
    N bytes    a JSON object: {name: {"dtype", "shape", "data_offsets": [begin, end]}, ...}
               and an optional "__metadata__" of strings; padded with spaces
    the rest   the tensors' raw little-endian bytes; offsets are relative to here

Every tensor is returned as a read-only view into one `numpy.memmap` of the file,
so opening the 90 MB MiniLM costs a header parse and pages load only when touched.
A file that does not follow the format (a truncated download, an HTML error page
saved under the name) is a `ProviderError` naming the file, never a wrong tensor.
"""

from __future__ import annotations

import json
import math
import struct
import sys
from pathlib import Path
from typing import Any

from memstrata.errors import ProviderError

MAX_HEADER = 100 * 1024 * 1024  # the format's own limit on the header length
# safetensors dtype -> NumPy little-endian dtype (BF16 and FP8 have no NumPy dtype)
DTYPES = {
    "F64": "<f8",
    "F32": "<f4",
    "F16": "<f2",
    "I64": "<i8",
    "I32": "<i4",
    "I16": "<i2",
    "I8": "i1",
    "U8": "u1",
    "BOOL": "?",
}


def read_header(path: Path) -> tuple[int, dict[str, Any]]:
    """`(offset of the data region, header object)` of a safetensors file.

    Raises:
        ProviderError: the file is missing, too short or its header is not the format's.
    """
    try:
        with open(path, "rb") as f:
            head = f.read(8)
            if len(head) < 8:
                raise ProviderError(f"{path}: not a safetensors file (shorter than 8 bytes)")
            (n,) = struct.unpack("<Q", head)
            if n > MAX_HEADER:
                raise ProviderError(f"{path}: not a safetensors file (header of {n} bytes)")
            raw = f.read(n)
    except OSError as exc:
        raise ProviderError(f"cannot read {path}: {exc}") from exc
    if len(raw) < n:
        raise ProviderError(f"{path}: truncated safetensors header ({len(raw)} of {n} bytes)")
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ProviderError(f"{path}: safetensors header is not JSON ({exc})") from exc
    if not isinstance(header, dict):
        raise ProviderError(f"{path}: safetensors header is not a JSON object")
    return 8 + n, header


def load(path: Path) -> dict[str, Any]:
    """Map every tensor of `path` to a read-only NumPy array (native byte order).

    Raises:
        ProviderError: the header is malformed, a tensor has an unsupported dtype, or
            its bytes lie outside the file or do not match its shape.

    Example:
        >>> tensors = load(Path("model.safetensors"))  # doctest: +SKIP
        >>> tensors["embeddings.word_embeddings.weight"].shape  # doctest: +SKIP
        (30522, 384)
    """
    import numpy as np

    start, header = read_header(path)
    try:
        mapped = np.memmap(path, dtype=np.uint8, mode="r")
    except (OSError, ValueError) as exc:
        raise ProviderError(f"cannot map {path}: {exc}") from exc
    size = len(mapped) - start
    out: dict[str, Any] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        out[name] = _tensor(np, mapped, start, size, path, name, info)
    return out


def _tensor(np: Any, mapped: Any, start: int, size: int, path: Path, name: str, info: Any) -> Any:
    where = f"{path}: tensor {name!r}"
    if not isinstance(info, dict):
        raise ProviderError(f"{where}: entry is not an object")
    dtype, shape, offsets = info.get("dtype"), info.get("shape"), info.get("data_offsets")
    if dtype not in DTYPES:
        raise ProviderError(f"{where}: unsupported dtype {dtype!r}")
    if not isinstance(shape, list) or not all(isinstance(d, int) and d >= 0 for d in shape):
        raise ProviderError(f"{where}: bad shape {shape!r}")
    if (
        not isinstance(offsets, list)
        or len(offsets) != 2
        or not all(isinstance(o, int) for o in offsets)
        or not 0 <= offsets[0] <= offsets[1] <= size
    ):
        raise ProviderError(f"{where}: data offsets {offsets!r} outside the file")
    np_dtype = np.dtype(DTYPES[dtype])
    begin, end = offsets
    if end - begin != math.prod(shape) * np_dtype.itemsize:
        raise ProviderError(f"{where}: {end - begin} bytes do not hold shape {shape} of {dtype}")
    arr = mapped[start + begin : start + end].view(np_dtype).reshape(shape)
    if sys.byteorder == "big" and np_dtype.itemsize > 1:
        arr = arr.astype(np_dtype.newbyteorder("="))
    return arr


__all__ = ["load", "read_header"]
