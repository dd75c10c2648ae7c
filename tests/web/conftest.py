"""A real `memstrata serve` process per test module, on a free port of 127.0.0.1.

The server is ready when it has printed its banner (with the port it bound) and answers
`/api/whoami`; nothing here sleeps for a fixed time. The store it serves is seeded
through the library before it starts, with three identities in `[serve] tokens`:

    wilco  admin (in [roles])    token "tok-wilco"
    finn   project, room-1       token "tok-finn"
    mira   project, room-2       token "tok-mira"

`rich` serves a store where finn has data in every layer (`seed_every_layer`).
Browser tests use the `browser` fixture: real headless Chromium (Debian's `chromium`,
driven by Playwright), skipped where either is missing; screenshots go to
`$MEMSTRATA_SCREENSHOTS` or the test's tmp_path (`shots`).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("fastapi")

from memstrata import Store
from memstrata.lifecycle.compaction import compact_log

EXE = shutil.which("memstrata", path=str(Path(sys.executable).parent)) or "memstrata"
TOKENS = {"wilco": "tok-wilco", "finn": "tok-finn", "mira": "tok-mira"}
CONFIG = """
[roles]
admin = ["wilco"]
project = ["finn", "mira"]

[serve]
tokens = [
  {token = "tok-wilco", agent = "wilco"},
  {token = "tok-finn", agent = "finn", room = "room-1"},
  {token = "tok-mira", agent = "mira", room = "room-2"},
]
"""
BANNER = re.compile(r"memstrata serve on http://[^:]+:(\d+)")


@dataclass
class Served:
    proc: subprocess.Popen[str]
    base: str
    home: Path
    log: list[str] = field(default_factory=list)

    def client(self, who: str | None = None, **kw: object) -> httpx.Client:
        headers = {"Authorization": f"Bearer {TOKENS[who]}"} if who else {}
        return httpx.Client(base_url=self.base, headers=headers, timeout=30.0, **kw)  # type: ignore[arg-type]


def start_server(
    home: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 90.0
) -> Served:
    """Start `memstrata serve` on a free port; return once it answers."""
    environ = {**os.environ, "MEMSTRATA_HOME": str(home), **(env or {})}
    environ.pop("MEMSTRATA_AGENT", None)
    proc = subprocess.Popen(
        [EXE, "--home", str(home), "serve", "--port", "0", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=environ,
    )
    assert proc.stderr is not None
    deadline = time.monotonic() + timeout
    lines: list[str] = []
    port = None
    while port is None:
        line = proc.stderr.readline()
        if not line:
            raise RuntimeError("memstrata serve exited before it was ready:\n" + "".join(lines))
        lines.append(line)
        m = BANNER.search(line)
        if m:
            port = int(m.group(1))
        if time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError("memstrata serve printed no banner:\n" + "".join(lines))
    served = Served(proc, f"http://127.0.0.1:{port}", home, lines)
    # Keep reading stderr (a full pipe would block the server), and keep it for failures.
    threading.Thread(
        target=lambda: served.log.extend(iter(proc.stderr.readline, "")),  # type: ignore[union-attr]
        daemon=True,
    ).start()
    while True:  # the socket is bound; it answers once the app has started
        try:
            r = httpx.get(f"{served.base}/api/openapi.json", timeout=5.0)
            if r.status_code == 200:
                return served
        except httpx.TransportError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError("memstrata serve did not answer:\n" + "".join(served.log))
        time.sleep(0.05)  # polling for readiness, not waiting for a fixed time


def stop_server(served: Served) -> None:
    if served.proc.poll() is None:
        served.proc.send_signal(signal.SIGINT)
        try:
            served.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            served.proc.kill()
            served.proc.wait()


def seed(home: Path) -> dict[str, str]:
    """A small store: two project agents, an admin, a ledger with a supersede chain."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(CONFIG, encoding="utf-8")
    ids: dict[str, str] = {}
    with Store(home, agent="finn", room="room-1") as s:
        mem = s.agent()
        mem.now.update("Ship the auth service", ["write tests", "open the PR"])
        mem.context.write("# Finn\n\nPrefers bcrypt.\n")
        mem.log.append("THOUGHT", "bcrypt work factor 12 is enough")
        mem.log.append("TOOL_USE", "ran pytest: 12 passed <script>window.__pwned = 1</script>")
        mem.facts.set("preferred_currency", "USD", "preference")
        mem.tasks.add("Write the login tests", priority=1)
        mem.sessions.append("s-1", "user", "How do we hash passwords?")
        mem.sessions.append("s-1", "assistant", "With bcrypt, work factor 12.")
        mem.files.write("notes/plan.md", "# Plan\n\n- hash with bcrypt\n")
        first = s.ledger.publish("decision", "Use argon2 for passwords", tags=["auth"])
        second = s.ledger.publish(
            "decision", "Use bcrypt for passwords", tags=["auth"], supersedes=first.id
        )
        ids.update(first=first.id, second=second.id)
    with Store(home, agent="mira", room="room-2") as s:
        s.agent().log.append("THOUGHT", "mira's private plan: refactor the billing module")
        s.agent().now.update("Refactor billing")
        ids["mira_entry"] = s.ledger.publish(
            "warning", "Billing API is rate limited", tags=["billing"]
        ).id
    with Store(home, agent="wilco") as s:
        s.agent().log.append("SYSTEM", "admin note: all rooms use bcrypt")
        s.items.replace_source(
            "docs/Architecture.md",
            [
                {
                    "type": "decision",
                    "title": "Use Fastify for API",
                    "lineNumber": 45,
                    "content": "We chose Fastify over Express.",
                    "confidence": 0.9,
                },
                {
                    "type": "claim",
                    "title": "Sessions are JSONL",
                    "lineNumber": 12,
                    "content": "Each session is one JSONL file.",
                },
            ],
            project="brain",
        )
        s.items.replace_source(
            "docs/Architecture.md",
            [  # the same path in another project
                {
                    "type": "decision",
                    "title": "Billing uses Stripe",
                    "lineNumber": 3,
                    "content": "Billing runs on Stripe, not Fastify.",
                }
            ],
            project="billing",
        )
    return ids


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, dict[str, str]]]:
    home = tmp_path_factory.mktemp("served") / "store"
    ids = seed(home)
    server = start_server(home)
    try:
        yield server, ids
    finally:
        stop_server(server)


def seed_every_layer(home: Path) -> None:
    """seed()'s store, and finn with data in every layer it has."""
    seed(home)
    with Store(home, agent="finn", room="room-1") as s:
        mem = s.agent()
        mem.identity.write("# Finn\n\nA backend engineer agent.\n")
        for i in range(12):
            mem.log.append("TOOL_USE" if i % 3 == 0 else "THOUGHT", f"step {i} of the rollout")
        compact_log(s, "finn", summary="The rollout's first steps, compacted.")
        mem.log.append("THOUGHT", "after the compaction")
        mem.facts.set("test_cmd", "cd evals && npm test", "project", citations=["package.json"])
        mem.facts.set(
            "test_cmd2",
            "cd evals && npm test ",
            "project",  # a near-duplicate
            citations=["package.json"],
        )
        mem.facts.set("editor", "vim", "preference")
        mem.facts.set("editor", "helix", "preference")
        mem.facts.forget("editor")
        mem.files.write("notes/deep/design.md", "# Design\n\nLayered memory.\n")
        mem.files.write("todo.md", "# Todo\n")
        mem.scratch.start_notes()
        slug = mem.episodes.create("Auth rollout")
        mem.episodes.write(slug, "PLAN.md", "# Plan\n\n1. hash\n")
        t = mem.tasks.add("Deploy the auth service", priority=2, milestone="m1")
        mem.tasks.update(t.id, status="in_progress")
        done = mem.tasks.add("Pick a hash", priority=1)
        mem.tasks.update(done.id, status="done")
        mem.sessions.start("s-2", title="Second session")
        mem.sessions.append("s-2", "user", "Deploy?")
        mem.sessions.end("s-2")
        s.ledger.publish("convention", "Every service hashes with bcrypt", tags=["auth"])


@pytest.fixture(scope="module")
def rich(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """A server over `seed_every_layer`'s store (one per test module)."""
    home = tmp_path_factory.mktemp("crawl") / "store"
    seed_every_layer(home)
    server = start_server(home)
    try:
        yield server
    finally:
        stop_server(server)


# -- the browser ---------------------------------------------------------------------------
BROWSER_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


def chromium_path() -> str | None:
    for p in (
        os.environ.get("MEMSTRATA_CHROMIUM"),
        "/usr/bin/chromium",
        shutil.which("chromium"),
        shutil.which("chromium-browser"),
    ):
        if p and Path(p).exists():
            return p
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api")
    exe = chromium_path()
    if exe is None:
        pytest.skip("no Chromium found (apt-get install chromium; .ci/run does)")
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=exe, args=BROWSER_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = os.environ.get("MEMSTRATA_SCREENSHOTS")
    folder = Path(where) if where else tmp_path_factory.mktemp("screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def logged_in(
    browser: Any, server: Served, token: str = "tok-finn", start: str = "/a/finn/timeline"
) -> Any:
    """A fresh browser context that logged in with `token` through the login form."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    page.goto(f"{server.base}{start}")
    assert "/login" in page.url  # not signed in yet: sent to the login page
    page.fill("input[name=token]", token)
    page.click("button:has-text('Log in')")
    page.wait_for_url(f"**{start}")
    return page


@pytest.fixture(scope="module")
def coding(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, dict[str, Any]]]:
    """A server over issue 24's store: ten sessions of a coding agent through the hooks
    (`tests.web.coding_store`), and what `build` returned (session ids, task and entry ids)."""
    from tests.web.coding_store import build

    home = tmp_path_factory.mktemp("coding") / "store"
    with pytest.MonkeyPatch.context() as mp:  # the server searches lexically: no vectors
        mp.setenv("MEMSTRATA_EMBEDDER", "none")
        ids = build(home)
    # lexical, as the pages' words for a score are checked (hybrid is the default when
    # all-MiniLM-L6-v2 is installed; this fixture starts before the tests' environment)
    server = start_server(home, env={"MEMSTRATA_EMBEDDER": "none"})
    try:
        yield server, ids
    finally:
        stop_server(server)
