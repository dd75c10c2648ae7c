"""`memstrata bench agent --replay DIR`: the dev questions asked again, in seconds.

A run of `bench agent --workdir DIR --snapshots` keeps, for every development scenario,
its project folder with `asks.json` (each question, who asked it, when on the virtual
clock, its gold) and, per question, a copy of the store as it stood when the agent asked
(`snapshots/<question id>/`, taken just before the bench's own `store.search`). A replay
opens each copy and asks `store.search` again at the question's virtual time, so a change
to ranking is measured without running the scenarios' hooks, MCP calls and embeddings
again: the ranks are those the bench's `search@1` / `search@3` would give with the code
of now. Without a copy (a run without `--snapshots`), the final store is searched with
`until` = the question's time: close, not the same (later edits, compactions and
supersedes show through).

The held-out scenario is never replayed, snapshotted or read here (`HeldOut`): its
store is a check the lead runs once, not something to tune on.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memstrata.bench import agent_metrics as m
from memstrata.bench.agent_scenario import load, scenario_names
from memstrata.errors import MalformedInput
from memstrata.store.view import Store

ASKS = "asks.json"
SNAPSHOTS = "snapshots"
DEPTH = 50  # results read per question: where the answer sits when it misses the top 3
SKIP_COPY = shutil.ignore_patterns("*.lock", "*.sock", "*.pid")


class HeldOut(MalformedInput):
    """The held-out scenario asked for: never replayed (docs/bench-agent.md)."""


def refuse_held_out(name: str) -> None:
    if load(name).held_out:
        raise HeldOut(f"{name} is the held-out scenario: it is never replayed or snapshotted")


def snapshot(home: Path, project: Path, qid: str) -> Path:
    """A copy of the store `home` as it is now, for question `qid` (files keep their
    mtimes: the copy indexes as the original did)."""
    to = project / SNAPSHOTS / qid
    if to.exists():
        shutil.rmtree(to)
    shutil.copytree(home, to, ignore=SKIP_COPY)
    return to


def write_asks(project: Path, name: str, asks: list[dict[str, Any]]) -> None:
    """`asks.json` of one scenario's kept project: what a replay needs of each question."""
    keep = ("id", "q", "query", "agent", "room", "session", "at", "answers", "stale")
    rows = [{k: a.get(k) for k in keep} | {"bench_rank": a["lib"]["rank"]} for a in asks]
    (project / ASKS).write_text(
        json.dumps({"scenario": name, "asks": rows}, indent=1), encoding="utf-8"
    )


def projects(workdir: Path) -> list[tuple[str, Path]]:
    """(scenario, project folder) of every kept dev scenario under `workdir` (the folder
    given to `--workdir`, or one `bench-agent-*` run in it; the newest run first)."""
    names = set(scenario_names())
    found: dict[str, Path] = {}
    runs = sorted(workdir.glob("bench-agent-*"), key=lambda p: -p.stat().st_mtime)
    for base in [workdir, *runs]:
        for p in sorted(base.iterdir()) if base.is_dir() else []:
            if p.name in names and (p / ASKS).is_file() and p.name not in found:
                found[p.name] = p
    return sorted(found.items())


def replay(
    workdir: Path,
    names: list[str] | None = None,
    *,
    only: set[str] | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Every dev question of the scenarios kept under `workdir` asked again (`names`: only
    these scenarios; `only`: only these question ids)."""
    for n in names or []:
        refuse_held_out(n)
    kept = [(n, p) for n, p in projects(workdir) if not names or n in names]
    if not kept:
        raise MalformedInput(f"no kept bench agent scenario with {ASKS} under {workdir}")
    embedder: Any = None
    out: list[dict[str, Any]] = []
    for name, project in kept:
        if load(name).held_out:
            continue  # never replayed, even when its folder is there
        if progress:
            progress(f"replay: {name}")
        asks = json.loads((project / ASKS).read_text(encoding="utf-8"))["asks"]
        rows = []
        for a in asks:
            if only and a["id"] not in only:
                continue
            home = project / SNAPSHOTS / a["id"]
            copy = home.is_dir()
            if not copy:
                home = project / ".memstrata"
            with Store(home, agent=a["agent"], room=a.get("room"), audit=False) as store:
                if embedder is None and store.semantic.active():
                    embedder = store.embedder()
                if embedder is not None:
                    store.use_embedder(embedder)
                hits = store.search(
                    a["query"], k=DEPTH, now=a["at"], until=None if copy else a["at"]
                )
            records = [m.Record(h.uid, h.layer, f"{h.title}\n{h.text}".strip()) for h in hits]
            rank = m.first_answer(records, a["answers"])
            rows.append(
                {
                    "id": a["id"],
                    "q": a["q"],
                    "rank": rank,
                    "bench_rank": a.get("bench_rank"),
                    "snapshot": copy,
                    "top": [_brief(h) for h in hits[:3]],
                    "answer": _brief(hits[rank - 1]) if rank else None,
                }
            )
        out.append({"name": name, "questions": rows, **_figures(rows)})
    every = [r for s in out for r in s["questions"]]
    return {"scenarios": out, "dev": _figures(every)}


def _brief(h: Any) -> dict[str, Any]:
    ex = h.explain
    prior = ex.get("prior") or {}
    parts = {k: ex[k] for k in ("z_lexical", "z_dense", "z_maxsim") if k in ex}
    return {
        "uid": h.uid,
        "layer": h.layer,
        "signal": prior.get("signal"),
        "score": round(h.score, 4),
        "text": " ".join(f"{h.title} | {h.text}".split())[:110],
        **{k: round(float(v), 2) for k, v in parts.items() if v is not None},
        **{k: v for k, v in ex.items() if k.startswith("subject")},
    }


def _figures(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)

    def at(k: int) -> float | None:
        return m.share(sum(1 for r in rows if (r["rank"] or 99) <= k), n)

    return {"n": n, "r_at_1": at(1), "r_at_3": at(3)}


def format_replay(result: dict[str, Any], *, details: bool = False) -> str:
    lines = [f"{'scenario':<20} {'n':>3}  r@1    r@3"]
    for s in result["scenarios"]:
        lines.append(f"{s['name']:<20} {s['n']:>3}  {_f(s['r_at_1'])}  {_f(s['r_at_3'])}")
    d = result["dev"]
    lines.append(f"{'dev pooled':<20} {d['n']:>3}  {_f(d['r_at_1'])}  {_f(d['r_at_3'])}")
    lines.append("")
    lines.append("misses at rank 1 (rank now / in the bench run):")
    for s in result["scenarios"]:
        for r in s["questions"]:
            if r["rank"] == 1:
                continue
            lines.append(f"  {s['name']} {r['id']}: {r['rank'] or '-'} / {r['bench_rank'] or '-'}")
            if details:
                lines.append(f"    q: {r['q']}")
                for n, t in enumerate(r["top"], 1):
                    lines.append(f"    {n}. {_line(t)}")
                if r["answer"]:
                    lines.append(f"    ans {r['rank']}. {_line(r['answer'])}")
    return "\n".join(lines)


def _line(t: dict[str, Any]) -> str:
    zs = " ".join(f"{k[2:]}={t[k]}" for k in ("z_lexical", "z_dense", "z_maxsim") if k in t)
    return f"[{t['layer']}/{t['signal']} {t['score']} {zs}] {t['text']}"


def _f(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"
