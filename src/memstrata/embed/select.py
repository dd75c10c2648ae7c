"""Which embedder a store uses, from its `[search]` settings.

    embedder unset  all-MiniLM-L6-v2 in NumPy (`minilm`): the default install has it
                    whenever the model's files are found (`model_files`), and may
                    download them when a semantic search asks and `model_download` allows
    "none"          semantic recall off: hybrid and semantic search are usage errors
    anything else   that spec (`make_embedder`): "minilm[:folder]", "local" (torch),
                    "fake[:dim]", "openai:<model>@<url>"

`available` answers, without a download and without loading a model, whether
semantic recall works here as configured: the question behind "hybrid search by
default when vectors are available". An unset embedder without numpy, tokenizers
or the model's files is simply not available; a named one is taken at its word
(building it then fails loudly if it cannot load, rather than silently searching
lexically).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from memstrata.errors import MalformedInput

if TYPE_CHECKING:
    from memstrata.config import Config
    from memstrata.embed.base import Embedder

OFF = "none"


def configured_embedder(config: Config, notice: Callable[[str], None] | None = None) -> Embedder:
    """Build the embedder `config` names (unset: `minilm`).

    Raises:
        MalformedInput: `[search] embedder = "none"`, or a spec that cannot be parsed.
        ProviderError: the embedder cannot be set up; `ModelNotFound` says how to get
            the model's files.
    """
    from memstrata.embed import DEFAULT_SPEC, make_embedder

    spec = (config.embedder or DEFAULT_SPEC).strip()
    if spec == OFF:
        raise MalformedInput(
            'semantic and hybrid search are off ([search] embedder = "none"): unset it for '
            'all-MiniLM-L6-v2, or name another embedder ("local", "openai:<model>@<url>")'
        )
    return make_embedder(
        spec, model_path=config.model_path, download=config.model_download, notice=notice
    )


def available(config: Config) -> bool:
    """True if `configured_embedder(config)` is expected to work without a download.

    Raises:
        ModelNotFound: `[search] model_path` is set but is not a complete model folder.
    """
    from memstrata.embed import model_files

    spec = (config.embedder or "").strip()
    if spec == OFF:
        return False
    if spec:
        return True
    return model_files.runtime_installed() and model_files.find(config.model_path) is not None


__all__ = ["available", "configured_embedder"]
