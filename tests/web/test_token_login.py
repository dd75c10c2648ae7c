"""`memstrata serve --token X` from a browser and from every hint it prints (issue 20, item 7).

The login page and static assets are reachable without the token; the login form takes
`--token` and sets the session as `[serve] tokens` do (real headless Chromium); and each
address and connect hint of the banner works as printed: the web app and the login page
in the browser, the API and its schema with the token, the `claude mcp add` command's
URL and header, and the JSON client config's URL and headers with the official MCP client.
"""

from __future__ import annotations

import json
import re
import shlex
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from tests.web.conftest import Served, start_server, stop_server

from memstrata import Store

TOKEN = "solo-tok-7c1e"


@pytest.fixture(scope="module")
def solo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """A server whose only credential is `--token` (no [serve] tokens in config.toml)."""
    home = tmp_path_factory.mktemp("solo") / "store"
    with Store(home, agent="finn") as s:
        s.agent().now.update("Ship the token login", ["log in", "read NOW"])
    server = start_server(home, "--agent", "finn", "--token", TOKEN)
    try:
        yield server
    finally:
        stop_server(server)


def banner(server: Served) -> str:
    """The whole banner (the reader thread collects it; wait for its last line)."""
    deadline = time.monotonic() + 60
    while not any("Ctrl-C to stop" in line for line in server.log):
        assert time.monotonic() < deadline, "".join(server.log)
        time.sleep(0.02)  # polling for the banner's end, not waiting a fixed time
    return "".join(server.log)


def test_login_page_and_static_assets_need_no_token(solo: Served) -> None:
    with httpx.Client(base_url=solo.base, timeout=30) as anon:
        login = anon.get("/login")
        assert login.status_code == 200 and 'name="token"' in login.text
        css = anon.get("/static/app.css")
        assert css.status_code == 200 and css.headers["content-type"].startswith("text/css")
        assert anon.get("/", follow_redirects=False).status_code == 303  # pages: to /login
        assert anon.get("/api/whoami").status_code == 401  # the API still needs the token
        assert anon.post("/mcp", json={}).status_code == 401


def test_the_browser_logs_in_with_the_token_at_the_printed_address(
    browser: Any, solo: Served, shots: Path
) -> None:
    text = banner(solo)
    login_url = re.search(r"browsers log in at (\S+/login)\)", text)
    assert login_url, text
    web_app = re.search(r"web app: (\S+)", text)
    assert web_app, text
    ctx = browser.new_context()
    page = ctx.new_page()
    page.goto(web_app.group(1) + "a/finn/edit/now")
    assert "/login" in page.url  # not signed in: sent to the login page
    page.goto(login_url.group(1))
    assert page.locator("link[rel=stylesheet]").count() >= 1
    page.fill("input[name=token]", "wrong-token")
    page.click("button:has-text('Log in')")
    assert "/login" in page.url and page.locator("input[name=token]").count() == 1
    page.fill("input[name=token]", TOKEN)
    page.click("button:has-text('Log in')")
    page.wait_for_url(re.compile(r".*/$"))
    page.goto(web_app.group(1) + "a/finn/edit/now")
    assert "Ship the token login" in page.locator("textarea").input_value()
    assert "acting as finn" in page.locator("#who").inner_text()
    # the stylesheet loaded (a 401 would leave the page unstyled)
    assert page.evaluate("document.styleSheets.length") >= 1
    assert page.evaluate("document.styleSheets[0].cssRules.length") > 0
    page.screenshot(path=str(shots / "token-login.png"), full_page=True)
    ctx.close()


def test_the_printed_api_addresses_work_with_the_token(solo: Served) -> None:
    text = banner(solo)
    api = re.search(r"API: (\S+/api) \(schema (\S+) try it at (\S+)\)", text)
    assert api, text
    auth = {"Authorization": f"Bearer {TOKEN}"}
    schema = httpx.get(api.group(2).rstrip(","), headers=auth, timeout=30)
    assert schema.status_code == 200 and "/api/whoami" in schema.json()["paths"]
    assert httpx.get(api.group(3), timeout=30).status_code == 200  # the explorer page
    who = httpx.get(api.group(1) + "/whoami", headers=auth, timeout=30)
    assert who.status_code == 200 and who.json()["agent"] == "finn"


def test_each_printed_connect_hint_works_as_printed(solo: Served) -> None:
    text = banner(solo)
    command = next(line for line in text.splitlines() if line.startswith("connect: "))
    argv = shlex.split(command.removeprefix("connect: "))
    assert argv[:6] == ["claude", "mcp", "add", "--transport", "http", "memstrata"]
    url = argv[6]
    headers = dict(
        argv[i + 1].split(": ", 1) for i, a in enumerate(argv) if a in ("--header", "-H")
    )
    assert headers == {"Authorization": f"Bearer {TOKEN}"}
    assert "Ship the token login" in (call_mcp(url, headers) or "")
    config_line = next(line for line in text.splitlines() if "MCP client config:" in line)
    config = json.loads(config_line.split("MCP client config:", 1)[1])["mcpServers"]["memstrata"]
    assert config["type"] == "http"
    assert "Ship the token login" in (call_mcp(config["url"], config.get("headers", {})) or "")
    assert call_mcp(url, {}) is None  # without the printed header: refused


def call_mcp(url: str, headers: dict[str, str]) -> str | None:
    """NOW.md as read through the MCP tools at `url` with `headers`; None if refused (401)."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    from mcp import Client

    async def main() -> str | None:
        async with httpx2.AsyncClient(headers=headers, timeout=120) as http:  # (5 s by default)
            probe = await http.post(
                url,
                json={"jsonrpc": "2.0", "id": 0, "method": "ping"},
                headers={"Accept": "application/json, text/event-stream"},
            )
            if probe.status_code == 401:
                return None
            async with Client(streamable_http_client(url, http_client=http)) as c:
                r = await c.call_tool("memory_read", {"path": "NOW.md"})
                assert not r.is_error, r.content
                return str(r.structured_content["content"])

    # In a thread of its own: Playwright's sync API keeps an event loop in this one.
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(anyio.run, main).result()


def test_config_token_servers_print_the_header_with_a_placeholder(
    served: tuple[Served, dict[str, str]],
) -> None:
    """With [serve] tokens only, no token can be printed: the hints carry the header with
    `<token>` (and say so), and work once a configured token is put in its place."""
    server, _ = served
    text = banner(server)
    assert "(<token>: the token of a [serve] tokens entry)" in text
    command = next(line for line in text.splitlines() if line.startswith("connect: "))
    argv = shlex.split(command.removeprefix("connect: ").replace("<token>", "tok-finn"))
    header = argv[argv.index("--header") + 1]
    assert header == "Authorization: Bearer tok-finn"
    name, value = header.split(": ", 1)
    assert "Ship the auth service" in (call_mcp(argv[6], {name: value}) or "")
