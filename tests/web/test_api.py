"""The JSON API of `memstrata serve` through httpx against a real server process: every
endpoint, scope per token, errors as JSON with HTTP statuses, the OpenAPI schema, and MCP
at /mcp on the same port with the official client."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx
from tests.web.conftest import Served

from memstrata.store.editing import sha256_text

Ids = dict[str, str]


def _err(r: httpx.Response, status: int, code: str | None = None) -> dict[str, Any]:
    assert r.status_code == status, (r.status_code, r.text)
    assert r.headers["content-type"].startswith("application/json")
    body = r.json()["error"]
    assert isinstance(body["message"], str) and body["message"]
    if code is not None:
        assert body["code"] == code, body
    return body  # type: ignore[no-any-return]


def test_openapi_schema_is_valid_and_lists_every_area(served: tuple[Served, Ids]) -> None:
    from openapi_spec_validator import validate

    server, _ = served
    spec = httpx.get(f"{server.base}/api/openapi.json").json()
    validate(spec)
    paths = set(spec["paths"])
    for p in (
        "/api/search",
        "/api/memories",
        "/api/ledger",
        "/api/ledger/{entry_id}/chain",
        "/api/agents/{agent}/now",
        "/api/agents/{agent}/context",
        "/api/agents/{agent}/memory-files/{path}",
        "/api/agents/{agent}/log",
        "/api/agents/{agent}/timeline",
        "/api/agents/{agent}/facts",
        "/api/agents/{agent}/tasks",
        "/api/agents/{agent}/sessions/{session_id}",
        "/api/items",
        "/api/projects/{project_id}/knowledge",
        "/api/events",
        "/api/events/stream",
        "/api/agents/{agent}/audit",
        "/api/agents/{agent}/verify",
        "/api/agents/{agent}/compact",
        "/api/doctor",
        "/api/whoami",
    ):
        assert p in paths, p
    page = httpx.get(f"{server.base}/api/docs")
    assert page.status_code == 200 and "/static/api.js" in page.text


def test_tokens_decide_who_a_request_is(served: tuple[Served, Ids]) -> None:
    server, _ = served
    with httpx.Client(base_url=server.base) as anon:
        _err(anon.get("/api/whoami"), 401, "unauthorized")
        _err(anon.get("/api/whoami", headers={"Authorization": "Bearer nope"}), 401)
        _err(anon.get("/api/whoami", headers={"Authorization": "Basic dG9r"}), 401)
        assert anon.get("/a/finn/timeline").status_code == 303  # pages go to /login
    for who, role, room in (
        ("wilco", "admin", None),
        ("finn", "project", "room-1"),
        ("mira", "project", "room-2"),
    ):
        with server.client(who) as c:
            assert c.get("/api/whoami").json() == {
                "agent": who,
                "role": role,
                "room": room,
                "via": "token",
            }


def test_the_bearer_parser_takes_any_case_and_answers_malformed_headers_with_401_json(
    served: tuple[Served, Ids],
) -> None:
    server, _ = served
    with httpx.Client(base_url=server.base) as anon:
        for header in (b"bearer tok-finn", b"BEARER tok-finn", b"BeArEr   tok-finn"):
            r = anon.get("/api/whoami", headers={"Authorization": header})
            assert r.status_code == 200 and r.json()["agent"] == "finn", header
        for header in (
            b"",
            b"Bearer",
            b"Basic dG9rLWZpbm4=",
            b"tok-finn",
            "Bearer tök-finn".encode("latin-1"),
            "Bearer tok-finn\u00e9".encode(),
            b"Bearer tok-finn extra",
            b"Bearer\ttok-finn",
        ):
            _err(anon.get("/api/whoami", headers={"Authorization": header}), 401, "unauthorized")
        # Two Authorization headers are one too many, even if one is right.
        twice = [("Authorization", "Bearer tok-finn"), ("Authorization", "Bearer nope")]
        _err(anon.get("/api/whoami", headers=twice), 401, "unauthorized")


def test_the_bearer_parser_itself_on_headers_a_client_library_will_not_send() -> None:
    from memstrata.web.identity import Identities

    ids = Identities(None, None, None, (("tok-finn", "finn", "room-1"),))
    assert ids.by_bearer(b"bearer tok-finn") is not None
    assert ids.by_bearer(b" Bearer tok-finn \t") is not None
    for header in (
        None,
        b"",
        b" ",
        b"Bearer ",
        b"Bearer \t ",
        "Bearer tök".encode(),
        b"Bearer tok-finn\x00",
        b"Bearer\x00tok-finn",
        b"\xffBearer tok-finn",
    ):
        assert ids.by_bearer(header) is None, header


def test_a_project_token_cannot_read_another_agents_memory(served: tuple[Served, Ids]) -> None:
    server, ids = served
    with server.client("finn") as finn:
        for path in (
            "/api/agents/mira/now",
            "/api/agents/mira/log",
            "/api/agents/mira/timeline",
            "/api/agents/mira/facts",
            "/api/agents/mira/tasks",
            "/api/agents/mira/sessions",
            "/api/agents/mira/prompt",
            "/api/agents/mira/memory-files",
            "/api/agents/mira/audit",
        ):
            _err(finn.get(path), 403, "scope_denied")
        _err(finn.put("/api/agents/mira/now", json={"text": "hijacked"}), 403, "scope_denied")
        _err(finn.post("/api/agents/mira/log", json={"entry_type": "THOUGHT", "content": "x"}), 403)
        # Search and uids never show mira's private memory to finn...
        hits = finn.get("/api/search", params={"q": "billing refactor private plan"}).json()
        assert all(h["owner"] != "mira" for h in hits["hits"])
        assert "mira" not in finn.get("/api/agents").json()["agents"]
        # ...while the shared ledger stays shared.
        assert any(
            h["uid"] == f"ledger:{ids['mira_entry']}"
            for h in finn.get("/api/search", params={"q": "billing rate limited"}).json()["hits"]
        )
        # The admin's memory is readable to a project agent (seed 004), not writable.
        assert finn.get("/api/agents/wilco/log").status_code == 200
        _err(
            finn.post("/api/agents/wilco/log", json={"entry_type": "THOUGHT", "content": "x"}), 403
        )
        # An entry of another room cannot be superseded by finn.
        _err(
            finn.post(
                f"/api/ledger/{ids['mira_entry']}/supersede",
                json={"kind": "warning", "summary": "not rate limited"},
            ),
            403,
            "supersede_denied",
        )
    with server.client("mira") as mira:
        hits = mira.get("/api/search", params={"q": "billing refactor private plan"}).json()
        assert any(h["owner"] == "mira" for h in hits["hits"])
        uid = next(h["uid"] for h in hits["hits"] if h["owner"] == "mira")
    with server.client("finn") as finn:
        _err(finn.get("/api/memories", params={"uid": uid}), 404, "not_found")
    with server.client("wilco") as wilco:  # an admin token sees all
        assert wilco.get("/api/agents/mira/log").status_code == 200
        assert wilco.get("/api/memories", params={"uid": uid}).json()["owner"] == "mira"
        assert {"finn", "mira", "wilco"} <= set(wilco.get("/api/agents").json()["agents"])


def test_search_takes_every_option_and_explains(served: tuple[Served, Ids]) -> None:
    server, ids = served
    with server.client("finn") as c:
        r = c.get(
            "/api/search",
            params={
                "q": "bcrypt passwords",
                "layers": ["ledger"],
                "kind": "decision",
                "tags": ["auth"],
                "tags_match": "all",
                "room": "room-1",
                "since": "2020-01-01",
                "until": "2100-01-01",
                "k": 5,
                "mode": "lexical",
            },
        )
        hits = r.json()["hits"]
        assert [h["uid"] for h in hits] == [f"ledger:{ids['second']}"]
        explain = hits[0]["explain"]
        assert {"bm25", "decay", "half_life_hours", "age_hours", "score"} <= set(explain)
        assert explain["half_life_hours"] == 336.0
        both = c.get(
            "/api/search",
            params={"q": "passwords", "layers": "ledger", "include_superseded": "true"},
        ).json()["hits"]
        assert {f"ledger:{ids['first']}", f"ledger:{ids['second']}"} <= {h["uid"] for h in both}
        assert (
            c.get(
                "/api/search",
                params={"q": "passwords", "exclude_room": "room-1", "layers": "ledger"},
            ).json()["hits"]
            == []
        )
        posted = c.post("/api/search", json={"text": "bcrypt", "agent": "finn", "k": 3}).json()
        assert posted["hits"] and all(h["owner"] in ("finn", None) for h in posted["hits"])
        full = c.get("/api/memories", params={"uid": posted["hits"][0]["uid"]}).json()
        assert "text" in full and full["uid"] == posted["hits"][0]["uid"]
        # Sources are store-relative: a client never learns where the store lives.
        places = [h["source"] for h in [*hits, *posted["hits"], full]]
        assert places and not [p for p in places if p.startswith("/")], places
        assert "ledger.jsonl" in places
        _err(c.get("/api/search", params={"k": 0}), 422, "invalid_request")
        _err(c.get("/api/search", params={"layers": "nope"}), 422)
        _err(c.get("/api/search", params={"q": "x", "since": "not a date"}), 400, "malformed_input")
        # no [search] embedder: all-MiniLM-L6-v2 in NumPy is the default (embed/select.py)
        hybrid = c.get("/api/search", params={"q": "bcrypt passwords", "mode": "hybrid"})
        assert hybrid.status_code == 200 and hybrid.json()["hits"], hybrid.text


def test_now_edit_with_expected_sha_refuses_the_second_editor(served: tuple[Served, Ids]) -> None:
    server, _ = served
    with server.client("finn") as c:
        now = c.get("/api/agents/finn/now").json()
        assert "Ship the auth service" in now["text"]
        assert now["sha256"] == sha256_text(now["text"])
        first = c.put(
            "/api/agents/finn/now",
            json={"text": "# NOW\n\nEditor one\n", "expected_sha": now["sha256"]},
        )
        assert first.status_code == 200
        body = _err(
            c.put(
                "/api/agents/finn/now",
                json={"text": "# NOW\n\nEditor two\n", "expected_sha": now["sha256"]},
            ),
            409,
            "stale_write",
        )
        assert "changed since it was read" in body["message"]
        on_disk = (server.home / "agents/finn/memory/NOW.md").read_text()
        assert on_disk == "# NOW\n\nEditor one\n"
        _err(c.put("/api/agents/finn/now", json={"text": "x", "expected_sha": "zz"}), 422)
        st = c.post("/api/agents/finn/now/status", json={"status": "Review", "next_steps": ["a"]})
        assert st.json()["objective"] == "Review"
        ctx = c.get("/api/agents/finn/context").json()
        assert (
            c.put(
                "/api/agents/finn/context",
                json={"text": ctx["text"] + "More.\n", "expected_sha": ctx["sha256"]},
            ).status_code
            == 200
        )
        assert c.get("/api/agents/finn/identity").status_code == 200


def test_memory_files_log_timeline_prompt(served: tuple[Served, Ids]) -> None:
    server, _ = served
    with server.client("finn") as c:
        listing = c.get("/api/agents/finn/memory-files").json()["files"]
        assert "notes/plan.md" in {f["path"] for f in listing}
        f = c.get("/api/agents/finn/memory-files/notes/plan.md").json()
        put = c.put(
            "/api/agents/finn/memory-files/notes/plan.md",
            json={"content": f["text"] + "- ship\n", "expected_sha": f["sha256"]},
        )
        assert put.status_code == 200
        _err(
            c.put(
                "/api/agents/finn/memory-files/notes/plan.md",
                json={"content": "stale", "expected_sha": f["sha256"]},
            ),
            409,
            "stale_write",
        )
        _err(
            c.put("/api/agents/finn/memory-files/LOG.md", json={"content": "x"}),
            400,
            "reserved_file",
        )
        _err(c.get("/api/agents/finn/memory-files/../../../etc/passwd"), 404)
        _err(c.get("/api/agents/finn/memory-files/nope.md"), 404, "not_found")
        c.put("/api/agents/finn/memory-files/tmp.md", json={"content": "bye"})
        gone = c.delete("/api/agents/finn/memory-files/tmp.md").json()
        assert "archive" in gone["archived_to"]
        r = c.post(
            "/api/agents/finn/log",
            json={"entry_type": "THOUGHT", "content": "via http", "metadata": {"k": 1}},
        )
        assert r.status_code == 201 and r.json()["id"].startswith("log-")
        tail = c.get("/api/agents/finn/log", params={"n": 2}).json()["entries"]
        assert tail[-1]["content"] == "via http"
        _err(c.post("/api/agents/finn/log", json={"entry_type": "NOPE", "content": "x"}), 422)
        _err(c.post("/api/agents/finn/log", json={"entry_type": "THOUGHT", "content": " "}), 400)
        page = c.get("/api/agents/finn/timeline", params={"limit": 3}).json()
        items = page["items"]  # 3, or more that share the 3rd's millisecond (one time, one page)
        assert len(items) >= 3 and all(i["ts"] == items[2]["ts"] for i in items[3:])
        assert page["next"]
        older = c.get("/api/agents/finn/timeline", params={"limit": 3, "before": page["next"]})
        seen = {i["uid"] for i in page["items"]}
        assert not seen & {i["uid"] for i in older.json()["items"]}
        only = c.get("/api/agents/finn/timeline", params={"types": ["fact", "session"]}).json()
        assert {i["type"] for i in only["items"]} == {"fact", "session"}
        _err(c.get("/api/agents/finn/timeline", params={"before": "junk"}), 400)
        prompt = c.get("/api/agents/finn/prompt", params={"budget_chars": 400}).json()
        assert prompt["truncated"] and prompt["chars"] <= 400
        assert any(cut["lines_dropped"] for cut in prompt["cuts"])
        _err(c.get("/api/agents/nobody/now"), 404, "not_found")
        _err(c.get("/api/agents/bad name/now"), 400, "malformed_input")


def test_facts_tasks_sessions(served: tuple[Served, Ids]) -> None:
    server, _ = served
    with server.client("finn") as c:
        assert (
            c.post(
                "/api/agents/finn/facts",
                json={"key": "editor", "value": "vim", "category": "preference"},
            ).status_code
            == 201
        )
        assert c.get("/api/agents/finn/facts/editor").json()["value"] == "vim"
        assert (
            c.put("/api/agents/finn/facts/editor", json={"value": "emacs"}).json()["value"]
            == "emacs"
        )
        keys = {f["key"] for f in c.get("/api/agents/finn/facts").json()["facts"]}
        assert {"editor", "preferred_currency"} <= keys
        assert c.delete("/api/agents/finn/facts/editor").status_code == 200
        _err(c.get("/api/agents/finn/facts/editor"), 404)
        _err(
            c.post("/api/agents/finn/facts", json={"key": "k", "value": "v", "category": "x"}), 422
        )
        t = c.post("/api/agents/finn/tasks", json={"description": "Deploy", "priority": 2}).json()
        assert (
            c.patch(f"/api/agents/finn/tasks/{t['id']}", json={"status": "done"}).json()["status"]
            == "done"
        )
        assert c.get(f"/api/agents/finn/tasks/{t['id']}").json()["completed"]
        assert c.get("/api/agents/finn/tasks", params={"status": "done"}).json()["tasks"]
        _err(c.patch("/api/agents/finn/tasks/TASK-999", json={"status": "done"}), 404)
        _err(
            c.post("/api/agents/finn/tasks", json={"description": "x", "blocked_by": ["T-9"]}), 404
        )
        s = c.post("/api/agents/finn/sessions", json={"session_id": "s-http", "title": "t"})
        assert s.status_code == 201
        _err(
            c.post("/api/agents/finn/sessions", json={"session_id": "s-http"}),
            409,
            "already_exists",
        )
        msgs = [{"role": "user", "content": f"message {i}"} for i in range(5)]
        assert (
            c.post("/api/agents/finn/sessions/s-http/messages", json={"messages": msgs}).status_code
            == 201
        )
        p1 = c.get("/api/agents/finn/sessions/s-http", params={"limit": 3}).json()
        p2 = c.get("/api/agents/finn/sessions/s-http", params={"after": p1["next"]}).json()
        assert [m["content"] for m in p1["messages"] + p2["messages"]] == [
            m["content"] for m in msgs
        ]
        assert p2["next"] is None
        assert c.post("/api/agents/finn/sessions/s-http/end").json()["ended"]
        ids = {x["id"] for x in c.get("/api/agents/finn/sessions").json()["sessions"]}
        assert {"s-1", "s-http"} <= ids
        _err(c.get("/api/agents/finn/sessions/s-nope"), 404)


def test_ledger_publish_query_chain(served: tuple[Served, Ids]) -> None:
    server, ids = served
    with server.client("finn") as c:
        page = c.get("/api/ledger", params={"room": "room-1", "include_superseded": "true"}).json()
        rows = {e["id"]: e for e in page["entries"]}
        assert rows[ids["first"]]["superseded"] and rows[ids["first"]]["successor"] == ids["second"]
        assert 0.9 < rows[ids["second"]]["freshness"] <= 1.0
        live = c.get("/api/ledger", params={"room": "room-1"}).json()["entries"]
        assert ids["first"] not in {e["id"] for e in live}
        chain = c.get(f"/api/ledger/{ids['second']}/chain").json()["chain"]
        assert [e["id"] for e in chain] == [ids["first"], ids["second"]]
        assert c.get(f"/api/ledger/{ids['first']}").json()["superseded"]
        new = c.post(
            "/api/ledger",
            json={"kind": "convention", "summary": "Tabs, not spaces", "tags": ["style"]},
        )
        assert new.status_code == 201 and new.json()["room_id"] == "room-1"
        assert new.json()["author_role"] == "finn"
        sup = c.post(
            f"/api/ledger/{new.json()['id']}/supersede",
            json={"kind": "convention", "summary": "Spaces, not tabs"},
        )
        assert sup.status_code == 201
        again = _err(
            c.post(
                f"/api/ledger/{new.json()['id']}/supersede",
                json={"kind": "convention", "summary": "Tabs again"},
            ),
            409,
            "already_superseded",
        )
        assert again["head"] == sup.json()["id"]
        _err(c.post("/api/ledger", json={"kind": "nope", "summary": "x"}), 400, "unknown_kind")
        _err(c.post("/api/ledger", json={"kind": "decision", "summary": "x" * 4097}), 422)
        _err(
            c.post(
                "/api/ledger",
                json={"kind": "decision", "summary": "x", "supersedes": "mem-00000000"},
            ),
            404,
            "unknown_supersedes",
        )
        _err(
            c.post("/api/ledger", json={"kind": "decision", "summary": "x", "author_role": "mira"}),
            403,
            "scope_denied",
        )
        _err(c.get("/api/ledger/mem-nope"), 404)
        ctx = c.get("/api/ledger/context", params={"room": "room-3", "keywords": ["bcrypt"]})
        assert "bcrypt" in ctx.json()["markdown"]
        two = c.get("/api/ledger", params={"limit": 1}).json()
        more = c.get("/api/ledger", params={"limit": 1, "before": two["next"]}).json()
        assert two["entries"][0]["id"] != more["entries"][0]["id"]


def test_items_knowledge_and_cleanup(served: tuple[Served, Ids]) -> None:
    server, _ = served
    with server.client("finn") as c:
        got = c.get("/api/items").json()["items"]
        assert {i["title"] for i in got} >= {"Use Fastify for API", "Sessions are JSONL"}
        assert all(i["sourceFile"] == "docs/Architecture.md" for i in got)
        k = c.get("/api/projects/default/knowledge", params={"q": "Fastify"}).json()["items"]
        assert k[0]["title"] == "Use Fastify for API" and k[0]["lineNumber"] == 45
        assert c.get("/api/projects/default/knowledge", params={"type": "claim"}).json()["items"]
        _err(c.get("/api/projects/other/knowledge"), 404, "not_found")
        # seed 004's <project>/items.json: one project's knowledge, by its id
        brain = c.get("/api/projects/brain/knowledge", params={"q": "Fastify"}).json()["items"]
        assert [i["title"] for i in brain] == ["Use Fastify for API"]
        billing = c.get("/api/projects/billing/knowledge").json()["items"]
        assert [(i["title"], i["project"]) for i in billing] == [("Billing uses Stripe", "billing")]
        assert {i["project"] for i in c.get("/api/projects/default/knowledge").json()["items"]} == {
            "brain",
            "billing",
        }
        victim = next(i for i in got if i["type"] == "claim")
        _err(c.delete(f"/api/items/{victim['id']}"), 403)  # cleanup is an admin's (seed 004)
    with server.client("wilco") as c:
        assert c.delete(f"/api/items/{victim['id']}").json()["removed"][0]["id"] == victim["id"]
        assert victim["id"] not in {i["id"] for i in c.get("/api/items").json()["items"]}
        kept = (server.home / "items.removed.jsonl").read_text()
        assert victim["id"] in kept and "removedAt" in kept
        _err(c.post("/api/items/remove", json={"ids": ["item_nope"]}), 404)


def test_audit_prune_verify_compact_doctor(served: tuple[Served, Ids]) -> None:
    server, _ = served
    with server.client("finn") as c:
        cite = ["evals/package.json"]
        c.post(
            "/api/agents/finn/facts",
            json={
                "key": "test_cmd",
                "value": "cd evals && npm test",
                "category": "project",
                "citations": cite,
            },
        )
        c.post(
            "/api/agents/finn/facts",
            json={
                "key": "test_cmd2",
                "value": "cd evals && npm test ",
                "category": "project",
                "citations": cite,
            },
        )
        report = c.get("/api/agents/finn/audit").json()
        dup = [f for f in report["findings"] if f["kind"] == "duplicate_fact"]
        assert dup
        dry = c.post("/api/agents/finn/audit/prune", json={}).json()
        assert dry["dry_run"] and not any(a["applied"] for a in dry["actions"])
        assert c.get("/api/agents/finn/facts/test_cmd").status_code == 200
        reviewed = [{"kind": f["kind"], "target": f["target"]} for f in dup]
        done = c.post(
            "/api/agents/finn/audit/prune", json={"dry_run": False, "only": reviewed}
        ).json()
        assert [a["applied"] for a in done["actions"]] == [True] * len(dup)
        ver = c.post("/api/agents/finn/verify").json()
        assert "findings" in ver
        comp = c.post("/api/agents/finn/compact", json={"force": True}).json()
        assert comp["compacted"] and comp["archive_path"].startswith("agents/finn/archive/")
        hist = c.get("/api/agents/finn/compactions").json()["compactions"]
        assert hist[-1]["archive_id"] == comp["archive_id"]
        tl = c.get("/api/agents/finn/timeline", params={"types": "compaction"}).json()["items"]
        assert tl and tl[0]["type"] == "compaction"
        _err(c.get("/api/doctor"), 403, "scope_denied")  # store-wide: admins only
    with server.client("wilco") as w:
        doc = w.get("/api/doctor").json()
        assert doc["index_ok"], doc


def test_events_list_and_live_stream(served: tuple[Served, Ids]) -> None:
    server, _ = served
    with server.client("finn") as c:
        recent = c.get("/api/events", params={"limit": 5}).json()
        assert recent["events"] and all(e["agent"] == "finn" for e in recent["events"])
        writes = c.get("/api/events", params={"names": "memory:write", "limit": 3}).json()
        assert all(e["event"] == "memory:write" for e in writes["events"])
        got: list[dict[str, Any]] = []
        with c.stream("GET", "/api/events/stream") as stream:
            assert stream.headers["content-type"].startswith("text/event-stream")
            lines = stream.iter_lines()
            assert next(lines).startswith(":")  # the stream is open: now write something
            c2 = server.client("finn")
            c2.post("/api/agents/finn/log", json={"entry_type": "THOUGHT", "content": "live!"})
            c2.post("/api/search", json={"text": "live"})
            c2.close()
            event = None
            for line in lines:
                if line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("data: "):
                    got.append({"event": event, **json.loads(line[6:])})
                    if {"memory:write", "memory:search"} <= {g["event"] for g in got}:
                        break
        assert all(g["agent"] == "finn" for g in got)
        search = next(g for g in got if g["event"] == "memory:search")
        assert set(search["payload"]) >= {"query", "results"}
        write = next(g for g in got if g["event"] == "memory:write")
        assert set(write["payload"]) >= {"type", "path", "delta"}
    with server.client("wilco") as w:  # the admin sees every agent's events
        agents = {e["agent"] for e in w.get("/api/events", params={"limit": 500}).json()["events"]}
        assert "finn" in agents


def test_errors_are_json_with_http_statuses(served: tuple[Served, Ids]) -> None:
    server, _ = served
    with server.client("finn") as c:
        _err(c.get("/api/nope"), 404, "not_found")
        _err(c.delete("/api/search"), 405, "method_not_allowed")
        _err(
            c.post(
                "/api/agents/finn/log",
                content=b"{not json",
                headers={"Content-Type": "application/json"},
            ),
            422,
            "invalid_request",
        )
        _err(c.post("/api/agents/finn/log", json=[1, 2]), 422)
        big = "x" * (64 * 1024 + 1)
        _err(
            c.post("/api/agents/finn/facts", json={"key": "k", "value": "é" * 9000}),
            413,
            "entry_too_large",
        )
        _err(c.post("/api/agents/finn/log", json={"entry_type": "THOUGHT", "content": big}), 422)


def test_csrf_and_cross_site_requests_are_refused(served: tuple[Served, Ids]) -> None:
    server, _ = served
    with server.client("finn") as c:
        # A foreign Origin never reaches the app (web.security.guard).
        _err(
            c.post(
                "/api/agents/finn/log",
                json={"entry_type": "THOUGHT", "content": "x"},
                headers={"Origin": "http://evil.example"},
            ),
            403,
        )
        assert c.get("/api/whoami", headers={"Host": "evil.example"}).status_code == 421
    with httpx.Client(base_url=server.base, follow_redirects=False) as browser:
        # Log in like a browser: a session cookie, then forms need the CSRF token.
        form = browser.get("/login").text
        csrf = form.split('name="csrf" value="')[1].split('"')[0]
        bad = browser.post("/login", data={"token": "wrong", "csrf": csrf})
        assert bad.status_code == 401
        ok = browser.post("/login", data={"token": "tok-finn", "csrf": csrf, "next": "/"})
        assert ok.status_code == 303 and "memstrata_session" in ok.cookies
        cookie = ok.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie
        page = browser.get("/a/finn/edit/now").text
        token = page.split('name="csrf" value="')[1].split('"')[0]
        sha = page.split('name="expected_sha" value="')[1].split('"')[0]
        refused = browser.post(
            "/a/finn/edit/now", data={"text": "csrf!", "expected_sha": sha, "csrf": "forged"}
        )
        assert refused.status_code == 403
        assert "csrf!" not in (server.home / "agents/finn/memory/NOW.md").read_text()
        # A cookie-authenticated API write must be JSON (a cross-site form cannot be).
        _err(
            browser.post(
                "/api/agents/finn/log",
                content=b"entry_type=THOUGHT&content=x",
                headers={"Content-Type": "application/x-www-form-urlencoded"},
            ),
            415,
        )
        assert (
            browser.post(
                "/api/agents/finn/log", json={"entry_type": "THOUGHT", "content": "cookie"}
            ).status_code
            == 201
        )
        saved = browser.post(
            "/a/finn/edit/now",
            data={"text": "# NOW\n\nfrom a form\n", "expected_sha": sha, "csrf": token},
        )
        assert saved.status_code in (303, 409)


def test_mcp_on_the_same_port_acts_as_the_token(served: tuple[Served, Ids]) -> None:
    from mcp.client.streamable_http import streamable_http_client

    from mcp import Client

    server, _ = served

    async def call(token: str) -> tuple[list[str], str, str]:
        http = httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
        async with Client(streamable_http_client(f"{server.base}/mcp", http_client=http)) as cl:
            tools = [t.name for t in (await cl.list_tools()).tools]
            now = await cl.call_tool("update_status", {"new_status": f"set over MCP by {token}"})
            denied = await cl.call_tool("memory_read", {"path": "../mira/NOW.md"})
            return tools, str(now.content), str(denied.content)

    tools, _, _ = anyio.run(call, "tok-mira")
    assert {"recall_memory", "memory_publish", "update_status"} <= set(tools)
    assert "set over MCP by tok-mira" in (server.home / "agents/mira/memory/NOW.md").read_text()
    assert "tok-mira" not in (server.home / "agents/finn/memory/NOW.md").read_text()
    r = httpx.post(f"{server.base}/mcp", json={}, headers={"Accept": "application/json"})
    assert r.status_code == 401


def test_open_server_acts_as_its_agent(tmp_path: Path) -> None:
    """Without any token (loopback) every request acts as --agent, role from [roles]."""
    from tests.web.conftest import start_server, stop_server

    home = tmp_path / "open"
    home.mkdir()
    (home / "config.toml").write_text('[roles]\nproject = ["finn", "mira"]\n')
    server = start_server(home, "--agent", "finn", "--room", "room-1")
    try:
        with httpx.Client(base_url=server.base) as c:
            assert c.get("/api/whoami").json() == {
                "agent": "finn",
                "role": "project",
                "room": "room-1",
                "via": "open",
            }
            assert c.put("/api/agents/finn/now", json={"text": "open"}).status_code == 200
            _err(c.put("/api/agents/mira/now", json={"text": "x"}), 403)
            _err(
                c.post(
                    "/api/agents/finn/log",
                    content=b"entry_type=THOUGHT",
                    headers={"Content-Type": "text/plain"},
                ),
                415,
            )
    finally:
        stop_server(server)
    assert server.proc.returncode == 0


def test_open_server_without_an_agent_serves_mcp_as_the_default_agent(tmp_path: Path) -> None:
    """`make run`: no token, no --agent: the API acts as the store's owner (admin) and MCP
    tools act for `memstrata mcp`'s default agent."""
    from mcp.client.streamable_http import streamable_http_client
    from tests.web.conftest import start_server, stop_server

    from mcp import Client

    home = tmp_path / "owner"
    server = start_server(home)

    async def call() -> list[str]:
        async with Client(streamable_http_client(f"{server.base}/mcp")) as cl:
            await cl.call_tool("update_status", {"new_status": "from make run"})
            return [t.name for t in (await cl.list_tools()).tools]

    try:
        assert httpx.get(f"{server.base}/api/whoami").json()["role"] == "admin"
        assert "recall_memory" in anyio.run(call)
        assert "from make run" in (home / "agents/agent/memory/NOW.md").read_text()
        assert httpx.get(f"{server.base}/a/agent/timeline").status_code == 200
    finally:
        stop_server(server)
