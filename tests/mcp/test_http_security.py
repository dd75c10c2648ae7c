"""HTTP auth that works remotely and fails safely (issue 10 item 7): the policy as pure
functions, then real `memstrata mcp --http` processes on real ports, one bound to 0.0.0.0
and reached from a second address (127.0.0.2), driven with the official MCP client."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

pytest.importorskip("mcp")
from mcp.client.streamable_http import streamable_http_client

from mcp import Client
from memstrata import MalformedInput
from memstrata.web.security import HttpPolicy, bearer_ok

EXE = shutil.which("memstrata", path=str(Path(sys.executable).parent)) or "memstrata"
TOKEN = "s3cret-token"
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
JSON_HDRS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


# -- the policy, as pure functions ---------------------------------------------------------


def test_bearer_scheme_is_case_insensitive_and_bad_headers_are_false() -> None:
    for good in (b"Bearer tok", b"bearer tok", b"BEARER tok", b"Bearer   tok "):
        assert bearer_ok(good, "tok"), good
    for bad in (
        None,
        b"",
        b"Bearer",
        b"Bearer ",
        b"Bearer tok2",
        b"Basic dG9r",
        b"tok",
        "Bearer t\u00f6k".encode(),
        b"Bearer \xff\xfe",
        b"Bearertok",
    ):
        assert not bearer_ok(bad, "tok"), bad


def test_default_hosts_and_origins() -> None:
    local = HttpPolicy.for_bind("127.0.0.1", 8765, None)
    assert local.host_allowed("127.0.0.1:8765") and local.host_allowed("LOCALHOST:8765")
    assert local.host_allowed("[::1]:8765")
    assert not local.host_allowed("127.0.0.1:9999") and not local.host_allowed("evil.example:8765")
    assert not local.host_allowed(None)
    assert local.origin_allowed("http://localhost:8765")
    assert not local.origin_allowed("http://localhost:5173") and not local.origin_allowed("null")
    lan = HttpPolicy.for_bind("192.168.1.5", 8765, "t")
    assert lan.host_allowed("192.168.1.5:8765") and not lan.host_allowed("evil.example:8765")
    assert HttpPolicy.for_bind("127.0.0.2", 80, None).host_allowed("127.0.0.2")
    anywhere = HttpPolicy.for_bind("0.0.0.0", 8765, "t")
    assert anywhere.host_allowed("mem.example.com:8765") and anywhere.host_allowed(None)
    extra = HttpPolicy.for_bind(
        "127.0.0.1",
        8765,
        None,
        allow_hosts=["mem.lan", "box:*"],
        allow_origins=["http://localhost:5173", "https://app.example:*"],
    )
    assert extra.host_allowed("mem.lan:8765") and extra.host_allowed("box:1")
    assert extra.origin_allowed("http://localhost:5173") and extra.origin_allowed(
        "https://app.example:443"
    )
    assert not extra.origin_allowed("https://app.example.evil:443")


def test_unsafe_configurations_are_refused() -> None:
    for host in ("0.0.0.0", "::", "192.168.1.5"):
        with pytest.raises(MalformedInput, match="token"):
            HttpPolicy.for_bind(host, 8765, None)
    for token in ("two words", "t\u00f6ken", "tab\there"):
        with pytest.raises(MalformedInput):
            HttpPolicy.for_bind("127.0.0.1", 8765, token)
    with pytest.raises(MalformedInput):
        HttpPolicy.for_bind("127.0.0.1", 8765, None, allow_origins=["localhost:5173"])
    with pytest.raises(MalformedInput):
        HttpPolicy.for_bind("127.0.0.1", 8765, None, allow_hosts=["evil.example/path"])
    for extra in ({"allow_hosts": ["*"]}, {"allow_origins": ["*"]}):
        with pytest.raises(MalformedInput, match="needs a token"):
            HttpPolicy.for_bind("127.0.0.1", 8765, None, **extra)
        assert HttpPolicy.for_bind("127.0.0.1", 8765, "t", **extra)


# -- real servers on real ports --------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("0.0.0.0", 0))
        return int(s.getsockname()[1])


class Server:
    def __init__(self, proc: subprocess.Popen[str], port: int, banner: list[str]) -> None:
        self.proc, self.port, self.banner = proc, port, banner

    def hint_config(self) -> dict[str, Any]:
        line = next(x for x in self.banner if "MCP client config:" in x)
        return dict(json.loads(line.split("MCP client config:", 1)[1])["mcpServers"]["memstrata"])

    def hint_command(self) -> list[str]:
        line = next(x for x in self.banner if x.startswith("connect: "))
        return shlex.split(line.removeprefix("connect: "))


def _start(home: Path, *args: str, env: dict[str, str] | None = None) -> Server:
    port = _free_port()
    proc = subprocess.Popen(
        [EXE, "--home", str(home), "--agent", "finn", "mcp", "--http", "--port", str(port), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )
    assert proc.stderr is not None
    banner: list[str] = []
    for line in proc.stderr:  # the banner is printed once the policy is accepted
        banner.append(line.rstrip("\n"))
        if line.startswith("stdio instead"):
            break
    else:
        pytest.fail(f"server exited: {banner}")
    deadline = time.monotonic() + 30
    while True:  # then uvicorn binds the port
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return Server(proc, port, banner)
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"server did not listen: {banner}")
            time.sleep(0.05)


@pytest.fixture
def remote(home: Path) -> Iterator[Server]:
    srv = _start(home, "--host", "0.0.0.0", env={"MEMSTRATA_MCP_TOKEN": TOKEN})
    yield srv
    srv.proc.terminate()
    srv.proc.wait(timeout=10)


def test_remote_client_from_a_second_address_with_the_printed_hint(remote: Server) -> None:
    cfg = remote.hint_config()
    assert cfg["headers"] == {"Authorization": f"Bearer {TOKEN}"}
    cmd = remote.hint_command()
    assert cmd[:6] == ["claude", "mcp", "add", "--transport", "http", "memstrata"]
    assert (
        cmd[6] == cfg["url"] and cmd[cmd.index("--header") + 1] == f"Authorization: Bearer {TOKEN}"
    )
    # the printed URL works as printed on this machine...
    assert _call_tools(cfg["url"], cfg["headers"], None) == "over http"
    # ...and from another address, with the printed header
    remote_url = cfg["url"].replace("127.0.0.1", "127.0.0.2")
    assert _call_tools(remote_url, cfg["headers"], "127.0.0.2") == "over http"
    tx = httpx.HTTPTransport(local_address="127.0.0.2")
    with httpx.Client(transport=tx) as c:
        r = c.post(remote_url, json=INIT, headers=JSON_HDRS)
        assert r.status_code == 401 and r.headers["www-authenticate"].startswith("Bearer")
        r = c.post(
            remote_url,
            json=INIT,
            headers={**JSON_HDRS, "Host": "mem.example.com", "Authorization": f"Bearer {TOKEN}"},
        )
        assert r.status_code == 200  # wildcard bind + token: any Host, the token authenticates


def _call_tools(url: str, headers: dict[str, str], local_address: str | None) -> str:
    import httpx2

    async def main() -> str:
        transport = httpx2.AsyncHTTPTransport(local_address=local_address)
        async with httpx2.AsyncClient(headers=headers, transport=transport) as http:  # noqa: SIM117
            async with Client(streamable_http_client(url, http_client=http)) as c:
                r = await c.call_tool("save_fact", {"key": "k", "value": "over http"})
                assert not r.is_error, r.content
                got = await c.call_tool("get_fact", {"key": "k"})
                return str(got.structured_content["value"])

    return anyio.run(main)


def _raw_post(port: int, auth_lines: list[bytes]) -> tuple[int, bytes]:
    """POST initialize with Authorization lines exactly as given (bytes no client library
    would send: trailing spaces, Latin-1, invalid UTF-8, duplicates)."""
    body = json.dumps(INIT).encode()
    head = [
        b"POST /mcp HTTP/1.1",
        f"Host: 127.0.0.1:{port}".encode(),
        b"Accept: application/json, text/event-stream",
        b"Content-Type: application/json",
        f"Content-Length: {len(body)}".encode(),
        b"Connection: close",
        *auth_lines,
    ]
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(b"\r\n".join(head) + b"\r\n\r\n" + body)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    status = int(data.split(b" ", 2)[1])
    return status, data.split(b"\r\n\r\n", 1)[1]


def test_authorization_headers_fail_safely(remote: Server) -> None:
    tok = TOKEN.encode()
    for scheme in (b"Bearer", b"bearer", b"BEARER", b"bEaReR"):
        status, _ = _raw_post(remote.port, [b"Authorization: " + scheme + b" " + tok])
        assert status == 200, scheme
    bad = [
        [],
        [b"Authorization:"],
        [b"Authorization: Bearer"],
        [b"Authorization: Bearer "],
        [b"Authorization: Bearer " + tok + b"x"],
        [b"Authorization: Basic " + tok],
        [b"Authorization: " + tok],
        [b"Authorization: Bearer" + tok],
        [b"Authorization: Bearer " + tok + "\u00e9".encode()],
        [b"Authorization: Bearer t\xf6ken"],
        [b"Authorization: Bearer \xff\xfe\xfd"],
        [b"Authorization: Bearer " + tok, b"Authorization: Bearer " + tok],
    ]
    for lines in bad:
        status, body = _raw_post(remote.port, lines)
        assert status == 401, (lines, status, body)
        assert json.loads(body) == {
            "error": {"code": "unauthorized", "message": "missing or wrong bearer token"}
        }
    assert remote.proc.poll() is None  # nothing above took the server down


def test_allow_origin_lets_a_browser_client_in(home: Path) -> None:
    srv = _start(home, "--allow-origin", "http://localhost:5173")
    url = f"http://127.0.0.1:{srv.port}/mcp"
    try:
        with httpx.Client() as c:
            pre = c.options(
                url,
                headers={
                    "Origin": "http://localhost:5173",
                    "Access-Control-Request-Method": "POST",
                    "Access-Control-Request-Headers": "content-type, mcp-session-id",
                },
            )
            assert pre.status_code == 204
            assert pre.headers["access-control-allow-origin"] == "http://localhost:5173"
            assert "mcp-session-id" in pre.headers["access-control-allow-headers"]
            r = c.post(url, json=INIT, headers={**JSON_HDRS, "Origin": "http://localhost:5173"})
            assert r.status_code == 200
            assert r.headers["access-control-allow-origin"] == "http://localhost:5173"
            assert "mcp-session-id" in r.headers["access-control-expose-headers"]
            r = c.post(url, json=INIT, headers={**JSON_HDRS, "Origin": "http://localhost:5174"})
            assert r.status_code == 403
            r = c.post(url, json=INIT, headers={**JSON_HDRS, "Host": "evil.example"})
            assert r.status_code == 421
        assert "--header" not in srv.hint_command()  # no token, no header in the hint
    finally:
        srv.proc.terminate()
        srv.proc.wait(timeout=10)


def test_config_rows_allow_hosts_and_origins(home: Path) -> None:
    home.mkdir(parents=True)
    (home / "config.toml").write_text(
        '[http]\nallow_hosts = ["mem.lan"]\nallow_origins = ["http://localhost:*"]\n'
    )
    srv = _start(home)
    url = f"http://127.0.0.1:{srv.port}/mcp"
    try:
        with httpx.Client() as c:
            r = c.post(
                url,
                json=INIT,
                headers={
                    **JSON_HDRS,
                    "Host": f"mem.lan:{srv.port}",
                    "Origin": "http://localhost:3000",
                },
            )
            assert r.status_code == 200
            r = c.post(url, json=INIT, headers={**JSON_HDRS, "Host": f"other.lan:{srv.port}"})
            assert r.status_code == 421
    finally:
        srv.proc.terminate()
        srv.proc.wait(timeout=10)


def test_mcp_http_caps_bodies_like_memstrata_serve(remote: Server) -> None:
    """`memstrata mcp --http` refuses a declared 100 GB body at once, with the same 413
    answer as every route of `memstrata serve` (`web.bodies`)."""
    head = [
        b"POST /mcp HTTP/1.1",
        f"Host: 127.0.0.1:{remote.port}".encode(),
        b"Accept: application/json, text/event-stream",
        b"Content-Type: application/json",
        b"Content-Length: 107374182400",
        b"Authorization: Bearer " + TOKEN.encode(),
    ]
    with socket.create_connection(("127.0.0.1", remote.port), timeout=60) as s:
        s.sendall(b"\r\n".join(head) + b"\r\n\r\n")  # and not one byte of the body
        data = b""
        while b"\r\n\r\n" not in data or not data.rstrip().endswith(b"}"):
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    assert int(data.split(b" ", 2)[1]) == 413
    assert json.loads(data.split(b"\r\n\r\n", 1)[1])["error"]["code"] == "entry_too_large"
    assert remote.proc.poll() is None
