"""The embedding daemons a test run started, stopped by their pids (`conftest`)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path


def stop_embedding_daemons(under: Path) -> list[int]:
    """SIGTERM the embedding daemons (`memstrata.store.vector_daemon`) whose command line
    names a path under `under` (their socket, or the store they build), and wait until
    they are gone; returns their pids. Tests start them through CLI processes whose
    environment is a user's (no `MEMSTRATA_EMBED_IDLE`): they would idle for 20 minutes
    after the run."""
    mark, found = str(under).rstrip("/") + "/", []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        if "memstrata.store.vector_daemon" in argv and any(a.startswith(mark) for a in argv):
            try:
                os.kill(int(proc.name), signal.SIGTERM)
            except ProcessLookupError:
                continue
            found.append(int(proc.name))
    deadline = time.monotonic() + 30
    for pid in found:
        while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
            try:
                with open(f"/proc/{pid}/stat", "rb") as f:  # a zombie is as good as gone
                    if f.read().rsplit(b")", 1)[-1].split()[0] == b"Z":
                        break
            except OSError:
                break
            time.sleep(0.05)
    return found
