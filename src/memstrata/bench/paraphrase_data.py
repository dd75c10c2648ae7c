"""The paraphrase benchmark's data: hand-written records and questions, plus filler.

`data/paraphrase.txt` holds what was written by hand, before any tuning: each gold
record (a decision, a constraint, a preference, an error and its fix, a fact, a
status note, a ledger entry...) with a question that says it in other words, and
near-topic distractors. `filler` adds the bland traffic an agent's memory is mostly
made of (test runs, edits, deploy notes, chat), deterministically from a fixed seed,
from banks that name no project fact a question asks for.

A record's `where` says which write API stores it (see `paraphrase.ingest`):

    ledger:<kind>               store.ledger.publish(kind, summary, detail=...)
    fact:<category>:<key>       agent.facts.set(key, value, category)
    context:<section>           a bullet under "## section" in CONTEXT.md
    file:<name>:<section>       a bullet under "## section" in memory/<name>
    log:<TYPE>                  agent.log.append(TYPE, text)
    session:<id>:<role>         agent.sessions.append_many(id, [message])
"""

from __future__ import annotations

import random
from pathlib import Path

from memstrata.errors import MalformedInput
from memstrata.values import value_type

DATA = Path(__file__).with_name("data") / "paraphrase.txt"
SPLITS = ("dev", "heldout")
WRITE_LAYERS = ("ledger", "fact", "context", "file", "log", "session")


@value_type(frozen=True)
class Record:
    rid: str  # p001 for a gold record, d0001 for a distractor
    where: str
    days_ago: float
    text: str

    @property
    def layer(self) -> str:
        return self.where.split(":", 1)[0]


@value_type(frozen=True)
class Pair:
    qid: str
    split: str
    question: str
    record: Record


def load(path: Path = DATA) -> tuple[list[Pair], list[Record]]:
    """The gold pairs and the hand-written distractors of `path`."""
    pairs: list[Pair] = []
    records: list[Record] = []
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        head, _, rest = line.partition(" | ")
        parts = rest.split(" | ", 2)
        if len(parts) != 3:
            raise MalformedInput(f"{path}:{n}: expected '<head> | <where> | <days> | <text>'")
        where, days, text = parts
        if where.split(":", 1)[0] not in WRITE_LAYERS:
            raise MalformedInput(f"{path}:{n}: unknown place {where!r}")
        if head.startswith("G "):
            _g, qid, split = head.split()
            if split not in SPLITS:
                raise MalformedInput(f"{path}:{n}: split must be dev or heldout")
            text, sep, question = text.partition(" || ")
            if not sep or not question.strip():
                raise MalformedInput(f"{path}:{n}: a gold line needs ' || <question>'")
            rec = Record(qid, where, float(days), text.strip())
            pairs.append(Pair(qid, split, question.strip(), rec))
            records.append(rec)
        elif head == "D":
            records.append(Record(f"d{n:04d}", where, float(days), text.strip()))
        else:
            raise MalformedInput(f"{path}:{n}: a line starts with 'G <id> <split>' or 'D'")
    return pairs, records


# --- filler: what most of an agent's memory is -------------------------------------

_FILES = (
    "api/harbor/orders/routes.py",
    "api/harbor/orders/service.py",
    "api/harbor/fleet/models.py",
    "api/harbor/billing/invoices.py",
    "api/harbor/auth/deps.py",
    "api/harbor/tours/schemas.py",
    "router/solver/model.py",
    "router/solver/matrix.py",
    "dashboard/src/pages/Tours.tsx",
    "dashboard/src/components/OrderTable.tsx",
    "dashboard/src/api/client.ts",
    "driver-app/src/screens/DropScreen.tsx",
    "infra/modules/rds/main.tf",
    "charts/harbor-api/values.yaml",
    "docs/api/orders.md",
)
_TESTS = (
    "tests/api/test_orders.py",
    "tests/api/test_tours.py",
    "tests/billing/test_invoices.py",
    "tests/fleet/test_vehicles.py",
    "tests/router/test_solver.py",
    "tests/auth/test_tokens.py",
)
_EDITS = (
    "renamed a helper for clarity",
    "added type hints",
    "split the function in two",
    "removed dead code",
    "added a docstring",
    "extracted a constant",
    "handled the empty list case",
    "moved the query into the repository class",
    "added pagination parameters",
    "fixed an off-by-one in the loop bound",
)
_COMMANDS = (
    "git status",
    "git diff --stat",
    "git log --oneline -5",
    "make lint",
    "docker compose ps",
    "kubectl get pods -n harbor",
    "pnpm test --run",
    "pnpm lint",
    "alembic history | head",
    "ruff check api",
)
_SYSTEM = (
    "CI passed on branch {b} ({m} min)",
    "Pull request #{n} merged into main",
    "Pull request #{n} opened: {b}",
    "Renovate opened #{n} to bump a dev dependency",
    "Build {n} published the harbor-api image",
    "Nightly backup job finished",
    "Preview environment for #{n} deployed",
    "Review requested from Jonas on #{n}",
)
_BRANCHES = ("HB-{n}-tour-export", "HB-{n}-driver-filter", "HB-{n}-invoice-footer", "HB-{n}-docs")
_ASKS = (
    "Can you rename {f} to something clearer?",
    "Please add a test for the empty case in {t}.",
    "What does this function in {f} return when nothing matches?",
    "Can you tidy up the imports in {f}?",
    "Run the tests in {t} again, please.",
    "Show me the diff before you commit.",
    "Let's leave that for tomorrow.",
    "Looks good, go ahead.",
    "Can you explain the change in {f} in two sentences?",
    "Add a comment above the tricky part of {f}.",
)
_ANSWERS = (
    "Done: {e} in {f}. Tests in {t} pass.",
    "I {e} in {f}; no behaviour change.",
    "Here is the diff for {f}: {e}.",
    "The tests in {t} pass locally ({k} passed).",
    "I looked at {f}: nothing else calls it, so the change is safe.",
    "Committed on the current branch: {e} in {f}.",
)
_THOUGHTS = (
    "Next: finish the change in {f} and rerun {t}",
    "Read {f} before changing the call sites",
    "The change in {f} also needs the docs updated",
    "Keep the PR small: {f} only",
)


def filler(count: int = 260, seed: int = 22) -> list[Record]:
    """`count` bland records (log entries and session messages), deterministic."""
    rnd = random.Random(seed)
    out: list[Record] = []
    for i in range(count):
        f, t, e = rnd.choice(_FILES), rnd.choice(_TESTS), rnd.choice(_EDITS)
        n, k = rnd.randint(300, 999), rnd.randint(5, 80)
        days = round(rnd.uniform(0.2, 119.0), 3)
        roll = rnd.random()
        if roll < 0.25:
            where, text = "log:TOOL_USE", f"Edited {f}: {e}"
        elif roll < 0.40:
            where, text = "log:TOOL_USE", f"Ran pytest {t} -q: {k} passed"
        elif roll < 0.50:
            where, text = "log:TOOL_USE", f"Ran {rnd.choice(_COMMANDS)}"
        elif roll < 0.62:
            b = rnd.choice(_BRANCHES).format(n=n)
            where, text = "log:SYSTEM", rnd.choice(_SYSTEM).format(b=b, n=n, m=k // 5 + 3)
        elif roll < 0.70:
            where, text = "log:THOUGHT", rnd.choice(_THOUGHTS).format(f=f, t=t)
        else:
            sid = f"s-work-{int(days) // 7:02d}"
            if rnd.random() < 0.5:
                where, text = f"session:{sid}:user", rnd.choice(_ASKS).format(f=f, t=t)
            else:
                where = f"session:{sid}:assistant"
                text = rnd.choice(_ANSWERS).format(e=e, f=f, t=t, k=k)
        out.append(Record(f"f{i:04d}", where, days, text))
    return out
