"""The CLI: exit codes, --json output, and the files and index rows each command leaves
behind.

Most commands run in this process through `memstrata.cli.main.main` (what the installed
`memstrata` entry point calls, as `sys.exit(main())`): its exit status, stdout and stderr
are what a shell would see, without a Python start-up per command (about 0.3 s of CPU
each; this file ran ~150 of them). The installed entry point itself, as a shell runs it,
is used where the process is the point: `init` (a user's first command),
`python -m memstrata`, a user's mistakes (exit 2 or 3 and one stderr line, seen by the
shell), a refused import, doctor's exit 1, and what the parser imports.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import re
import shutil
import sqlite3
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest

from memstrata.cli.main import main
from memstrata.index.generations import live_database

EXE = shutil.which("memstrata", path=str(Path(sys.executable).parent)) or "memstrata"
ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$")


def run(
    home: Path,
    *args: str,
    stdin: str = "",
    agent: str | None = "finn",
    room: str | None = None,
    process: bool = False,
) -> subprocess.CompletedProcess[str]:
    """`memstrata --home HOME [--agent A] [--room R] ARGS`: in this process, or with
    `process=True` as a shell runs it (the installed entry point, its own process)."""
    cmd = ["--home", str(home)]
    if agent:
        cmd += ["--agent", agent]
    if room:
        cmd += ["--room", room]
    if process:
        return subprocess.run(
            [EXE, *cmd, *args], input=stdin, capture_output=True, text=True, timeout=60
        )
    return in_process([*cmd, *args], stdin)


def in_process(argv: list[str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    """`main(argv)` with its own stdin, stdout and stderr; the exit status is what
    `sys.exit(main())` gives the shell (argparse's own `sys.exit(2)` included)."""
    out, err = io.StringIO(), io.StringIO()
    feed = io.TextIOWrapper(io.BytesIO(stdin.encode()), encoding="utf-8")
    with (
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
        pytest.MonkeyPatch.context() as mp,
    ):
        mp.setattr(sys, "stdin", feed)
        try:
            status = main(argv)
        except SystemExit as exc:  # as the interpreter turns it into an exit status
            if exc.code is None or isinstance(exc.code, int):
                status = exc.code or 0
            else:
                err.write(f"{exc.code}\n")
                status = 1
    return subprocess.CompletedProcess(argv, status, out.getvalue(), err.getvalue())


def ok(home: Path, *args: str, **kw: Any) -> Any:
    """Run with --json, require exit 0, return the parsed output."""
    r = run(home, "--json", *args, **kw)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    return json.loads(r.stdout)


def rows(home: Path, sql: str, *params: object) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(live_database(home / "index") or "")
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def snapshot(home: Path) -> dict[str, str]:
    """Every memory file's hash: what a refused command must leave unchanged."""
    out = {}
    for p in sorted(home.rglob("*")):
        rel = p.relative_to(home).as_posix()
        if p.is_file() and not rel.startswith((".locks", "index/")):
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


@pytest.fixture
def seeded(home: Path) -> Path:
    ok(home, "init")
    return home


def test_init_creates_agent_files_and_says_where(home: Path) -> None:
    out = ok(home, "init", process=True)  # a user's first command, as a shell runs it
    assert out["home"] == str(home.resolve()) and out["agent"] == "finn"
    assert set(out["created"]) == {
        "config.toml",
        "agents/finn/AGENT.md",
        "agents/finn/memory/NOW.md",
        "agents/finn/memory/LOG.md",
        "agents/finn/memory/CONTEXT.md",
    }
    assert (home / "agents/finn/AGENT.md").read_text().startswith("# finn")
    assert "No active objective yet" in (home / "agents/finn/memory/NOW.md").read_text()
    identity = "SELECT count(*) FROM docs WHERE layer='identity' AND owner='finn'"
    assert rows(home, identity)[0][0] == 0  # the untouched starter is no memory (not indexed)
    (home / "agents/finn/AGENT.md").write_text("# finn\nmine\n")
    again = ok(home, "init")
    assert again["created"] == [] and "agents/finn/AGENT.md" in again["kept"]
    assert (home / "agents/finn/AGENT.md").read_text() == "# finn\nmine\n"
    assert rows(home, identity)[0][0] > 0  # edited: indexed
    text = run(home, "init", "other", process=True)
    assert text.returncode == 0 and f"store: {home.resolve()}" in text.stdout
    assert (home / "agents/other/memory/LOG.md").exists()


def test_common_options_after_the_command_and_python_dash_m(seeded: Path) -> None:
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "memstrata",
            "now",
            "set",
            "Write docs",
            "--home",
            str(seeded),
            "--agent",
            "finn",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["objective"] == "Write docs"


def test_now_set_and_show(seeded: Path) -> None:
    out = ok(
        seeded,
        "now",
        "set",
        "Ship the CLI",
        "--step",
        "tests",
        "--step",
        "bench",
        "--blocker",
        "flaky CI",
        "--phase",
        "build",
    )
    assert out["next_steps"] == ["tests", "bench"] and out["path"] == "agents/finn/memory/NOW.md"
    text = (seeded / "agents/finn/memory/NOW.md").read_text()
    assert "Ship the CLI" in text and "- [ ] bench" in text and "flaky CI" in text
    shown = ok(seeded, "now")
    assert shown["objective"] == "Ship the CLI" and shown["blockers"] == ["flaky CI"]
    bodies = " ".join(r[0] for r in rows(seeded, "SELECT body FROM docs WHERE layer='now'"))
    assert "Ship the CLI" in bodies
    plain = run(seeded, "now", "show")
    assert plain.returncode == 0 and plain.stdout.startswith("# NOW")


def test_log_append_and_tail(seeded: Path) -> None:
    e = ok(seeded, "log", "append", "tool_use", "ran pytest: 12 passed", "--meta", '{"passed": 12}')
    assert e["entry_type"] == "TOOL_USE" and e["metadata"] == {"passed": 12}
    ok(seeded, "log", "append", "THOUGHT", "-", stdin="line one\nline two\n")
    tail = ok(seeded, "log", "tail", "-n", "5")
    assert [t["content"] for t in tail] == ["ran pytest: 12 passed", "line one\nline two"]
    assert e["id"] in (seeded / "agents/finn/memory/LOG.md").read_text()
    meta = rows(seeded, "SELECT meta FROM docs WHERE uid = ?", f"log:finn:{e['id']}")
    assert json.loads(meta[0][0])["metadata"] == {"passed": 12}


def test_file_tools(seeded: Path) -> None:
    mem = seeded / "agents/finn/memory"
    w = ok(seeded, "files", "write", "notes/auth.md", "# Auth\nuse bcrypt\n")
    assert (
        w["path"] == "notes/auth.md"
        and (mem / "notes/auth.md").read_text() == "# Auth\nuse bcrypt\n"
    )
    ok(seeded, "files", "replace", "notes/auth.md", "bcrypt", "argon2")
    ok(seeded, "files", "insert", "notes/auth.md", "1", "cost 12")
    assert (mem / "notes/auth.md").read_text() == "# Auth\ncost 12\nuse argon2\n"
    read = ok(seeded, "files", "read", "notes/auth.md")
    assert read["content"].endswith("use argon2\n") and read["sha256"]
    stale = run(seeded, "files", "write", "notes/auth.md", "x", "--expected-sha", "0" * 64)
    assert stale.returncode == 4 and "changed since it was read" in stale.stderr
    listed = ok(seeded, "files", "list")  # files only, as MCP memory_list: no folders
    assert "notes/auth.md" in [f["path"] for f in listed] and "LOG.md" in [
        f["path"] for f in listed
    ]
    assert "notes" not in [f["path"] for f in listed]
    assert all(set(f) == {"path", "bytes", "modified"} and ISO.match(f["modified"]) for f in listed)
    src = str(mem / "notes/auth.md")
    assert rows(seeded, "SELECT count(*) FROM docs WHERE source = ?", src)[0][0] > 0
    ok(seeded, "files", "rename", "notes/auth.md", "notes/security.md")
    assert rows(seeded, "SELECT count(*) FROM docs WHERE source = ?", src)[0][0] == 0
    gone = ok(seeded, "files", "delete", "notes/security.md")
    assert not (mem / "notes/security.md").exists()
    assert (seeded / gone["archived_to"]).read_text().endswith("use argon2\n")
    assert (
        rows(
            seeded,
            "SELECT layer FROM docs WHERE source = ?",
            str(seeded.resolve() / gone["archived_to"]),
        )[0][0]
        == "archive"
    )
    log = run(seeded, "files", "write", "LOG.md", "overwrite")
    assert log.returncode == 2 and "append-only" in log.stderr


def test_facts(seeded: Path) -> None:
    f = ok(seeded, "facts", "set", "currency", "USD", "--category", "preference", "--cite", "chat")
    assert f["category"] == "preference" and f["citations"] == ["chat"]
    ok(seeded, "facts", "set", "currency", "EUR", "--category", "preference")
    assert run(seeded, "facts", "get", "currency").stdout == "EUR\n"
    assert [x["key"] for x in ok(seeded, "facts", "list", "--category", "preference")] == [
        "currency"
    ]
    assert rows(seeded, "SELECT body FROM docs WHERE uid='fact:finn:currency'") == [("EUR",)]
    ok(seeded, "facts", "forget", "currency")
    assert rows(seeded, "SELECT count(*) FROM docs WHERE layer='fact'") == [(0,)]
    ops = [
        json.loads(x)["op"] for x in (seeded / "agents/finn/facts.jsonl").read_text().splitlines()
    ]
    assert ops == ["set", "set", "forget"]
    missing = run(seeded, "facts", "get", "currency")
    assert missing.returncode == 3 and missing.stderr.count("\n") == 1


def test_tasks(seeded: Path) -> None:
    t1 = ok(
        seeded, "tasks", "add", "Write CLI tests", "--priority", "1", "--criterion", "exit codes"
    )
    t2 = ok(
        seeded, "tasks", "add", "Measure start-up", "--blocked-by", t1["id"], "--milestone", "m1"
    )
    assert (t1["id"], t2["blocked_by"]) == ("TASK-001", ["TASK-001"])
    done = ok(seeded, "tasks", "update", "TASK-001", "--status", "done")
    assert done["status"] == "done" and done["completed"]
    assert [t["id"] for t in ok(seeded, "tasks", "list", "--status", "pending")] == ["TASK-002"]
    assert ok(seeded, "tasks", "get", "TASK-002")["milestone"] == "m1"
    on_disk = json.loads((seeded / "agents/finn/tasks.json").read_text())["tasks"]
    assert [t["status"] for t in on_disk] == ["done", "pending"]
    assert rows(seeded, "SELECT kind FROM docs WHERE uid='task:finn:TASK-001'") == [("done",)]


def test_sessions(seeded: Path) -> None:
    assert ok(seeded, "sessions", "start", "s1", "--title", "first")["id"] == "s1"
    ok(seeded, "sessions", "append", "s1", "user", "please fix the login test")
    ok(
        seeded,
        "sessions",
        "append",
        "s1",
        "tool_call",
        "",
        "--name",
        "Read",
        "--input",
        '{"path": "x"}',
    )
    shown = ok(seeded, "sessions", "show", "s1")
    assert [m["role"] for m in shown] == ["user", "tool_call"] and shown[1]["input"] == {
        "path": "x"
    }
    ok(seeded, "sessions", "end", "s1")
    listed = ok(seeded, "sessions", "list")
    assert listed[0]["messages"] == 2 and listed[0]["ended"]
    lines = (seeded / "agents/finn/sessions/s1.jsonl").read_text().splitlines()
    assert len(lines) == 2 and json.loads(lines[0])["content"] == "please fix the login test"
    assert rows(seeded, "SELECT count(*) FROM docs WHERE layer='session' AND thread='s1'") == [(2,)]
    dup = run(seeded, "sessions", "start", "s1")
    assert dup.returncode == 4 and "already exists" in dup.stderr


def test_ledger(home: Path) -> None:
    a = ok(
        home,
        "ledger",
        "publish",
        "decision",
        "Chose bcrypt over argon2",
        "--tag",
        "auth",
        "--detail",
        "cost factor 12",
        room="room-1",
    )
    old = ok(
        home, "ledger", "publish", "convention", "Timestamps in UTC", "--tag", "time", room="room-2"
    )
    new = ok(
        home,
        "ledger",
        "publish",
        "convention",
        "Timestamps in UTC with Z",
        "--tag",
        "time",
        "--supersedes",
        old["id"],
        room="room-2",
    )
    assert (
        a["room_id"] == "room-1" and a["author_role"] == "finn" and new["supersedes"] == old["id"]
    )
    lines = [json.loads(x) for x in (home / "ledger.jsonl").read_text().splitlines()]
    assert [x["id"] for x in lines] == [a["id"], old["id"], new["id"]]
    assert rows(home, "SELECT superseded FROM docs WHERE uid = ?", f"ledger:{old['id']}") == [(1,)]
    assert {e["id"] for e in ok(home, "ledger", "query", agent=None)} == {a["id"], new["id"]}
    assert [
        e["id"]
        for e in ok(home, "ledger", "query", "--tag", "time", "--include-superseded", agent=None)
    ] == [new["id"], old["id"]]
    assert [
        e["id"] for e in ok(home, "ledger", "query", "--exclude-room", "room-2", agent=None)
    ] == [a["id"]]
    hits = ok(home, "ledger", "search", "bcrypt", agent=None)
    assert hits[0]["id"] == a["id"] and hits[0]["score"] > 0
    got = ok(home, "ledger", "get", old["id"], agent=None)
    assert got["superseded"] is True and got["summary"] == "Timestamps in UTC"
    ctx = ok(home, "ledger", "context", "auth", room="room-3")
    assert "# Predecessor context for room-3" in ctx["text"] and a["id"] in ctx["text"]
    own = ok(home, "ledger", "context", "auth", room="room-1")
    assert a["id"] not in own["text"]


def test_search_options(seeded: Path) -> None:
    ok(seeded, "log", "append", "TOOL_USE", "deployed the auth service")
    ok(
        seeded,
        "facts",
        "set",
        "auth_lib",
        "bcrypt for auth",
        "--category",
        "project",
        "--cite",
        "docs/auth.md",
    )
    e1 = ok(
        seeded, "ledger", "publish", "decision", "auth uses bcrypt", "--tag", "auth", "--tag", "sec"
    )
    e2 = ok(seeded, "ledger", "publish", "warning", "auth tokens expire", "--tag", "auth")
    ok(seeded, "ledger", "publish", "decision", "auth uses argon2", "--supersedes", e1["id"])
    both = ok(seeded, "search", "auth", "--layer", "log", "--layer", "fact")
    assert {h["layer"] for h in both} == {"log", "fact"} and "explain" not in both[0]
    for h in both:  # as MCP shows a hit: ISO time, store-relative place, no nulls
        assert ISO.match(h["ts"]) and None not in h.values(), h
        assert not h["source"].startswith("/") and h["where"].startswith(h["source"] + ":")
    assert [
        h["meta"]["id"]
        for h in ok(seeded, "search", "auth", "--layer", "ledger", "--kind", "warning", "--full")
    ] == [e2["id"]]
    tagged = ok(
        seeded,
        "search",
        "auth",
        "--tag",
        "auth",
        "--tag",
        "sec",
        "--all-tags",
        "--include-superseded",
    )
    assert [h["uid"] for h in tagged] == [f"ledger:{e1['id']}"] and tagged[0]["superseded"]
    assert ok(seeded, "search", "auth", "--tag", "auth", "--tag", "sec", "--all-tags") == []
    assert len(ok(seeded, "search", "auth", "-k", "1")) == 1
    assert ok(seeded, "search", "auth", "--until", "2000-01-01") == []
    assert ok(seeded, "search", "auth", "--since", "2000-01-01", "--layer", "log")
    explained = ok(seeded, "search", "auth", "--explain", "-k", "2")
    assert all("score" in h["explain"] for h in explained)
    plain = run(seeded, "search", "auth", "--explain")
    assert plain.returncode == 0 and "explain:" in plain.stdout and "[ledger" in plain.stdout


def test_context(seeded: Path) -> None:
    ok(seeded, "now", "set", "Fix the flaky login test")
    ok(seeded, "facts", "set", "ci", "GitHub Actions")
    ok(seeded, "ledger", "publish", "convention", "login tests use fixtures", room="room-9")
    out = ok(seeded, "context", "--brief", "login tests", room="room-1")
    assert {"identity", "now", "facts", "ledger"} <= set(out["sections"])
    assert "Fix the flaky login test" in out["text"] and out["chars"] == len(out["text"])
    small = ok(seeded, "context", "--budget", "400")
    assert small["chars"] <= 400 and small["truncated"]
    none = ok(seeded, "context", "--ignore-memory")
    assert "Fix the flaky" not in none["text"] and "ignored" in none["text"]
    plain = run(seeded, "context")
    assert plain.returncode == 0 and plain.stdout.startswith("# Memory context")


def test_cli_imports_nothing_heavy() -> None:
    code = (
        "import sys; from memstrata.cli.parser import build_parser; build_parser(); "
        "print(' '.join(sys.modules))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    loaded = set(r.stdout.split())
    heavy = {
        "numpy",
        "torch",
        "sentence_transformers",
        "mcp",
        "httpx",
        "uvicorn",
        "memstrata.mcp.server",
        "memstrata.layers.agent",
        "memstrata.assembly.context",
        "tarfile",
    }
    assert not heavy & loaded, heavy & loaded


MISTAKES = [
    ("files", "write", "../x", "escape"),
    ("files", "read", "../../etc/passwd"),
    ("ledger", "publish", "decision", "x" * 4097),
    ("ledger", "publish", "decision", "fine", "--supersedes", "mem-00000000"),  # not found: 3
    ("ledger", "publish", "rumour", "fine"),
    ("log", "append", "THOUGHT", "hi", "--meta", '{"rows": 12'),
    ("log", "append", "THOUGHT", "hi", "--meta", "[1, 2]"),
    ("sessions", "append", "s9", "user", "hi", "--input", "{nope"),
    ("search", "auth", "--layer", "nonsense"),
    ("search", "auth", "-k", "500"),
    ("tasks", "update", "TASK-001", "--status", "finished"),
    ("facts", "set", "k", "v", "--category", "gossip"),
    ("context", "--budget", "10"),
]


@pytest.mark.parametrize("argv", MISTAKES, ids=lambda a: " ".join(a)[:40])
def test_user_mistakes_exit_2_with_one_line_and_change_nothing(
    seeded: Path, argv: tuple[str, ...]
) -> None:
    ok(seeded, "tasks", "add", "a task")
    ok(seeded, "ledger", "publish", "decision", "first entry")
    before = snapshot(seeded)
    docs_before = rows(seeded, "SELECT uid, body FROM docs ORDER BY uid")
    r = run(seeded, *argv, process=True)  # the exit status and stderr a shell sees
    assert r.returncode == (3 if "--supersedes" in argv else 2), (r.returncode, r.stderr)
    assert r.stderr.startswith("memstrata: error: ") and r.stderr.count("\n") == 1, r.stderr
    assert "Traceback" not in r.stderr and r.stdout == ""
    assert snapshot(seeded) == before
    assert rows(seeded, "SELECT uid, body FROM docs ORDER BY uid") == docs_before


def test_reindex_rebuilds_with_progress(seeded: Path) -> None:
    ok(seeded, "log", "append", "THOUGHT", "remember the reindex")
    ok(seeded, "ledger", "publish", "decision", "keep files as truth")
    before = rows(seeded, "SELECT uid, layer, body FROM docs ORDER BY uid")
    shutil.rmtree(seeded / "index")
    r = run(seeded, "--json", "reindex", agent=None)
    assert r.returncode == 0, r.stderr
    progress = [json.loads(line)["progress"] for line in r.stderr.splitlines()]  # JSON lines
    assert progress[0]["done"] == 0 and progress[-1]["percent"] == 100
    plain = run(seeded, "reindex", agent=None)
    assert "reindex: 0/" in plain.stderr and "(100%)" in plain.stderr
    out = json.loads(r.stdout)
    assert out["docs"] == len(before) and out["sources"] >= 5
    assert rows(seeded, "SELECT uid, layer, body FROM docs ORDER BY uid") == before
    quiet = run(seeded, "reindex", "--quiet", agent=None)
    assert quiet.stderr == "" and "reindexed" in quiet.stdout


def test_doctor_reports_drift_bad_lines_and_fixes(seeded: Path) -> None:
    ok(seeded, "ledger", "publish", "decision", "indexed entry")
    clean = run(seeded, "--json", "doctor", agent=None)
    assert clean.returncode == 0 and json.loads(clean.stdout)["ok"] is True
    hand: dict[str, Any] = {
        "id": "mem-0badf00d",
        "ts": "2026-01-01T00:00:00Z",
        "kind": "decision",
        "room_id": None,
        "author_role": None,
        "ref": None,
        "tags": [],
        "summary": "added by hand",
        "detail": None,
        "supersedes": None,
    }
    with open(seeded / "ledger.jsonl", "a") as fh:
        fh.write(json.dumps(hand) + "\n" + "{torn garbage\n")
    conn = sqlite3.connect(live_database(seeded / "index") or "")
    conn.execute("DELETE FROM docs WHERE layer = 'now'")
    conn.commit()
    conn.close()
    r = run(seeded, "--json", "doctor", agent=None, process=True)
    assert r.returncode == 1
    report = json.loads(r.stdout)
    # (a hand-edited source is also "behind the truth": its version changed)
    drifted = {d["source"]: d for d in report["drift"] if d["problem"] == "docs differ"}
    assert (
        drifted["ledger.jsonl"]["missing"] == 1
        and "ledger:mem-0badf00d" in drifted["ledger.jsonl"]["examples"]
    )
    assert drifted["agents/finn/memory/NOW.md"]["missing"] >= 1
    assert [b["source"] for b in report["bad_lines"]] == ["ledger.jsonl"]
    assert report["integrity_check"] == ["ok"]
    text = run(seeded, "doctor", agent=None)
    assert text.returncode == 1 and "DRIFT" in text.stdout and "memstrata reindex" in text.stdout
    fixed = run(seeded, "--json", "doctor", "--fix", agent=None)
    after = json.loads(fixed.stdout)
    assert after["fixed"] is True and after["index_ok"] is True
    assert fixed.returncode == 1 and after["files_ok"] is False  # the torn line needs a person
    assert rows(seeded, "SELECT count(*) FROM docs WHERE uid='ledger:mem-0badf00d'") == [(1,)]
    assert rows(seeded, "SELECT count(*) FROM bad_lines") == [(1,)]


@pytest.mark.parametrize("name", ["dump", "dump.tar.gz"])
def test_export_import_round_trip(seeded: Path, tmp_path: Path, name: str) -> None:
    ok(seeded, "log", "append", "TOOL_USE", "exported memory")
    ok(seeded, "facts", "set", "lang", "python")
    ok(seeded, "ledger", "publish", "decision", "export as plain files")
    target = tmp_path / name
    out = ok(seeded, "export", str(target), agent=None)
    assert out["files"] >= 6 and target.exists()
    if name.endswith(".tar.gz"):
        with tarfile.open(target) as tar:
            names = tar.getnames()
    else:
        names = [p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file()]
    assert "ledger.jsonl" in names and "agents/finn/memory/LOG.md" in names
    assert not any(n.startswith(("index/", ".locks")) for n in names)
    again = run(seeded, "export", str(target), agent=None)
    assert again.returncode == 4 and "already exists" in again.stderr

    fresh = tmp_path / "restored"
    got = ok(fresh, "import", str(target), agent=None)
    assert got["files"] + len(got["skipped"]) == out["files"] and got["replaced"] == 0
    assert [x["path"] for x in got["skipped"]] == ["config.toml", "events.jsonl"]  # settings, audit
    local = ("events.jsonl", "config.toml")  # a store's own audit and settings are not imported
    assert {k: v for k, v in snapshot(fresh).items() if k not in local} == {
        k: v for k, v in snapshot(seeded).items() if k not in local
    }
    query = "SELECT uid, layer, body FROM docs WHERE layer != 'now' ORDER BY uid"
    assert rows(fresh, query) == rows(seeded, query)
    assert ok(fresh, "facts", "get", "lang")["value"] == "python"

    (fresh / "ledger.jsonl").write_text("")
    before = snapshot(fresh)
    refused = run(fresh, "import", str(target), agent=None, process=True)
    assert refused.returncode == 4 and "--force" in refused.stderr and snapshot(fresh) == before
    ok(fresh, "import", str(target), "--force", agent=None)
    assert (fresh / "ledger.jsonl").read_text() == (seeded / "ledger.jsonl").read_text()
    assert rows(fresh, "SELECT count(*) FROM docs WHERE layer='ledger'") == [(1,)]


def test_import_refuses_paths_out_of_the_store_and_tampered_exports(tmp_path: Path) -> None:
    evil = tmp_path / "evil.tar.gz"
    with tarfile.open(evil, "w:gz") as tar:
        for member in ("ledger.jsonl", "../escape.md"):
            info = tarfile.TarInfo(member)
            info.size = 3
            tar.addfile(info, io.BytesIO(b"{}\n"))
    home = tmp_path / "store"
    r = run(home, "import", str(evil), agent=None, process=True)
    assert r.returncode == 2 and "outside" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "escape.md").exists() and not (home / "ledger.jsonl").exists()

    src = tmp_path / "src"
    ok(src, "init")
    ok(src, "export", str(tmp_path / "dump"), agent=None)
    (tmp_path / "dump/agents/finn/AGENT.md").write_text("tampered\n")
    bad = run(tmp_path / "other", "import", str(tmp_path / "dump"), agent=None)
    assert bad.returncode == 2 and "sha256" in bad.stderr
    assert not (tmp_path / "other/agents").exists()


def test_compact_log_and_session_with_a_given_summary(seeded: Path) -> None:
    pytest.importorskip("memstrata.lifecycle.compaction")
    for i in range(3):
        ok(seeded, "log", "append", "TOOL_USE", f"step {i} of the migration")
    assert ok(seeded, "compact")["compacted"] is False  # under the limits
    rec = ok(seeded, "compact", "--force", "--summary", "three migration steps ran")
    assert rec["compacted"] and rec["entries_count"] == 3
    archive = (seeded / rec["archive_path"]).read_text()
    assert all(f"step {i} of the migration" in archive for i in range(3))
    log = (seeded / "agents/finn/memory/LOG.md").read_text()
    assert "step 0 of the migration" not in log and "three migration steps ran" in log
    assert rows(
        seeded, "SELECT count(*) FROM docs WHERE layer='archive' AND body LIKE '%step 1%'"
    ) == [(1,)]
    assert [h["archive_id"] for h in ok(seeded, "compact", "--history")] == [rec["archive_id"]]
    for text in ("one", "two", "three"):
        ok(seeded, "sessions", "append", "s1", "user", text)
    got = ok(seeded, "compact", "--session", "s1", "--keep", "1", "--summary", "counted to two")
    assert (got["before"], got["after"]) == (3, 2)
    roles = [
        json.loads(x)["role"]
        for x in (seeded / "agents/finn/sessions/s1.jsonl").read_text().splitlines()
    ]
    assert roles == ["summary", "user"]
    missing = run(seeded, "compact", "--session", "nope", "--summary", "x")
    assert missing.returncode == 3 and "Traceback" not in missing.stderr


def test_audit_reports_and_prunes_volatile_facts(seeded: Path) -> None:
    pytest.importorskip("memstrata.lifecycle.hygiene")
    refused = run(
        seeded,
        "facts",
        "set",
        "where",
        "The parser lives in src/parser.py",
        "--category",
        "project",
        "--cite",
        "src/parser.py",
    )
    assert refused.returncode != 0 and "derivable code state" in refused.stderr
    from tests.planted import plant_fact

    from memstrata import Store

    with Store(seeded, agent="finn") as s:  # what a hand edit (or an old store) still holds
        plant_fact(s, "finn", "where", "The parser lives in src/parser.py", "project")
    report = ok(seeded, "audit")
    assert not report["clean"] and report["findings"][0]["target"] == "where"
    dry = ok(seeded, "audit", "--prune")
    assert dry["prune"]["dry_run"] and not dry["prune"]["actions"][0]["applied"]
    assert rows(seeded, "SELECT count(*) FROM docs WHERE uid='fact:finn:where'") == [(1,)]
    done = ok(seeded, "audit", "--prune", "--apply")
    assert done["prune"]["actions"][0]["applied"]
    assert rows(seeded, "SELECT count(*) FROM docs WHERE uid='fact:finn:where'") == [(0,)]
    assert ok(seeded, "audit")["clean"]
    bad = run(seeded, "audit", "--apply")
    assert bad.returncode == 2 and "--prune" in bad.stderr


def test_verify_flags_stale_code_claims(seeded: Path, tmp_path: Path) -> None:
    pytest.importorskip("memstrata.lifecycle.verify")
    code = tmp_path / "code"
    (code / "src").mkdir(parents=True)
    (code / "src/app.py").write_text("def main():\n    return 1\n")
    ok(
        seeded,
        "facts",
        "set",
        "entry",
        "entry point is src/app.py",
        "--category",
        "project",
        "--cite",
        "src/app.py",
    )
    r = run(seeded, "--json", "verify", str(code))
    assert r.returncode == 0 and json.loads(r.stdout) == []
    (code / "src/app.py").unlink()
    r = run(seeded, "--json", "verify", str(code))
    assert r.returncode == 1
    assert [(f["source"], f["problem"]) for f in json.loads(r.stdout)] == [
        ("fact:entry", "missing")
    ]
    hits = ok(seeded, "verify", str(code), "--recall", "entry point")
    assert hits[0]["explain"]["stale"]
    gone = run(seeded, "verify", str(tmp_path / "nowhere"))
    assert gone.returncode == 3 and "not a folder" in gone.stderr


def test_extract_items_from_a_folder(home: Path, tmp_path: Path) -> None:
    pytest.importorskip("memstrata.lifecycle.extraction")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "arch.md").write_text("# Architecture\n\nWe decided to use SQLite FTS5 for search.\n")
    out = ok(home, "extract", str(docs), agent=None)
    assert out["extracted"] == {"arch.md": out["items_written"]} and out["items_written"] >= 1
    items = json.loads((home / "items.json").read_text())
    stored = items["items"] if isinstance(items, dict) else items
    assert {i["sourceFile"] for i in stored} == {"arch.md"}
    assert rows(home, "SELECT count(*) FROM docs WHERE layer='item'") == [(len(stored),)]
    again = ok(home, "extract", str(docs), "arch.md", agent=None)
    assert again["items_written"] == out["items_written"]
    assert rows(home, "SELECT count(*) FROM docs WHERE layer='item'") == [(len(stored),)]
    bad = run(home, "extract", str(docs), "../secret.md", agent=None)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_search_locations_are_one_based_line_numbers(home: Path) -> None:
    for i in range(6):
        ok(home, "ledger", "publish", "decision", f"filler decision {i}")
    ok(home, "ledger", "publish", "decision", "the seventh entry names the wombat")
    hits = ok(home, "search", "wombat", agent=None)
    assert [(h["source"].rsplit("/", 1)[-1], h["line"]) for h in hits] == [("ledger.jsonl", 7)]
    text = run(home, "search", "wombat", agent=None)
    assert text.returncode == 0 and "ledger.jsonl:7\n" in text.stdout
    ok(home, "log", "append", "THOUGHT", "first thought")
    ok(home, "log", "append", "THOUGHT", "the wombat digs")
    log_lines = (home / "agents/finn/memory/LOG.md").read_text().splitlines()
    (hit,) = ok(home, "search", "digs", agent=None)
    assert (
        log_lines[hit["line"] - 1].endswith("· THOUGHT")
        and log_lines[hit["line"]] == "the wombat digs"
    )
