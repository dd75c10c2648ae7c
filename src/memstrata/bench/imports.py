"""`memstrata bench import`: import time per member at 1k/10k/30k members (issue 20).

One synthetic export per size, written as `memstrata export` writes one (a `.tar.gz`
of Markdown memory files spread over 50 agents, with its manifest), imported into an
empty store in this process. Reported per size: seconds in all and per phase
(stage + verify + plan, moving into place, catching the index up), milliseconds per
member, and the most descriptors the process had open while it ran. Growth is linear
when ms/member stays flat across sizes; descriptors must not grow with the size.

`--dir` says where the archives and stores go (default: the system's temp folder, a
real disk, so every member costs its fsyncs; `/dev/shm` leaves the disk out).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memstrata.operations.transfer import import_archive
from memstrata.store.view import Store

AGENTS = 50


def build_archive(path: Path, members: int) -> Path:
    """A verified export of `members` memory files (about 200 bytes each)."""
    rows = []
    with tarfile.open(path, "w:gz", compresslevel=1) as tar:
        for i in range(members):
            name = f"agents/a{i % AGENTS}/memory/notes/n{i}.md"
            data = (f"# Note {i}\n\nimported note number {i}: " + "lorem ipsum " * 12).encode()
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(data), int(time.time())
            tar.addfile(info, io.BytesIO(data))
            rows.append(
                {"path": name, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
            )
        manifest = json.dumps({"format": "memstrata-export", "version": 1, "files": rows}).encode()
        info = tarfile.TarInfo("memstrata-export.json")
        info.size = len(manifest)
        tar.addfile(info, io.BytesIO(manifest))
    return path


def _open_fds() -> int:
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:
        return -1  # no /proc here


def run_import_bench(
    sizes: tuple[int, ...],
    folder: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[dict[str, Any]]:
    rows = []
    for n in sizes:
        work = Path(tempfile.mkdtemp(prefix="memstrata-bench-import-", dir=folder))
        try:
            if progress:
                progress(f"building a {n}-member export...")
            archive = build_archive(work / "export.tar.gz", n)
            if progress:
                progress(f"importing {n} members...")
            rows.append(_import(archive, work / "store", n))
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return rows


def _import(archive: Path, home: Path, n: int) -> dict[str, Any]:

    peak = _open_fds()
    marks: dict[str, float] = {}

    def moved(done: int, total: int) -> None:
        nonlocal peak
        marks.setdefault("apply", time.perf_counter())
        if done % 500 == 0 or done == total:
            peak = max(peak, _open_fds())
            marks["applied"] = time.perf_counter()

    with Store(home) as store:
        start = time.perf_counter()
        report = import_archive(store, archive, progress=moved)
        end = time.perf_counter()
        peak = max(peak, _open_fds())
    if report.written != n:
        raise RuntimeError(f"imported {report.written} of {n} members")
    apply, applied = marks.get("apply", end), marks.get("applied", end)
    return {
        "members": n,
        "seconds": round(end - start, 2),
        "ms_per_member": round((end - start) * 1000 / n, 3),
        "stage_s": round(apply - start, 2),
        "move_s": round(applied - apply, 2),
        "index_s": round(end - applied, 2),
        "peak_fds": peak,
        "docs": report.docs,
    }


def format_table(rows: list[dict[str, Any]]) -> str:
    lines = [
        f"{'members':>8} {'seconds':>8} {'ms/member':>10} {'stage s':>8} {'move s':>8} "
        f"{'index s':>8} {'peak fds':>9}"
    ]
    for r in rows:
        lines.append(
            f"{r['members']:>8} {r['seconds']:>8} {r['ms_per_member']:>10} {r['stage_s']:>8} "
            f"{r['move_s']:>8} {r['index_s']:>8} {r['peak_fds']:>9}"
        )
    return "\n".join(lines)
