"""The session-start context and the LOG digests, read as the agent receives them (context19).

Defects left after `tests/cli/test_readback.py`, each through the surface it showed on:
the hooks fed Claude Code's JSON (`tests/claude_code.py`: the session-start context from
the `memstrata hook session-start` process), the CLI as a process, a real stdio MCP client.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path

from tests.claude_code import EXE, OK, ClaudeSession, cli, section

from memstrata import Store

TOKEN = "Zx8kP2mQ9vL4tR7wY1nB5cF3hJ6dG0sAq1"  # random base62, as a key looks


def test_a_temporary_workspace_path_is_shown_and_a_key_is_still_withheld(home: Path) -> None:
    """The bench's contexts read "## Workspace / [withheld: high-entropy]" when the project
    sat in a temporary folder (`/tmp/tmpq_501lb2/ml-wrensong/proj`): a path of random-looking
    short folder names made one 32+ character token. A path is not a secret; a key is, in
    a sentence or as the last part of a path."""
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "q_5O1lB2" / "x19Ju41v" / "proj"
        project.mkdir(parents=True)
        with Store(home, agent="me") as st:
            st.agent().context.write(
                f"# Context\n\n- The deploy key is {TOKEN}\n- Uploads: /srv/keys/{TOKEN}\n"
            )
        context = ClaudeSession(home, project).context()
    assert section(context, "Workspace").strip() == str(project), context
    assert TOKEN not in context
    assert "The deploy key is [withheld: high-entropy]" in context, context
    assert "Uploads: /srv/keys/[withheld: high-entropy]" in context, context


def test_a_log_digest_files_a_preference_as_one_without_the_filler(home: Path) -> None:
    """coding-tidepool: the LOG compaction's digest read "- Constraint: Nice. For the record:
    I prefer httpx to requests for any HTTP calls, and please keep type hints everywhere.":
    the user's taste filed as a constraint (the request beside it read as a rule), the
    acknowledgement and the opener kept in the label. A prohibition stays a constraint."""
    with Store(home, agent="me") as st:
        log = st.agent().log
        log.append(
            "USER_FEEDBACK",
            "Nice. For the record: I prefer httpx to requests for any HTTP calls, and please"
            " keep type hints everywhere.",
        )
        log.append("USER_FEEDBACK", "OK so, never push to main without a green CI run.")
        log.append("USER_FEEDBACK", "Great. Also, we decided to log in with a signed cookie.")
    cli(home, "compact", "--force")
    log_md = (home / "agents" / "me" / "memory" / "LOG.md").read_text()
    digest = log_md.split("LOG compacted:", 1)[1].split("<!--", 1)[0]
    assert (
        "Preference: I prefer httpx to requests for any HTTP calls, and please keep type hints"
        " everywhere." in digest
    ), digest
    assert "- Constraint: Never push to main without a green CI run." in digest, digest
    assert "- Decision: We decided to log in with a signed cookie." in digest, digest
    assert "Nice." not in digest and "For the record" not in digest, digest
    assert "OK so" not in digest and "Great." not in digest, digest


def test_an_error_about_what_a_later_decision_dropped_is_not_open(
    home: Path, tmp_path: Path
) -> None:
    """ml-wrensong s02: `uv run wandb login` failed (the university proxy refuses the tunnel
    to api.wandb.ai); then the decision "Track experiments on the lab's MLflow server; no
    W&B" replaced "Track experiments in Weights & Biases". Every later context still listed
    the login under "Open errors (nothing later resolved them)". It is moot, not open: told
    under its session's line, with the record that dropped it. A failure about something
    still in use stays open."""
    old = cli(home, "--json", "decisions", "record", "Track experiments in Weights & Biases")
    old_id = json.loads(old.stdout)["entry"]["id"]
    s = ClaudeSession(home, tmp_path / "proj")
    s.call("user-prompt-submit", s.prompt("Set up experiment tracking and a first training run."))
    proxy = (
        "Exit code 1\nwandb: ERROR Unable to connect to https://api.wandb.ai: ProxyError("
        "'Cannot connect to proxy.', OSError('Tunnel connection failed: 403 Forbidden'))"
    )
    login = {"command": "uv run wandb login", "description": "Log in to W&B"}
    s.call("post-tool-use-failure", s.tool("Bash", login, None, failed=proxy))
    train = {"command": "uv run python -m wrensong.train --epochs 30"}
    oom = "Exit code 1\ntorch.OutOfMemoryError: CUDA out of memory"
    s.call("post-tool-use-failure", s.tool("Bash", train, None, failed=oom))
    docker = {"command": "ssh stream1 'docker start icecast'"}
    full = "Exit code 1\nError response from daemon: mkdir /var/lib/docker: No space left on device"
    s.call("post-tool-use-failure", s.tool("Bash", docker, None, failed=full))
    s.call("stop", s.answer("W&B is unreachable from the GPU server; training ran out of memory."))
    cli(home, "decisions", "record", "Run Icecast from Debian's package, no longer in Docker")
    new = cli(
        home,
        "--json",
        "decisions",
        "record",
        "Track experiments on the lab's MLflow server (mlflow.lab.internal); no W&B",
        "--replaces",
        old_id,
    )
    new_id = json.loads(new.stdout)["entry"]["id"]
    context = ClaudeSession(home, tmp_path / "proj").context()
    errors = section(context, "Open errors")
    assert "out of memory" in errors, context  # nothing dropped the training
    assert "wandb" not in errors and "docker" not in errors, errors  # ops-lighthouse too
    activity = section(context, "Recent activity")
    assert "Bash (uv run wandb login) failed: wandb: ERROR Unable to connect" in activity
    assert f"(no longer open: {new_id} dropped what it was about)" in activity, activity


def test_an_mcp_only_agents_session_line_says_its_goal_and_outcome(home: Path) -> None:
    """research-scooters (an agent wired to `memstrata mcp` only, no hooks: it logs some
    calls with log_activity and keeps its own transcript with session_append): each of its
    session lines in "Recent activity" read "2026-04-06 09:00-10:12; 3 other calls
    (web_search, fetch_url)", counts and nothing of what the session was for or came to.
    The goal is now its transcript's first prompt that sets one (not an "ignore memory"
    aside), the outcome its last answer (not the aside's)."""
    import anyio
    from mcp.client.stdio import StdioServerParameters

    from mcp import Client

    params = StdioServerParameters(
        command=EXE,
        args=["--home", str(home), "--agent", "scout", "mcp", "--tools", "default,sessions"],
        env={k: os.environ[k] for k in ("PATH", "PYTHONPATH") if k in os.environ},
    )
    sid = "2026-04-06-paris"
    steps: list[tuple[str, dict[str, object]]] = [
        (
            "session_append",
            {
                "role": "user",
                "content": "Help me research shared e-scooters in Paris for a magazine feature.",
            },
        ),
        (
            "log_activity",
            {
                "entry_type": "TOOL_USE",
                "content": 'web_search("Paris scooter vote 2023") -> ok, 8 results',
            },
        ),
        (
            "log_activity",
            {
                "entry_type": "TOOL_USE",
                "content": "fetch_url(paris.fr/pages/trottinettes) -> ok, 14 KB",
            },
        ),
        (
            "session_append",
            {
                "role": "assistant",
                "content": "- Paris voted 89% against shared e-scooters in April 2023\n- the contracts ended in September",
            },
        ),
        (
            "session_append",
            {"role": "user", "content": "Ignore memory, unrelated: how do I list open ports?"},
        ),
        ("session_append", {"role": "assistant", "content": "ss -tulpn, or lsof -i -P -n."}),
        (
            "log_activity",
            {"entry_type": "THOUGHT", "content": "The Saint-Roch trauma study is paywalled"},
        ),
    ]

    async def main() -> str:
        async with Client(params) as c:
            for tool, args in steps:
                if tool == "session_append":
                    args = {"session_id": sid, **args}
                r = await c.call_tool(tool, args)
                assert not r.is_error, (tool, r.content)
            context = await c.read_resource("memory://prompt-context")
            return str(context.contents[0].text)  # type: ignore[union-attr]

    activity = section(anyio.run(main), "Recent activity")
    line = next(x for x in activity.splitlines() if x.startswith("- "))
    assert "goal: Help me research shared e-scooters in Paris for a magazine feature." in line
    # web_search is a search (`reading.tools`), counted with the reads
    assert "1 read, 1 other call (fetch_url)" in line, line
    assert "outcome: Paris voted 89% against shared e-scooters in April 2023" in line, line
    assert "open ports" not in activity and "ss -tulpn" not in activity, activity


def test_without_a_transcript_the_session_line_tells_the_now_the_agent_set(home: Path) -> None:
    """An MCP agent that keeps no transcript and logs only its calls: its session line
    read counts alone. What it did record is NOW: the first objective it set in the span
    is the goal, the last one (when it moved on) the outcome."""
    with Store(home, agent="scout") as st:
        mem = st.agent()
        mem.log.append("TOOL_USE", 'web_search("Paris scooter vote 2023") -> ok, 8 results')
        mem.now.update(status="Researching Paris: the 2023 vote", next_steps=["Injury data"])
        mem.log.append("TOOL_USE", "fetch_url(paris.fr/pages/trottinettes) -> ok, 14 KB")
        mem.now.update(
            status="Paris done: 89% against; next Madrid's tender", next_steps=["Madrid"]
        )
        mem.log.append("THOUGHT", "The Saint-Roch trauma study is paywalled")
    r = subprocess.run(
        [EXE, "--home", str(home), "--agent", "scout", "context"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    line = next(x for x in section(r.stdout, "Recent activity").splitlines() if x[:2] == "- ")
    assert "goal: Researching Paris: the 2023 vote; 1 read, 1 other call" in line, line
    assert "outcome: NOW: Paris done: 89% against; next Madrid's tender" in line, line


def test_a_call_run_again_with_one_argument_corrected_resolves_its_failure(home: Path) -> None:
    """research-scooters: `zotero_export(scooters, chicago-note-bibliography) -> error 500`
    (no such style), then `zotero_export(scooters, chicago-fullnote-bibliography) -> ok`:
    the context kept the first under "Open errors". The same call with one argument
    spelled right resolves it; the same tool on another file does not."""
    run = [
        ("TOOL_USE", "zotero_export(scooters, chicago-note-bibliography) -> error 500"),
        ("TOOL_USE", "zotero_export(scooters, chicago-fullnote-bibliography) -> ok, 14 entries"),
        ("TOOL_USE", "fetch_pdf(journals.example.org, saint-roch-scooters.pdf) -> error 403"),
        ("TOOL_USE", "fetch_pdf(hal.science, hal-04012233.pdf) -> ok, 21 pages"),
    ]
    with Store(home, agent="scout") as st:
        for kind, text in run:
            st.agent().log.append(kind, text)
    r = subprocess.run(
        [EXE, "--home", str(home), "--agent", "scout", "context"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    errors = section(r.stdout, "Open errors")
    assert "saint-roch-scooters.pdf" in errors, r.stdout  # another file: not a correction
    assert "zotero" not in errors, errors


def test_preferences_saved_as_facts_are_under_preferences_once_labelled(
    home: Path, tmp_path: Path
) -> None:
    """coding-tidepool: the context read "## Preferences / - preference: I prefer httpx to
    requests ..." (the section's own kind repeated on its line) while the user's
    preferences the agent saved as facts (`http_client (preference): httpx, never
    requests`) sat under "Known facts", below the errors: a preference is a preference,
    shown where preferences are and kept before facts under a tight budget."""
    with Store(home, agent="me") as st:
        mem = st.agent()
        mem.decisions.record("I prefer httpx to requests for any HTTP calls", "preference")
        mem.facts.set("http_client", "httpx, never requests", "preference")
        mem.facts.set("loan_period", "7 days, one renewal of 7 more days", "general")
    context = ClaudeSession(home, tmp_path / "proj").context()
    prefs = section(context, "Preferences")
    assert "- I prefer httpx to requests for any HTTP calls (mem-" in prefs, context
    assert "- http_client: httpx, never requests" in prefs, context
    facts = section(context, "Known facts")
    assert "loan_period" in facts and "http_client" not in facts, context


def test_what_failed_run_again_with_other_options_resolves_it(home: Path, tmp_path: Path) -> None:
    """pipeline-harvest: `uv run python -m harvest.ingest --day 2026-05-02` was refused by
    the SFTP server (publickey); once the key was added, `... harvest.ingest --since
    2026-04-01` downloaded 412 files, yet the context's last session still listed the
    refusal under "Open errors". What ran is the command up to its options; a program
    alone (`curl -s <url>`) is not, and a dry run resolves nothing."""
    s = ClaudeSession(home, tmp_path / "proj")
    s.call("user-prompt-submit", s.prompt("Download the market days from the SFTP drop."))
    ingest = "uv run python -m harvest.ingest"
    refused = "Exit code 1\nparamiko.ssh_exception.AuthenticationException: publickey rejected"
    s.call(
        "post-tool-use-failure",
        s.tool("Bash", {"command": ingest + " --day 2026-05-02"}, None, failed=refused),
    )
    s.call("post-tool-use", s.tool("Bash", {"command": ingest + " --since 2026-04-01"}, OK))
    token = "Exit code 22\ncurl: (22) The requested URL returned error: 401"
    s.call(
        "post-tool-use-failure",
        s.tool("Bash", {"command": "curl -sf https://pa.example/api/token"}, None, failed=token),
    )
    s.call("post-tool-use", s.tool("Bash", {"command": "curl -sf https://pa.example/status"}, OK))
    errors = section(s.context(), "Open errors")
    assert "401" in errors, errors  # another URL fetched is no fix of the token
    assert "publickey" not in errors, errors
