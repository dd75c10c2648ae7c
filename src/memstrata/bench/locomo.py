"""`memstrata bench locomo PATH`: retrieval quality on LoCoMo-format conversations.

Protocol (the same public ingest and search a user has):

* each conversation goes into a fresh store; each of its sessions becomes a
  session transcript (`sessions.append_many`), each dialog turn one message
  with the session's date as its timestamp, the speaker recorded, and the turn's
  dialog id (`D3:7`) as the message id;
* each question of categories 1-4 that has evidence is a query
  (`store.search(question, layers=("session",), k=20, mode=m)`), for each search mode
  m asked for (`modes`): lexical (FTS5), semantic (vectors only) and hybrid (fused),
  all on the same store, so one run puts the three rows side by side, each with its
  query latency p50/p95 (wall, and CPU time of the searching thread: `cpu_p50_ms`,
  `cpu_p95_ms` in `--json`, steadier than wall time on a shared machine);
* recall@k = mean over questions of |evidence turns in top k| / |evidence|
  (the LoCoMo paper's definition); hit@k = share of questions with at least one
  evidence turn in the top k; the same at session level: `session_recall@k` (s-r@k),
  the evidence sessions among the sessions of the top k turns; and `session_rank@10`
  (S-r@10), the evidence sessions among the first 10 sessions when sessions are ranked
  by their best turn (a second search of `DEEP` turns), the session-level recall@10
  that other systems publish for LoCoMo (a session ranked as a document);

A question may name `outdated_evidence` (the techconv set's updated facts): earlier
statements of a fact whose latest statement is the gold. `stale_first` is the share
of those questions where an outdated statement ranks above every gold one (in the
top 20; a gold missing from it ranks last).

In semantic and hybrid modes the temporary store's `config.toml` sets `[search]
embedder`: by default `minilm`, the default install's (NumPy, no torch), so the rows
are what a user gets (whatever fusion the store is configured with applies); the
MiniLM baseline uses the same embedder. Built stores are kept between runs
(`bench.cache`: a query-side change is measured in seconds; `--no-cache` builds anew,
and then `ingest_s` and `embed_s` say what building took); the environment variable MEMSTRATA_BENCH_SEARCH_CONFIG appends more `[search]` lines
(e.g. `text_weight = 0.5`), which is how the weight grid in the notes was run.

Three more memstrata rows feed the same turns through the ordinary activity-log API
instead: one `log.append` per turn (the same "(date) Speaker: text" every row gets,
at the turn's time), with the store's defaults, LOG auto-compaction included: past
100 entries the older ones move to `archive/` (cold memory). They are searched as of
the last turn over `layers=("log", "archive")`, the layers an agent's default recall
covers for its activity log (`recall_memory`, `store.search` without layers), so the
row is what an agent that logs every turn gets back. `memstrata-log` keeps the
default decay (half-lives 336 h for the log, 720 h for the archive, so over a
months-long conversation recency dominates); `memstrata-log-nodecay` sets
`[decay] log = 0` and `archive = 0`, which isolates the ingest path;
`memstrata-log-neighbours` adds `[log] neighbour_context = 2` (off by default), which
indexes each entry with its neighbours' text the way transcript messages are.

Baselines run on the same turns and are given the same text memstrata stores for
a turn, its date and speaker: "(7 May 2023) Caroline: text" (`turn_text`). Plain
SQLite FTS5 (default tokenizer, OR of the question's words, bm25 order) and, when
installed, all-MiniLM-L6-v2 cosine. Neither gets memstrata's thread-neighbour
context: that is memstrata's own mechanism, which the rows measure.

With `database_url` (`--database-url`), each conversation's store keeps its truth in
a scratch schema of that PostgreSQL database instead of its folder: the same
engine searches the host's index either way, so recall must be identical.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import re
import shutil
import sqlite3
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from datetime import datetime
from inspect import getsource
from pathlib import Path
from typing import Any

from memstrata.bench.cache import built_home, cache_dir
from memstrata.bench.teams import scratch_schema
from memstrata.embed import make_embedder
from memstrata.errors import MalformedInput, MemstrataError
from memstrata.search.hybrid import sync_vectors
from memstrata.search.query import SearchQuery
from memstrata.store.view import Store

KS = (5, 10, 20)
DEEP = 50  # turns ranked for the session ranking (`session_rank@10`)
CATEGORIES = (1, 2, 3, 4)
_EVID = re.compile(r"D(\d+):(\d+)")
_DATE = re.compile(r"(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+(\w+),?\s+(\d{4})", re.I)

Turn = tuple[str, int, str, str, float]  # dia_id, session, speaker, text, ts
Question = tuple[str, int, set[str], set[str]]  # text, category, evidence, outdated evidence
MODES = ("lexical", "semantic", "hybrid")
DEFAULT_EMBEDDER = "minilm"  # the default install's (NumPy, no torch): what users get
DATA = Path(__file__).with_name("data")
# The sets that ship with memstrata, by name (`bench locomo techconv-dev`): ours, Apache-2.0.
BUNDLED = {
    "techconv-dev": DATA / "techconv-dev.json.gz",
    "techconv-heldout": DATA / "techconv-heldout.json.gz",
}


def parse_date(text: str) -> float:
    m = _DATE.search(text or "")
    if not m:
        return 0.0
    hh, mm, ap, day, month, year = m.groups()
    h = int(hh) % 12 + (12 if ap.lower() == "pm" else 0)
    try:
        dt = datetime.strptime(f"{day} {month[:3]} {year}", "%d %b %Y")
    except ValueError:
        return 0.0
    return dt.replace(hour=h, minute=int(mm)).timestamp()


def load(path: Path) -> list[tuple[str, list[Turn], list[Question]]]:
    """The conversations of a LoCoMo-format JSON file (gzip-compressed or not), or
    of a bundled set named in `BUNDLED`."""
    path = BUNDLED.get(str(path), path)
    try:
        raw = path.read_bytes()
        if raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
        data = json.loads(raw.decode("utf-8"))
    except (OSError, EOFError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise MalformedInput(f"cannot read LoCoMo file {path}: {exc}") from None
    if not isinstance(data, list):
        raise MalformedInput("a LoCoMo file is a JSON array of conversations")
    out: list[tuple[str, list[Turn], list[Question]]] = []
    for conv in data:
        c = conv.get("conversation", {})
        turns: list[Turn] = []
        for key, value in c.items():
            m = re.fullmatch(r"session_(\d+)", key)
            if not m or not isinstance(value, list):
                continue
            n = int(m.group(1))
            base = parse_date(c.get(f"session_{n}_date_time", ""))
            for i, t in enumerate(value):
                text = t.get("text", "")
                if t.get("blip_caption"):
                    text += f" [shared a photo: {t['blip_caption']}]"
                turns.append((t["dia_id"], n, t.get("speaker", ""), text, base + i))
        qs: list[Question] = []
        for q in conv.get("qa", []):
            ev = {f"D{a}:{b}" for e in q.get("evidence") or [] for a, b in _EVID.findall(str(e))}
            old = {
                f"D{a}:{b}"
                for e in q.get("outdated_evidence") or []
                for a, b in _EVID.findall(str(e))
            }
            if q.get("category") in CATEGORIES and ev:
                qs.append((q["question"], int(q["category"]), ev, old))
        out.append((str(conv.get("sample_id", len(out))), turns, qs))
    return out


def turn_text(speaker: str, text: str, ts: float) -> str:
    """What every system is given for one turn: "(7 May 2023) Caroline: text"."""
    from datetime import UTC

    dt = datetime.fromtimestamp(ts, UTC)
    date = f"{dt.day} {dt:%B %Y}"
    return f"({date}) {speaker}: {text}" if speaker else f"({date}) {text}"


def session_of(dia: str) -> int:
    m = _EVID.match(dia)
    return int(m.group(1)) if m else -1


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..1): the smallest value with at least p of the
    values at or below it. (The index used to be int(n x p) - 1, which for a handful
    of queries picked the minimum as the p95.)"""
    lat = sorted(values)
    return lat[max(0, math.ceil(len(lat) * p) - 1)] if lat else 0.0


class Tally:
    def __init__(self) -> None:
        self.rows: dict[Any, list[dict[str, float]]] = defaultdict(list)
        self.latency: list[float] = []
        self.cpu: list[float] = []  # the same searches' CPU time (this thread), ms

    def add(
        self,
        cat: int,
        ranked: list[str],
        evidence: set[str],
        outdated: set[str] | None = None,
        deep: list[str] | None = None,
    ) -> None:
        """One question: `ranked` turn ids (top 20), `deep` a longer ranking (top
        `DEEP`) that ranks sessions by their best turn (`session_rank@10`)."""
        ev_s = {session_of(e) for e in evidence}
        row = {}
        sessions: list[int] = []
        for d in deep if deep is not None else ranked:
            if (n := session_of(d)) not in sessions:
                sessions.append(n)
        row["session_rank@10"] = len(ev_s & set(sessions[:10])) / len(ev_s)
        if outdated:
            pos = {d: i for i, d in reversed(list(enumerate(ranked)))}
            best_gold = min((pos[e] for e in evidence if e in pos), default=len(ranked))
            best_old = min((pos[e] for e in outdated if e in pos), default=len(ranked))
            row["stale_first"] = 1.0 if best_old < best_gold else 0.0
        for k in KS:
            top = ranked[:k]
            found = len(evidence & set(top))
            row[f"recall@{k}"] = found / len(evidence)
            row[f"hit@{k}"] = 1.0 if found else 0.0
            sess = {session_of(d) for d in top}
            row[f"session_recall@{k}"] = len(ev_s & sess) / len(ev_s)
        self.rows[cat].append(row)
        self.rows["all"].append(row)

    def summary(self, system: str) -> list[dict[str, Any]]:
        out = []
        for cat in ["all", *CATEGORIES]:
            rows = self.rows.get(cat, [])
            if not rows:
                continue
            d: dict[str, Any] = {"system": system, "category": cat, "questions": len(rows)}
            for key in rows[0]:
                if key != "stale_first":
                    d[key] = round(statistics.fmean(r[key] for r in rows), 4)
            stale = [r["stale_first"] for r in rows if "stale_first" in r]
            if stale:
                d["updated"] = len(stale)
                d["stale_first"] = round(statistics.fmean(stale), 4)
            if cat == "all" and self.latency:
                d["p50_ms"] = round(statistics.median(self.latency), 3)
                d["p95_ms"] = round(percentile(self.latency, 0.95), 3)
            if cat == "all" and self.cpu:
                d["cpu_p50_ms"] = round(statistics.median(self.cpu), 3)
                d["cpu_p95_ms"] = round(percentile(self.cpu, 0.95), 3)
            out.append(d)
        return out


def run_memstrata(
    convs: Iterable[tuple[str, list[Turn], list[Question]]],
    modes: Iterable[str] = ("lexical",),
    progress: Callable[[str], None] | None = None,
    embedder: str = DEFAULT_EMBEDDER,
    database_url: str | None = None,
    cache: bool = True,
) -> tuple[dict[str, Tally], dict[str, float | None], int]:
    """Transcript rows: one store per conversation, searched in each of `modes`.

    Returns a tally per mode, the seconds spent writing and embedding (None when a
    store came from the cache, `bench.cache`; never with `database_url`), and the turns.
    """
    import contextlib

    modes = tuple(modes)
    semantic = any(m != "lexical" for m in modes)
    tallies = {m: Tally() for m in modes}
    spent: dict[str, float | None] = {"ingest_s": 0.0, "embed_s": 0.0}
    n_turns = 0
    folder = cache_dir(cache and not database_url)
    for sample, turns, qs in convs:
        with contextlib.ExitStack() as scratch:
            config = ""
            if semantic:
                # the user's way to turn on semantic recall: the store's config file
                config += f'[search]\nembedder = "{embedder}"\n'
            if database_url:
                config += (
                    f'[backend]\nurl = "{scratch.enter_context(scratch_schema(database_url))}"\n'
                )
            home, info, hit = built_home(
                "locomo",
                # `bench` is query-side for `cache.code_version`, but `_ingest` decides what is written
                (turns, config, semantic, getsource(_ingest)),
                lambda h, c=config, t=turns: _ingest(h, c, t, semantic),  # type: ignore[misc]
                folder,
            )
            scratch.callback(shutil.rmtree, home, ignore_errors=True)
            extra = os.environ.get("MEMSTRATA_BENCH_SEARCH_CONFIG", "")
            if semantic and extra:  # searching only: not part of the cached store
                (home / "config.toml").write_text(f"{config}{extra}\n")
            for part in ("ingest_s", "embed_s"):
                got = spent[part]
                spent[part] = None if hit or got is None else got + info[part]
            n_turns += len(turns)
            store = scratch.enter_context(Store(home, agent="locomo"))
            for mode in modes:
                for question, cat, ev, old in qs:
                    t, c = time.perf_counter(), time.thread_time()
                    hits = store.search(question, layers=("session",), k=max(KS), mode=mode)
                    tallies[mode].latency.append((time.perf_counter() - t) * 1000)
                    tallies[mode].cpu.append((time.thread_time() - c) * 1000)
                    deep = store.search(question, layers=("session",), k=DEEP, mode=mode)
                    tallies[mode].add(
                        cat,
                        [h.meta.get("id", "") for h in hits],
                        ev,
                        old,
                        [h.meta.get("id", "") for h in deep],
                    )
            if progress:
                how = (
                    "from the cache"
                    if hit
                    else f"built in {info['ingest_s'] + info['embed_s']:.0f}s"
                )
                progress(f"conversation {sample}: {len(turns)} turns, {len(qs)} questions ({how})")
    return tallies, spent, n_turns


def _ingest(home: Path, config: str, turns: list[Turn], semantic: bool) -> dict[str, float]:
    """Write `turns` into a new store at `home` as session transcripts, embed them
    (`semantic`), close it; the seconds each part took."""
    if config:
        (home / "config.toml").write_text(config)
    out = {"ingest_s": 0.0, "embed_s": 0.0}
    with Store(home, agent="locomo") as store:
        sessions = store.agent().sessions
        t = time.perf_counter()
        by_session: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for dia, n, speaker, text, ts in turns:
            by_session[n].append(
                {"id": dia, "role": "user", "speaker": speaker, "content": text, "timestamp": ts}
            )
        for n in sorted(by_session):
            sessions.append_many(f"session-{n}", by_session[n])
        out["ingest_s"] = time.perf_counter() - t
        if semantic:
            t = time.perf_counter()
            sync_vectors(store, store.embedder())  # embedding is part of ingest
            out["embed_s"] = time.perf_counter() - t
    return out


LOG_LAYERS = ("log", "archive")  # the activity log and its compaction archives
NO_DECAY = "[decay]\nlog = 0\narchive = 0\n"
NEIGHBOURS = NO_DECAY + "[log]\nneighbour_context = 2\n"


def run_memstrata_log(
    convs: Iterable[tuple[str, list[Turn], list[Question]]], config: str = ""
) -> Tally:
    """One `log.append` per turn ("(date) Speaker: text" at the turn's time), lexical
    search of the activity log and its archives as of the last turn: the ingest path an
    agent that logs every turn uses, compaction included. `config` is written to the
    temporary store's config.toml."""

    tally = Tally()
    for _sample, turns, qs in convs:
        home = Path(tempfile.mkdtemp(prefix="memstrata-locomo-log-"))
        try:
            (home / "config.toml").write_text(config)
            last = max((t[4] for t in turns), default=0.0)
            with Store(home, agent="locomo") as store:
                log_ingest(store, turns)
                for question, cat, ev, old in qs:
                    t = time.perf_counter()
                    hits = store.search(
                        SearchQuery(text=question, layers=LOG_LAYERS, k=max(KS), now=last)
                    )
                    tally.latency.append((time.perf_counter() - t) * 1000)
                    dias = [h.meta.get("metadata", {}).get("dia", "") for h in hits]
                    tally.add(cat, dias, ev, old)
        finally:
            shutil.rmtree(home, ignore_errors=True)
    return tally


def log_ingest(store: Store, turns: list[Turn]) -> None:
    """One `log.append` per turn; each waits for the LOG compaction it started, as an
    agent's turns do: appended back to back, the entries a compaction archived were
    those written by the time its thread ran, so two runs split LOG.md and `archive/`
    differently (as in `bench paraphrase`, 79a238c)."""
    log = store.agent().log
    for dia, _n, speaker, text, ts in turns:
        log.append("SYSTEM", turn_text(speaker, text, ts), {"dia": dia}, ts=ts)
        store.drain()


def run_fts5_baseline(convs: Iterable[tuple[str, list[Turn], list[Question]]]) -> Tally:
    tally = Tally()
    for _sample, turns, qs in convs:
        db = sqlite3.connect(":memory:")
        db.execute("CREATE VIRTUAL TABLE t USING fts5(dia UNINDEXED, text)")
        db.executemany(
            "INSERT INTO t VALUES (?, ?)",
            [(d, turn_text(sp, txt, ts)) for d, _n, sp, txt, ts in turns],
        )
        for question, cat, ev, old in qs:
            words = re.findall(r"\w+", question)
            expr = " OR ".join(f'"{w}"' for w in words)
            t = time.perf_counter()
            rows = (
                db.execute(
                    "SELECT dia FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ?", (expr, DEEP)
                ).fetchall()
                if expr
                else []
            )
            tally.latency.append((time.perf_counter() - t) * 1000)
            tally.add(cat, [r[0] for r in rows][: max(KS)], ev, old, [r[0] for r in rows])
    return tally


def run_dense_baseline(
    convs: Iterable[tuple[str, list[Turn], list[Question]]], embedder: str = DEFAULT_EMBEDDER
) -> Tally | None:
    try:
        emb = make_embedder(embedder, download=False)
    except Exception:
        return None
    import numpy as np

    tally = Tally()
    for _sample, turns, qs in convs:
        mat = np.asarray(
            emb.embed([turn_text(sp, txt, ts) for _d, _n, sp, txt, ts in turns]), dtype=np.float32
        )
        ids = [d for d, *_ in turns]
        qv = np.asarray(emb.embed([q[0] for q in qs]), dtype=np.float32)
        for (_question, cat, ev, old), v in zip(qs, qv, strict=True):
            t = time.perf_counter()
            order = np.argsort(-(mat @ v))[:DEEP]
            tally.latency.append((time.perf_counter() - t) * 1000)
            ranked = [ids[i] for i in order]
            tally.add(cat, ranked[: max(KS)], ev, old, ranked)
    return tally


def available_modes(modes: Iterable[str], embedder: str = DEFAULT_EMBEDDER) -> tuple[str, ...]:
    """`modes` less semantic and hybrid when `embedder` cannot be built (no extra)."""
    modes = tuple(modes)
    if all(m == "lexical" for m in modes):
        return modes
    try:
        make_embedder(embedder, download=False)
    except MemstrataError:
        return tuple(m for m in modes if m == "lexical")
    return modes


def run(
    path: Path,
    *,
    baselines: bool = True,
    mode: str = "lexical",
    modes: Iterable[str] | None = None,
    log_rows: bool = True,
    embedder: str = DEFAULT_EMBEDDER,
    progress: Callable[[str], None] | None = None,
    database_url: str | None = None,
    cache: bool = True,
) -> list[dict[str, Any]]:
    """Every row of one run: memstrata's transcript rows in each of `modes` (default:
    `mode` alone), the LOG rows (with lexical, unless `log_rows` is false), the baselines."""
    convs = load(path)
    modes = tuple(modes) if modes is not None else (mode,)
    tallies, spent, n = run_memstrata(convs, modes, progress, embedder, database_url, cache)
    rows: list[dict[str, Any]] = []
    for m, tally in tallies.items():
        part = tally.summary("memstrata" if m == "lexical" else f"memstrata-{m}")
        if part:
            ingest, embed = spent["ingest_s"], spent["embed_s"]
            part[0]["ingest_s"] = round(ingest, 3) if ingest is not None else None
            part[0]["ingest_per_s"] = round(n / ingest) if ingest else None
            if m != "lexical":
                part[0]["embed_s"] = round(embed, 3) if embed is not None else None
        rows += part
    if "lexical" in modes and log_rows:
        rows += run_memstrata_log(convs).summary("memstrata-log")
        rows += run_memstrata_log(convs, NO_DECAY).summary("memstrata-log-nodecay")
        rows += run_memstrata_log(convs, NEIGHBOURS).summary("memstrata-log-neighbours")
    if baselines:
        rows += run_fts5_baseline(convs).summary("fts5")
        dense = run_dense_baseline(convs, embedder)
        if dense is not None:
            rows += dense.summary("minilm")
    return rows


def format_rows(rows: list[dict[str, Any]]) -> str:
    """One line per row; `stale` (updated facts whose outdated statement ranks first)
    only where the set has updated facts."""
    stale = any("stale_first" in r for r in rows)
    head = (
        f"{'system':<26}{'cat':>4}{'n':>5}"
        + "".join(f"{'r@' + str(k):>8}" for k in KS)
        + "".join(f"{'hit@' + str(k):>8}" for k in KS)
        + f"{'s-r@10':>8}{'S-r@10':>8}"
        + (f"{'stale':>8}" if stale else "")
        + f"{'p50ms':>9}{'p95ms':>9}"
    )
    out = [head]
    for r in rows:
        out.append(
            f"{r['system']:<26}{r['category']!s:>4}{r['questions']:>5}"
            + "".join(f"{r[f'recall@{k}']:>8.3f}" for k in KS)
            + "".join(f"{r[f'hit@{k}']:>8.3f}" for k in KS)
            + f"{r['session_recall@10']:>8.3f}{r['session_rank@10']:>8.3f}"
            + ((f"{r['stale_first']:>8.3f}" if "stale_first" in r else " " * 8) if stale else "")
            + (f"{r['p50_ms']:>9.2f}{r['p95_ms']:>9.2f}" if "p50_ms" in r else "")
        )
    return "\n".join(out)
