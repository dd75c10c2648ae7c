"""Synthetic but realistic memory text for benchmarks: Zipf-distributed words,
sentences of 8-40 words, written straight to the store's files (as a user's
history would be), then indexed by opening the store."""

from __future__ import annotations

import json
import random
import statistics
from pathlib import Path

from memstrata.model import iso

_SYLLABLES = (
    "ka",
    "lo",
    "mi",
    "ra",
    "te",
    "su",
    "no",
    "ve",
    "pi",
    "da",
    "zo",
    "an",
    "el",
    "or",
    "us",
    "ti",
    "be",
    "ca",
    "fu",
    "ge",
    "hy",
    "ju",
    "qua",
    "wex",
)
COMMON = (
    "the",
    "a",
    "to",
    "of",
    "and",
    "in",
    "is",
    "for",
    "on",
    "with",
    "that",
    "we",
    "it",
    "was",
    "api",
    "test",
    "user",
    "auth",
    "config",
    "deploy",
    "error",
    "build",
    "file",
    "database",
    "schema",
    "token",
    "cache",
    "queue",
    "review",
    "release",
)


def p50_p95(samples: list[float]) -> tuple[float, float]:
    """Median and 95th percentile (nearest rank) of latency samples."""
    xs = sorted(samples)
    return statistics.median(xs), xs[max(0, int(len(xs) * 0.95) - 1)]


def vocabulary(size: int = 8000, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    words = list(COMMON)
    seen = set(words)
    while len(words) < size:
        w = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))
        if w not in seen:
            seen.add(w)
            words.append(w)
    return words


class Writer:
    def __init__(self, seed: int = 11) -> None:
        self.rng = random.Random(seed)
        self.vocab = vocabulary()
        n = len(self.vocab)
        self.weights = [1.0 / (i + 1) for i in range(n)]
        self.cum: list[float] = []
        acc = 0.0
        for w in self.weights:
            acc += w
            self.cum.append(acc)

    def words(self, k: int) -> list[str]:
        return self.rng.choices(self.vocab, cum_weights=self.cum, k=k)

    def sentence(self, lo: int = 8, hi: int = 40) -> str:
        return " ".join(self.words(self.rng.randint(lo, hi))).capitalize() + "."

    def query(self) -> str:
        # queries mix a common word with rarer content words, like real questions
        rare = [
            self.vocab[self.rng.randint(100, len(self.vocab) - 1)]
            for _ in range(self.rng.randint(1, 3))
        ]
        return " ".join([self.rng.choice(self.vocab[:100]), *rare])


def populate(
    home: Path, n: int, agent: str = "bench", seed: int = 11, *, files: int | None = None
) -> None:
    """Write `n` memories: 25% ledger entries, 75% session transcript messages
    (200 per transcript, or spread over `files` source files in all)."""
    w = Writer(seed)
    home.mkdir(parents=True, exist_ok=True)
    t0 = 1_760_000_000.0
    kinds = ("decision", "convention", "interface", "warning", "artifact", "code")
    n_ledger = n // 4
    with open(home / "ledger.jsonl", "w", encoding="utf-8") as fh:
        for i in range(n_ledger):
            rec = {
                "id": f"mem-{i:08x}",
                "ts": iso(t0 + i * 60),
                "kind": kinds[i % 6],
                "room_id": f"room-{i % 20}",
                "author_role": "bench",
                "ref": None,
                "tags": w.words(2),
                "summary": w.sentence(6, 20),
                "detail": w.sentence(),
                "supersedes": None,
            }
            fh.write(json.dumps(rec) + "\n")
    sess_dir = home / "agents" / agent / "sessions"
    sess_dir.mkdir(parents=True, exist_ok=True)
    remaining = n - n_ledger
    transcripts = max(1, min(remaining, files - 1)) if files is not None else 0
    s = 0
    while remaining > 0:
        per = -(-remaining // (transcripts - s)) if files is not None else 200  # spread evenly
        with open(sess_dir / f"s{s:05d}.jsonl", "w", encoding="utf-8") as fh:
            for j in range(min(per, remaining)):
                rec = {
                    "id": f"m{j}",
                    "role": "user" if j % 2 == 0 else "assistant",
                    "content": w.sentence(),
                    "timestamp": iso(t0 + s * 3600 + j),
                }
                fh.write(json.dumps(rec) + "\n")
        remaining -= per
        s += 1
