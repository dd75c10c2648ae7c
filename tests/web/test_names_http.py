"""The HTTP API applies the one name rule (issue 20 items 1 and 8): a memory file path
or fact key holding an undecodable byte, a lone surrogate or U+202E is a 4xx with a
typed JSON error, and nothing is written. A real `memstrata serve` on 127.0.0.1."""

from __future__ import annotations

import json

from .conftest import Served


def test_bad_names_over_http_are_typed_4xx_and_write_nothing(
    served: tuple[Served, dict[str, str]],
) -> None:
    server, _ = served
    memory = server.home / "agents/finn/memory"
    before = sorted(p.name for p in memory.iterdir())
    facts = (server.home / "agents/finn/facts.jsonl").read_bytes()
    with server.client("finn") as c:
        replies = [
            c.put("/api/agents/finn/memory-files/invoice%E2%80%AEgpj.md", json={"content": "x"}),
            c.put("/api/agents/finn/memory-files/n%FF.md", json={"content": "x"}),
            c.put("/api/agents/finn/memory-files/cafe%CC%81.md", json={"content": "x"}),
            c.post(
                "/api/agents/finn/facts",
                content=json.dumps({"key": "k\udcff", "value": "v"}),
                headers={"content-type": "application/json"},
            ),
            c.post("/api/agents/finn/facts", json={"key": "k\u202e", "value": "v"}),
            c.put("/api/agents/finn/facts/k%E2%80%AE", json={"value": "v"}),
            c.post(
                "/api/agents/finn/log",
                content=json.dumps({"entry_type": "THOUGHT", "content": "bad \udcff"}),
                headers={"content-type": "application/json"},
            ),
        ]
        for r in replies:
            assert 400 <= r.status_code < 500, (r.request.url, r.status_code, r.text)
            error = r.json()["error"]
            assert error["code"] in ("malformed_input", "invalid_request"), r.text
            assert "\n" not in error["message"], r.text
        assert c.get("/api/agents/finn/facts/preferred_currency").status_code == 200
    assert sorted(p.name for p in memory.iterdir()) == before
    assert (server.home / "agents/finn/facts.jsonl").read_bytes() == facts
