"""Both MCP protocol revisions (issue 23 item 5): 2025-11-25 (the initialize handshake) and
2026-07-28 (stateless: no initialize, the per-request envelope, `server/discover`,
`subscriptions/listen`), driven by the SDK's own client at each revision over stdio
(`memstrata mcp`, the hand-written fast path) and streamable HTTP (`memstrata mcp --http`
and the `/mcp` of `memstrata serve`): the tool listing, every default tool called once,
the resources, and the errors (a tool error, an unknown tool, bad arguments).

`mode="legacy"` speaks 2025-11-25; `mode="2026-07-28"` adopts the stateless revision
without a probe; `mode="auto"` probes `server/discover` and falls back to `initialize`
only when the server does not answer it (before this change the stdio server did not,
and a 2026-07-28 client could not list its tools: results lacked `resultType`).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

mcp = pytest.importorskip("mcp")
jsonschema = pytest.importorskip("jsonschema")
from mcp.client.stdio import StdioServerParameters  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

from mcp import Client  # noqa: E402

EXE = shutil.which("memstrata", path=str(Path(sys.executable).parent)) or "memstrata"
MODERN = "2026-07-28"
# One call of every tool the default groups list (a tool listed without a call here fails
# the test, so a new default tool must be exercised too).
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("memory_write", {"path": "CONTEXT.md", "content": "# Project\nwe use PostgreSQL 16\n"}),
    ("memory_read", {"path": "CONTEXT.md"}),
    ("memory_replace", {"path": "CONTEXT.md", "old_str": "16", "new_str": "16.2"}),
    ("memory_insert", {"path": "CONTEXT.md", "line": 0, "text": "<!-- notes -->"}),
    ("memory_list", {}),
    ("update_status", {"new_status": "Moving to PostgreSQL", "next_steps": ["write the DDL"]}),
    ("log_activity", {"entry_type": "THOUGHT", "content": "row-level security per tenant"}),
    ("save_fact", {"key": "db_engine", "value": "PostgreSQL 16", "category": "config"}),
    ("record_decision", {"text": "Use PostgreSQL 16 with row-level security"}),
    ("get_fact", {"key": "db_engine"}),
    ("recall_memory", {"query": "PostgreSQL row-level security"}),
    ("memory_get", {}),  # the uid of recall_memory's first hit
]


def _env() -> dict[str, str]:
    return {k: os.environ[k] for k in ("PATH", "PYTHONPATH", "HOME") if k in os.environ}


def _stdio(home: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=EXE, args=["--home", str(home), "--agent", "finn", "mcp"], env=_env()
    )


async def _exercise(c: Client, *, version: str, over: str) -> dict[str, Any]:
    """Everything an agent does with the server, at the negotiated `version`; returns the
    tool listing (for comparisons across transports)."""
    assert c.protocol_version == version
    tools = {t.name: t for t in (await c.list_tools()).tools}
    assert set(tools) == {name for name, _ in CALLS}, sorted(tools)
    uid = None
    for name, args in CALLS:
        if name == "memory_get":
            args = {"uid": uid}
        r = await c.call_tool(name, args)
        assert not r.is_error, (over, version, name, r.content)
        data = r.structured_content
        assert isinstance(data, dict) and r.content[0].text, (name, r)
        jsonschema.validate(data, tools[name].output_schema)
        if name == "recall_memory":
            assert data["results"], data
            uid = data["results"][0]["uid"]
    assert (await c.call_tool("get_fact", {"key": "db_engine"})).structured_content[
        "value"
    ] == "PostgreSQL 16"
    # resources
    uris = {r.uri for r in (await c.list_resources()).resources}
    assert {"memory://context", "memory://prompt-context"} <= {str(u) for u in uris}
    text = (await c.read_resource("memory://context")).contents[0].text
    assert "PostgreSQL 16.2" in text and "<!-- notes -->" in text
    assert (
        "Moving to PostgreSQL"
        in (await c.read_resource("memory://prompt-context")).contents[0].text
    )
    # errors: a tool error (an agent can act on it), bad arguments, an unknown tool
    err = await c.call_tool("get_fact", {"key": "no-such-fact"})
    assert err.is_error and "not_found" in err.content[0].text
    bad = await c.call_tool("get_fact", {"kye": "db_engine"})
    assert bad.is_error and "key" in bad.content[0].text
    bad_type = await c.call_tool("recall_memory", {"query": "x", "n_results": "five"})
    assert bad_type.is_error and "n_results" in bad_type.content[0].text
    try:  # stdio answers a JSON-RPC error (-32602), the SDK a tool error: both name it
        unknown = await c.call_tool("no_such_tool", {})
        assert unknown.is_error and "no_such_tool" in unknown.content[0].text, over
    except MCPError as exc:
        assert exc.error.code == -32602 and "no_such_tool" in exc.error.message, over
    if version == MODERN:  # a change stream: acknowledged with what was asked
        async with c.listen(tools_list_changed=True, resource_subscriptions=["memory://context"]):
            pass
    return {
        n: t.model_dump(mode="json", by_alias=True, exclude_none=True) for n, t in tools.items()
    }


@pytest.mark.parametrize(
    ("mode", "version"),
    [("legacy", "2025-11-25"), (MODERN, MODERN), ("auto", MODERN)],
)
def test_stdio_at_each_revision(home: Path, mode: str, version: str) -> None:
    async def main() -> None:
        async with Client(_stdio(home), mode=mode) as c:
            await _exercise(c, version=version, over="stdio")
            if mode == "auto":  # the discover result names the server, its versions, its tools
                assert c.server_info is not None and c.server_info.name == "memstrata"
                assert c.server_capabilities.tools is not None

    anyio.run(main)


def test_stdio_and_the_sdk_server_list_the_same_at_2026(home: Path) -> None:
    """The hand-written 2026 answers equal the SDK server's (in process, same store)."""
    from memstrata import Store
    from memstrata.mcp.server import build_server

    async def main() -> None:
        async with Client(_stdio(home), mode=MODERN) as c:
            fast = {t.name: t for t in (await c.list_tools()).tools}
            fast_res = (await c.list_resources()).resources
            fast_disc = await c.session.send_discover(MODERN)
        with Store(home, agent="finn") as store:
            async with Client(build_server(store), mode=MODERN) as c:
                sdk = {t.name: t for t in (await c.list_tools()).tools}
                sdk_res = (await c.list_resources()).resources
                sdk_disc = await c.session.send_discover(MODERN)
        assert fast == sdk
        assert fast_res == sdk_res
        for key in ("supportedVersions", "instructions", "resultType", "ttlMs", "cacheScope"):
            assert fast_disc[key] == sdk_disc[key], key
        for cap in ("tools", "resources"):
            assert fast_disc["capabilities"][cap] == sdk_disc["capabilities"][cap], cap
        assert fast_disc["_meta"] == sdk_disc["_meta"]  # the serverInfo stamp

    anyio.run(main)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def _http(argv: list[str], marker: str) -> Iterator[str]:
    """A real HTTP server process; yields its /mcp URL once its banner says it listens."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTRATA_")}
    proc = subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env
    )
    killer = threading.Timer(120, proc.kill)  # a server that never says it listens: fail
    killer.start()
    try:
        assert proc.stderr is not None
        url = None
        for line in proc.stderr:
            if marker in line:
                url = line.split(marker, 1)[1].split()[0].rstrip(",")
                break
        assert url, f"no banner (exit {proc.poll()})"
        killer.cancel()
        threading.Thread(target=proc.stderr.read, daemon=True).start()  # keep draining
        yield url
    finally:
        killer.cancel()
        proc.terminate()
        proc.wait(timeout=30)


@pytest.mark.parametrize("surface", ["mcp --http", "serve"])
def test_http_at_each_revision(home: Path, surface: str) -> None:
    """`memstrata mcp --http` and the /mcp of `memstrata serve`, each at both revisions
    (three clients on one server), list the same tools as stdio does."""
    if surface == "serve":
        pytest.importorskip("fastapi")
        argv = [EXE, "--home", str(home), "--agent", "finn", "serve", "--port", "0"]
        marker = "MCP: "
    else:
        argv = [EXE, "--home", str(home), "--agent", "finn", "mcp", "--http"]
        argv += ["--port", str(_free_port())]
        marker = "MCP server on "

    async def main(url: str) -> None:
        listings = []
        for mode, version in (("legacy", "2025-11-25"), (MODERN, MODERN), ("auto", MODERN)):
            async with Client(url, mode=mode) as c:
                listings.append(await _exercise(c, version=version, over=surface))
        async with Client(_stdio(home), mode=MODERN) as c:
            tools = (await c.list_tools()).tools
            stdio = {
                t.name: t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools
            }
        assert all(listing == stdio for listing in listings)

    with _http(argv, marker) as url:
        anyio.run(main, url)


# -- the wire, request by request ------------------------------------------------------------

META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


def _wire(messages: list[dict[str, Any]], argv: list[str]) -> dict[Any, dict[str, Any]]:
    """Send raw lines to a stdio server process and read until every request is answered
    (a `subscriptions/listen` by its acknowledgement: its result comes when the stream
    ends); the answers by id, notifications by method. stdin stays open until then, as a
    client's does."""
    want: set[Any] = set()
    for m in messages:
        listen = m["method"] == "subscriptions/listen"
        want.add("notifications/subscriptions/acknowledged" if listen else m["id"])
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=_env(),
    )
    killer = threading.Timer(120, proc.kill)  # a request never answered: fail, never hang
    killer.start()
    out: dict[Any, dict[str, Any]] = {}
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
        proc.stdin.flush()
        while not want <= set(out):
            line = proc.stdout.readline()
            assert line, f"the server stopped; answered {sorted(map(str, out))}"
            msg = json.loads(line)
            out[msg["id"] if "id" in msg else msg["method"]] = msg
    finally:
        killer.cancel()
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(timeout=30)
    return out


def _req(
    mid: int, method: str, meta: dict[str, Any] | None = META, **params: Any
) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": mid,
        "method": method,
        "params": {**({"_meta": meta} if meta is not None else {}), **params},
    }


def test_the_era_rules_on_the_wire_match_the_sdk_server(home: Path) -> None:
    """The same raw lines to `memstrata mcp` and to the SDK's stdio server over the same
    store: the same era decisions and envelope errors (codes and data)."""
    later = {**META, "io.modelcontextprotocol/protocolVersion": "2099-01-01"}
    modern = [
        _req(1, "server/discover"),
        _req(2, "tools/list"),
        {**INIT, "id": 3},  # the handshake on a 2026 connection
        _req(4, "tools/list", meta=None),  # no envelope
        _req(5, "tools/list", meta={"io.modelcontextprotocol/protocolVersion": MODERN}),
        _req(6, "tools/list", meta=later),  # a version not served
        _req(7, "ping"),  # gone at 2026-07-28
        _req(8, "logging/setLevel", level="info"),
        _req(9, "resources/templates/list"),
        _req(10, "subscriptions/listen", notifications={"toolsListChanged": True}),
    ]
    legacy = [
        INIT,
        _req(2, "tools/list"),  # the 2026 envelope on a handshake connection
        _req(3, "tools/list", meta=None),
        _req(4, "ping", meta=None),
    ]
    fast = [EXE, "--home", str(home), "--agent", "finn", "mcp"]
    sdk = [
        sys.executable,
        "-c",
        "import sys\n"
        "from memstrata import Store\n"
        "from memstrata.mcp.server import build_server\n"
        "build_server(Store(sys.argv[1], agent='finn')).run('stdio')\n",
        str(home),
    ]
    answers = {}
    for messages in (modern, legacy):
        ours, theirs = _wire(messages, fast), _wire(messages, sdk)
        answers[id(messages)] = ours
        for m in messages:
            if m["method"] == "subscriptions/listen":
                continue
            mine, sdks = ours[m["id"]], theirs[m["id"]]
            assert ("error" in mine) == ("error" in sdks), (m, mine, sdks)
            if "error" in mine:
                assert mine["error"]["code"] == sdks["error"]["code"], (m, mine, sdks)
                if isinstance(sdks["error"].get("data"), dict):  # the versions served
                    assert mine["error"]["data"] == sdks["error"]["data"], (m, mine, sdks)
            elif messages is modern:
                assert mine["result"]["resultType"] == "complete", m
                assert mine["result"]["_meta"] == sdks["result"]["_meta"], m  # serverInfo
            else:
                assert "resultType" not in mine["result"], m
    ours = answers[id(modern)]
    ack = ours["notifications/subscriptions/acknowledged"]["params"]
    assert ack == {
        "_meta": {"io.modelcontextprotocol/subscriptionId": 10},
        "notifications": {"toolsListChanged": True},
    }
    assert 10 not in ours  # the listen stream stays open: no result until it ends
    assert ours[2]["result"]["ttlMs"] == 0 and ours[2]["result"]["cacheScope"] == "private"
    assert ours[3]["error"]["data"] == {"supported": [MODERN], "requested": "2025-11-25"}
    assert ours[6]["error"]["data"] == {"supported": [MODERN], "requested": "2099-01-01"}


def test_the_names_are_the_sdks() -> None:
    """`mcp.revisions` restates the SDK's constants (it must not import the SDK)."""
    import mcp_types
    from mcp.shared.subscriptions import SUBSCRIPTION_ID_META_KEY
    from mcp_types.methods import CACHEABLE_METHODS
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

    from memstrata.mcp import revisions as r

    assert r.HANDSHAKE_VERSIONS == HANDSHAKE_PROTOCOL_VERSIONS
    assert r.MODERN_VERSIONS == MODERN_PROTOCOL_VERSIONS
    assert r.CACHEABLE == CACHEABLE_METHODS
    assert r.PROTOCOL_VERSION_KEY == mcp_types.PROTOCOL_VERSION_META_KEY
    assert r.CLIENT_CAPABILITIES_KEY == mcp_types.CLIENT_CAPABILITIES_META_KEY
    assert r.SERVER_INFO_KEY == mcp_types.SERVER_INFO_META_KEY
    assert r.SUBSCRIPTION_ID_KEY == SUBSCRIPTION_ID_META_KEY
    assert r.UNSUPPORTED_PROTOCOL_VERSION == mcp_types.UNSUPPORTED_PROTOCOL_VERSION


def test_2026_tools_list_loads_neither_the_sdk_nor_the_store(home: Path) -> None:
    """The fast start holds at 2026-07-28: discover and tools/list answered with no SDK,
    pydantic, anyio or uvicorn import, and nothing indexed before the first tool call."""
    probe = (
        "import io, sys\n"
        "from memstrata.cli.main import main\n"
        "sys.stdin = io.StringIO(sys.argv[1])\n"
        "main(['--home', sys.argv[2], '--agent', 'finn', 'mcp'])\n"
        "print(sorted(m for m in ('mcp', 'pydantic', 'anyio', 'uvicorn') if m in sys.modules),"
        " file=sys.stderr)\n"
    )
    msgs = "".join(
        json.dumps(m) + "\n" for m in [_req(1, "server/discover"), _req(2, "tools/list")]
    )
    home.mkdir(parents=True)
    (home / "config.toml").write_text('[memory]\nmode = "agent-controlled"\n')
    r = subprocess.run(
        [sys.executable, "-c", probe, msgs, str(home)], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0, r.stderr
    replies = [json.loads(line) for line in r.stdout.splitlines()]
    assert [m["result"]["resultType"] for m in replies] == ["complete", "complete"]
    assert replies[0]["result"]["supportedVersions"] == [MODERN]
    assert replies[1]["result"]["tools"]
    assert r.stderr.strip().splitlines()[-1] == "[]"
    assert not (home / "index").exists()
