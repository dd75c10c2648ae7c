"""`files.jsonl.records_backward` yields exactly what `decode` does, newest first, however
the source is damaged (torn tail, blank lines, non-object lines) and whatever the block."""

from __future__ import annotations

import json
import random

from memstrata.files.jsonl import decode, records_backward


def test_backward_reading_matches_decode_reversed() -> None:
    rng = random.Random(13)
    for _ in range(2000):
        recs = [{"i": i, "pad": "x" * rng.randint(0, 50)} for i in range(rng.randint(0, 30))]
        data = b"".join(json.dumps(r).encode() + b"\n" for r in recs)
        if rng.random() < 0.3:
            data += b'{"torn": '  # a write under way, or torn by a crash
        if data and rng.random() < 0.2:
            k = rng.randint(0, len(data) - 1)
            data = data[:k] + b"\n\n" + data[k:]  # may also split a record: two bad lines
        if rng.random() < 0.1:
            data = b"[1]\n" + data
        block = rng.randint(1, 80)
        got = list(records_backward(lambda o, n, d=data: d[o : o + n], len(data), block=block))
        assert got == list(reversed(decode(data).records)), (data, block)


def test_taking_the_newest_reads_only_the_end() -> None:
    data = b"".join(json.dumps({"i": i}).encode() + b"\n" for i in range(10_000))
    reads: list[tuple[int, int]] = []

    def read(offset: int, length: int) -> bytes:
        reads.append((offset, length))
        return data[offset : offset + length]

    newest = records_backward(read, len(data), block=4096)
    assert [next(newest)[1]["i"] for _ in range(3)] == [9999, 9998, 9997]
    assert sum(n for _, n in reads) <= 4096
