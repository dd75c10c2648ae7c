"""First-contact timings (README, issue 12), measured from real processes:

    PYTHONPATH=src .venv/bin/python tests/first_contact_timings.py [stdio] [context] [semantic]

* stdio: spawn `memstrata mcp` -> `tools/list` answered, median of 7, at each protocol
  era: after `initialize` (2025-11-25), and after `server/discover` (2026-07-28);
* context: `memstrata context` on a store with a 50-entry LOG, 20 runs: wall and CPU
  (the process's user + system time) at p50 and p95;
* semantic: `memstrata search --mode semantic` with `[search] embedder = "local"`: the
  first call (starts the embedding daemon: loads torch and the model, embeds the store)
  and the median of 5 later calls. The daemon gets a private runtime folder and exits
  by itself 60 s after its last request.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EXE = shutil.which("memstrata", path=str(Path(sys.executable).parent)) or "memstrata"
HANDSHAKE = "".join(
    json.dumps(m) + "\n"
    for m in [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "timings", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
)
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "timings", "version": "1"},
}
STATELESS = "".join(  # 2026-07-28: discover (as mode="auto" clients probe), then tools/list
    json.dumps(m) + "\n"
    for m in [
        {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": ENVELOPE}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": ENVELOPE}},
    ]
)


def pct(xs: list[float], p: float) -> float:
    return sorted(xs)[round(p * (len(xs) - 1))]


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one process run to completion (it must succeed)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, timeout=600
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def stdio(home: Path, env: dict[str, str]) -> None:
    for name, messages in (
        ("2025-11-25 initialize", HANDSHAKE),
        ("2026-07-28 discover", STATELESS),
    ):
        _stdio(home, env, name, messages)


def _stdio(home: Path, env: dict[str, str], name: str, messages: str) -> None:
    """Wall time from spawn to the tools/list answer, and the CPU the server process used
    in all (start, answers, exit: steadier than wall time on a loaded machine)."""
    runs, cpus = [], []
    for _ in range(7):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        with subprocess.Popen(
            [EXE, "--home", str(home), "--agent", "finn", "mcp"],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        ) as proc:
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(messages)
            proc.stdin.flush()
            for line in proc.stdout:
                reply = json.loads(line)
                if reply.get("id") == 2:
                    assert "tools" in reply["result"], reply
                    runs.append(time.perf_counter() - start)
                    break
            proc.stdin.close()
            proc.wait(timeout=60)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append((after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime))
    print(
        f"stdio spawn -> {name} + tools/list: median {statistics.median(runs):.3f} s "
        f"(runs {', '.join(f'{r:.3f}' for r in runs)}); process CPU median "
        f"{statistics.median(cpus):.3f} s"
    )


def context(home: Path, env: dict[str, str]) -> None:
    base = [EXE, "--home", str(home), "--agent", "finn"]
    for i in range(50):
        subprocess.run(
            [*base, "log", "append", "TOOL_USE", f"ran step {i} of the migration"],
            env=env,
            check=True,
            capture_output=True,
        )
    walls, cpus = zip(*(timed([*base, "context"], env) for _ in range(20)), strict=True)
    print(
        f"context (50-entry LOG, 20 runs): wall p50 {pct(list(walls), 0.5):.3f} s, "
        f"p95 {pct(list(walls), 0.95):.3f} s; CPU p50 {pct(list(cpus), 0.5):.3f} s, "
        f"p95 {pct(list(cpus), 0.95):.3f} s"
    )


def semantic(home: Path, env: dict[str, str]) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text('[search]\nembedder = "local"\n')
    base = [EXE, "--home", str(home), "--agent", "finn"]
    subprocess.run(
        [*base, "facts", "set", "db_engine", "PostgreSQL 16"],
        env=env,
        check=True,
        capture_output=True,
    )
    private = tempfile.mkdtemp(prefix="memstrata-rt-", dir="/tmp")
    env = {**env, "XDG_RUNTIME_DIR": private, "MEMSTRATA_EMBED_IDLE": "60"}
    query = [*base, "search", "which database do we use?", "--mode", "semantic"]
    first = timed(query, env)[0]
    later = [timed(query, env)[0] for _ in range(5)]
    print(
        f"semantic search from the CLI: first call {first:.2f} s (starts the daemon), "
        f"later calls median {statistics.median(later):.3f} s"
    )


def main(which: list[str]) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTRATA_")}
    with tempfile.TemporaryDirectory() as tmp:
        for name, fn in (("stdio", stdio), ("context", context), ("semantic", semantic)):
            if not which or name in which:
                fn(Path(tmp) / name, env)


if __name__ == "__main__":
    main(sys.argv[1:])
