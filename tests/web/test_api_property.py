"""Property-based API test generated from the server's own OpenAPI schema (schemathesis):
whatever a client sends to any operation, the server never answers 500.

Bounded to keep the suite fast: a few examples per operation (`MEMSTRATA_API_EXAMPLES`,
default 6), against one real server process for the module, as the admin (so requests
get past scope into the library) and once more as a project agent.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

schemathesis = pytest.importorskip("schemathesis")
from hypothesis import HealthCheck, settings  # noqa: E402
from schemathesis.checks import not_a_server_error  # noqa: E402
from tests.web.conftest import TOKENS, seed, start_server, stop_server  # noqa: E402

EXAMPLES = int(os.environ.get("MEMSTRATA_API_EXAMPLES", "6"))


@pytest.fixture(scope="module")
def api_schema(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    home = tmp_path_factory.mktemp("property") / "store"
    seed(home)
    server = start_server(home)
    try:
        schema = schemathesis.openapi.from_url(f"{server.base}/api/openapi.json")
        # The live stream never ends by design; it has its own test.
        yield schema.exclude(path="/api/events/stream")
    finally:
        stop_server(server)


@pytest.mark.timeout(600)
def test_no_input_makes_the_server_fail(api_schema: Any) -> None:
    from hypothesis import given

    operations = [r.ok() for r in api_schema.get_all_operations()]
    assert len(operations) > 40
    for op in operations:

        @given(case=op.as_strategy())
        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def no_server_error(case: Any) -> None:
            for who in ("wilco", "finn"):
                response = case.call(headers={"Authorization": f"Bearer {TOKENS[who]}"}, timeout=30)
                case.validate_response(response, checks=[not_a_server_error])
                if response.status_code >= 400:
                    body = response.json()
                    assert set(body["error"]) >= {"code", "message"}, body

        no_server_error()
