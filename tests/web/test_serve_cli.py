"""`memstrata serve` on an address other than loopback: without any token it refuses
(exit 2, a message naming where a token comes from) before binding or printing its
banner; with `[serve] tokens` it starts, and every request needs a token.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import httpx
import pytest
from tests.web.conftest import CONFIG, EXE, start_server, stop_server


@pytest.mark.parametrize("host", ["0.0.0.0", "::"])
def test_exposed_bind_without_a_token_exits_2_before_the_banner(tmp_path: Path, host: str) -> None:
    env = {
        k: v for k, v in os.environ.items() if k not in ("MEMSTRATA_MCP_TOKEN", "MEMSTRATA_AGENT")
    }
    r = subprocess.run(
        [EXE, "--home", str(tmp_path / "store"), "serve", "--host", host, "--port", "0"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert r.returncode == 2, r.stderr
    assert f"binding {host} exposes memory beyond this machine" in r.stderr
    assert "--token, MEMSTRATA_MCP_TOKEN, or [serve] tokens in config.toml" in r.stderr
    assert "memstrata serve on" not in r.stderr and "Traceback" not in r.stderr
    assert r.stdout == ""


def test_exposed_bind_with_serve_tokens_starts_and_asks_for_them(tmp_path: Path) -> None:
    home = tmp_path / "store"
    home.mkdir()
    (home / "config.toml").write_text(CONFIG, encoding="utf-8")
    server = start_server(home, "--host", "0.0.0.0")
    try:
        assert httpx.get(f"{server.base}/api/whoami", timeout=30).status_code == 401
        with server.client("finn") as c:
            assert c.get("/api/whoami").json()["agent"] == "finn"
    finally:
        stop_server(server)
    assert any("memstrata serve on" in line for line in server.log)
