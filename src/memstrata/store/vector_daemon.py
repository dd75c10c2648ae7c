"""`python -m memstrata.store.vector_daemon SPEC SOCKET [STORE]`: the embedding daemon.

`embed.daemon` keeps one embedder loaded and answers embedding requests over a socket
(the CLI's queries); a client may also ask it to build a store's vectors after a write
(the CLI, whose process ends right after). Building opens that store: this module's
part, so the embedding package never imports the store.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from memstrata.embed.daemon import serve
from memstrata.index.vectors import VectorIndex
from memstrata.store.view import Store


def build_vectors(home: Path, embedder: Any) -> None:
    """Embed the unit texts of the store at `home` that have no vector yet."""
    with Store(home) as store:
        store.semantic.builds = "off"
        VectorIndex(store.db, embedder, batch_size=16).build()


if __name__ == "__main__":  # pragma: no cover - started by embed.daemon
    serve(
        sys.argv[1],
        Path(sys.argv[2]),
        home=Path(sys.argv[3]) if len(sys.argv) > 3 else None,
        build=build_vectors,
    )
