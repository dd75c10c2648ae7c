"""50 concurrent API clients writing and reading against one real server process lose
nothing: every write the server acknowledged (201) is afterwards in the files and in the
index (through the API), exactly once.

Loopback only, bounded: `MEMSTRATA_SOAK_S` seconds (default 10 in the regular run, the
issue's 30 with MEMSTRATA_SLOW=1 or MEMSTRATA_SOAK_S=30).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest
from tests.web.conftest import start_server, stop_server

from memstrata import Store

CLIENTS = 50
AGENTS = [f"load{i}" for i in range(5)]
SECONDS = float(os.environ.get("MEMSTRATA_SOAK_S", "30" if os.environ.get("MEMSTRATA_SLOW") else "10"))
CONFIG = f"""
[roles]
admin = ["boss"]
project = {AGENTS!r}

[serve]
tokens = {{ boss = "tok-boss", {", ".join(f'{a} = "tok-{a}"' for a in AGENTS)} }}
""".replace("'", '"')


async def client(base: str, n: int, deadline: float, acked: dict[str, list[str]],
                 errors: list[str]) -> None:
    agent = AGENTS[n % len(AGENTS)]
    headers = {"Authorization": f"Bearer tok-{agent}"}
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=60.0) as c:
        i = 0
        # Until the deadline, and at least two writes of each kind per client whatever the
        # machine's load (the check below counts acknowledgements, not a rate).
        while time.monotonic() < deadline or i < 8:
            tag = f"c{n}-w{i}"
            kind = i % 4
            if kind == 0:
                r = await c.post(f"/api/agents/{agent}/log",
                                 json={"entry_type": "THOUGHT", "content": f"note {tag}"})
                key = "log"
            elif kind == 1:
                r = await c.post("/api/ledger", json={"kind": "artifact", "summary": f"built {tag}"})
                key = "ledger"
            elif kind == 2:
                r = await c.post(f"/api/agents/{agent}/facts", json={"key": tag, "value": tag})
                key = "fact"
            else:
                r = await c.post(f"/api/agents/{agent}/sessions/s-{n}/messages",
                                 json={"messages": [{"role": "user", "content": f"said {tag}"}]})
                key = "session"
            if r.status_code == 201:
                acked[key].append(tag)
            else:
                errors.append(f"{key} {tag}: {r.status_code} {r.text[:200]}")
            if i % 3 == 0:
                r = await c.get(f"/api/agents/{agent}/log", params={"n": 5})
            elif i % 3 == 1:
                r = await c.get("/api/search", params={"q": f"c{n}", "k": 5})
            else:
                r = await c.get(f"/api/agents/{agent}/timeline", params={"limit": 10})
            if r.status_code != 200:
                errors.append(f"read: {r.status_code} {r.text[:200]}")
            i += 1


async def run_clients(base: str) -> tuple[dict[str, list[str]], list[str]]:
    acked: dict[str, list[str]] = {"log": [], "ledger": [], "fact": [], "session": []}
    errors: list[str] = []
    deadline = time.monotonic() + SECONDS
    await asyncio.gather(*(client(base, n, deadline, acked, errors) for n in range(CLIENTS)))
    return acked, errors


def _api_all(c: httpx.Client, path: str, params: dict[str, object], key: str) -> list[dict]:
    out: list[dict] = []
    cursor = None
    while True:
        page = c.get(path, params={**params, **({"before": cursor} if cursor else {})}).json()
        out += page[key]
        cursor = page["next"]
        if not cursor:
            return out


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_fifty_clients_lose_nothing(tmp_path: Path) -> None:
    home = tmp_path / "store"
    home.mkdir()
    (home / "config.toml").write_text(CONFIG)
    server = start_server(home)
    try:
        acked, errors = asyncio.run(run_clients(server.base))
        assert errors == []
        assert all(len(v) > CLIENTS for v in acked.values()), {k: len(v) for k, v in acked.items()}
        # Through the API (the server's index), each acknowledged write exactly once.
        with httpx.Client(base_url=server.base, headers={"Authorization": "Bearer tok-boss"},
                          timeout=60) as c:
            ledger = Counter(e["summary"] for e in _api_all(c, "/api/ledger", {"limit": 200},
                                                            "entries"))
            logs: Counter[str] = Counter()
            facts: Counter[str] = Counter()
            sessions: Counter[str] = Counter()
            for agent in AGENTS:
                items = _api_all(c, f"/api/agents/{agent}/timeline",
                                 {"limit": 200, "types": ["log", "fact", "session"]}, "items")
                logs.update(i["text"] for i in items if i["type"] == "log")
                facts.update(i["title"] for i in items if i["type"] == "fact")
                sessions.update(i["text"] for i in items if i["type"] == "session")
        assert all(ledger[f"built {t}"] == 1 for t in acked["ledger"])
        assert all(logs[f"note {t}"] == 1 for t in acked["log"])
        assert all(facts[t] == 1 for t in acked["fact"])
        assert all(sessions[f"said {t}"] == 1 for t in acked["session"])
    finally:
        stop_server(server)
    # And in the files themselves (the truth), read without the server.
    with Store(home, sync=False) as s:
        in_ledger = Counter(e.summary for e in s.ledger.entries())
        in_logs = Counter(e.content for a in AGENTS for e in s.agent(a).log.entries())
        in_sessions = Counter(m.content for a in AGENTS for sid in s.agent(a).sessions.ids()
                              for m in s.agent(a).sessions.messages(sid))
    assert all(in_ledger[f"built {t}"] == 1 for t in acked["ledger"])
    assert all(in_logs[f"note {t}"] == 1 for t in acked["log"])
    assert all(in_sessions[f"said {t}"] == 1 for t in acked["session"])
    total = sum(len(v) for v in acked.values())
    print(f"{CLIENTS} clients, {SECONDS:.0f} s: {total} acknowledged writes, all found once")
