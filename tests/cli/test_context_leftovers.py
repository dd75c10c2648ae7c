"""The session-start context's leftovers from context19, read as the agent receives it
(context19c): each through the surface it showed on, the hooks fed Claude Code's JSON
(`tests/claude_code.py`: the context from the `memstrata hook session-start` process) or
the CLI as a process.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.claude_code import EXE, ClaudeSession

from memstrata import Store

CERTBOT_FAILED = (
    "Exit code 1\nCertbot failed to authenticate some domains (authenticator: standalone). "
    "The Certificate Authority reported these problems:\n  Domain: stream.example.org\n"
    "  Detail: Problem binding to port 80: Could not bind to IPv4 or IPv6."
)


def _section(context: str, title: str) -> str:
    """The lines of the context section whose title starts with `title`."""
    for part in context.split("\n## ")[1:]:
        if part.startswith(title):
            return part.split("\n", 1)[1] if "\n" in part else ""
    return ""


def _titles(context: str) -> list[str]:
    """The context's section titles (not the headings of a memory file shown in it)."""
    out, fenced = [], False
    for line in context.splitlines():
        fenced = (fenced or line.startswith("<memory ")) and line != "</memory>"
        if line.startswith("## ") and not fenced:
            out.append(line[3:])
    return out


def _cli(home: Path, *args: str, agent: str = "me") -> subprocess.CompletedProcess[str]:
    r = subprocess.run(
        [EXE, "--home", str(home), "--agent", agent, *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    return r


def _id(r: subprocess.CompletedProcess[str]) -> str:
    out = json.loads(r.stdout)
    return str(out["entry"]["id"] if "entry" in out else out["id"])


def test_an_error_the_agent_answered_with_a_decision_in_its_session_is_not_open(
    home: Path, tmp_path: Path
) -> None:
    """ops-lighthouse s03: `certbot renew --dry-run` failed (the standalone authenticator
    cannot bind port 80); in the same session the agent decided "Get the certificates with
    certbot's DNS-01 challenge ..." and renewed through Ansible. Nothing ran the dry run
    again, so every later context listed it under "Open errors (nothing later resolved
    them)". A decision recorded after a failure, in its session, that names what the
    failed call used is how the work went on: the error is answered, told under its
    session's line. A failure the decision does not name stays open, and so does the same
    call failing again after the decision."""
    s = ClaudeSession(home, tmp_path / "proj")
    s.call("user-prompt-submit", s.prompt("The certificate renewal keeps failing. Fix it."))
    dry = {"command": "ssh stream1 'sudo certbot renew --dry-run'"}
    s.call("post-tool-use-failure", s.tool("Bash", dry, None, failed=CERTBOT_FAILED))
    disk = {"command": "ssh stream1 'df -h /srv'"}
    s.call("post-tool-use-failure", s.tool("Bash", disk, None, failed="ssh: connect: timed out"))
    with Store(home, agent="me") as st:  # as `record_decision` does it
        decision = (
            st.agent()
            .decisions.record(
                "Get the certificates with certbot's DNS-01 challenge through the Gandi API"
            )
            .id
        )
    s.call("stop", s.answer("Certificates come from the DNS-01 challenge now."))
    context = ClaudeSession(home, tmp_path / "proj").context()
    errors = _section(context, "Open errors")
    assert "certbot" not in errors, context
    assert "df -h" in errors, context  # nothing decided about what that call used
    activity = _section(context, "Recent activity")
    assert "certbot renew --dry-run') failed: Certbot failed to authenticate" in activity
    assert f"(no longer open: {decision} decided after it how to go on)" in activity, activity

    later = ClaudeSession(home, tmp_path / "proj")
    later.call("user-prompt-submit", later.prompt("Check the renewal once more."))
    later.call("post-tool-use-failure", later.tool("Bash", dry, None, failed=CERTBOT_FAILED))
    later.call("stop", later.answer("The dry run still fails."))
    again = _section(ClaudeSession(home, tmp_path / "proj").context(), "Open errors")
    assert "certbot renew --dry-run" in again, again  # failed after the decision: open


def test_a_warning_another_room_fixed_is_no_longer_in_force(home: Path) -> None:
    """rooms-checkout: checkout-web warned "The payment events stream sends amount_cents
    as a string ..."; payments-api then published "amount_cents is always a JSON integer,
    in the events stream too (fixed May 19)". checkout-web's context still listed the
    warning under "Decisions and constraints in force", and payments-api's showed it as
    knowledge from the other room, unqualified. A later record that says it fixed what a
    warning is about (or drops its subject: "...; no polling") retires the warning from
    "in force"; the ledger keeps it, readable by id."""
    web = ("--room", "checkout-web")
    api = ("--room", "payments-api")
    with Store(home, agent="web", room="checkout-web") as st:
        warning = st.ledger.publish(
            "warning",
            "The payment events stream sends amount_cents as a string; checkout-web parses "
            "it, payments-api should send an integer",
            tags=["money"],
        ).id
        polling = st.ledger.publish(
            "warning", "Polling GET /v1/payments/{id} every 2 s hits the 429 rate limit"
        ).id
        kept = st.ledger.publish(
            "warning", "Card form tokens expire after 15 minutes; reload the form after that"
        ).id
    with Store(home, agent="api", room="payments-api") as st:
        fix = st.ledger.publish(
            "decision",
            "amount_cents is always a JSON integer, in the events stream too (fixed May 19)",
        ).id
        push = st.ledger.publish(
            "decision", "Payment status: the API pushes server-sent events; no polling"
        ).id
    context = _cli(home, *web, "context", agent="web").stdout
    in_force = _section(context, "Decisions and constraints in force")
    standing = [x for x in in_force.splitlines() if not x.startswith("- no longer in force")]
    assert any(kept in x for x in standing), in_force
    assert not any(warning in x or polling in x for x in standing), in_force
    assert f"{warning} (The payment events stream sends amount_cents" in in_force, in_force
    assert f"out of date by {fix}, room payments-api" in in_force, in_force
    assert f"out of date by {push}, room payments-api" in in_force, in_force

    theirs = _section(_cli(home, *api, "context", agent="api").stdout, "Knowledge from other")
    told = {x.split("] ", 1)[0]: x for x in theirs.splitlines() if x.startswith("- [")}
    assert f"- [warning, out of date by {fix}" in told, theirs
    assert "- [warning" in told and kept in told["- [warning"], theirs  # still in force

    with Store(home, agent="web", room="checkout-web") as st:  # history keeps it
        assert "amount_cents as a string" in st.ledger.get(warning).summary


def test_a_goal_that_points_back_carries_what_it_points_to(home: Path, tmp_path: Path) -> None:
    """ops-lighthouse s03's session line read "goal: Can you look?", coding s04's "goal: Look
    into it.", pipeline s06's "goal: Run it later.": the words that set the goal, without
    what "it" was. The goal carries its referent: the sentence before it, or, when it opens
    the prompt, the previous prompt's goal (in the session line) or NOW's objective (the
    Stop hook's NOW when the agent set none)."""
    s = ClaudeSession(home, tmp_path / "proj")
    s.call(
        "user-prompt-submit",
        s.prompt("The certificate for stream.example.org expires in 9 days. Can you look?"),
    )
    s.call("stop", s.answer("Renewed."))
    s.call("user-prompt-submit", s.prompt("Deploy the radio website to production."))
    s.call("stop", s.answer("Deployed to production."))
    s.call("user-prompt-submit", s.prompt("Same as before but for staging."))
    s.call("stop", s.answer("Deployed to staging."))
    context = ClaudeSession(home, tmp_path / "proj").context()
    activity = _section(context, "Recent activity")
    assert (
        "goal: The certificate for stream.example.org expires in 9 days: can you look?" in activity
    ), activity
    assert (
        "then: Deploy the radio website to production: same as before but for staging." in activity
    ), activity
    now = context.split('<memory source="agents/me/memory/NOW.md">', 1)[1].split("</memory>")[0]
    assert "Deploy the radio website to production: same as before but for staging." in now


def test_a_fact_a_later_fact_or_decision_replaced_is_shown_as_replaced(home: Path) -> None:
    """ml-wrensong: `baseline_result` ("... validation top-1 accuracy 0.844 ...") was listed
    under "Known facts" as current after `baseline_site_split` said "0.713 ... (the 0.844
    was inflated by the leak)". A fact a later fact (another key of the same subject
    quoting its value) or a later decision (dropping the name the fact's value opens with)
    replaced comes after the current facts, marked replaced."""
    with Store(home, agent="me") as st:
        facts = st.agent().facts
        facts.set("baseline_result", "ResNet-18 baseline: top-1 0.844 +/- 0.007")
        facts.set("db_engine", "SQLite, one tidepool.db file")
        facts.set("student_result", "EfficientNet-B0 student: macro-F1 0.668")
    _cli(
        home,
        "facts",
        "set",
        "baseline_site_split",
        "ResNet-18 baseline on the site split: top-1 0.713 (the 0.844 was inflated by a leak)",
    )
    with Store(home, agent="me") as st:
        decision = st.agent().decisions.record("Move to PostgreSQL 16 instead of SQLite").id
    context = _cli(home, "context").stdout
    facts = _section(context, "Known facts").splitlines()
    keys = [x[2:].split(" ", 1)[0] for x in facts if x.startswith("- ")]
    assert keys[:2] == ["baseline_site_split", "student_result"], facts
    assert set(keys[2:]) == {"baseline_result", "db_engine"}, facts
    old = {x[2:].split(" ", 1)[0]: x for x in facts}
    assert "[replaced: see baseline_site_split, " in old["baseline_result"], facts
    assert f"[replaced: see {decision}, " in old["db_engine"], facts
    assert "replaced" not in old["student_result"], facts


def test_after_a_compaction_the_session_before_it_comes_right_after_now(
    home: Path, tmp_path: Path
) -> None:
    """ops-lighthouse s05+compact: "This session before the compaction (its last N
    messages)" was appended after "How to use this memory", below the facts and the whole
    activity summary. What the agent was doing when its context was cut is read first,
    with NOW; the harness's instructions stay last."""
    s = ClaudeSession(home, tmp_path / "proj")
    s.call("user-prompt-submit", s.prompt("Move the backups to the storage box."))
    with Store(home, agent="me") as st:
        st.agent().now.update("Backups: moving to the storage box", ["restore drill"])
        st.agent().decisions.record("Back up with restic to the storage box over SFTP")
    s.call("stop", s.answer("The backup role now targets the storage box."))
    context = s.context(source="compact")
    titles = _titles(context)  # the sections, NOW.md's own headings left out
    at = next(i for i, t in enumerate(titles) if t.startswith("This session before the compaction"))
    assert titles[at - 1] == "Current status (NOW)", titles
    assert titles.index("Decisions and constraints in force") > at, titles
    assert titles[-1] == "How to use this memory", titles
    assert "- user: Move the backups to the storage box." in _section(context, titles[at])
