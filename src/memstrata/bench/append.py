"""`memstrata bench append`: LOG append latency with the compaction trigger on and off.

Two stores in one run, identical but for `[log] auto_compact`; appends alternate
between them (A, B, A, B...) so both see the same machine load. With the trigger
on, every append checks the limits (a stat and one indexed count) and about every
`compact_entries` appends a compaction runs in a background thread, so the numbers
include the contention of that thread. Reported: p50/p95 per side and the ratio.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from memstrata.bench.synth import p50_p95
from memstrata.lifecycle.compaction import compaction_history
from memstrata.store.view import Store


def run_append(appends: int = 2000, entry_chars: int = 200) -> dict[str, Any]:

    homes = {
        side: Path(tempfile.mkdtemp(prefix=f"memstrata-bench-{side}-")) for side in ("off", "on")
    }
    try:
        stores = {}
        for side, home in homes.items():
            (home / "config.toml").write_text(
                f"[log]\nauto_compact = {'true' if side == 'on' else 'false'}\n"
            )
            stores[side] = Store(home, agent="bench")
        samples: dict[str, list[float]] = {"off": [], "on": []}
        body = ("ran the step and checked its output " * 20)[:entry_chars]
        for i in range(appends):
            for side in ("off", "on") if i % 2 == 0 else ("on", "off"):
                log = stores[side].agent().log
                t = time.perf_counter()
                log.append("TOOL_USE", f"{i}: {body}", {"i": i})
                samples[side].append((time.perf_counter() - t) * 1000)
        for s in stores.values():
            s.drain()
        row: dict[str, Any] = {"appends": appends}
        for side, xs in samples.items():
            p50, p95 = p50_p95(xs)
            row[f"{side}_p50_ms"], row[f"{side}_p95_ms"] = round(p50, 3), round(p95, 3)
        row["p95_ratio_on_off"] = round(row["on_p95_ms"] / row["off_p95_ms"], 3)
        row["p50_ratio_on_off"] = round(row["on_p50_ms"] / row["off_p50_ms"], 3)
        row["compactions_on"] = len(compaction_history(stores["on"], "bench"))
        row["background_errors"] = len(stores["on"].background_errors)
        for s in stores.values():
            s.close()
        return row
    finally:
        for home in homes.values():
            shutil.rmtree(home, ignore_errors=True)


def format_row(row: dict[str, Any]) -> str:
    return (
        f"{row['appends']} appends per side, {row['compactions_on']} automatic compactions\n"
        f"trigger off: p50 {row['off_p50_ms']:.3f} ms  p95 {row['off_p95_ms']:.3f} ms\n"
        f"trigger on:  p50 {row['on_p50_ms']:.3f} ms  p95 {row['on_p95_ms']:.3f} ms\n"
        f"ratio on/off: p50 {row['p50_ratio_on_off']:.2f}  p95 {row['p95_ratio_on_off']:.2f}"
    )
