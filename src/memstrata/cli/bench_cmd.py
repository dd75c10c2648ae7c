"""`memstrata bench ops | search | locomo | paraphrase | append | fresh | serve | teams | agent
| import | semantic`."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser("bench", help="run benchmarks")
    bsub = p.add_subparsers(dest="bench", metavar="BENCH", required=True)
    ops = bsub.add_parser("ops", help="memory operation latencies at 10k and 100k entries")
    ops.add_argument("--sizes", default="10000,100000", help="comma-separated store sizes")
    ops.add_argument(
        "--repeat", type=int, default=500, help="operations timed per size (default 500)"
    )
    ops.add_argument(
        "--no-floors",
        action="store_true",
        help="skip the bare primitives each hot operation is compared with (fdatasync "
        "append, atomic replace, FTS5 bm25, interpreter start)",
    )
    ops.set_defaults(func=run_ops)
    sm = bsub.add_parser(
        "semantic",
        help="the default embedder's first query from a fresh process, and hybrid queries "
        "at 10k with the MiniLM query embedding",
    )
    sm.add_argument("--memories", type=int, default=200, help="the first-query store's size")
    sm.add_argument("--runs", type=int, default=9, help="fresh processes timed (default 9)")
    sm.add_argument("--size", type=int, default=10_000, help="the hybrid store's size")
    sm.add_argument("--queries", type=int, default=200, help="hybrid queries timed")
    sm.add_argument("--no-hybrid", action="store_true", help="the first-query part only")
    sm.set_defaults(func=run_semantic)
    se = bsub.add_parser("search", help="search latency at 10k/100k/1M entries, lexical and hybrid")
    se.add_argument("--sizes", default="10000,100000,1000000", help="comma-separated store sizes")
    se.add_argument("--queries", type=int, default=300, help="queries timed per size (default 300)")
    se.add_argument("--no-hybrid", action="store_true", help="lexical search only")
    se.set_defaults(func=run_search)
    loc = bsub.add_parser(
        "locomo", help="LoCoMo retrieval recall@k against FTS5 and MiniLM baselines"
    )
    loc.add_argument(
        "path",
        help="LoCoMo-format JSON file (.json or .json.gz), or a bundled set: "
        "techconv-dev, techconv-heldout (held out: report it, never tune on it)",
    )
    loc.add_argument(
        "--mode",
        default="all",
        choices=("lexical", "semantic", "hybrid", "all"),
        help="memstrata's search mode; all (default): lexical, semantic and hybrid rows "
        "side by side (semantic and hybrid are skipped when no embedder is installed)",
    )
    loc.add_argument(
        "--embedder",
        default="minilm",
        help="[search] embedder of the semantic and hybrid rows and the MiniLM baseline "
        "(default minilm: the default install's, NumPy; local: torch)",
    )
    loc.add_argument(
        "--no-cache",
        action="store_true",
        help="build the stores anew instead of copying the ones kept from an earlier run "
        "(MEMSTRATA_BENCH_CACHE: where they are kept)",
    )
    loc.add_argument("--no-log-rows", action="store_true", help="skip the memstrata-log rows")
    loc.add_argument(
        "--no-baselines", action="store_true", help="skip the FTS5 and MiniLM baseline rows"
    )
    loc.add_argument(
        "--database-url",
        default=None,
        help="keep each conversation's truth in PostgreSQL (a scratch schema)",
    )
    loc.set_defaults(func=run_locomo)
    par = bsub.add_parser(
        "paraphrase",
        help="paraphrased questions over agent memories: top-1/3/5/10, per layer, dev and held-out",
    )
    par.add_argument(
        "--mode",
        default="all",
        choices=("lexical", "semantic", "hybrid", "all"),
        help="memstrata's search mode (default all: lexical, semantic and hybrid rows)",
    )
    par.add_argument(
        "--embedder",
        default="minilm",
        help="[search] embedder of the semantic and hybrid rows and the MiniLM baseline "
        "(default minilm: the default install's, NumPy; local: torch)",
    )
    par.add_argument(
        "--no-cache",
        action="store_true",
        help="build the stores anew instead of copying the ones kept from an earlier run "
        "(MEMSTRATA_BENCH_CACHE: where they are kept)",
    )
    par.add_argument("--no-baselines", action="store_true", help="skip FTS5 and MiniLM rows")
    par.add_argument(
        "--split",
        default="all",
        choices=("dev", "heldout", "all"),
        help="which part to print (rows are computed for both; never tune on heldout)",
    )
    par.add_argument("--by-layer", action="store_true", help="also print a row per answer layer")
    par.add_argument(
        "--data", default=None, help="a data file in the bundled paraphrase.txt format"
    )
    par.set_defaults(func=run_paraphrase)
    app = bsub.add_parser("append", help="LOG append p50/p95 with the compaction trigger on vs off")
    app.add_argument("--appends", type=int, default=2000, help="appends per side")
    app.set_defaults(func=run_append)
    fr = bsub.add_parser("fresh", help="cost of the folder watcher per search; index + WAL size")
    fr.add_argument("--size", type=int, default=100_000, help="entries in the store")
    fr.add_argument("--sources", type=int, default=10_000, help="source files they are in")
    fr.add_argument(
        "--queries", type=int, default=300, help="queries timed per store (default 300)"
    )
    fr.add_argument("--writes", type=int, default=10_000, help="writes for the WAL size (0: skip)")
    fr.add_argument("--no-search", action="store_true", help="only the WAL size")
    fr.set_defaults(func=run_fresh)
    srv = bsub.add_parser(
        "serve", help="memstrata serve: API search vs library, page loads, held load at N entries"
    )
    srv.add_argument("--entries", type=int, default=100_000, help="store size (default 100000)")
    srv.add_argument("--queries", type=int, default=200, help="search queries timed (default 200)")
    srv.add_argument("--seconds", type=float, default=8.0, help="per held-load level")
    srv.add_argument("--levels", default="1,2,4,8,16", help="client concurrency levels")
    srv.set_defaults(func=run_serve)
    tm = bsub.add_parser(
        "teams",
        help="the PostgreSQL backend vs local files: publish, append "
        "and search p50/p95, catch-up rate, second-host latency, "
        "reopen catch-up",
    )
    tm.add_argument(
        "--database-url",
        required=True,
        help="a PostgreSQL database to use (a scratch schema is created and dropped)",
    )
    tm.add_argument(
        "--entries", type=int, default=100_000, help="ledger entries in each store (default 100000)"
    )
    tm.add_argument("--samples", type=int, default=200, help="calls per operation and side")
    tm.add_argument("--sees", type=int, default=50, help="writes timed to the second host")
    tm.set_defaults(func=run_teams)
    ag = bsub.add_parser(
        "agent",
        help="memstrata as an agent's memory over scripted multi-session scenarios: context "
        "coverage and noise, recall rank of the answer, NOW integrity (held-out reported apart)",
    )
    ag.add_argument(
        "--scenario",
        action="append",
        default=None,
        help="run this scenario (repeat for several; default: all, see --list)",
    )
    ag.add_argument("--list", action="store_true", help="list the scenarios and exit")
    ag.add_argument(
        "--sessions", type=int, default=None, help="run only the first N sessions of each"
    )
    ag.add_argument("--no-held-out", action="store_true", help="skip the held-out scenario")
    ag.add_argument(
        "--workdir",
        default=None,
        help="keep the scenario projects and stores in this folder (default: a temporary one, "
        "on /dev/shm when there is one, removed afterwards)",
    )
    ag.add_argument(
        "--details",
        action="store_true",
        help="also list each context's missing items and each question's ranks",
    )
    ag.add_argument(
        "--snapshots",
        action="store_true",
        help="with --workdir: keep a copy of the store at each dev question, for --replay",
    )
    ag.add_argument(
        "--replay",
        default=None,
        metavar="WORKDIR",
        help="ask the dev questions of a kept run (--workdir) again with today's ranking, "
        "against its snapshots: r@1/r@3 per scenario and every miss (never the held-out one)",
    )
    ag.add_argument(
        "--question", action="append", default=None, help="with --replay: only this question id"
    )
    ag.set_defaults(func=run_agent)
    im = bsub.add_parser("import", help="import time per member at 1k/10k/30k members")
    im.add_argument("--sizes", default="1000,10000,30000", help="comma-separated member counts")
    im.add_argument(
        "--dir", default=None, help="where archives and stores go (default: the temp folder)"
    )
    im.set_defaults(func=run_import_bench)


def run_agent(args: argparse.Namespace) -> int:
    from pathlib import Path

    from memstrata.bench.agent import run_bench
    from memstrata.bench.agent_report import format_report
    from memstrata.bench.agent_scenario import load, scenario_names
    from memstrata.cli.main import emit
    from memstrata.errors import MalformedInput

    names = scenario_names()
    if args.list:
        rows = [(n, load(n)) for n in names]
        emit(
            args,
            [{"name": n, "held_out": sc.held_out, "title": sc.data.get("title")} for n, sc in rows],
            "\n".join(
                f"{n:<22} {'held-out ' if sc.held_out else ''}{sc.data.get('title')}"
                for n, sc in rows
            ),
        )
        return 0
    unknown = [n for n in args.scenario or [] if n not in names]
    if unknown:
        raise MalformedInput(f"unknown scenario {unknown[0]!r}; scenarios: {', '.join(names)}")
    if args.replay:
        from memstrata.bench.agent_replay import format_replay, replay

        done = replay(
            Path(args.replay),
            args.scenario,
            only=set(args.question) if args.question else None,
            progress=_progress,
        )
        emit(args, done, format_replay(done, details=args.details))
        return 0
    if args.snapshots and not args.workdir:
        raise MalformedInput("--snapshots needs --workdir (where the copies are kept)")
    if args.sessions is not None and args.sessions < 1:
        raise MalformedInput("--sessions must be at least 1")
    result = run_bench(
        args.scenario,
        sessions=args.sessions,
        held_out=not args.no_held_out,
        workdir=Path(args.workdir) if args.workdir else None,
        progress=_progress,
        snapshots=args.snapshots,
    )
    emit(args, result, format_report(result, details=args.details))
    return 0


def run_teams(args: argparse.Namespace) -> int:
    from memstrata.bench.teams import format_report, run_teams
    from memstrata.cli.main import emit

    result = run_teams(args.database_url, args.entries, args.samples, args.sees, progress=_progress)
    emit(args, result, format_report(result))
    return 0


def run_import_bench(args: argparse.Namespace) -> int:
    from memstrata.bench.imports import format_table, run_import_bench
    from memstrata.cli.main import emit

    sizes = tuple(int(x) for x in args.sizes.split(","))
    rows = run_import_bench(sizes, args.dir, progress=_progress)
    emit(args, rows, format_table(rows))
    return 0


def run_ops(args: argparse.Namespace) -> int:
    from memstrata.bench.ops import format_table, run_ops
    from memstrata.cli.main import emit

    sizes = tuple(int(x) for x in args.sizes.split(","))
    rows = run_ops(sizes, args.repeat, progress=_progress, floors=not args.no_floors)
    emit(args, rows, format_table(rows))
    return 0


def run_semantic(args: argparse.Namespace) -> int:
    from memstrata.bench.semantic import format_report, run_first_query, run_hybrid
    from memstrata.cli.main import emit

    rows = run_first_query(args.memories, args.runs)
    if not args.no_hybrid:
        rows += run_hybrid(args.size, args.queries, progress=_progress)
    emit(args, rows, format_report(rows))
    return 0


def run_append(args: argparse.Namespace) -> int:
    from memstrata.bench.append import format_row, run_append
    from memstrata.cli.main import emit

    row = run_append(args.appends)
    emit(args, row, format_row(row))
    return 0


def run_locomo(args: argparse.Namespace) -> int:
    from pathlib import Path

    from memstrata.bench.locomo import MODES, available_modes, format_rows, run
    from memstrata.cli.main import emit

    modes = _modes(args.mode, args.embedder, available_modes, MODES)
    rows = run(
        Path(args.path),
        baselines=not args.no_baselines,
        modes=modes,
        log_rows=not args.no_log_rows,
        embedder=args.embedder,
        progress=_progress,
        database_url=args.database_url,
        cache=not args.no_cache,
    )
    if args.json:
        for r in rows:
            if r["category"] == "all":
                sys.stdout.write(json.dumps(r) + "\n")
        return 0
    emit(args, rows, format_rows(rows))
    return 0


def _modes(mode: str, embedder: str, available: Any, all_modes: tuple[str, ...]) -> tuple[str, ...]:
    """The modes to run: `all` less what the installed embedder cannot do (said so)."""
    if mode != "all":
        return (mode,)
    modes = available(all_modes, embedder)
    if modes != all_modes:
        _progress(f"no {embedder!r} embedder installed: semantic and hybrid rows skipped")
    return tuple(modes)


def run_paraphrase(args: argparse.Namespace) -> int:
    from pathlib import Path

    from memstrata.bench.locomo import available_modes
    from memstrata.bench.paraphrase import MODES, format_rows, run
    from memstrata.bench.paraphrase_data import DATA
    from memstrata.cli.main import emit

    modes = _modes(args.mode, args.embedder, available_modes, MODES)
    rows = run(
        path=Path(args.data) if args.data else DATA,
        modes=modes,
        baselines=not args.no_baselines,
        embedder=args.embedder,
        progress=_progress,
        cache=not args.no_cache,
    )
    shown = [
        r
        for r in rows
        if args.split in ("all", r["split"]) and (args.by_layer or r["layer"] == "all")
    ]
    if args.json:
        for r in shown:
            sys.stdout.write(json.dumps(r) + "\n")
        return 0
    emit(args, shown, format_rows(shown))
    return 0


def run_search(args: argparse.Namespace) -> int:
    from memstrata.bench.search import format_table, run_search
    from memstrata.cli.main import emit

    sizes = tuple(int(x) for x in args.sizes.split(","))
    rows = run_search(sizes, args.queries, not args.no_hybrid, progress=_progress)
    emit(args, rows, format_table(rows))
    return 0


def run_fresh(args: argparse.Namespace) -> int:
    from memstrata.bench.fresh import format_report, run_fresh, run_wal
    from memstrata.cli.main import emit

    fresh = (
        None
        if args.no_search
        else run_fresh(args.size, args.sources, args.queries, progress=_progress)
    )
    wal = run_wal(args.writes, progress=_progress) if args.writes else []
    emit(args, {"fresh": fresh, "wal": wal}, format_report(fresh, wal))
    return 0


def run_serve(args: argparse.Namespace) -> int:
    from memstrata.bench.serve import format_result, run_serve_bench
    from memstrata.cli.main import emit

    result = run_serve_bench(
        args.entries,
        args.queries,
        seconds=args.seconds,
        levels=tuple(int(x) for x in args.levels.split(",")),
        progress=_progress,
    )
    emit(args, result, format_result(result))
    return 0


def _progress(message: str) -> None:
    from memstrata.cli.common import progress

    progress(message)
