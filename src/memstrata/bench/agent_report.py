"""The readable report of `bench agent`: one row per scenario, the pooled development
figures, the held-out scenario apart, and (with `details`) what each question got back
and which context items were missing."""

from __future__ import annotations

from typing import Any

from memstrata.bench.agent_metrics import noisy_lines

# Issue 19's "done when", shown beside the figures (the held-out within 0.05 of them).
TARGETS = (
    "targets (issue 19): context coverage 1.00, noise <= 0.15, recall@3 >= 0.90, "
    "recall@1 >= 0.70, NOW integrity 1.00; held-out within 0.05"
)
COLUMNS = (
    ("scenario", 20),
    ("surface", 11),
    ("sess", 4),
    ("ctx cov", 7),
    ("stale ctx", 9),
    ("noise", 5),
    ("recall@1", 8),
    ("@3", 4),
    ("search@1", 8),
    ("@3", 4),
    ("stale>ans", 9),
    ("NOW", 4),
    ("cont.", 5),
    ("ignore", 6),
)


def _f(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _row(name: str, surface: str, sessions: str, mx: dict[str, Any]) -> str:
    cells = (
        name,
        surface,
        sessions,
        _f(mx["context_coverage"]),
        f"{mx['context_stale_shown']}/{mx['context_stale_checks']}",
        _f(mx["noise_share"]),
        _f(mx["recall_at_1"]),
        _f(mx["recall_at_3"]),
        _f(mx["search_at_1"]),
        _f(mx["search_at_3"]),
        f"{mx['stale_above_recall']}/{mx['stale_questions']}",
        _f(mx["now_integrity"]),
        _f(mx["continue_ok"]),
        _f(mx["ignore_ok"]),
    )
    return "  ".join(str(c).ljust(w) for c, (_, w) in zip(cells, COLUMNS, strict=True)).rstrip()


def format_report(result: dict[str, Any], *, details: bool = False) -> str:
    header = "  ".join(h.ljust(w) for h, w in COLUMNS).rstrip()
    dev = [r for r in result["scenarios"] if not r["held_out"]]
    held = [r for r in result["scenarios"] if r["held_out"]]
    lines = ["memstrata bench agent (virtual clock; every figure is deterministic)", "", header]
    for r in dev:
        lines.append(_row(r["name"], r["surface"], str(r["sessions_run"]), r["metrics"]))
    if result.get("dev") and len(dev) > 1:
        lines.append(_row("dev (pooled)", "", "", result["dev"]))
    if held:
        lines += ["", "HELD-OUT (" + result["held_out_note"] + "):", header]
        lines += [_row(r["name"], r["surface"], str(r["sessions_run"]), r["metrics"]) for r in held]
    lines += ["", TARGETS, ""]
    lines += [
        "ctx cov: gold items present in the session-start contexts; stale ctx: reversed "
        "decisions or 'Task complete' claims shown / checks; noise: share of context "
        "characters on tool-trace and bookkeeping lines; recall@k: questions whose answer "
        "record is in recall_memory's top k (search@k: store.search); stale>ans: questions "
        "where a stale record ranks above the answer / questions with a stale record; NOW: "
        "session starts where NOW.md is what the agent last set; cont./ignore: 'continue' "
        "turns given the agent's NOW, 'ignore memory' turns given nothing.",
        "",
    ]
    for r in result["scenarios"]:
        mx = r["metrics"]
        by_what = ", ".join(f"{k} {v}" for k, v in mx["coverage_by_what"].items())
        lines.append(
            f"{r['name']}: {mx['context_checkpoints']} contexts (mean {mx['context_chars_mean']} "
            f"chars), {mx['questions']} questions, {r['counts']['tool_calls']} tool calls, "
            f"{r['counts']['hook_calls']} hook calls, {r['counts']['mcp_calls']} MCP calls, "
            f"{r['seconds']} s"
        )
        lines.append(f"  coverage by kind: {by_what}")
        lines.append(f"  decisions recorded with: {r['surfaces'].get('decision', '-')}")
        for p in r["problems"]:
            lines.append(f"  PROBLEM: {p}")
        if details:
            lines += _details(r)
    return "\n".join(lines).rstrip() + "\n"


def _details(r: dict[str, Any]) -> list[str]:
    out = []
    for c in r["checkpoints"]:
        missing = [" + ".join(i["phrases"]) for i in c["items"] if not i["covered"]]
        shown = [x["phrase"] for x in c["must_not"] if x["present"]]
        now = c["now"]
        flags = []
        if missing:
            flags.append(f"missing {missing}")
        if shown:
            flags.append(f"stale shown {shown}")
        if now is not None and not now["ok"]:
            flags.append(f"NOW is {now['found'][:70]!r}")
        noisy = len(noisy_lines(c["text"]))
        out.append(f"  [{c['label']}] {c['chars']} chars, {noisy} noisy lines; " + "; ".join(flags))
    for a in r["asks"]:

        def rank(s: str, a: dict[str, Any] = a) -> str:
            return str(a[s]["rank"] or "-") + ("!" if a[s]["stale_above"] else "")

        top = a["mcp"]["results"][0]["text"][:80] if a["mcp"]["results"] else "(nothing)"
        out.append(
            f"  {a['id']:<18} recall {rank('mcp'):>3}  search {rank('lib'):>3}  "
            f"{a['q'][:60]!r} -> 1st: {top!r}"
        )
    return out
