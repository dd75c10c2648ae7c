"""A small labelled set of agent-memory questions: what an agent asks its memory.

40 memories of the kinds agents keep (facts with identifier keys, LOG entries,
ledger decisions, notes in memory files, tasks, a session) and 40 questions,
each labelled with the memories that answer it. Written before the relevance
changes of issue 12 and not tuned afterwards; some questions need knowledge a
lexical engine does not have (they stay misses, honestly).

Run `python tests/search/agent_questions.py --sessions` to print recall@1/3/5 and
MRR for the lexical search over every layer and the session transcript, as
`tests/search/test_relevance.py::test_labelled_agent_questions` does (which holds the
floor): recall@5 0.975, MRR 0.925. Without `--sessions` (the default search, which
leaves transcripts out) the two questions a transcript answers are misses: 0.925 and
0.875. With `log.neighbour_context=2`: 0.925 and 0.829 (README, "Benchmarks").
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path
from typing import Any

# handle: (layer, payload)
FACTS = {
    "db": ("db_engine", "PostgreSQL 16", "config"),
    "tz": ("user_tz", "Europe/Berlin", "personal"),
    "lang": ("preferred_lang", "Python, with type hints everywhere", "preference"),
    "editor": ("editor", "Neovim with the LazyVim distribution", "preference"),
    "ci": ("ci_provider", "GitHub Actions, self-hosted runners for GPU jobs", "project"),
    "deploy": ("deploy_target", "Kubernetes on AWS EKS, region eu-central-1", "project"),
    "py": ("python_version", "3.11", "config"),
    "pm": ("project_manager", "Dana Whitfield", "project"),
    "reviewers": ("code_reviewers", "Ravi and Mei review every PR touching auth", "project"),
    "style": ("commit_msg_style", "Conventional Commits, imperative mood", "preference"),
    "cache": ("cache_backend", "Redis 7 cluster", "config"),
    "pw": ("pwd_policy", "at least 14 characters, no rotation", "config"),
    "birthday": ("user_birthday", "March 3", "personal"),
    "coffee": ("coffee_order", "flat white, oat milk", "personal"),
    "maxconn": ("max_db_connections", "200 per pod", "config"),
}
LOGS = {
    "flaky": ("ERROR", "test_invoice_dates is flaky: fails when the runner timezone is not UTC"),
    "migr": ("TOOL_USE", "ran alembic upgrade head on staging; 3 migrations applied"),
    "bug401": (
        "ERROR",
        "login returns 401 after token refresh; the refresh token cookie lacked SameSite",
    ),
    "bench": (
        "THOUGHT",
        "p95 latency of /search went from 180 ms to 95 ms after adding the covering index",
    ),
    "feedback": ("USER_FEEDBACK", "the user wants shorter status updates, three bullets at most"),
    "oom": ("ERROR", "worker pod OOMKilled while resizing images larger than 40 MB"),
    "dep": ("TOOL_USE", "bumped requests to 2.32 to fix the proxy CVE"),
    "meeting": ("SYSTEM", "weekly sync moved to Thursdays 10:00 CET"),
    "lint": ("THOUGHT", "ruff replaces flake8 and isort; black stays for formatting"),
    "backup": ("TOOL_USE", "nightly pg_dump backup verified by restoring into a scratch database"),
}
LEDGER = {
    "hash": (
        "decision",
        "Chose argon2id for password hashing (memory cost 64 MB)",
        ["auth", "security"],
    ),
    "api": (
        "interface",
        "Billing API v2: POST /invoices takes amount_cents and currency",
        ["billing", "api"],
    ),
    "conv": (
        "convention",
        "All timestamps are stored in UTC and rendered in the user's timezone",
        ["time"],
    ),
    "warn": (
        "warning",
        "Do not run the data migration during business hours: it locks the orders table",
        ["db"],
    ),
    "queue": ("decision", "Background jobs go through Celery with RabbitMQ, not threads", ["jobs"]),
    "flag": ("artifact", "Feature flags live in flags.yaml, loaded at startup", ["config"]),
}
FILES = {
    "arch": (
        "notes/architecture.md",
        "# Architecture\nThe frontend is a Next.js app; the backend is FastAPI behind an nginx reverse proxy.\n",
    ),
    "onboard": (
        "notes/onboarding.md",
        "# Onboarding\nNew developers get VPN access from IT and read the runbook first.\n",
    ),
    "runbook": (
        "runbooks/incident.md",
        "# Incident runbook\nPage the on-call engineer through PagerDuty, then open a war-room channel.\n",
    ),
    "people": ("notes/people.md", "# People\nSofia owns the mobile app. Tom is the DBA.\n"),
}
TASKS = {
    "t_rotate": "Rotate the Stripe API keys before the audit",
    "t_docs": "Write the API reference for the billing endpoints",
    "t_perf": "Profile the checkout page: it takes 4 seconds to load",
}
SESSION = {
    "s_vac": (
        "user",
        "I'll be on vacation from August 4 to August 18, so hold non-urgent reviews.",
    ),
    "s_font": ("user", "Please use the Inter font in all slide decks."),
}

QUESTIONS: list[tuple[str, set[str]]] = [
    ("what database do we use?", {"db"}),
    ("which timezone is the user in?", {"tz"}),
    ("what programming language does the user prefer?", {"lang"}),
    ("which editor do I use", {"editor"}),
    ("where does CI run?", {"ci"}),
    ("where do we deploy?", {"deploy"}),
    ("which python version", {"py"}),
    ("who is the project manager?", {"pm"}),
    ("who reviews auth changes?", {"reviewers"}),
    ("how should commit messages be written?", {"style"}),
    ("what do we use for caching", {"cache"}),
    ("password policy", {"pw"}),
    ("when is the user's birthday?", {"birthday"}),
    ("how does the user take their coffee", {"coffee"}),
    ("how many database connections are allowed?", {"maxconn"}),
    ("flaky test timezone", {"flaky"}),
    ("did we run the migrations on staging?", {"migr"}),
    ("why did login fail with 401?", {"bug401"}),
    ("how fast is search now?", {"bench"}),
    ("how long should status updates be?", {"feedback"}),
    ("why was the worker pod killed?", {"oom"}),
    ("which version of requests do we pin?", {"dep"}),
    ("when is the weekly sync?", {"meeting"}),
    ("which linter do we use?", {"lint"}),
    ("are the backups tested?", {"backup"}),
    ("argon2", {"hash"}),
    ("how are passwords hashed?", {"hash"}),
    ("billing api invoice fields", {"api", "t_docs"}),
    ("what timezone are timestamps stored in?", {"conv"}),
    ("can I run the migration now?", {"warn"}),
    ("how do background jobs run?", {"queue"}),
    ("where are feature flags defined?", {"flag"}),
    ("what is the frontend built with?", {"arch"}),
    ("how do new developers get VPN access?", {"onboard"}),
    ("what do I do during an incident?", {"runbook"}),
    ("who is the DBA?", {"people"}),
    ("stripe keys", {"t_rotate"}),
    ("checkout page is slow", {"t_perf"}),
    ("when is the user on vacation?", {"s_vac"}),
    ("which font for slides?", {"s_font"}),
]


def populate(home: Path) -> dict[str, str]:
    """Write every memory into a fresh store at `home`; handle -> search uid."""
    from memstrata import Store

    uids: dict[str, str] = {}
    with Store(home, agent="finn", room="room-1") as store:
        agent = store.agent()
        for h, (key, value, cat) in FACTS.items():
            agent.facts.set(key, value, cat, citations=["docs/team.md"])
            uids[h] = f"fact:finn:{key}"
        for h, (kind, text) in LOGS.items():
            uids[h] = f"log:finn:{agent.log.append(kind, text).id}"
        for h, (kind, summary, tags) in LEDGER.items():
            uids[h] = f"ledger:{store.ledger.publish(kind, summary, tags=tags).id}"
        for path, text in FILES.values():
            agent.files.write(path, text)
        for text in TASKS.values():
            agent.tasks.add(text)
        for role, text in SESSION.values():
            agent.sessions.append("s1", role, text)
        # Files, tasks and session messages: find their uids by their text in the index.
        with store.db.read() as conn:
            rows = conn.execute("SELECT uid, title, body FROM docs").fetchall()
        wanted = {
            **{h: t for h, (_, t) in FILES.items()},
            **TASKS,
            **{h: t for h, (_, t) in SESSION.items()},
        }
        for h, text in wanted.items():
            probe = text.splitlines()[-1][:40] if "\n" in text.strip() else text[:40]
            match = [uid for uid, title, body in rows if probe in f"{title}\n{body}"]
            assert match, (h, probe)
            uids[h] = match[0]
    return uids


def evaluate(
    home: Path, uids: dict[str, str], k_values: tuple[int, ...] = (1, 3, 5), **search: Any
) -> dict[str, Any]:
    """recall@k (share of a question's memories in the top k, averaged) and MRR."""
    from memstrata import Store

    recall: dict[int, list[float]] = {k: [] for k in k_values}
    rr: list[float] = []
    misses: list[str] = []
    with Store(home, agent="finn", room="room-1") as store:
        for question, handles in QUESTIONS:
            want = {uids[h] for h in handles}
            got = [h.uid for h in store.search(question, k=max(k_values), **search)]
            for k in k_values:
                recall[k].append(len(want & set(got[:k])) / len(want))
            rank = next((i for i, u in enumerate(got, 1) if u in want), None)
            rr.append(1 / rank if rank else 0.0)
            if rank is None:
                misses.append(question)
    out: dict[str, Any] = {f"recall@{k}": round(statistics.fmean(v), 3) for k, v in recall.items()}
    out["mrr"] = round(statistics.fmean(rr), 3)
    out["questions"] = len(QUESTIONS)
    out["misses"] = misses
    return out


def main(argv: list[str]) -> None:
    """`python tests/search/agent_questions.py [--sessions] [section.key=value ...]`:
    `--sessions` also searches the session transcript (as the test does); each
    `section.key=value` goes into the store's config.toml (e.g. log.neighbour_context=2)."""
    import tempfile

    from memstrata.search.query import LAYERS

    sessions = "--sessions" in argv
    settings = [a for a in argv if a != "--sessions"]
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "store"
        if settings:
            home.mkdir()
            lines = []
            for setting in settings:
                name, value = setting.split("=", 1)
                section, key = name.split(".", 1)
                lines.append(f"[{section}]\n{key} = {value}\n")
            (home / "config.toml").write_text("".join(lines))
        search: dict[str, Any] = {"layers": (*LAYERS, "sessions")} if sessions else {}
        result = evaluate(home, populate(home), **search)
    misses = result.pop("misses")
    print(" ".join(f"{k}={v}" for k, v in result.items()))
    for q in misses:
        print(f"  miss@5: {q}")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))
    main(sys.argv[1:])
