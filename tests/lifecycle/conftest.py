"""Fixtures for the lifecycle tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from lifecycle_stub_llm import StubLLM


@pytest.fixture
def stub_llm() -> Iterator[StubLLM]:
    stub = StubLLM()
    yield stub
    stub.close()
