"""`memstrata bench serve`: the HTTP API and web app against the library, at N entries.

One synthetic store (`synth.populate`: 25% ledger entries, 75% session messages of one
agent), one `memstrata serve` process on 127.0.0.1, in one run:

* API search p50/p95 against the same queries through `Store.search` in this process,
  alternating query by query, reported with the ratio API / library;
* page loads (full HTML) of every page kind: home, timeline (first page and 4,000 records
  deep), ledger, search, sessions, a transcript at a hit, a memory, health, the history
  pages (CONTEXT.md rewritten `VERSIONS` times: its versions with the last change's
  diff, a diff of the oldest against the current, one version whole);
* held load: closed-loop clients (search, timeline, ledger API calls) at rising
  concurrency; the highest request rate whose p95 stays under 100 ms.

The load generator runs on the same machine as the server (loopback), so on a small
machine it takes CPU from the server: the numbers are a floor.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memstrata.bench.synth import Writer, p50_p95, populate
from memstrata.store.view import Store

P95_BUDGET_MS = 100.0
VERSIONS = 50  # [versions] keep's default: a CONTEXT.md with a full history


def _versions(home: Path, n: int = VERSIONS) -> None:
    """The bench agent's CONTEXT.md written `n` times (about 6 KB, a few lines changed
    each time), as an agent's memory_write calls would."""
    lines = [f"- fact {i}: the service keeps setting {i} at value {i * 7}" for i in range(120)]
    with Store(home, agent="bench", sync=False, watch=False) as s:
        for v in range(n):
            for j in range(3):
                k = (v * 7 + j * 31) % len(lines)
                lines[k] = f"- fact {k}: changed in version {v} to {v * 13 + j}"
            s.agent().context.write("# Context\n\n" + "\n".join(lines) + "\n")


def _start(home: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "memstrata", "--home", str(home), "serve", "--port", "0"],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stderr is not None
    for line in proc.stderr:
        m = re.search(r"serve on (http://\S+)", line)
        if m:
            return proc, m.group(1)
    raise RuntimeError("memstrata serve did not start")


def _timed(fn: Callable[[], Any], n: int) -> list[float]:
    out = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return out


async def _load(base: str, concurrency: int, seconds: float, queries: list[str]) -> dict[str, Any]:
    import httpx

    lat: list[float] = []
    errors = 0
    deadline = time.monotonic() + seconds

    async def client(n: int) -> None:
        nonlocal errors
        async with httpx.AsyncClient(base_url=base, timeout=30) as c:
            i = n
            while time.monotonic() < deadline:
                kind = i % 4
                t = time.perf_counter()
                if kind < 2:
                    r = await c.get("/api/search", params={"q": queries[i % len(queries)]})
                elif kind == 2:
                    r = await c.get("/api/agents/bench/timeline", params={"limit": 50})
                else:
                    r = await c.get("/api/ledger", params={"room": f"room-{i % 20}"})
                lat.append((time.perf_counter() - t) * 1000)
                errors += r.status_code != 200
                i += 1

    start = time.monotonic()
    await asyncio.gather(*(client(n) for n in range(concurrency)))
    took = time.monotonic() - start
    p50, p95 = p50_p95(lat)
    return {
        "concurrency": concurrency,
        "requests": len(lat),
        "rps": round(len(lat) / took, 1),
        "p50_ms": round(p50, 2),
        "p95_ms": round(p95, 2),
        "errors": errors,
    }


def run_serve_bench(
    entries: int = 100_000,
    queries: int = 200,
    pages: int = 30,
    seconds: float = 8.0,
    levels: tuple[int, ...] = (1, 2, 4, 8, 16),
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    import httpx

    tmp = Path(tempfile.mkdtemp(prefix="memstrata-bench-serve-"))
    proc = None
    try:
        populate(tmp, entries)
        _versions(tmp)
        store = Store(tmp)  # indexes the files once; the server then opens a caught-up index
        if progress:
            progress(f"{entries} entries indexed ({store.doc_count()} docs)")
        proc, base = _start(tmp)
        w = Writer(5)
        qs = [w.query() for _ in range(queries)]
        with httpx.Client(base_url=base, timeout=30) as c:
            deadline = time.monotonic() + 120
            while True:
                try:
                    if c.get("/api/whoami").status_code == 200:
                        break
                except httpx.TransportError:
                    if time.monotonic() > deadline:
                        raise
                time.sleep(0.05)
            for q in qs[:20]:  # warm both sides the same way
                store.search(q, k=10)
                c.get("/api/search", params={"q": q})
            lib: list[float] = []
            api: list[float] = []
            for q in qs:  # alternating, so both see the same machine load
                lib += _timed(lambda q=q: store.search(q, k=10), 1)  # type: ignore[misc]
                api += _timed(lambda q=q: c.get("/api/search", params={"q": q}), 1)  # type: ignore[misc]
            lp50, lp95 = p50_p95(lib)
            ap50, ap95 = p50_p95(api)
            if progress:
                progress(f"search: library p50 {lp50:.2f} ms, API p50 {ap50:.2f} ms")
            first = c.get("/ledger").text
            deep_cursor = re.search(r'before=([^"&]+)', first)
            hit = c.get("/api/search", params={"q": qs[1], "layers": "sessions"}).json()["hits"]
            views = {
                "home": "/",
                "timeline": "/a/bench/timeline",
                "ledger": "/ledger",
                "ledger room": "/ledger?room=room-3",
                "search page": "/search?q=" + qs[0].replace(" ", "+"),
                "sessions": "/a/bench/sessions",
                "health": "/a/bench/health",
            }
            if hit:  # a hit clicked through: its transcript at the message, and the record
                sid, pos = hit[0]["uid"].split(":")[2:4]
                views["session at a hit"] = f"/a/bench/sessions/{sid}?at={pos}"
                views["memory page"] = f"/memory?uid={hit[0]['uid']}"
            hist = c.get("/api/agents/bench/history", params={"path": "CONTEXT.md"}).json()
            oldest = hist["versions"][-1]["id"]
            views["history, files"] = "/a/bench/history"
            views[f"history of CONTEXT.md ({len(hist['versions'])} versions)"] = (
                "/a/bench/history?path=CONTEXT.md"
            )
            views["history, oldest vs current"] = f"/a/bench/history?path=CONTEXT.md&a={oldest}"
            views["history, a version whole"] = f"/a/bench/history?path=CONTEXT.md&show={oldest}"
            tl = c.get("/api/agents/bench/timeline", params={"limit": 200})
            cursor = tl.json()["next"]
            for _ in range(20):  # 4,000 entries deep
                nxt = c.get(
                    "/api/agents/bench/timeline", params={"limit": 200, "before": cursor}
                ).json()["next"]
                cursor = nxt or cursor
            views["timeline, 4,000 entries deep"] = f"/a/bench/timeline?before={cursor}"
            if deep_cursor:
                views["ledger, page 2"] = f"/ledger?before={deep_cursor.group(1)}"
            loads = {}
            for name, url in views.items():
                samples = _timed(lambda url=url: c.get(url).raise_for_status(), pages)  # type: ignore[misc]
                p50, p95 = p50_p95(samples)
                loads[name] = {"p50_ms": round(p50, 2), "p95_ms": round(p95, 2)}
        held = []
        for level in levels:
            row = asyncio.run(_load(base, level, seconds, qs))
            held.append(row)
            if progress:
                progress(f"held load x{level}: {row['rps']} req/s, p95 {row['p95_ms']} ms")
        ok = [r for r in held if r["p95_ms"] < P95_BUDGET_MS and not r["errors"]]
        best = max(ok, key=lambda r: r["rps"]) if ok else None
        store.close()
        return {
            "entries": entries,
            "cpus": os.cpu_count(),
            "search": {
                "library_p50_ms": round(lp50, 3),
                "library_p95_ms": round(lp95, 3),
                "api_p50_ms": round(ap50, 3),
                "api_p95_ms": round(ap95, 3),
                "ratio_p50": round(ap50 / lp50, 2),
                "ratio_p95": round(ap95 / lp95, 2),
            },
            "pages": loads,
            "held": held,
            "held_best_under_100ms_p95": best,
        }
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=30)
        shutil.rmtree(tmp, ignore_errors=True)


def format_result(r: dict[str, Any]) -> str:
    s = r["search"]
    lines = [
        f"memstrata serve at {r['entries']:,} entries ({r['cpus']} CPUs, load generator on "
        "the same machine)",
        f"search  library p50 {s['library_p50_ms']} ms p95 {s['library_p95_ms']} ms | API "
        f"p50 {s['api_p50_ms']} ms p95 {s['api_p95_ms']} ms | ratio p50 {s['ratio_p50']}x "
        f"p95 {s['ratio_p95']}x",
        "page loads (full HTML):",
    ]
    lines += [
        f"  {k:<32} p50 {v['p50_ms']:>8} ms  p95 {v['p95_ms']:>8} ms" for k, v in r["pages"].items()
    ]
    lines.append("held load (search 50%, timeline 25%, ledger 25%):")
    lines += [
        f"  x{h['concurrency']:<3} {h['rps']:>8} req/s  p50 {h['p50_ms']:>7} ms  p95 "
        f"{h['p95_ms']:>7} ms  errors {h['errors']}"
        for h in r["held"]
    ]
    best = r["held_best_under_100ms_p95"]
    lines.append(
        f"best with p95 < 100 ms: {best['rps']} req/s at x{best['concurrency']}"
        if best
        else "no level kept p95 under 100 ms"
    )
    return "\n".join(lines)
