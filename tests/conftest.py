"""Shared fixtures: every test gets its own store home under tmp_path."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memstrata import Store


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("MEMSTRATA_HOME", str(home))
    for var in ("MEMSTRATA_AGENT", "MEMSTRATA_ROOM", "MEMSTRATA_LLM_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture
def home(_isolated_home: Path) -> Path:
    return _isolated_home


@pytest.fixture
def store(home: Path) -> Iterator[Store]:
    s = Store(home, agent="finn", room="room-1")
    yield s
    s.close()


@pytest.fixture
def admin(home: Path) -> Iterator[Store]:
    s = Store(home, role="admin")
    yield s
    s.close()
