"""How much of the session-start context is noise? (issue 19 item 3: measure it)

    PYTHONPATH=src python tests/context_noise.py [--sessions 10] [--show]

Drives ten scripted Claude Code sessions of a small FastAPI project through the hook
functions (`memstrata.operations.hooks`, fed the JSON Claude Code sends and a real transcript
file, as `tests/claude_code.py` writes them): prompts, 6-14 file reads, edits, pytest
runs (some failing), a failed edit, stated decisions, the agent's own `update_status`
now and then, final responses, a pre-compact flush every third session. Before every
session it takes the SessionStart context and prints its size and noise share: the
characters on lines of tool traces and hook bookkeeping over all characters, by the
classifier of `tests/claude_code.py` (`noise_share`). Run it with `PYTHONPATH` at another
checkout's `src` to measure that version the same way (the hook functions it calls
exist in every version since the hooks were added).
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.claude_code import ClaudeSession, noise_share

GOALS = [
    "Add pagination to GET /invoices.",
    "Start the PDF export.",
    "Fix the flaky test in tests/test_auth.py.",
    "Add rate limiting to the login endpoint.",
    "Move the settings to pydantic-settings.",
    "Write the migration for the invoices.currency column.",
    "Add a CSV export next to the PDF one.",
    "Speed up the invoice list query.",
    "Add an audit log for invoice edits.",
    "Clean up the error responses of the API.",
]
DECISIONS = {
    1: "We decided to use WeasyPrint for the PDF export.",
    3: "OK, we decided: 15-minute access tokens, refresh tokens in httpOnly cookies.",
    5: "Let's go with ReportLab instead of WeasyPrint, it needs no pango.",
    7: "Decision: PostgreSQL 16 with row-level security for tenants.",
}
OK = {"stdout": "", "stderr": "", "interrupted": False, "isImage": False}


def run(sessions: int, show: bool) -> list[tuple[int, int, float]]:
    from memstrata import Store
    from memstrata.operations import hooks

    rng = random.Random(19)
    home = Path(tempfile.mkdtemp()) / "store"
    project = home.parent / "proj"
    rows: list[tuple[int, int, float]] = []
    for n in range(sessions):
        s = ClaudeSession(home, project)
        with Store(home, agent="me") as store:
            out = hooks.session_start(store, "me", s.payload("SessionStart", source="startup"))
        context = out["hookSpecificOutput"]["additionalContext"]
        rows.append((n + 1, len(context), noise_share(context)))
        if show and n == sessions - 1:
            print(context)
        prompts = [GOALS[n % len(GOALS)]]
        if n in DECISIONS:
            prompts.append(DECISIONS[n])
        prompts.append("continue")
        for p in prompts:
            with Store(home, agent="me") as store:
                hooks.user_prompt_submit(store, "me", s.prompt(p))
            for i in range(rng.randint(6, 14)):
                s.call("post-tool-use", s.tool("Read", {"file_path": f"/proj/app/m{i}.py"}, OK))
            for i in range(rng.randint(1, 4)):
                edit = {"file_path": f"/proj/app/m{i}.py", "old_string": "a", "new_string": "b"}
                s.call("post-tool-use", s.tool("Edit", edit, OK))
            if rng.random() < 0.3:
                s.call(
                    "post-tool-use-failure",
                    s.tool("Edit", {"file_path": "/proj/app/x.py"}, None, failed="not found"),
                )
            run_tests = {"command": "pytest -q tests/test_api.py"}
            if rng.random() < 0.4:
                s.call("post-tool-use-failure", s.tool("Bash", run_tests, None, failed="1 failed"))
            s.call("post-tool-use", s.tool("Bash", run_tests, {**OK, "stdout": "12 passed"}))
            if rng.random() < 0.5:
                with Store(home, agent="me") as store:
                    store.agent().now.update(f"In progress: {prompts[0]}", ["run the suite"])
            with Store(home, agent="me") as store:
                hooks.stop(store, "me", s.answer(f"Done with: {p} Tests pass."))
        if n % 3 == 2:
            with Store(home, agent="me") as store:
                hooks.pre_compact(store, "me", s.payload("PreCompact", trigger="auto"))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=10)
    ap.add_argument("--show", action="store_true", help="print the last session-start context")
    args = ap.parse_args()
    rows = run(args.sessions, args.show)
    for n, chars, share in rows:
        print(f"session {n:>2}: context {chars:>6} chars, noise share {share:.3f}")
    rest = rows[1:]
    mean = sum(r[2] for r in rest) / len(rest) if rest else 0.0
    print(f"mean noise share over sessions 2..{len(rows)}: {mean:.3f}")


if __name__ == "__main__":
    main()
