"""Issue 19, agents that are not Claude Code (infra-saltmarsh's blind run,
docs/misses/infra-saltmarsh.md "Context findings" 2 and 5).

- An MCP-only agent (terminal runs as `run_terminal_cmd`, logged by hand as
  `tool(args) -> outcome`) fixed its failures with another tool of the family
  (`gh_run_view` failed, `gh_run_rerun` worked), the same program with other flags, or
  said so in a later note; "Open errors" still listed them (about 1,600 characters of
  stale errors at s10).
- Trace and activity classification knew Claude Code's tool names only: Cursor's
  `read_file`/`run_terminal_cmd`, Codex's `shell`/`apply_patch`, the editor tool's
  `view` were "other calls", and the bench's noise classifier counted none of them.

Real store, real files; the context as `memstrata context` assembles it.
"""

from __future__ import annotations

from pathlib import Path

from memstrata import Store
from memstrata.assembly.context import assemble_context
from memstrata.bench.agent_metrics import classify_line
from memstrata.operations.loop import log_tool

TS = 1_800_000_000.0
OPEN = "## Open errors (nothing later resolved them)"


def _errors(text: str) -> str:
    return text.split(OPEN + "\n", 1)[1].split("\n## ", 1)[0] if OPEN in text else ""


def _logged(s: Store, *entries: tuple[str, str]) -> str:
    log = s.agent().log
    for kind, text in entries:
        log.append(kind, text)
    return _errors(assemble_context(s, "infra", now=TS).text)


def test_a_sibling_tool_that_acts_on_the_same_run_resolves_its_failure(home: Path) -> None:
    with Store(home, agent="infra") as s:
        errors = _logged(
            s,
            ("TOOL_USE", "gh_run_view(11873402117) -> apply staging failed: AccessDenied"),
            ("ERROR", "Run terraform apply\nError: creating RDS DB Instance: AccessDenied"),
            ("TOOL_USE", "gh_run_view(11901877045) -> deploy failed: kms:Decrypt denied"),
            ("TOOL_USE", "gh_run_list(11901877045) -> 1 run listed"),  # a look: no fix
            ("TOOL_USE", "gh_run_rerun(11873402117) -> staging apply ok"),
        )
    assert "11873402117" not in errors, errors
    assert "11901877045" in errors  # looked at again, not rerun: still open


def test_the_same_program_with_other_flags_resolves_its_failure(home: Path) -> None:
    with Store(home, agent="infra") as s:
        errors = _logged(
            s,
            ("TOOL_USE", "run_terminal_cmd(terraform plan -generate-config-out) -> error: lock"),
            ("TOOL_USE", "run_terminal_cmd(pg_dump | pg_restore to staging-db) -> 214 errors"),
            ("TOOL_USE", "run_terminal_cmd(curl -s https://a.example/x) -> error: 404"),
            ("TOOL_USE", "run_terminal_cmd(terraform plan) -> no changes"),
            ("TOOL_USE", "run_terminal_cmd(pg_restore --no-owner --role=app) -> ok, 187m42s"),
            ("TOOL_USE", "run_terminal_cmd(curl -s https://b.example/y) -> 200"),  # another URL
            ("TOOL_USE", "run_terminal_cmd(terraform plan --help) -> usage"),  # a look
            ("TOOL_USE", "run_terminal_cmd(make lint) -> ok, done without errors"),
        )
    assert "terraform" not in errors and "pg_restore" not in errors, errors
    assert "make lint" not in errors  # "without errors" is no failure
    assert "a.example" in errors


def test_a_later_note_that_names_the_fix_resolves_an_error(home: Path) -> None:
    with Store(home, agent="infra") as s:
        log = s.agent().log
        log.append(
            "ERROR",
            "The app role salt-staging-app cannot read its SecureString parameters: no "
            "kms:Decrypt on the alias/salt-prod-ssm key. Needs a policy change in modules/app",
        )
        log.append("ERROR", "The nightly export to the billing bucket timed out after 900 s")
        log.append(
            "USER_FEEDBACK", "Plan for the IAM fix please.", {"event": "user_intent"}
        )  # the next turn: a note now needs more than one name of the failure
        log.append(
            "THOUGHT",
            "Fixed the staging deploy: granted kms:Decrypt on the SSM key to "
            "salt-staging-app in modules/app; the deploy reads its parameters now",
        )
        log.append("THOUGHT", "Released the export lock; the billing report is not fixed yet")
        errors = _errors(assemble_context(s, "infra", now=TS).text)
    assert "kms:Decrypt" not in errors, errors
    assert "nightly export" in errors


SHAPES = [
    ("run_terminal_cmd", {"command": "python -m pytest -q"}, "test"),
    ("shell", {"command": ["bash", "-lc", "pytest -q tests/test_api.py"]}, "test"),
    ("exec_command", {"cmd": "cargo test"}, "test"),
    ("execute_command", {"command": "terraform plan"}, "other"),
    ("read_file", {"target_file": "app/main.py"}, "read"),
    ("list_dir", {"relative_workspace_path": "app"}, "read"),
    ("grep_search", {"query": "def login"}, "read"),
    ("codebase_search", {"query": "where are tokens refreshed"}, "read"),
    ("view", {"path": "app/auth.py"}, "read"),
    ("str_replace_based_edit_tool", {"command": "view", "path": "app/auth.py"}, "read"),
    ("str_replace_based_edit_tool", {"command": "str_replace", "path": "app/auth.py"}, "edit"),
    ("write_file", {"file_path": "app/new.py", "content": "x = 1"}, "edit"),
    ("edit_file", {"target_file": "app/main.py", "instructions": "add a route"}, "edit"),
    ("apply_patch", {"input": "*** Begin Patch\n*** End Patch"}, "edit"),
]


def test_every_clients_tool_names_are_counted_by_class(home: Path) -> None:
    with Store(home, agent="infra") as s:
        for name, args, _ in SHAPES:
            log_tool(s, "infra", name, args, "ok", session="s1")
        text = assemble_context(s, "infra", now=TS).text
    reads = sum(kind == "read" for *_, kind in SHAPES)
    edits = sum(kind == "edit" for *_, kind in SHAPES)
    tests = sum(kind == "test" for *_, kind in SHAPES)
    said = f"{reads} reads, {edits} edits, {tests} test runs, 1 other call (execute_command)"
    assert said in text, text


def test_a_failed_command_rerun_through_another_clients_shell_is_resolved(home: Path) -> None:
    with Store(home, agent="infra") as s:
        log_tool(
            s,
            "infra",
            "run_terminal_cmd",
            {"command": "make deploy"},
            error="make: *** [deploy] Error 2",
        )
        log_tool(s, "infra", "shell", {"command": ["bash", "-lc", "make deploy"]}, "deployed")
        text = assemble_context(s, "infra", now=TS).text
    assert "make deploy" not in _errors(text), text


def test_the_noise_classifier_knows_every_clients_tool_calls() -> None:
    for line in (
        "- run_terminal_cmd(terraform plan) -> 23 to add",
        "- read_file(target_file='app/main.py') -> 120 lines",
        "- apply_patch(*** Begin Patch) -> ok",
        "- str_replace_based_edit_tool(command='view') -> ok",
        "- shell(['bash', '-lc', 'pytest']) -> ok",
    ):
        assert classify_line(line) == "trace", line
    assert classify_line("- Use str.replace(old, new) for the slugs") is None


def test_an_output_an_agent_logs_as_its_error_is_told_by_its_failure(home: Path) -> None:
    """An MCP agent logs a failed run's output as its ERROR (`log_activity`): the open
    error is the line that says what went wrong, not the run's banner."""
    with Store(home, agent="infra") as s:
        errors = _logged(
            s,
            (
                "ERROR",
                "deploy (staging)  Run ./scripts/deploy.sh staging\n+ ENV=staging\n"
                "+ aws ssm get-parameters-by-path --path /salt/staging/ --with-decryption\n"
                'FATAL:  password authentication failed for user "booking_app"\n'
                "Error: Process completed with exit code 1.",
            ),
        )
    assert 'password authentication failed for user "booking_app"' in errors, errors
    assert "ENV=staging" not in errors
