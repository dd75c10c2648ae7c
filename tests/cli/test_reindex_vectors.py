"""`memstrata reindex --vectors`: rebuild the index and the vectors from the files."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

from memstrata.index.generations import live_database

EXE = shutil.which("memstrata", path=str(Path(sys.executable).parent)) or "memstrata"


def _run(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [EXE, "--home", str(home), *args], capture_output=True, text=True, timeout=120
    )


def test_reindex_vectors_embeds_every_memory(home: Path, semantic_default: None) -> None:
    home.mkdir(parents=True)
    # Written with semantic recall off: with an embedder configured, each CLI write asks
    # the embedding daemon to build the vectors in the background, and whether it had
    # finished before `reindex` decided how many reindex embedded (0 on a loaded machine).
    (home / "config.toml").write_text('[search]\nembedder = "none"\n')
    assert (
        _run(
            home, "--agent", "a", "log", "append", "THOUGHT", "vectors survive rebuilds"
        ).returncode
        == 0
    )
    assert _run(home, "--agent", "a", "facts", "set", "k", "v").returncode == 0
    (home / "config.toml").write_text('[search]\nembedder = "fake"\n')
    r = _run(home, "--json", "reindex", "--vectors", "--quiet")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["docs"] == 2 and out["embedded"] == 2
    with sqlite3.connect(live_database(home / "index") or "") as conn:
        assert conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == 2


def test_reindex_vectors_without_embedder_is_a_clear_error(home: Path) -> None:
    home.mkdir(parents=True)
    (home / "config.toml").write_text('[search]\nembedder = "none"\n')  # semantic recall off
    assert _run(home, "--agent", "a", "log", "append", "THOUGHT", "x").returncode == 0
    r = _run(home, "reindex", "--vectors")
    assert r.returncode == 2 and "embedder" in r.stderr and "Traceback" not in r.stderr
    assert "reindex:" not in r.stderr  # refused before any work, not after a full rebuild
