"""`memstrata bench teams --database-url URL`: the PostgreSQL backend against local files.

At N entries (synthetic memories, `synth.populate`), in one run:

* a local store is indexed from its files, the same truth is migrated into a
  scratch schema of the database, and a new host joins it: its index catches up
  from PostgreSQL (entries/s);
* publish (ledger), append (LOG) and search p50/p95 on the local store and on the
  PostgreSQL host, the two alternated call by call so a noisy machine loads both
  alike, and their ratios;
* a second host, watching (LISTEN/NOTIFY), polls a search for a token the first
  host just published: the time from the writer's acknowledgement to the second
  host's index finding it (p50/p95);
* the first host reopens after the second wrote 100 entries: catching up from the
  change feed position its index kept, and, after 100 more, looking at every
  source (what every open did before hosts kept the position).

The scratch schema (`memstrata_bench_<hex>`, via `search_path`) is dropped at the end.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

from memstrata.bench.synth import Writer, p50_p95, populate
from memstrata.files.local import LocalTruth
from memstrata.files.locks import LockTable
from memstrata.files.postgres.truth import PostgresTruth
from memstrata.operations.transfer.migrate import migrate
from memstrata.store.catchup import FEED_KEY
from memstrata.store.view import Store


@contextlib.contextmanager
def scratch_schema(url: str) -> Iterator[str]:
    """A URL whose tables live in a new schema, dropped afterwards."""
    import psycopg

    name = "memstrata_bench_" + os.urandom(4).hex()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {name}")
    joiner = "&" if "?" in url else "?"
    try:
        yield f"{url}{joiner}options={quote(f'-c search_path={name}')}"
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {name} CASCADE")


def _host(root: Path, url: str, **kw: Any) -> Any:

    root.mkdir(parents=True, exist_ok=True)
    (root / "config.toml").write_text(f'[backend]\nurl = "{url}"\n', encoding="utf-8")
    return Store(root, **kw)


def _pair(a: Callable[[], Any], b: Callable[[], Any], n: int) -> tuple[list[float], list[float]]:
    """Time `a` and `b` alternately, n times each (ms)."""
    xs: list[float] = []
    ys: list[float] = []
    for _ in range(n):
        for fn, out in ((a, xs), (b, ys)):
            t = time.perf_counter()
            fn()
            out.append((time.perf_counter() - t) * 1000)
    return xs, ys


def run_teams(
    url: str,
    entries: int = 100_000,
    samples: int = 200,
    sees: int = 50,
    progress: Callable[[str], None] | None = None,
    reopen_writes: int = 100,
) -> dict[str, Any]:

    say = progress or (lambda _: None)
    tmp = Path(tempfile.mkdtemp(prefix="memstrata-bench-teams-"))
    result: dict[str, Any] = {"entries": entries}
    try:
        populate(tmp / "local", entries)
        t = time.perf_counter()
        local = Store(tmp / "local", agent="bench", watch=False)
        result["local_index_s"] = round(time.perf_counter() - t, 2)
        say(f"local: {entries} entries indexed in {result['local_index_s']}s")
        with scratch_schema(url) as pg_url:
            t = time.perf_counter()
            dest = PostgresTruth(pg_url)
            migrate(LocalTruth(tmp / "local", LockTable(tmp / "locks")), dest)
            dest.close()
            result["migrate_s"] = round(time.perf_counter() - t, 2)
            t = time.perf_counter()
            host_a = _host(tmp / "a", pg_url, agent="bench", watch=False)
            joined = time.perf_counter() - t
            result["join_s"] = round(joined, 2)
            result["join_entries_per_s"] = round(entries / joined)
            say(f"a new host caught up with {entries} entries in {joined:.1f}s")
            host_b = _host(tmp / "b", pg_url, agent="reader", watch=True)
            try:
                result["rows"] = _latencies(local, host_a, samples)
                result["sees"] = _sees(host_a, host_b, sees)
                host_a.close()
                result["reopen"] = _reopen(tmp / "a", pg_url, host_b, reopen_writes)
            finally:
                host_a.close()
                host_b.close()
        local.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return result


def _latencies(local: Any, pg: Any, n: int) -> list[dict[str, Any]]:
    w = Writer(5)
    queries = [w.query() for _ in range(n)]
    qa, qb = iter(queries), iter(queries)
    ops: dict[str, tuple[Callable[[], Any], Callable[[], Any]]] = {
        "publish (ledger)": (
            lambda: local.ledger.publish("decision", w.sentence(6, 20)),
            lambda: pg.ledger.publish("decision", w.sentence(6, 20)),
        ),
        "append LOG": (
            lambda: local.agent().log.append("TOOL_USE", w.sentence()),
            lambda: pg.agent().log.append("TOOL_USE", w.sentence()),
        ),
        "search (lexical, k=10)": (
            lambda: local.search(next(qa), k=10),
            lambda: pg.search(next(qb), k=10),
        ),
    }
    rows = []
    for name, (a, b) in ops.items():
        xs, ys = _pair(a, b, n)
        (l50, l95), (p50, p95) = p50_p95(xs), p50_p95(ys)
        rows.append(
            {
                "operation": name,
                "local_p50_ms": round(l50, 3),
                "local_p95_ms": round(l95, 3),
                "pg_p50_ms": round(p50, 3),
                "pg_p95_ms": round(p95, 3),
                "ratio_p50": round(p50 / l50, 2),
                "ratio_p95": round(p95 / l95, 2),
            }
        )
    return rows


def _sees(writer: Any, reader: Any, n: int) -> dict[str, Any]:
    reader.search("warm up")  # the reader is watching from here on
    waits = []
    for i in range(n):
        token = f"zqx{os.urandom(4).hex()}"
        writer.ledger.publish("warning", f"second host sees {token} {i}")
        acked = time.perf_counter()
        deadline = acked + 30
        while not reader.search(token, layers=("ledger",)):
            if time.perf_counter() > deadline:
                raise TimeoutError("the second host never saw the write")
            time.sleep(0.0005)
        waits.append((time.perf_counter() - acked) * 1000)
    p50, p95 = p50_p95(waits)
    return {"writes": n, "p50_ms": round(p50, 2), "p95_ms": round(p95, 2)}


def _reopen(home: Path, url: str, writer: Any, writes: int) -> dict[str, Any]:
    """Host a reopens after `writes` publishes by host b: from its index's change feed
    position, and (the same writes again) looking at every source, as every open did
    before the position was kept."""

    def looked(store: Any) -> int:
        return int(sum(store.engine.truth.stats[k] for k in ("stat", "list", "read", "read_from")))

    out: dict[str, Any] = {"writes": writes}
    for how in ("feed", "every source"):
        for i in range(writes):
            writer.ledger.publish("decision", f"written while host a was away {i}")
        if how == "every source":  # forget the position: the catch-up cannot use the feed
            with _host(home, url, agent="bench", sync=False, watch=False) as s:
                s.db.set_meta(FEED_KEY, "")
        t = time.perf_counter()
        with _host(home, url, agent="bench", watch=False) as s:
            out[how] = {"ms": round((time.perf_counter() - t) * 1000, 1), "looked": looked(s)}
    return out


def format_report(r: dict[str, Any]) -> str:
    out = [
        f"entries: {r['entries']}; local index built in {r['local_index_s']}s; migrated to "
        f"PostgreSQL in {r['migrate_s']}s; a new host caught up in {r['join_s']}s "
        f"({r['join_entries_per_s']} entries/s)",
        f"{'operation':<24} {'local p50':>10} {'local p95':>10} {'pg p50':>9} {'pg p95':>9}"
        f" {'x p50':>6} {'x p95':>6}",
    ]
    for row in r["rows"]:
        out.append(
            f"{row['operation']:<24} {row['local_p50_ms']:>10.3f} "
            f"{row['local_p95_ms']:>10.3f} {row['pg_p50_ms']:>9.3f} {row['pg_p95_ms']:>9.3f}"
            f" {row['ratio_p50']:>6.2f} {row['ratio_p95']:>6.2f}"
        )
    s = r["sees"]
    out.append(
        f"second host's index sees a write (ack -> found by search, {s['writes']} writes): "
        f"p50 {s['p50_ms']} ms, p95 {s['p95_ms']} ms"
    )
    o = r["reopen"]
    out.append(
        f"a host reopens after {o['writes']} writes by another: from its feed position "
        f"{o['feed']['ms']} ms ({o['feed']['looked']} source reads), looking at every "
        f"source {o['every source']['ms']} ms ({o['every source']['looked']} source reads)"
    )
    return "\n".join(out)
