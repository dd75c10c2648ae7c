"""Three context defects a fresh, blind scenario showed (support-marlin, scen19b), read as the
agent receives the context: the hooks fed Claude Code's JSON (`tests/claude_code.py`: the
context from the `memstrata hook session-start` process) or the CLI as a process. Each is
a word taken for more than it says: a value named in a replaced decision's reason, a fix
run inside a longer command line, an environment variable's name after "token:".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.claude_code import OK, ClaudeSession, cli, section

from memstrata import Store
from memstrata.policy.secrets import SecretWarning


def test_a_value_named_only_in_a_replaced_decisions_reason_is_not_replaced(home: Path) -> None:
    """support-marlin: "Build linux/arm/v7 release archives again" replaced "Drop
    linux/arm/v7 (32-bit ARM) ...", whose reason said "11 downloads of the armv7 archive
    for v0.8.2"; every later context showed the current `latest_release` ("v0.8.2, tagged
    2026-07-14") as "[replaced: see <the armv7 decision>]". What a replacement drops is
    what the replaced record decided, not what its reason mentions in passing; a fact
    whose value opens with what the replaced record decided is still replaced."""
    with Store(home, agent="me") as st:
        facts = st.agent().facts
        facts.set("latest_release", "v0.8.2, tagged 2026-07-14")
        facts.set("docs_generator", "MkDocs Material, mkdocs.yml at the root")
    arm = cli(
        home,
        "--json",
        "decisions",
        "record",
        "Drop linux/arm/v7 (32-bit ARM) from the release builds",
        "--detail",
        "11 downloads of the armv7 archive for v0.8.2",
    )
    docs = cli(home, "--json", "decisions", "record", "Build the docs site with MkDocs Material")
    cli(
        home,
        "decisions",
        "record",
        "Build linux/arm/v7 release archives again; armv7 gets a build-only job",
        "--replaces",
        json.loads(arm.stdout)["entry"]["id"],
    )
    hugo = cli(
        home,
        "--json",
        "decisions",
        "record",
        "Build the docs site with Hugo and the Hextra theme",
        "--replaces",
        json.loads(docs.stdout)["entry"]["id"],
    )
    facts_shown = section(cli(home, "context").stdout, "Known facts").splitlines()
    line = {x[2:].split(" ", 1)[0]: x for x in facts_shown if x.startswith("- ")}
    assert "replaced" not in line["latest_release"], facts_shown
    hugo_id = json.loads(hugo.stdout)["entry"]["id"]
    assert f"[replaced: see {hugo_id}, " in line["docs_generator"], facts_shown


def test_a_failed_command_run_again_inside_a_chain_that_succeeded_is_resolved(
    home: Path, tmp_path: Path
) -> None:
    """support-marlin: `go get golang.org/x/crypto@v0.27.0` failed (it needs Go 1.23); the
    agent then ran `go mod edit -go=1.23 && go get golang.org/x/crypto@v0.27.0`, which
    succeeded, yet every later context listed the failure under "Open errors". A command
    line that succeeded ran each part of its `&&` chain successfully: one that is the
    failed command resolves it. A part whose success the line's does not show (before
    `||`, `;` or a pipe) resolves nothing, nor does a chain of other commands."""
    s = ClaudeSession(home, tmp_path / "proj")
    s.call("user-prompt-submit", s.prompt("Take the x/crypto security fix."))
    failures = {
        "go get golang.org/x/crypto@v0.27.0": "go: golang.org/x/crypto@v0.27.0 requires go >= 1.23.0",
        "npm run build": "Error: Could not resolve entry module src/main.ts",
        "make docs": "make: *** [docs] Error 2: hugo: command not found",
        "uv run pytest tests/test_pdf.py": "E   ModuleNotFoundError: No module named weasyprint",
        "cargo build --release": "error[E0433]: failed to resolve: use of undeclared crate",
        "terraform apply": "Error: Invalid provider configuration",
    }
    for command, error in failures.items():
        failed = "Exit code 1\n" + error
        s.call("post-tool-use-failure", s.tool("Bash", {"command": command}, None, failed=failed))
    for command in (
        "go mod edit -go=1.23 && go get golang.org/x/crypto@v0.27.0",
        "npm ci && npm run build || true",  # `|| true`: the build may have failed
        "make docs; echo done",  # `;`: only echo's status is the line's
        "uv sync && uv run pytest tests/test_pdf.py -q",  # the failed run, one option more
        "cargo fmt && cargo build --release | tee build.log",  # a pipe's status: tee's
        "terraform init && terraform validate",  # other commands
    ):
        s.call("post-tool-use", s.tool("Bash", {"command": command}, OK))
    errors = section(s.context(), "Open errors")
    assert "golang.org/x/crypto" not in errors and "weasyprint" not in errors, errors
    for command in ("npm run build", "make docs", "cargo build --release", "terraform apply"):
        assert f"Bash ({command}) failed" in errors, errors


def test_an_environment_variables_name_is_shown_and_its_value_withheld(
    home: Path, tmp_path: Path
) -> None:
    """support-marlin: the release job failed with "no OIDC token:
    ACTIONS_ID_TOKEN_REQUEST_URL is not set"; the context's activity said "no OIDC token:
    [withheld: credential] is not set", hiding the clue to the fix. A variable's name
    (upper case, digits and underscores, or `$NAME`) is no secret; a value after the same
    label, or after `NAME=`, is still withheld."""
    s = ClaudeSession(home, tmp_path / "proj")
    s.call("user-prompt-submit", s.prompt("Sign the release in CI."))
    oidc = "Exit code 1\nError: signing checksums.txt: no OIDC token: ACTIONS_ID_TOKEN_REQUEST_URL is not set"
    sign = {"command": "goreleaser release --clean"}
    s.call("post-tool-use-failure", s.tool("Bash", sign, None, failed=oidc))
    with pytest.warns(SecretWarning):  # the values in the answer: stored, warned of
        s.call(
            "stop",
            s.answer(
                "The job needs `permissions: id-token: write`; the token is read from "
                "token=$ACTIONS_ID_TOKEN_REQUEST_TOKEN at run time. The old deploy used "
                "token: Q9zX2kLm7Vt4Rw8s and MOTHERDUCK_TOKEN=md7Kq2Zx9Lp4Wt6v."
            ),
        )
    context = s.context()
    assert "no OIDC token: ACTIONS_ID_TOKEN_REQUEST_URL is not set" in context, context
    assert "token=$ACTIONS_ID_TOKEN_REQUEST_TOKEN" in context, context
    assert "Q9zX2kLm7Vt4Rw8s" not in context and "md7Kq2Zx9Lp4Wt6v" not in context, context
    assert "token: [withheld: credential]" in context, context
    assert "MOTHERDUCK_TOKEN=[withheld: credential]" in context, context


def test_a_failure_for_a_variable_not_set_is_resolved_by_a_command_that_sets_it(
    home: Path, tmp_path: Path
) -> None:
    """analytics-kestrel: the Evidence build failed with "MOTHERDUCK_TOKEN is not set in
    the build environment"; `netlify env:set MOTHERDUCK_TOKEN *** && netlify deploy
    --prod` then succeeded, yet every later context listed the build failure as open. A
    successful command line that sets the variable a failure said was missing resolves
    it, and so does a call logged by hand as run with it (an MCP agent's `shell(netlify
    deploy with MOTHERDUCK_TOKEN) -> ok`); one that only reads it, or sets another, does
    not."""
    s = ClaudeSession(home, tmp_path / "proj")
    s.call("user-prompt-submit", s.prompt("Deploy the dashboard to Netlify."))
    failures = {
        "npm run build": "Error: Could not connect to MotherDuck: MOTHERDUCK_TOKEN is not set",
        "python send.py": "KeyError: missing environment variable: RESEND_API_KEY",
        "fly deploy": "Error: DATABASE_URL is not set",
        "make release": "error: GITHUB_TOKEN is not set",
    }
    for command, error in failures.items():
        failed = "Exit code 1\n" + error
        s.call("post-tool-use-failure", s.tool("Bash", {"command": command}, None, failed=failed))
    for command in (
        "netlify env:set MOTHERDUCK_TOKEN *** && netlify deploy --prod",
        "RESEND_API_KEY=*** python send.py --dry",
        "echo $DATABASE_URL",  # reads it: sets nothing
        "export GH_TOKEN=*** && gh auth status",  # another variable
    ):
        s.call("post-tool-use", s.tool("Bash", {"command": command}, OK))
    errors = section(s.context(), "Open errors")
    assert "npm run build" not in errors and "send.py" not in errors, errors
    assert "Bash (fly deploy) failed" in errors and "Bash (make release) failed" in errors, errors


def test_a_hand_logged_call_run_with_the_missing_variable_resolves_its_failure(
    home: Path,
) -> None:
    """The same, as an MCP agent with no hooks logs it: `shell(evidence build) -> error`
    and the error's text as an ERROR entry, then `shell(netlify deploy with
    MOTHERDUCK_TOKEN) -> ok`. A call that only names another variable resolves nothing."""
    with Store(home, agent="analyst") as st:
        log = st.agent().log
        for call, error in (
            ("shell(evidence build) -> error", "MOTHERDUCK_TOKEN is not set in the build"),
            ("shell(fly deploy) -> error", "Error: DATABASE_URL is not set"),
        ):
            log.append("TOOL_USE", call)
            log.append("ERROR", error)
        log.append("TOOL_USE", "shell(netlify deploy with MOTHERDUCK_TOKEN) -> ok, live")
        log.append("TOOL_USE", "shell(flyctl secrets list with FLY_API_TOKEN) -> ok")
    errors = section(cli(home, "--agent", "analyst", "context").stdout, "Open errors")
    assert "evidence build" not in errors and "MOTHERDUCK" not in errors, errors
    assert "DATABASE_URL" in errors, errors
