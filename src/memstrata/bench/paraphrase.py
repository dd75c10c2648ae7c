"""`memstrata bench paraphrase`: questions that say a memory in other words.

Protocol. One temporary store gets the project's memories through the write APIs an
agent uses (`paraphrase_data` says which: ledger entries, facts, CONTEXT.md and
memory notes, LOG entries, session messages), placed in time `days_ago` before now
(ledger, log and session records; facts and Markdown files are written as of now).
The LOG compacts past 100 entries as it does for an agent, so part of it is in
`archive/`. Each question is then one `store.search(SearchQuery(text=question,
layers=LAYERS, k=10, mode=m))` for m in lexical, semantic (vectors only) and hybrid
(fused), with whatever embedder and fusion the store is configured with: the bench
sets `[search] embedder` only (default `minilm`, the default install's; the
environment variable MEMSTRATA_BENCH_SEARCH_CONFIG appends more `[search]` lines).
The built store is kept between runs (`bench.cache`), and searched as of the time
it was built. A question is answered at k when a hit among the
first k holds its gold record (a Markdown hit is a heading-led chunk: it holds every
bullet in it). Reported per split (dev, held-out: never tune on held-out), per layer
the answer was written to, with query latency p50/p95 per row.

Baselines get each record's text alone (a fact as "key: value", a Markdown bullet
with its section title): plain SQLite FTS5 (OR of the question's words, bm25) and,
when installed, all-MiniLM-L6-v2 cosine.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import sqlite3
import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from inspect import getsource
from pathlib import Path
from typing import Any

from memstrata.bench.cache import built_home, cache_dir
from memstrata.bench.locomo import DEFAULT_EMBEDDER, percentile
from memstrata.bench.paraphrase_data import DATA, WRITE_LAYERS, Pair, Record, filler, load
from memstrata.embed import make_embedder
from memstrata.search.hybrid import sync_vectors
from memstrata.search.query import SearchQuery
from memstrata.store.view import Store

KS = (1, 3, 5, 10)
LAYERS = ("ledger", "log", "archive", "context", "file", "fact", "session")
MODES = ("lexical", "semantic", "hybrid")
AGENT = "dev"
DAY = 86400.0


class Ranks:
    """Rank of the gold record per question (None: not in the top 10) and latencies."""

    def __init__(self) -> None:
        self.rank: dict[str, int | None] = {}
        self.latency: list[float] = []

    def summary(self, system: str, pairs: list[Pair]) -> list[dict[str, Any]]:
        rows = []
        for split in ("dev", "heldout", "all"):
            chosen = [p for p in pairs if split in ("all", p.split) and p.qid in self.rank]
            groups: dict[str, list[Pair]] = defaultdict(list)
            for p in chosen:
                groups["all"].append(p)
                groups[p.record.layer].append(p)
            for layer in ("all", *WRITE_LAYERS):
                group = groups.get(layer)
                if not group:
                    continue
                row: dict[str, Any] = {
                    "system": system,
                    "split": split,
                    "layer": layer,
                    "questions": len(group),
                }
                for k in KS:
                    row[f"top{k}"] = round(
                        statistics.fmean(
                            1.0 if (r := self.rank[p.qid]) is not None and r <= k else 0.0
                            for p in group
                        ),
                        4,
                    )
                if layer == "all" and self.latency:
                    row["p50_ms"] = round(statistics.median(self.latency), 3)
                    row["p95_ms"] = round(percentile(self.latency, 0.95), 3)
                rows.append(row)
        return rows


def _rank(holds: list[set[str]], rid: str) -> int | None:
    for i, rids in enumerate(holds[: max(KS)], start=1):
        if rid in rids:
            return i
    return None


# --- ingest ----------------------------------------------------------------------


def _markdown(records: list[Record], title: str) -> str:
    sections: dict[str, list[str]] = defaultdict(list)
    for r in records:
        sections[r.where.split(":")[-1]].append(r.text)
    body = "\n\n".join(
        f"## {name}\n" + "\n".join(f"- {t}" for t in lines) for name, lines in sections.items()
    )
    return f"# {title}\n\n{body}\n"


def ingest(store: Any, records: list[Record], now: float) -> dict[str, str]:
    """Write every record through the agent's APIs; returns the record id of each
    ledger entry and fact by the uid its search hits carry.

    Each append waits for the maintenance it started (a LOG compaction), as an agent's
    turns do: appended back to back, the entries a compaction archived depended on
    when its thread ran, so two builds split LOG.md and `archive/` differently (BM25
    statistics and the candidate pool with them: one question's rank moved 4-7 over
    builds of the same code)."""
    agent = store.agent(AGENT, create=True)
    by_uid: dict[str, str] = {}
    timed = sorted(
        (r for r in records if r.layer in ("ledger", "log", "session")),
        key=lambda r: -r.days_ago,
    )
    sessions: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for i, r in enumerate(timed):
        ts = now - r.days_ago * DAY + i * 0.001  # one order, oldest first
        if r.layer == "ledger":
            summary, _, detail = r.text.partition(" // ")
            entry = store.ledger.publish(
                r.where.split(":")[1], summary, detail=detail or None, ts=ts
            )
            by_uid[f"ledger:{entry.id}"] = r.rid
        elif r.layer == "log":
            agent.log.append(r.where.split(":")[1], r.text, {"rec": r.rid}, ts=ts)
            store.drain()  # the compaction it started, before the next entry (see `ingest`)
        else:
            _s, sid, role = r.where.split(":")
            sessions[sid].append({"id": r.rid, "role": role, "content": r.text, "timestamp": ts})
    for sid, messages in sessions.items():
        agent.sessions.append_many(sid, messages)
        store.drain()
    for r in records:
        if r.layer == "fact":
            _f, category, key = r.where.split(":", 2)
            agent.facts.set(key, r.text, category)
            by_uid[f"fact:{AGENT}:{key}"] = r.rid
    agent.context.write(
        _markdown([r for r in records if r.layer == "context"], "Harbor: project context")
    )
    notes: dict[str, list[Record]] = defaultdict(list)
    for r in records:
        if r.layer == "file":
            notes[r.where.split(":")[1]].append(r)
    for name, recs in notes.items():
        agent.files.write(name, _markdown(recs, name.removesuffix(".md").capitalize()))
    store.drain()  # LOG compactions the appends started
    return by_uid


def holds(hit: Any, by_uid: dict[str, str], md: list[Record]) -> set[str]:
    """The record ids a search hit holds: a LOG entry (in LOG.md or an archive) by
    the `rec` of its metadata, a session message by its id, a ledger entry or a fact
    by its uid, a Markdown chunk by the bullets in its text."""
    meta = hit.meta or {}
    rec = (meta.get("metadata") or {}).get("rec")
    if rec:
        return {rec}
    if hit.layer == "session":
        return {str(meta.get("id", ""))}
    if hit.uid in by_uid:
        return {by_uid[hit.uid]}
    text = hit.text or ""
    return {r.rid for r in md if f"- {r.text}" in text}


def run_memstrata(
    pairs: list[Pair],
    records: list[Record],
    modes: Iterable[str] = MODES,
    embedder: str = DEFAULT_EMBEDDER,
    progress: Callable[[str], None] | None = None,
    cache: bool = True,
) -> dict[str, Ranks]:
    """One store with every record (built, or copied from `bench.cache`), searched as of
    the time it was built, in each of `modes`."""
    modes = tuple(modes)
    out = {m: Ranks() for m in modes}
    md = [r for r in records if r.layer in ("context", "file")]
    semantic = any(m != "lexical" for m in modes)
    config = f'[roles]\nadmin = ["{AGENT}"]\n'  # an import may date ledger entries
    if semantic:
        config += f'[search]\nembedder = "{embedder}"\n'

    def build(home: Path) -> dict[str, Any]:
        (home / "config.toml").write_text(config)
        now = time.time()
        with Store(home, agent=AGENT) as store:
            t = time.perf_counter()
            by_uid = ingest(store, records, now)
            if progress:
                progress(f"ingested {len(records)} records in {time.perf_counter() - t:.1f}s")
            if semantic:
                t = time.perf_counter()
                sync_vectors(store, store.embedder())
                if progress:
                    progress(f"embedded in {time.perf_counter() - t:.1f}s")
        return {"by_uid": by_uid, "now": now}

    home, info, hit = built_home(
        "paraphrase",
        # `bench` is query-side for `cache.code_version`, but `ingest` decides what is written
        ([(r.rid, r.where, r.days_ago, r.text) for r in records], config, getsource(ingest)),
        build,
        cache_dir(cache),
    )
    if hit and progress:
        progress("store copied from the cache (bench.cache)")
    extra = os.environ.get("MEMSTRATA_BENCH_SEARCH_CONFIG", "")
    if semantic and extra:  # more [search] lines (searching only: not in the cached store)
        (home / "config.toml").write_text(f"{config}{extra}\n")
    by_uid, now = info["by_uid"], float(info["now"])
    with contextlib.ExitStack() as scratch:
        scratch.callback(shutil.rmtree, home, ignore_errors=True)
        store = scratch.enter_context(Store(home, agent=AGENT))
        for mode in modes:
            for p in pairs:
                q = SearchQuery(text=p.question, layers=LAYERS, k=max(KS), mode=mode, now=now)
                t = time.perf_counter()
                hits = store.search(q)
                out[mode].latency.append((time.perf_counter() - t) * 1000)
                got = [holds(h, by_uid, md) for h in hits]
                out[mode].rank[p.qid] = _rank(got, p.record.rid)
    return out


# --- baselines --------------------------------------------------------------------


def record_text(r: Record) -> str:
    """What a baseline is given for a record."""
    if r.layer == "fact":
        return f"{r.where.split(':', 2)[2]}: {r.text}"
    if r.layer in ("context", "file"):
        return f"{r.where.split(':')[-1]}: {r.text}"
    if r.layer == "ledger":
        return r.text.replace(" // ", ". ")
    return r.text


def run_fts5(pairs: list[Pair], records: list[Record]) -> Ranks:
    ranks = Ranks()
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(rid UNINDEXED, text)")
    db.executemany("INSERT INTO t VALUES (?, ?)", [(r.rid, record_text(r)) for r in records])
    for p in pairs:
        expr = " OR ".join(f'"{w}"' for w in re.findall(r"\w+", p.question))
        t = time.perf_counter()
        rows = db.execute(
            "SELECT rid FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ?", (expr, max(KS))
        ).fetchall()
        ranks.latency.append((time.perf_counter() - t) * 1000)
        ranks.rank[p.qid] = _rank([{r[0]} for r in rows], p.record.rid)
    return ranks


def run_minilm(
    pairs: list[Pair], records: list[Record], embedder: str = DEFAULT_EMBEDDER
) -> Ranks | None:
    try:
        emb = make_embedder(embedder, download=False)
    except Exception:  # the extra is not installed: no MiniLM row
        return None
    import numpy as np

    mat = np.asarray(emb.embed([record_text(r) for r in records]), dtype=np.float32)
    qv = np.asarray(emb.embed([p.question for p in pairs]), dtype=np.float32)
    ranks = Ranks()
    for p, v in zip(pairs, qv, strict=True):
        t = time.perf_counter()
        order = np.argsort(-(mat @ v))[: max(KS)]
        ranks.latency.append((time.perf_counter() - t) * 1000)
        ranks.rank[p.qid] = _rank([{records[i].rid} for i in order], p.record.rid)
    return ranks


def run(
    *,
    path: Path = DATA,
    modes: Iterable[str] = MODES,
    baselines: bool = True,
    embedder: str = DEFAULT_EMBEDDER,
    filler_count: int = 260,
    limit: int | None = None,
    progress: Callable[[str], None] | None = None,
    cache: bool = True,
) -> list[dict[str, Any]]:
    """Every row of one run. `limit` keeps the first N questions (tests)."""
    pairs, records = load(path)
    if limit is not None:
        pairs = pairs[:limit]
    records = records + filler(filler_count)
    rows: list[dict[str, Any]] = []
    for mode, ranks in run_memstrata(pairs, records, modes, embedder, progress, cache).items():
        rows += ranks.summary(f"memstrata-{mode}", pairs)
    if baselines:
        rows += run_fts5(pairs, records).summary("fts5", pairs)
        dense = run_minilm(pairs, records, embedder)
        if dense is not None:
            rows += dense.summary("minilm", pairs)
    return rows


def format_rows(rows: list[dict[str, Any]]) -> str:
    head = (
        f"{'system':<22}{'split':<9}{'layer':<9}{'n':>5}"
        + "".join(f"{'top' + str(k):>8}" for k in KS)
        + f"{'p50ms':>9}{'p95ms':>9}"
    )
    out = [head]
    for r in rows:
        out.append(
            f"{r['system']:<22}{r['split']:<9}{r['layer']:<9}{r['questions']:>5}"
            + "".join(f"{r[f'top{k}']:>8.3f}" for k in KS)
            + (f"{r['p50_ms']:>9.2f}{r['p95_ms']:>9.2f}" if "p50_ms" in r else "")
        )
    return "\n".join(out)
