"""What semantic recall costs in the default install (README), measured in a fresh venv:

    .venv/bin/python tests/default_install_timings.py [--venv DIR]

* install: `make install` (= what `make run` installs) into a new venv, wall seconds
  (pip's cache as it is on this machine), and the venv's size, with its biggest parts;
* first query: a store of 200 memories, the first semantic query ever (it embeds the
  store), then 7 more fresh `memstrata search --mode semantic` processes: wall and CPU
  p50 / max, beside the same for `--mode lexical`;
* throughput: texts embedded per second in one process (both cores), for short
  agent memories and for `tests/embed/varied_texts.py` (1,000 texts, 41 tokens on
  average, 55 of them cut at 256);
* query embedding: p50 / p95 of 100 single-text embeds in one process.

With --venv DIR an existing venv of the default install is used instead of a new one.
Prints the load average beside each number: on a shared machine it is most of the story.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).parent), str(Path(__file__).parent / "embed")]

from freshvenv import REPO, clean_env, make_install, size_bytes  # noqa: E402

MEMORIES = [
    "Decision: Redis for session storage, keyed by user id",
    "Chose PostgreSQL 16 as the primary database for billing",
    "Alice prefers dark mode in the editor",
    "The nightly build failed: timeout in test_sync_large_folder",
    "Deploys run every Friday afternoon after the review",
    "Use tabs, not spaces, in Makefiles",
    "The frontend uses React with TypeScript",
    "CI caches pip wheels between runs to save time",
]

IN_VENV = r"""
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
from varied_texts import varied_texts
from memstrata.embed import make_embedder
e = make_embedder("minilm", download=False)
short = [f"{t} (note {i})" for i in range(60) for t in json.loads(sys.argv[2])]
out = {}
for name, texts in (("short", short), ("varied", varied_texts(1000))):
    e.embed(texts[:8])
    t = time.perf_counter(); e.embed(texts); d = time.perf_counter() - t
    out[name] = [len(texts), round(len(texts) / d, 1), round(os.getloadavg()[0], 1)]
qs = []
for i in range(100):
    t = time.perf_counter(); e.embed([f"what did we settle on for storing sessions {i}?"])
    qs.append(time.perf_counter() - t)
qs.sort()
out["query_ms"] = [round(1000 * qs[49], 1), round(1000 * qs[94], 1), round(os.getloadavg()[0], 1)]
print(json.dumps(out))
"""


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


def biggest(venv: Path, n: int = 8) -> str:
    site = next((venv / "lib").glob("python3*/site-packages"))
    parts = sorted(((size_bytes(p), p.name) for p in site.iterdir() if p.is_dir()), reverse=True)
    return ", ".join(f"{name} {size / 1e6:.0f}" for size, name in parts[:n])


def main(argv: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        if "--venv" in argv:
            venv = Path(argv[argv.index("--venv") + 1])
        else:
            venv = Path(tmp) / "venv"
            seconds = make_install(venv)
            print(f"make install: {seconds:.0f} s wall ({load()})")
        print(f"venv: {size_bytes(venv) / 1e6:.1f} MB; biggest (MB): {biggest(venv)}")
        env = clean_env(XDG_CACHE_HOME=f"{tmp}/cache", HF_HOME=f"{tmp}/hf")
        home = Path(tmp) / "store"
        exe = [str(venv / "bin" / "memstrata"), "--home", str(home), "--agent", "finn"]
        fill = (
            "import json, sys; from memstrata import Store\n"
            "with Store(sys.argv[1], agent='finn') as s:\n"
            "    for i, t in enumerate(json.loads(sys.argv[2]) * 25):\n"
            "        s.agent().log.append('THOUGHT', f'{t} (entry {i})')\n"
        )
        py = str(venv / "bin" / "python")
        subprocess.run([py, "-c", fill, str(home), json.dumps(MEMORIES)], env=env, check=True)
        query = [*exe, "search", "what did we settle on for storing sessions?"]
        wall, cpu = timed([*query, "--mode", "semantic"], env)
        print(
            f"first semantic query ever (embeds 200 memories): {wall:.2f} s wall, {cpu:.2f} s CPU ({load()})"
        )
        for mode in ("semantic", "lexical"):
            runs = [timed([*query, "--mode", mode], env) for _ in range(7)]
            walls, cpus = [w for w, _ in runs], [c for _, c in runs]
            print(
                f"fresh `memstrata search --mode {mode}` process: wall p50 {statistics.median(walls):.2f} s "
                f"max {max(walls):.2f} s; CPU p50 {statistics.median(cpus):.2f} s ({load()})"
            )
        r = subprocess.run(
            [
                str(venv / "bin" / "python"),
                "-c",
                IN_VENV,
                str(REPO / "tests" / "embed"),
                json.dumps(MEMORIES),
            ],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        out = json.loads(r.stdout)
        for name in ("short", "varied"):
            n, rate, la = out[name]
            print(f"throughput, {n} {name} texts in one process: {rate} texts/s (load {la})")
        p50, p95, la = out["query_ms"]
        print(
            f"query embedding (one short text, in process): p50 {p50} ms, p95 {p95} ms (load {la})"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
