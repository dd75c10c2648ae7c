"""The CLI and the hooks follow the secrets rule (issue 20, item 5): an agent with a shell
reads CLI output as context, so secrets print as `[withheld: <kind>]`; `--reveal` prints
them as stored, for the person who asks. Hook output (injected into Claude Code's
context) is always withheld. Real `memstrata` processes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

from memstrata import Store

EXE = shutil.which("memstrata", path=str(Path(sys.executable).parent)) or "memstrata"
ANTHROPIC = "sk-ant-api03-Xy7Qp2Lm9Vt4Rw7Ks1Jd6Hf3Gb5Nc0YaZx8Q-AA"
AWS = "AKIAZ7Q4M2XK9LD3PB6W"


def cli(home: Path, *args: str, stdin: str = "") -> str:
    r = subprocess.run(
        [EXE, "--home", str(home), "--agent", "finn", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ),
    )
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_cli_reads_withhold_secrets_unless_revealed(home: Path) -> None:
    with Store(home, agent="finn") as s, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s.agent().files.write("notes/keys.md", f"# Keys\nthe deploy key is {ANTHROPIC}\n")
        s.agent().facts.set("deploy_id", f"id {AWS}")
    shown = {
        "files read": cli(home, "files", "read", "notes/keys.md"),
        "files read --json": cli(home, "--json", "files", "read", "notes/keys.md"),
        "search": cli(home, "search", "deploy key"),
        "facts get": cli(home, "facts", "get", "deploy_id"),
        "facts list --json": cli(home, "facts", "list", "--json"),
    }
    for what, out in shown.items():
        assert ANTHROPIC not in out and AWS not in out, what
    assert "the deploy key is [withheld: anthropic-key]" in shown["files read"]
    assert json.loads(shown["files read --json"])["content"].endswith("[withheld: anthropic-key]\n")
    assert "[withheld: aws-access-key]" in shown["facts get"]
    assert ANTHROPIC in cli(home, "files", "read", "notes/keys.md", "--reveal")
    assert AWS in cli(home, "--reveal", "facts", "get", "deploy_id")


def test_hook_output_withholds_secrets(home: Path, tmp_path: Path) -> None:
    with Store(home, agent="finn") as s, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s.agent().now.update(f"deploy with {AWS}", ["rotate it"])
        s.agent().log.append("TOOL_USE", f"used {ANTHROPIC} for the deploy")
    hook = {"session_id": "abc", "hook_event_name": "UserPromptSubmit", "prompt": "go on"}
    out = cli(home, "hook", "user-prompt-submit", "--reveal", stdin=json.dumps(hook))
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert "rotate it" in context and "[withheld: aws-access-key]" in context
    assert AWS not in context and ANTHROPIC not in context  # --reveal does not reach a model


def test_search_full_withholds_a_credential_in_a_tool_input(home: Path) -> None:
    """events-heronsgate's blind run (scen19k): `search --json --full` printed a session
    tool_call's `meta.input.password` in clear (its text and snippet were withheld)."""
    login = {"username": "priya", "password": "Kingfisher#2207"}
    with Store(home, agent="finn") as s, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s.agent().sessions.append("s1", "tool_call", "", id="t1", name="portal_login", input=login)
    out = cli(home, "--json", "search", "--layer", "sessions", "--full", "portal login")
    assert "portal_login" in out and "priya" in out
    assert "Kingfisher#2207" not in out
    revealed = cli(home, "--json", "--reveal", "search", "--layer", "sessions", "--full", "portal")
    assert "Kingfisher#2207" in revealed


# A store holding a secret in each way one arrives: a tool call's input under a key that
# names a credential, a password said in a prompt, a fact under a credential key, a LOG line.
GUESSES = {
    "tool input": "Kingfisher#2207",
    "prompt": "Tern-Lantern-9",
    "fact": "hunter2x",
    "log": "Gannet-Cove-77",
}


def seed_guesses(home: Path) -> None:
    with Store(home, agent="finn") as s, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the warn policy's SecretWarning: stored as given
        mem = s.agent()
        login = {"username": "priya", "password": GUESSES["tool input"]}
        mem.sessions.append("s1", "tool_call", "", id="t1", name="portal_login", input=login)
        mem.sessions.append("s1", "user", f"the portal password is {GUESSES['prompt']} for now")
        mem.sessions.append("s1", "assistant", "noted, the portal login works")
        mem.facts.set("db_password", GUESSES["fact"])
        mem.log.append("THOUGHT", f"deploy with password: {GUESSES['log']} on the portal")


def index_holds(home: Path, text: str) -> list[str]:
    """Where the index (docs' searchable columns, FTS5's vocabulary) holds `text`."""
    import sqlite3

    from memstrata.index.generations import live_database
    from memstrata.search.text import tokenize

    conn = sqlite3.connect(live_database(home / "index") or "")
    try:
        rows = conn.execute("SELECT uid, title, body, tags, context FROM docs").fetchall()
        words = {r[0] for r in conn.execute("SELECT term FROM docs_vocab")}
    finally:
        conn.close()
    found = [r[0] for r in rows if any(text in str(c) for c in r[1:])]
    rare = [w for w in tokenize(text) if not w.isdigit() and len(w) > 4]
    return found + [f"fts:{w}" for w in rare if w in words]


def test_a_search_for_a_withheld_secret_finds_nothing(home: Path) -> None:
    """Issue 19 (stop 35's note): `search --layer sessions <password>` found the record (shown
    withheld), so whoever may search could confirm a guess. The index holds each secret as
    `[withheld: <kind>]`, after a write and after `reindex`; the files keep it."""
    seed_guesses(home)
    for rebuilt in (False, True):
        if rebuilt:
            cli(home, "reindex")
        for what, secret in GUESSES.items():
            for scope in ([], ["--layer", "sessions"], ["--layer", "fact", "--layer", "log"]):
                out = cli(home, "--json", "search", *scope, "--explain", secret)
                assert json.loads(out) == [], f"{what} {scope} rebuilt={rebuilt}: {out[:300]}"
            assert index_holds(home, secret) == [], what
        found = json.loads(cli(home, "--json", "search", "--layer", "sessions", "portal login"))
        assert {h["kind"] for h in found} >= {"tool_call", "user"}  # the records are indexed
        assert json.loads(cli(home, "--json", "search", "deploy portal"))  # the LOG line too
    facts = (home / "agents" / "finn" / "facts.jsonl").read_text(encoding="utf-8")
    assert GUESSES["fact"] in facts  # the file is the truth: it keeps what the policy stored
    assert GUESSES["fact"] in cli(home, "facts", "get", "db_password")  # asked by its key
    cli(home, "doctor")  # no drift: doctor compares the files' masked text with the index


def test_purge_removes_a_secret_the_index_never_held(home: Path) -> None:
    seed_guesses(home)
    cli(home, "purge", "fact", "db_password", "--reason", "pasted by mistake", "--yes")
    facts = (home / "agents" / "finn" / "facts.jsonl").read_text(encoding="utf-8")
    assert GUESSES["fact"] not in facts
    assert json.loads(cli(home, "--json", "search", "--layer", "fact", "db_password")) == []


def test_an_index_built_before_the_rule_is_reparsed_without_the_secret(home: Path) -> None:
    """An index made by an earlier memstrata holds the raw text: migration
    `019_masked_secrets` forgets every source, so the next open re-parses it masked."""
    import sqlite3

    from memstrata.index.generations import live_database

    seed_guesses(home)
    conn = sqlite3.connect(live_database(home / "index") or "")
    with conn:  # as an earlier version indexed it (the FTS5 trigger takes the raw text too)
        conn.execute(
            "UPDATE docs SET body = ? WHERE uid LIKE 'log:%'", (f"password: {GUESSES['log']}",)
        )
        conn.execute("DELETE FROM meta WHERE key = 'migration:019_masked_secrets'")
    conn.close()
    assert index_holds(home, GUESSES["log"])  # the old index held it
    assert json.loads(cli(home, "--json", "search", GUESSES["log"])) == []
    assert index_holds(home, GUESSES["log"]) == []
