"""`memstrata mcp` over stdio survives hostile input: a request nested deeper than the JSON
parser allows, and a line longer than the documented limit, each get a JSON-RPC error,
and the next request is served (issue 10, bounds). A real subprocess, raw lines."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from memstrata import Store, limits

EXE = shutil.which("memstrata", path=str(Path(sys.executable).parent)) or "memstrata"


class Raw:
    def __init__(self, home: Path) -> None:
        self.proc = subprocess.Popen(
            [EXE, "--home", str(home), "--agent", "finn", "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )

    def send(self, line: bytes) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()
        reply = self.proc.stdout.readline()
        assert reply, f"the server died (exit code {self.proc.wait(timeout=30)})"
        return json.loads(reply)  # type: ignore[no-any-return]

    def call(self, mid: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return self.send(
            json.dumps({"jsonrpc": "2.0", "id": mid, "method": method, "params": params}).encode()
        )

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        assert self.proc.wait(timeout=60) == 0


def _log(content: str, metadata: str = "null") -> bytes:
    return (
        b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"log_activity",'
        b'"arguments":{"entry_type":"THOUGHT","content":"'
        + content.encode()
        + b'","metadata":'
        + metadata.encode()
        + b"}}}"
    )


def test_a_too_deep_request_and_a_too_long_line_get_errors_and_the_server_goes_on(
    home: Path,
) -> None:
    server = Raw(home)
    try:
        init = server.call(
            1,
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        )
        assert init["result"]["serverInfo"]["name"]
        deep = 1500
        reply = server.send(_log("deep", '{"a":' * deep + "1" + "}" * deep))
        assert reply["error"]["code"] == -32700 and "nested too deeply" in reply["error"]["message"]
        # Deep, but parseable: the library's own bound refuses it as a tool error.
        reply = server.send(_log("deep", '{"a":' * 200 + "1" + "}" * 200))
        assert reply["result"]["isError"] is True
        # One character over the line limit: read past in chunks, answered, nothing done.
        long_line = _log("x" * limits.MCP_LINE_CHARS)
        assert len(long_line) > limits.MCP_LINE_CHARS
        reply = server.send(long_line)
        assert reply["error"]["code"] == -32600 and "line limit" in reply["error"]["message"]
        reply = server.send(_log("still serving"))
        assert reply["id"] == 7 and reply["result"]["isError"] is False
    finally:
        server.close()
    with Store(home, agent="finn") as s:
        assert [e.content for e in s.agent().log.entries()] == ["still serving"]
