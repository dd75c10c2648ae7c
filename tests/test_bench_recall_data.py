"""The recall yardsticks' data is consistent: gold that exists, held-out parts kept apart.

Both sets were written before any tuning (docs/benchmarks-recall.md): these tests keep
them honest as they are edited, and keep the generated techconv files in step with
their hand-written specs.
"""

from __future__ import annotations

import gzip
import json
import statistics

from memstrata.bench import locomo, techconv
from memstrata.bench.paraphrase_data import SPLITS, WRITE_LAYERS, filler, load


def messages(conv: dict) -> list[dict]:
    c = conv["conversation"]
    return [m for k, v in c.items() if k.startswith("session_") and isinstance(v, list) for m in v]


def test_techconv_gold_is_consistent_and_the_set_is_large_enough() -> None:
    sets = techconv.generate()
    for convs in sets.values():
        for conv in convs:
            assert techconv.problems(conv) == []  # evidence exists, answers only there
    dev, held = sets["dev"], sets["heldout"]
    assert len(dev) + len(held) >= 6 and len(held) >= 2
    assert not {c["sample_id"] for c in dev} & {c["sample_id"] for c in held}
    every = dev + held
    msgs = [m for c in every for m in messages(c)]
    qa = [q for c in every for q in c["qa"]]
    assert len(msgs) >= 1200 and len(qa) >= 250
    updated = [q for q in qa if q["category"] == 3]
    assert len(updated) >= 40
    assert all(q["outdated_evidence"] and q["evidence"] for q in updated)
    long = [len(m["text"]) for m in msgs if m["speaker"] == techconv.ASSISTANT]
    assert statistics.median(long) > 1200 and max(long) > 3000
    assert sum("```" in m["text"] for m in msgs) > 100  # code blocks


def test_techconv_problems_are_found() -> None:
    """The consistency check can fail: an answer said outside its evidence, an updated
    fact whose outdated statement comes after the latest, an evidence id that is gone."""
    conv = json.loads(json.dumps(techconv.generate()["dev"][0]))
    q = next(q for q in conv["qa"] if q["category"] == 3)
    q["evidence"], q["outdated_evidence"] = q["outdated_evidence"], q["evidence"]
    first = messages(conv)[0]
    first["text"] += " " + conv["qa"][0]["answer"]
    conv["qa"][1]["evidence"] = ["D99:1"]
    found = "\n".join(techconv.problems(conv))
    assert "outdated evidence before the latest" in found
    assert "is also in" in found
    assert "does not exist" in found


def test_techconv_files_hold_what_the_specs_generate() -> None:
    for split, convs in techconv.generate().items():
        stored = json.loads(gzip.decompress(techconv.OUTPUTS[split].read_bytes()))
        assert stored == json.loads(json.dumps(convs))  # regenerate: python -m ...techconv
    assert sum(p.stat().st_size for p in techconv.OUTPUTS.values()) < 5_000_000


def test_bench_locomo_reads_the_bundled_sets_with_their_outdated_evidence() -> None:
    for name in ("techconv-dev", "techconv-heldout"):
        convs = locomo.load(name)  # type: ignore[arg-type]
        qs = [q for _s, _t, questions in convs for q in questions]
        assert len(qs) == sum(len(c["qa"]) for c in techconv.generate()[name.split("-")[1]])
        for _text, cat, evidence, outdated in qs:
            assert evidence and not evidence & outdated
            assert bool(outdated) == (cat == 3)


def test_paraphrase_data_is_consistent() -> None:
    pairs, records = load()
    assert len(pairs) >= 100
    ids = [p.qid for p in pairs]
    assert len(set(ids)) == len(ids)
    held = [p for p in pairs if p.split == "heldout"]
    assert {p.split for p in pairs} == set(SPLITS)
    assert 0.25 <= len(held) / len(pairs) <= 0.35
    assert {p.record.layer for p in pairs} == set(WRITE_LAYERS)  # answers on every layer
    texts = [r.text for r in records]  # hand-written: each once (filler repeats, as logs do)
    assert len(set(texts)) == len(texts)
    gold = {p.record.text for p in pairs}
    assert not gold & {r.text for r in filler()}
    assert len(records) - len(pairs) + len(filler()) >= 300  # several hundred distractors
    for p in pairs:
        assert p.record.text.lower() not in p.question.lower()  # the question paraphrases
    assert filler() == filler()  # deterministic
