"""API gaps closed against real server processes: search takes `rooms` and `now`, and
without `mode` it uses the store's `[search] provider` (the page too); LOG archives are
listed and read (`/api/agents/{a}/archive`); the live event stream of a project agent
never carries another agent's events, even while that agent writes.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.web.conftest import Served, seed, start_server, stop_server

Ids = dict[str, str]


@pytest.fixture(scope="module")
def hybrid(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """seed()'s store with `[search] provider = "hybrid"` (the fake embedder)."""
    home = tmp_path_factory.mktemp("hybrid") / "store"
    seed(home)
    with (home / "config.toml").open("a", encoding="utf-8") as f:
        f.write('\n[search]\nprovider = "hybrid"\nembedder = "fake"\n')
    server = start_server(home)
    try:
        yield server
    finally:
        stop_server(server)


def test_search_without_a_mode_uses_the_configured_provider(hybrid: Served) -> None:
    with hybrid.client("finn") as c:
        for hits in (
            c.post("/api/search", json={"text": "bcrypt passwords"}).json()["hits"],
            c.get("/api/search", params={"q": "bcrypt passwords"}).json()["hits"],
        ):
            assert hits and all("fusion" in h["explain"] for h in hits)  # hybrid
        lexical = c.post("/api/search", json={"text": "bcrypt passwords", "mode": "lexical"})
        assert lexical.json()["hits"] and all(
            "fusion" not in h["explain"] for h in lexical.json()["hits"]
        )
        page = c.get("/search", params={"q": "bcrypt passwords"})  # the page as well
        assert page.status_code == 200 and '<th scope="row">fusion</th>' in page.text
        assert "Meaning and words combined" in page.text  # the explain in words
        page = c.get("/search", params={"q": "bcrypt passwords", "mode": "lexical"})
        assert page.status_code == 200 and '<th scope="row">fusion</th>' not in page.text
        assert '<th scope="row">bm25</th>' in page.text


def test_search_takes_rooms_and_now(served: tuple[Served, Ids]) -> None:
    server, _ = served
    with server.client("wilco") as c:
        body = {"text": "", "layers": ["ledger"], "include_superseded": True}
        both = {h["room"] for h in c.post("/api/search", json=body).json()["hits"]}
        assert {"room-1", "room-2"} <= both
        only = c.post("/api/search", json={**body, "rooms": ["room-2"]}).json()["hits"]
        assert only and {h["room"] for h in only} == {"room-2"}
        got = c.get(
            "/api/search",
            params={"layers": "ledger", "rooms": ["room-1"], "include_superseded": "true"},
        ).json()["hits"]
        assert got and {h["room"] for h in got} == {"room-1"}
        q = {"text": "bcrypt passwords", "layers": ["ledger"]}
        today = c.post("/api/search", json=q).json()["hits"][0]["explain"]
        later = time.time() + 365 * 86400
        year = c.post("/api/search", json={**q, "now": later}).json()["hits"][0]["explain"]
        assert today["age_hours"] < 1 < 365 * 24 - 1 < year["age_hours"]
        assert year["decay"] < today["decay"]
        again = c.get(
            "/api/search", params={"q": "bcrypt passwords", "layers": "ledger", "now": later}
        ).json()["hits"][0]["explain"]
        assert again["age_hours"] == pytest.approx(year["age_hours"], abs=0.01)
        r = c.post("/api/search", json={**q, "now": -1})
        assert r.status_code == 422
        assert c.post("/api/search", json={**q, "rooms": ["x"] * 33}).status_code == 422


def test_log_archives_are_listed_and_read(rich: Served) -> None:
    with rich.client("finn") as c:
        listed = c.get("/api/agents/finn/archive").json()["archives"]
        assert len(listed) == 1
        arc = listed[0]
        assert arc["path"].startswith("agents/finn/archive/LOG-") and arc["id"].startswith("arc-")
        history = c.get("/api/agents/finn/compactions").json()["compactions"]
        assert [h["archive_id"] for h in history] == [arc["id"]]
        got = c.get(f"/api/agents/finn/archive/{arc['id']}").json()
        assert got["archive"] == arc
        contents = [e["content"] for e in got["entries"]]
        assert "step 0 of the rollout" in contents and "step 11 of the rollout" in contents
        assert all(set(e) >= {"id", "ts", "entry_type", "content"} for e in got["entries"])
        r = c.get("/api/agents/finn/archive/arc-00000000")
        assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
        assert c.get("/api/agents/finn/archive/not-an-id").status_code == 400
    with rich.client("mira") as m:  # scope: another project agent's archives
        assert m.get("/api/agents/finn/archive").status_code == 403
        assert m.get(f"/api/agents/finn/archive/{arc['id']}").status_code == 403
    with rich.client("wilco") as w:
        assert w.get("/api/agents/finn/archive").json()["archives"] == listed


def _events_until(lines: Iterator[str], marker: str, home: Path) -> list[dict[str, Any]]:
    """Server-sent events from `lines` until the memory:search for `marker` (events
    record a query as an HMAC under the host's audit key), for at most a minute."""
    from memstrata.store.events import audit_key, query_digest

    key = audit_key(home / "events.jsonl")
    assert key is not None
    query = query_digest(marker, key)
    got: list[dict[str, Any]] = []
    event = None
    deadline = time.monotonic() + 60
    for line in lines:
        assert time.monotonic() < deadline, f"no memory:search for {marker} in a minute: {got}"
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: "):
            got.append({"event": event, **json.loads(line[6:])})
            if event == "memory:search" and got[-1]["payload"].get("query") in (marker, query):
                return got
    raise AssertionError(f"the stream ended before {marker}: {got}")


def test_event_stream_never_shows_another_agents_writes(served: tuple[Served, Ids]) -> None:
    server, _ = served
    marker = f"marker-{uuid.uuid4().hex}"
    finn, wilco, mira = server.client("finn"), server.client("wilco"), server.client("mira")
    try:
        with (
            finn.stream("GET", "/api/events/stream") as f_stream,
            wilco.stream("GET", "/api/events/stream") as w_stream,
        ):
            f_lines, w_lines = f_stream.iter_lines(), w_stream.iter_lines()
            assert next(f_lines).startswith(":") and next(w_lines).startswith(":")  # open
            # mira writes and reads while both streams are open...
            assert (
                mira.post(
                    "/api/agents/mira/log",
                    json={"entry_type": "THOUGHT", "content": "mira's secret"},
                ).status_code
                == 201
            )
            assert (
                mira.put(
                    "/api/agents/mira/now", json={"text": "# NOW\n\nmira's plan\n"}
                ).status_code
                == 200
            )
            assert (
                mira.post("/api/agents/mira/facts", json={"key": "k", "value": "v"}).status_code
                == 201
            )
            assert mira.post("/api/search", json={"text": "mira secret"}).status_code == 200
            # ...then finn searches for a marker: every event before it has been streamed.
            assert finn.post("/api/search", json={"text": marker}).status_code == 200
            seen_by_finn = _events_until(f_lines, marker, server.home)
            seen_by_wilco = _events_until(w_lines, marker, server.home)
    finally:
        for c in (finn, wilco, mira):
            c.close()
    assert {e["agent"] for e in seen_by_finn} == {"finn"}
    assert "mira" not in json.dumps(seen_by_finn)
    # The admin's stream, over the same moments, did carry mira's events (so the filter,
    # not a quiet stream, is what kept them from finn).
    mira_events = [e for e in seen_by_wilco if e["agent"] == "mira"]
    assert {e["event"] for e in mira_events} >= {"memory:write", "memory:search"}
    assert any("agents/mira" in json.dumps(e["payload"]) for e in mira_events)


def test_archive_endpoints_are_in_the_schema(served: tuple[Served, Ids]) -> None:
    server, _ = served
    paths = httpx.get(f"{server.base}/api/openapi.json").json()["paths"]
    assert {"/api/agents/{agent}/archive", "/api/agents/{agent}/archive/{archive_id}"} <= set(paths)
    search = paths["/api/search"]["get"]["parameters"]
    assert {"rooms", "now", "mode"} <= {p["name"] for p in search}
