"""`memstrata bench fresh`: what keeping a long-running store fresh costs, and the WAL bound.

Freshness: a store of `size` entries in `sources` source files (a quarter in the
ledger, the rest in session transcripts, which its config makes searched by
default: transcripts are opt-in, and a bench that searched the ledger alone
measured a quarter of the store) is opened twice in one process, once
watching its folder and once not; the same queries alternate between the two,
so both see the same machine load, and the report gives p50/p95 of each and
their ratio. It also times a search right after a file was changed by hand (the
catch-up of that one source included) and, for comparison, the full catch-up
(`sync`) a store without a watcher would need before each read to be as fresh.

WAL: `writes` single-record writes (ledger entries and LOG appends, each its own
transaction, as agents write) with the checkpoint policy of `index.db` and with
SQLite's defaults (checkpoint every 1000 pages, log never truncated); the report
gives the database and write-ahead log sizes after them, and the time taken.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import memstrata.index.db as dbmod
from memstrata.bench.synth import Writer, p50_p95, populate
from memstrata.index.freshness import SETTLE_S
from memstrata.store.view import Store

Progress = Callable[[str], None]


def run_fresh(
    size: int = 100_000,
    sources: int = 10_000,
    queries: int = 300,
    edits: int = 30,
    progress: Progress | None = None,
) -> dict[str, Any]:

    tmp = Path(tempfile.mkdtemp(prefix="memstrata-bench-fresh-"))
    try:
        populate(tmp, size, files=sources)
        (tmp / "config.toml").write_text("[search]\nsessions_by_default = true\n", encoding="utf-8")
        t = time.perf_counter()
        off = Store(tmp, agent="bench", watch=False)
        sources = len(off.engine.sources())
        if progress:
            progress(
                f"{size} entries in {sources} sources indexed in {time.perf_counter() - t:.1f}s"
            )
        on = Store(tmp, agent="bench", watch=True)
        w = Writer(5)
        qs = [w.query() for _ in range(queries)]
        for q in qs[:20]:  # warm both caches
            off.search(q)
            on.search(q)
        lat: dict[str, list[float]] = {"off": [], "on": []}
        hit_layers: Counter[str] = Counter()  # what the queries reached (sessions too?)
        for i, q in enumerate(qs):
            order = [("off", off), ("on", on)] if i % 2 else [("on", on), ("off", off)]
            for name, store in order:
                t = time.perf_counter()
                hits = store.search(q)
                lat[name].append(time.perf_counter() - t)
                hit_layers.update(h.layer for h in hits)
        after_edit = _after_edits(on, tmp, edits, qs)
        sync = []
        for _ in range(5):
            t = time.perf_counter()
            off.sync()
            sync.append(time.perf_counter() - t)
        off.close()
        on.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    (p50_off, p95_off), (p50_on, p95_on) = p50_p95(lat["off"]), p50_p95(lat["on"])
    return {
        "entries": size,
        "sources": sources,
        "queries": queries,  # as found on disk
        "off_p50_ms": _ms(p50_off),
        "off_p95_ms": _ms(p95_off),
        "on_p50_ms": _ms(p50_on),
        "on_p95_ms": _ms(p95_on),
        "ratio_p50": round(p50_on / p50_off, 3),
        "ratio_p95": round(p95_on / p95_off, 3),
        "after_edit_p50_ms": _ms(p50_p95(after_edit)[0]),
        "after_edit_p95_ms": _ms(p50_p95(after_edit)[1]),
        "full_catch_up_p50_ms": _ms(p50_p95(sync)[0]),
        "hit_layers": dict(sorted(hit_layers.items())),
    }


def _after_edits(store: Any, home: Path, edits: int, qs: list[str]) -> list[float]:
    """Append a message to a random transcript by hand, wait until the watcher reported
    it, then time the next search (which catches that source up first)."""
    rng = random.Random(3)
    files = sorted((home / "agents" / "bench" / "sessions").glob("*.jsonl"))
    keeper = store.engine._keeper
    out = []
    for i in range(edits):
        rec = {
            "id": f"hand-{i}",
            "role": "user",
            "content": f"hand edit {i} {qs[i % len(qs)]}",
            "timestamp": "2026-01-01T00:00:00Z",
        }
        with open(rng.choice(files), "a", encoding="utf-8") as fh:
            fh.write(json.dumps(rec) + "\n")
        deadline = time.monotonic() + 5
        while not keeper._dirty and time.monotonic() < deadline:
            time.sleep(0.002)
        time.sleep(SETTLE_S)  # reported and settled: the next read catches it up
        t = time.perf_counter()
        hits = store.search(f"hand edit {i}", layers=("session",))  # transcripts are opt-in
        out.append(time.perf_counter() - t)
        if not any(h.meta.get("id") == f"hand-{i}" for h in hits):
            raise RuntimeError(f"bench fresh: hand edit {i} was not found by the next search")
    return out


def run_wal(writes: int = 10_000, progress: Progress | None = None) -> list[dict[str, Any]]:
    rows = []
    policies = {
        "sqlite defaults": (1000, -1),
        "memstrata policy": (dbmod.WAL_AUTOCHECKPOINT, dbmod.WAL_SIZE_LIMIT),
    }
    saved = dbmod.WAL_AUTOCHECKPOINT, dbmod.WAL_SIZE_LIMIT
    try:
        for name, (pages, limit) in policies.items():
            dbmod.WAL_AUTOCHECKPOINT, dbmod.WAL_SIZE_LIMIT = pages, limit
            tmp = Path(tempfile.mkdtemp(prefix="memstrata-bench-wal-"))
            try:
                store = Store(tmp, agent="bench", watch=False, audit=False)
                w = Writer(9)
                t = time.perf_counter()
                for i in range(writes):
                    if i % 2:
                        store.ledger.publish("decision", w.sentence(6, 20), detail=w.sentence())
                    else:
                        store.agent().log.append("THOUGHT", w.sentence())
                took = time.perf_counter() - t
                db = store.db.path
                sizes = {s: _size(Path(f"{db}{s}")) for s in ("", "-wal", "-shm")}
                store.close()
                rows.append(
                    {
                        "policy": name,
                        "writes": writes,
                        "seconds": round(took, 1),
                        "db_kb": sizes[""] // 1024,
                        "wal_kb": sizes["-wal"] // 1024,
                        "total_kb": (sizes[""] + sizes["-wal"]) // 1024,
                    }
                )
                if progress:
                    progress(f"{name}: {rows[-1]}")
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
    finally:
        dbmod.WAL_AUTOCHECKPOINT, dbmod.WAL_SIZE_LIMIT = saved
    return rows


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except FileNotFoundError:
        return 0


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


def format_report(fresh: dict[str, Any] | None, wal: list[dict[str, Any]]) -> str:
    lines = []
    if fresh:
        f = fresh
        lines += [
            f"search at {f['entries']:,} entries in {f['sources']:,} sources, {f['queries']} "
            "queries alternating between a watched and an unwatched store:",
            f"  watcher off: p50 {f['off_p50_ms']} ms  p95 {f['off_p95_ms']} ms",
            f"  watcher on:  p50 {f['on_p50_ms']} ms  p95 {f['on_p95_ms']} ms  "
            f"(ratio p50 {f['ratio_p50']}, p95 {f['ratio_p95']})",
            f"  first search after a hand edit (catch-up of that source included): "
            f"p50 {f['after_edit_p50_ms']} ms  p95 {f['after_edit_p95_ms']} ms",
            f"  a full catch-up (what a read would cost without a watcher): "
            f"p50 {f['full_catch_up_p50_ms']} ms",
            "  hits by layer (both stores): "
            + ", ".join(f"{k} {v}" for k, v in f.get("hit_layers", {}).items()),
        ]
    for r in wal:
        lines.append(
            f"index after {r['writes']:,} writes, {r['policy']}: db {r['db_kb']} KB + "
            f"WAL {r['wal_kb']} KB = {r['total_kb']} KB ({r['seconds']} s)"
        )
    return "\n".join(lines)
