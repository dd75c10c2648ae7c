"""Issue 24's "done when" for versions, through the real surfaces, on both truths: a
destructive `memory_write` over MCP (the official client, `memstrata mcp` over stdio)
replaces CONTEXT.md; `memstrata restore` (a CLI process) and then the API of a real
`memstrata serve` bring the old CONTEXT.md back byte for byte, the API refusing a
restore whose expected content is stale (409) and another agent's (403). And a writer
killed (SIGKILL) inside a replace loses neither the old content nor the new."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest

from memstrata import Store

mcp = pytest.importorskip("mcp")
from mcp.client.stdio import StdioServerParameters  # noqa: E402
from tests.web.conftest import CONFIG, EXE, start_server, stop_server  # noqa: E402

from mcp import Client  # noqa: E402

# Bytes an editor could mangle: CRLF, trailing spaces, non-ASCII, no final newline.
OLD = "# Context\r\nprefers tea  \r\nnaïve café ☕ — keep this\n\nlast line, no newline"
CLOBBER = "# Context\n(overwritten by a confused agent)\n"


@pytest.fixture(autouse=True)
def _on_both_truths(backend: str) -> str:
    return backend


def _env() -> dict[str, str]:
    keep = ("PATH", "PYTHONPATH", "MEMSTRATA_DATABASE_URL", "HF_HUB_OFFLINE")
    return {k: os.environ[k] for k in keep if k in os.environ}


def _mcp_write(home: Path, content: str) -> None:
    """One `memory_write` of CONTEXT.md by finn over MCP stdio (the official client)."""
    params = StdioServerParameters(
        command=EXE, args=["--home", str(home), "--agent", "finn", "mcp"], env=_env()
    )

    async def main() -> None:
        async with Client(params) as c:
            r = await c.call_tool("memory_write", {"path": "CONTEXT.md", "content": content})
            assert not r.is_error, r.content

    anyio.run(main)


def _context_bytes(home: Path) -> bytes:
    with Store(home, sync=False, watch=False) as s:
        found = s.engine.truth.read("agents/finn/memory/CONTEXT.md")
        assert found is not None
        return found.data


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [EXE, "--home", str(home), "--agent", "finn", *args],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=120,
    )


def test_a_restore_brings_back_context_md_byte_for_byte_after_a_destructive_memory_write(
    home: Path,
) -> None:
    home.mkdir(parents=True)
    (home / "config.toml").write_text(CONFIG, encoding="utf-8")
    old_sha = hashlib.sha256(OLD.encode()).hexdigest()
    _mcp_write(home, OLD)
    _mcp_write(home, CLOBBER)  # destructive: the old CONTEXT.md is gone from the file
    assert _context_bytes(home) == CLOBBER.encode()

    # 1. the CLI: history finds it, restore brings it back
    listed = _cli(home, "history", "CONTEXT.md", "--json")
    assert listed.returncode == 0, listed.stderr
    versions = json.loads(listed.stdout)["versions"]
    assert versions[0]["sha256"] == hashlib.sha256(CLOBBER.encode()).hexdigest()
    assert versions[0]["current"] and versions[0]["surface"] == "mcp memory_write"
    assert versions[1]["sha256"] == old_sha
    stale = _cli(home, "restore", "CONTEXT.md", versions[1]["id"], "--expect-sha", old_sha)
    assert stale.returncode == 4 and "changed since it was read" in stale.stderr
    assert _context_bytes(home) == CLOBBER.encode()  # the refused restore wrote nothing
    done = _cli(home, "restore", "CONTEXT.md", versions[1]["id"])
    assert done.returncode == 0, done.stderr
    assert _context_bytes(home) == OLD.encode()

    # 2. the API of a real server, after another destructive write
    _mcp_write(home, CLOBBER)
    server = start_server(home)
    try:
        with server.client("finn") as c:
            hist: dict[str, Any] = c.get(
                "/api/agents/finn/history", params={"path": "CONTEXT.md"}
            ).json()
            assert hist["file"] == "agents/finn/memory/CONTEXT.md"
            current = hist["versions"][0]
            assert current["current"] and current["ts"].endswith("Z")
            old = next(v for v in hist["versions"] if v["sha256"] == old_sha)
            shown = c.get(f"/api/agents/finn/versions/{old['id']}", params={"path": "CONTEXT.md"})
            assert shown.json()["text"] == OLD
            body = {"path": "CONTEXT.md", "version": old["id"], "expected_sha": old_sha}
            conflict = c.post("/api/agents/finn/restore", json=body)
            assert conflict.status_code == 409, conflict.text
            assert conflict.json()["error"]["code"] == "stale_write"
            assert _context_bytes(home) == CLOBBER.encode()
            body["expected_sha"] = current["sha256"]
            ok = c.post("/api/agents/finn/restore", json=body)
            assert ok.status_code == 200, ok.text
            after = ok.json()["versions"][0]
            assert after["current"] and after["sha256"] == old_sha
            assert after["surface"] == "api/restore" and after["note"] == f"restore of {old['id']}"
        assert _context_bytes(home) == OLD.encode()
        with server.client("mira") as other:  # another project agent: the gate says no
            assert (
                other.get("/api/agents/finn/history", params={"path": "CONTEXT.md"}).status_code
                == 403
            )
            denied = other.post("/api/agents/finn/restore", json=body)
            assert denied.status_code == 403
    finally:
        stop_server(server)
    # every content CONTEXT.md held is still there, restores included
    with Store(home, agent="finn") as s:
        kept = [v.sha256 for v in s.agent().versions.history("CONTEXT.md").versions]
    clobber = hashlib.sha256(CLOBBER.encode()).hexdigest()
    assert kept == [old_sha, clobber, old_sha, clobber, old_sha]


WRITER = textwrap.dedent(
    """
    import hashlib, sys, time
    from memstrata import Store

    home, where, name = sys.argv[1], sys.argv[2], sys.argv[3]
    store = Store(home, agent="finn")
    live = f"agents/finn/memory/{name}"
    layer = store.agent().now if name == "NOW.md" else store.agent().context
    real = {"append": store.engine.truth.append, "rewrite": store.engine.truth.rewrite}
    NEW = hashlib.sha256(b"new\\n").hexdigest().encode()  # its record names its sha256

    def stop(name, path):
        print("in the window", flush=True)
        time.sleep(600)  # killed here

    def append(path, data, **kw):
        if where == "before-record" and path.endswith("/log.jsonl") and NEW in data:
            stop("append", path)
        return real["append"](path, data, **kw)

    def rewrite(path, data, **kw):
        if where == "before-replace" and path == live and data == b"new\\n":
            stop("rewrite", path)
        return real["rewrite"](path, data, **kw)

    store.engine.truth.append = append
    store.engine.truth.rewrite = rewrite
    layer.write("old\\n")
    print("old written", flush=True)
    layer.write("new\\n")
    """
)


@pytest.mark.parametrize("where", ["before-replace", "before-record"])
@pytest.mark.parametrize("name", ["CONTEXT.md", "NOW.md"])  # a blob; the record's own text
def test_a_writer_killed_inside_a_replace_loses_neither_the_old_nor_the_new(
    home: Path, tmp_path: Path, where: str, name: str
) -> None:
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    proc = subprocess.Popen(
        [sys.executable, str(script), str(home), where, name],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ},
    )
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline(), proc.stdout.readline()]
        assert lines == ["old written\n", "in the window\n"], lines
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait(timeout=60)
    with Store(home, agent="finn") as s:
        mem = s.agent()
        layer = mem.now if name == "NOW.md" else mem.context
        live = layer.read()
        hist = mem.versions.history(name).versions
        held = {mem.versions.read(name, v.id) for v in hist}
        assert "old\n" in held and live in held
        if where == "before-replace":
            assert live == "old\n" and hist[0].current and hist[0].kept
        else:  # replaced, not recorded: shown as the unrecorded current content
            assert live == "new\n" and hist[0].current and not hist[0].kept
        layer.write("newer\n")  # the next write keeps what it finds
        after = [mem.versions.read(name, v.id) for v in mem.versions.history(name).versions]
    assert (
        after == ["newer\n", "new\n", "old\n"] if where == "before-record" else ["newer\n", "old\n"]
    )
