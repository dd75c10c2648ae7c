"""Issue 19 through Claude Code's hooks: a change of plan only the user states replaces the
decision it names (firmware-larkspur s07: "Change of plan on the reporting interval: ...
every 30 minutes from now on"; the agent recorded nothing and "every 15 minutes" stayed
"in force" in every later context)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.claude_code import ClaudeSession, cli, section

OLD = "Report interval: one reading and one uplink every 15 minutes"
PROMPT = (
    "Change of plan on the reporting interval: the agronomist says soil moisture barely moves "
    "in a quarter of an hour. Send one reading every 30 minutes from now on, it halves the "
    "airtime too."
)


def test_a_users_change_of_plan_replaces_the_decision_in_the_context(
    home: Path, tmp_path: Path
) -> None:
    old = json.loads(cli(home, "--json", "decisions", "record", OLD).stdout)["entry"]["id"]
    cli(home, "decisions", "record", "Radio: lora-phy, SF10 at 14 dBm")
    s = ClaudeSession(home, tmp_path / "proj")
    s.hook("user-prompt-submit", s.prompt(PROMPT))
    s.hook("stop", s.answer("Done: the firmware now sleeps 30 minutes between readings."))
    in_force = section(ClaudeSession(home, tmp_path / "proj").context(), "Decisions and")
    assert "every 30 minutes from now on" in in_force, in_force
    assert "every 15 minutes" not in in_force, in_force
    assert "Radio: lora-phy, SF10 at 14 dBm" in in_force  # the other decision stands
    hits = json.loads(cli(home, "--json", "search", "reporting interval").stdout)
    said = json.dumps(hits)
    assert "every 30 minutes" in said and "every 15 minutes" not in said
    entry = json.loads(cli(home, "--json", "ledger", "get", old).stdout)
    assert OLD in json.dumps(entry)  # history keeps the old one, readable by id


def test_a_prompt_naming_no_decision_in_force_records_nothing(home: Path, tmp_path: Path) -> None:
    cli(home, "decisions", "record", OLD)
    s = ClaudeSession(home, tmp_path / "proj")
    s.hook("user-prompt-submit", s.prompt("Change of plan on the antenna: the external one."))
    listed = json.loads(cli(home, "--json", "decisions", "list").stdout)
    assert "antenna" not in json.dumps(listed) and OLD in json.dumps(listed)


def test_the_agents_own_replacement_of_the_old_record_replaces_the_users(
    home: Path, tmp_path: Path
) -> None:
    """support-marlin: the user says "Let's move the site to Hugo", then the agent records
    the replacement naming the old record's id; the user's record took its place, so the
    agent's replaces that one (no AlreadySuperseded), and only the agent's stays in force."""
    old = json.loads(cli(home, "--json", "decisions", "record", OLD).stdout)["entry"]["id"]
    s = ClaudeSession(home, tmp_path / "proj")
    s.hook("user-prompt-submit", s.prompt(PROMPT))
    mine = "Report interval: one reading every 30 minutes (light sleep between)"
    got = json.loads(cli(home, "--json", "decisions", "record", mine, "--replaces", old).stdout)
    listed = json.dumps(json.loads(cli(home, "--json", "decisions", "list").stdout))
    assert mine in listed and "from now on" not in listed and "every 15 minutes" not in listed
    user = json.loads(cli(home, "--json", "ledger", "get", got["entry"]["supersedes"]).stdout)
    assert "every 30 minutes from now on" in json.dumps(user)  # the user's, now history
