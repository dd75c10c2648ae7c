"""`memstrata bench search`: search latency at 10k / 100k / 1M stored entries.

Synthetic memories with realistic lengths (Zipf words, 8-40 word sentences) are
written as a user's files would be, the store is opened (ingest = indexing them
all), then random queries run: p50/p95 per mode. Hybrid excludes the query's own
embedding time (the vectors come from the fake embedder so the bench measures
the index and the fusion, not the model: candidates, the exact dense scores of every
unit and window, the MaxSim of the pool's token vectors, z-score fusion). Hybrid rows
also give the CPU time of the searching thread (p50/p95), which a loaded machine
does not inflate the way it does wall time.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memstrata.bench.synth import Writer, p50_p95, populate
from memstrata.embed.base import FakeEmbedder
from memstrata.search.hybrid import hybrid_search
from memstrata.search.query import SearchQuery
from memstrata.store.view import Store

HYBRID_MAX = 100_000  # exact vector search is specified up to 100k memories


def run_search(
    sizes: tuple[int, ...] = (10_000, 100_000, 1_000_000),
    queries: int = 300,
    hybrid: bool = True,
    progress: Callable[[str], None] | None = None,
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for size in sizes:
        tmp = Path(tempfile.mkdtemp(prefix="memstrata-bench-search-"))
        try:
            populate(tmp, size)
            t = time.perf_counter()
            store = Store(tmp, agent="bench")
            ingest = time.perf_counter() - t
            if progress:
                progress(f"{size}: indexed in {ingest:.1f}s ({size / ingest:,.0f} entries/s)")
            w = Writer(5)
            qs = [w.query() for _ in range(queries)]
            lat = []
            for q in qs:
                t = time.perf_counter()
                store.search(q, k=10, mode="lexical")
                lat.append((time.perf_counter() - t) * 1000)
            p50, p95 = p50_p95(lat)
            rows.append(
                {
                    "entries": size,
                    "mode": "lexical",
                    "p50_ms": round(p50, 3),
                    "p95_ms": round(p95, 3),
                    "ingest_per_s": round(size / ingest),
                }
            )
            if hybrid and size <= HYBRID_MAX:
                rows.extend(_hybrid(store, qs, size, progress))
            store.close()
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return rows


def _hybrid(
    store: Any, qs: list[str], size: int, progress: Callable[[str], None] | None
) -> list[dict[str, Any]]:
    emb = FakeEmbedder(384, tokens=True)  # token vectors too: MaxSim is measured
    t = time.perf_counter()
    vi = store.vectors(emb)
    vi.sync_all()
    embed_s = time.perf_counter() - t
    if progress:
        progress(f"{size}: embedded (fake, dim 384, token vectors) in {embed_s:.1f}s")
    vecs = emb.embed(qs)
    lat, cpu = [], []
    for q, v in zip(qs, vecs, strict=True):
        vi.query_tokens(q)  # the query's token vectors, like its vector, before the clock
        t, c = time.perf_counter(), time.thread_time()
        hybrid_search(
            store, SearchQuery(text=q, k=10, mode="hybrid"), emb, query_vector=v, catch_up=False
        )
        cpu.append((time.thread_time() - c) * 1000)
        lat.append((time.perf_counter() - t) * 1000)
    p50, p95 = p50_p95(lat)
    c50, c95 = p50_p95(cpu)
    return [
        {
            "entries": size,
            "mode": "hybrid",
            "p50_ms": round(p50, 3),
            "p95_ms": round(p95, 3),
            "cpu_p50_ms": round(c50, 3),
            "cpu_p95_ms": round(c95, 3),
        }
    ]


def format_table(rows: list[dict[str, Any]]) -> str:
    """One line per row; the CPU columns when some row has them (hybrid)."""
    cpu = any("cpu_p50_ms" in r for r in rows)
    out = [
        f"{'entries':>9}  {'mode':<8}{'p50 ms':>9}{'p95 ms':>9}{'ingest/s':>11}"
        + (f"{'cpu p50':>9}{'cpu p95':>9}" if cpu else "")
    ]
    for r in rows:
        tail = f"{r['cpu_p50_ms']:>9.3f}{r['cpu_p95_ms']:>9.3f}" if "cpu_p50_ms" in r else ""
        out.append(
            f"{r['entries']:>9}  {r['mode']:<8}{r['p50_ms']:>9.3f}{r['p95_ms']:>9.3f}"
            f"{r.get('ingest_per_s', ''):>11}{tail}"
        )
    return "\n".join(out)
