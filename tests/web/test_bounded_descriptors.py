"""A long-lived `memstrata serve` holds no descriptor per file it ever wrote (issue 20 item 2).

Each new session is a new transcript file, and each file written used to keep its
lock file open until the store closed: under `ulimit -n 1024` the server answered
500 (`Too many open files`) at about the 1,007th new session. Here a real server runs
with RLIMIT_NOFILE 256 (set in the child before it starts) and takes new sessions
over the API; its open descriptors must stay flat. 600 sessions by default (the
unfixed server failed at the 241st), 5,000 with MEMSTRATA_SLOW=1 (about 40 s).
"""

from __future__ import annotations

import os
import re
import resource
import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from memstrata import Store

from .conftest import BANNER, EXE

LIMIT = 256
SESSIONS = 5000 if os.environ.get("MEMSTRATA_SLOW") else 600
AGENTS = 100  # spread over agents: one agent's sessions.json is rewritten whole per session
CLIENTS = 4


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (LIMIT, LIMIT))


def _open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def _serve(home: Path) -> tuple[subprocess.Popen[str], str, list[str]]:
    proc = subprocess.Popen(
        [EXE, "--home", str(home), "serve", "--port", "0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "MEMSTRATA_HOME": str(home)},
        preexec_fn=_limited,
    )
    assert proc.stderr is not None
    log: list[str] = []
    while True:
        line = proc.stderr.readline()
        if not line:
            proc.wait()
            raise RuntimeError("memstrata serve exited:\n" + "".join(log))
        log.append(line)
        if m := BANNER.search(line):
            base = f"http://127.0.0.1:{m.group(1)}"
            break
    threading.Thread(target=lambda: log.extend(iter(proc.stderr.readline, "")), daemon=True).start()  # type: ignore[union-attr]
    return proc, base, log


@pytest.mark.slow
@pytest.mark.timeout(900)  # 5,000 sessions with MEMSTRATA_SLOW=1 on a loaded machine
def test_a_server_takes_thousands_of_new_sessions_under_a_low_descriptor_limit(
    tmp_path: Path,
) -> None:
    home = tmp_path / "store"
    with Store(home) as s:
        for i in range(AGENTS):
            s.engine.truth.rewrite(f"agents/a{i}/", b"")
    proc, base, log = _serve(home)
    try:
        with open(f"/proc/{proc.pid}/limits") as fh:
            assert re.search(rf"Max open files\s+{LIMIT}\s+{LIMIT}", fh.read())
        peak = [0]

        def client(k: int) -> list[str]:
            failed: list[str] = []
            with httpx.Client(base_url=base, timeout=60.0) as c:
                for i in range(k, SESSIONS, CLIENTS):
                    r = c.post(
                        f"/api/agents/a{i % AGENTS}/sessions/s{i}/messages",
                        json={"messages": [{"role": "user", "content": f"hello {i}"}]},
                    )
                    if r.status_code != 201:
                        failed.append(f"session {i}: {r.status_code} {r.text[:200]}")
                        break
                    if i % 100 == 0:
                        peak[0] = max(peak[0], _open_fds(proc.pid))
            return failed

        with ThreadPoolExecutor(CLIENTS) as pool:
            failures = [f for fs in pool.map(client, range(CLIENTS)) for f in fs]
        assert not failures, (failures[:3], "".join(log[-20:]))
        after = _open_fds(proc.pid)
        with httpx.Client(base_url=base, timeout=60.0) as c:
            listed = c.get("/api/agents/a7/sessions").json()["sessions"]
        assert len(listed) == SESSIONS // AGENTS
        # Flat: the locks held now plus a small cache, never one per file written.
        assert after < 100 and peak[0] < 100, (after, peak)
        print(f"{SESSIONS} new sessions: {after} descriptors open after, peak {peak[0]}")
    finally:
        proc.terminate()
        proc.wait(timeout=30)
