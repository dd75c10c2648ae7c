"""The long technical-conversation dev set: generator of `data/techconv-*.json.gz`.

Eight conversations between a developer and an assistant building a software project
over months, in the LoCoMo JSON format, so `memstrata bench locomo PATH` runs on them.
What was written by hand lives in `data/techconv/`: one spec per conversation (`tcNN.txt`:
the project, its questions, their gold answers and the evidence messages that state
them) and `bank.txt` (filler prose, code blocks and short developer turns, with
slots). This module only lays the evidence into sessions and pads them with filler,
deterministically (a fixed seed per conversation), so the output is the same on
every machine: `python -m memstrata.bench.techconv` rewrites the two files.

Categories in this set: 1 multi-hop (one evidence message per part of the answer),
2 temporal (the answer is the evidence's session date), 3 updated fact (the gold is
the latest statement; `outdated_evidence` names the earlier ones, so the bench can
tell whether an outdated statement ranked above it), 4 single fact.
An assistant's evidence is one paragraph of a long answer (filler paragraphs and a
code block around it), as in real assistant messages; a developer's is the turn.
"""

from __future__ import annotations

import gzip
import json
import random
import re
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from memstrata.errors import MalformedInput
from memstrata.values import field, value_type

HERE = Path(__file__).with_name("data")
SPECS = HERE / "techconv"
OUTPUTS = {"dev": HERE / "techconv-dev.json.gz", "heldout": HERE / "techconv-heldout.json.gz"}
ASSISTANT = "Assistant"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "updated fact", 4: "single fact"}


@value_type
class Evidence:
    session: int
    speaker: str  # "dev" or "ai"
    text: str


@value_type
class Question:
    qid: str
    category: int
    text: str
    answer: str
    evidence: list[Evidence] = field(default_factory=list)
    outdated: list[Evidence] = field(default_factory=list)


@value_type
class Spec:
    meta: dict[str, str]
    questions: list[Question]

    def items(self, key: str) -> list[str]:
        return [x.strip() for x in self.meta.get(key, "").split(",") if x.strip()]


def parse_spec(path: Path) -> Spec:
    meta: dict[str, str] = {}
    questions: list[Question] = []
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        where = f"{path.name}:{n}"
        if line.startswith("Q "):
            parts = [p.strip() for p in line[2:].split(" | ")]
            if len(parts) != 3:
                raise MalformedInput(f"{where}: Q <id> <category> | question | answer")
            qid, cat = parts[0].split()
            questions.append(Question(qid, int(cat), parts[1], parts[2]))
        elif line[:2] in ("E ", "O "):
            head, sep, text = line[2:].partition(" | ")
            session, speaker = head.split()
            if not sep or speaker not in ("dev", "ai") or not questions:
                raise MalformedInput(f"{where}: E|O <session> dev|ai | text, after a Q line")
            ev = Evidence(int(session), speaker, text.strip())
            (questions[-1].evidence if line[0] == "E" else questions[-1].outdated).append(ev)
        else:
            key, _, value = line.partition(" ")
            meta[key] = value.strip()
    return Spec(meta, questions)


_ITEM = re.compile(r"@(para|code|ask|reply) (\w+)")


def parse_bank(path: Path) -> dict[tuple[str, str], list[str]]:
    """(kind, tag) -> items, kind in para, code, ask, reply."""
    bank: dict[tuple[str, str], list[list[str]]] = {}
    current: list[str] | None = None  # None: the header comments before the first item
    for raw in path.read_text(encoding="utf-8").splitlines():
        m = _ITEM.fullmatch(raw)
        if m:
            kind, tag = m.groups()
            current = []
            bank.setdefault((kind, tag), []).append(current)
        elif current is not None:
            current.append(raw)
    return {k: ["\n".join(lines).strip() for lines in v] for k, v in bank.items()}


class Filler:
    """Filler turns for one conversation, from the bank's `any` items and its topics."""

    def __init__(self, bank: dict[tuple[str, str], list[str]], spec: Spec, rnd: random.Random):
        tags = ["any", *spec.meta.get("topics", "").split()]
        self.pool = {
            kind: [i for t in tags for i in bank.get((kind, t), [])]
            for kind in ("para", "code", "ask", "reply")
        }
        self.slots = {
            "project": [spec.meta["project"]],
            "module": spec.items("modules"),
            "table": spec.items("tables"),
            "thing": spec.items("things"),
        }
        self.rnd = rnd

    def fill(self, text: str) -> str:
        def one(m: re.Match[str]) -> str:
            name = m.group(1)
            if name == "n":
                return str(self.rnd.randint(3, 9))
            if name == "ms":
                return str(self.rnd.choice((40, 80, 150, 250, 400)))
            return self.rnd.choice(self.slots[name])

        return re.sub(r"\{(project|module|table|thing|n|ms)\}", one, text)

    def paragraphs(self, count: int) -> list[str]:
        return [self.fill(p) for p in self.rnd.sample(self.pool["para"], count)]

    def code(self) -> str:
        return self.fill(self.rnd.choice(self.pool["code"]))

    def assistant(self, evidence: str | None = None) -> str:
        """A long answer: 3-5 paragraphs and often a code block; one in six runs to
        7-10 paragraphs and two code blocks (several thousand characters)."""
        long = self.rnd.random() < 1 / 6
        paras = self.paragraphs(self.rnd.randint(7, 10) if long else self.rnd.randint(3, 5))
        if evidence is not None:
            paras.insert(self.rnd.randint(0, len(paras)), evidence)
        for _ in range(2 if long else int(self.rnd.random() < 0.7)):
            paras.insert(self.rnd.randint(1, len(paras)), self.code())
        return "\n\n".join(paras)

    def developer(self) -> str:
        kind = "ask" if self.rnd.random() < 0.75 else "reply"
        return self.fill(self.rnd.choice(self.pool[kind]))


def session_dates(spec: Spec, rnd: random.Random) -> list[tuple[date, str]]:
    day = date.fromisoformat(spec.meta["start"])
    out = []
    for _ in range(int(spec.meta["sessions"])):
        hour, minute = rnd.randint(8, 19), rnd.choice((0, 10, 15, 30, 40, 45, 50))
        clock = f"{(hour - 1) % 12 + 1}:{minute:02d} {'am' if hour < 12 else 'pm'}"
        out.append((day, f"{clock} on {day.day} {day:%B}, {day.year}"))
        day += timedelta(days=rnd.randint(3, 8))
    return out


def build(spec: Spec, bank: dict[tuple[str, str], list[str]]) -> dict[str, Any]:
    """One conversation in LoCoMo form, with `split` and `project` beside the usual keys."""
    cid = spec.meta["conversation"]
    rnd = random.Random(f"techconv:{cid}")
    filler = Filler(bank, spec, rnd)
    dates = session_dates(spec, rnd)
    dev = spec.meta["developer"]
    by_session: dict[int, list[tuple[str, str]]] = {}
    for q in spec.questions:
        for ev in q.evidence + q.outdated:
            if not 1 <= ev.session <= len(dates):
                raise MalformedInput(f"{cid} {q.qid}: session {ev.session} out of range")
            msgs = by_session.setdefault(ev.session, [])
            if (ev.speaker, ev.text) not in msgs:
                msgs.append((ev.speaker, ev.text))
    conv: dict[str, Any] = {"speaker_a": dev, "speaker_b": ASSISTANT}
    where: dict[tuple[str, str], str] = {}
    for n, (_day, stamp) in enumerate(dates, start=1):
        planted = list(by_session.get(n, []))
        exchanges = max(rnd.randint(3, 5), len(planted))
        slots = sorted(rnd.sample(range(exchanges), len(planted)))
        turns: list[tuple[str, str, tuple[str, str] | None]] = []
        for i in range(exchanges):
            pick = planted[slots.index(i)] if i in slots else None
            mine = pick if pick and pick[0] == "dev" else None
            theirs = pick if pick and pick[0] == "ai" else None
            turns.append((dev, mine[1] if mine else filler.developer(), mine))
            turns.append((ASSISTANT, filler.assistant(theirs[1] if theirs else None), theirs))
        session = []
        for i, (speaker, text, mark) in enumerate(turns, start=1):
            dia = f"D{n}:{i}"
            session.append({"speaker": speaker, "dia_id": dia, "text": text})
            if mark is not None:
                where[mark] = dia
        conv[f"session_{n}_date_time"] = stamp
        conv[f"session_{n}"] = session
    qa = []
    for q in spec.questions:
        answer = q.answer
        if answer == "@date":
            day = dates[q.evidence[0].session - 1][0]
            answer = f"{day.day} {day:%B %Y}"
        item: dict[str, Any] = {
            "question": q.text,
            "answer": answer,
            "evidence": [where[(e.speaker, e.text)] for e in q.evidence],
            "category": q.category,
        }
        if q.outdated:
            item["outdated_evidence"] = [where[(e.speaker, e.text)] for e in q.outdated]
        qa.append(item)
    return {
        "sample_id": cid,
        "split": spec.meta["split"],
        "project": spec.meta["project"],
        "conversation": conv,
        "qa": qa,
    }


def problems(conv: dict[str, Any]) -> list[str]:
    """What is wrong with one conversation's gold (nothing, for a consistent one).

    Every evidence id exists; an updated fact names its outdated statements, all
    earlier than the latest; a temporal answer is its evidence's session date; any
    other answer (each part of a multi-hop one) is stated in an evidence message and
    in no other message, outdated ones included, and the question does not quote it.
    """
    c = conv["conversation"]
    text = {
        m["dia_id"]: m["text"].casefold()
        for k, v in c.items()
        if re.fullmatch(r"session_\d+", k)
        for m in v
    }
    order = {d: i for i, d in enumerate(text)}
    out: list[str] = []
    for q in conv["qa"]:
        tag = f"{conv['sample_id']} {q['question']!r}"
        ev, old = q["evidence"], q.get("outdated_evidence", [])
        missing = [d for d in ev + old if d not in text]
        if missing or not ev:
            out.append(f"{tag}: evidence {missing or 'none'} does not exist")
            continue
        if q["category"] == 3 and (
            not old or max(order[d] for d in old) > min(order[d] for d in ev)
        ):
            out.append(f"{tag}: an updated fact needs outdated evidence before the latest")
        if q["category"] == 2:
            n = int(ev[0][1:].split(":")[0])
            stamp = c[f"session_{n}_date_time"]
            if q["answer"].split()[0] not in stamp.split(" on ")[1].split():
                out.append(f"{tag}: the answer is not the evidence's date")
            continue
        parts = q["answer"].split(" ; ") if q["category"] == 1 else [q["answer"]]
        for part in parts:
            key = part.casefold()
            if not any(key in text[d] for d in ev):
                out.append(f"{tag}: {part!r} is in no evidence message")
            others = [d for d in text if d not in ev and key in text[d]]
            if others:
                out.append(f"{tag}: {part!r} is also in {others[:3]}")
            if key in q["question"].casefold():
                out.append(f"{tag}: the question quotes its answer {part!r}")
    return out


def generate() -> dict[str, list[dict[str, Any]]]:
    bank = parse_bank(SPECS / "bank.txt")
    out: dict[str, list[dict[str, Any]]] = {split: [] for split in OUTPUTS}
    for path in sorted(SPECS.glob("tc*.txt")):
        conv = build(parse_spec(path), bank)
        out[conv["split"]].append(conv)
    return out


def encode(convs: list[dict[str, Any]]) -> bytes:
    text = json.dumps(convs, ensure_ascii=False, indent=0, sort_keys=True)
    return gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)


def main() -> None:
    for split, convs in generate().items():
        OUTPUTS[split].write_bytes(encode(convs))
        n = sum(
            len(v)
            for c in convs
            for k, v in c["conversation"].items()
            if "_date" not in k and k.startswith("session_")
        )
        print(f"{OUTPUTS[split].name}: {len(convs)} conversations, {n} messages")


if __name__ == "__main__":
    main()
