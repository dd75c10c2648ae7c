"""One rule for every name that becomes a path or a key (issue 20 items 1 and 8): valid
UTF-8 (no lone surrogate), no control character, no bidirectional formatting character,
NFC. A refusal is a typed one-line error and nothing is written; a store that already
holds a file with such a name (made by hand) still opens, every command works, the file
is skipped with a notice and `doctor` names it.

Before: `memstrata --agent finn files write $'n\\xff.md' x` reported an error yet created
the file, and from then on every command failed with `UnicodeEncodeError ... (an internal
error)`; a fact key or file name holding U+202E was accepted.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memstrata import InvalidInput, Store

EXE = shutil.which("memstrata", path=str(Path(sys.executable).parent)) or "memstrata"

BAD_NAMES = {
    "undecodable byte": "n\udcff.md",
    "lone surrogate": "n\ud800.md",
    "right-to-left override": "invoice\u202egpj.md",
    "isolate": "a\u2066b.md",
    "left-to-right mark": "a\u200eb.md",
    "not NFC": "cafe\u0301.md",
    "newline": "a\nb.md",
}


@pytest.mark.parametrize("name", BAD_NAMES.values(), ids=BAD_NAMES.keys())
def test_the_one_rule_names_why_a_name_is_refused(name: str) -> None:
    from memstrata.model import name_problem

    assert name_problem(name) is not None
    assert name_problem("café.md") is None  # NFC, accented: a good name
    assert name_problem("notes/plan 2.md") is None


def _cli(home: Path, *args: str | bytes) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMSTRATA_HOME": str(home)}
    r = subprocess.run([EXE, "--home", str(home), *args], capture_output=True, env=env, timeout=120)
    return subprocess.CompletedProcess(
        r.args,
        r.returncode,
        r.stdout.decode("utf-8", "replace"),
        r.stderr.decode("utf-8", "replace"),
    )


def _memory(home: Path) -> set[bytes]:
    """Every file and folder below agents/ (as bytes: some names are not UTF-8)."""
    root = os.fsencode(home / "agents")
    return {os.path.join(d, n) for d, ds, fs in os.walk(root) for n in [*ds, *fs]}


def test_the_cli_refuses_bad_names_and_bytes_with_a_typed_error_and_writes_nothing(
    home: Path,
) -> None:
    assert _cli(home, "--agent", "finn", "facts", "set", "k", "v").returncode == 0
    before = _memory(home)
    cases: list[tuple[list[str | bytes], str]] = [
        (["files", "write", b"n\xff.md", "x"], "invalid memory path 'n\\xff.md'"),
        (["files", "write", "invoice\u202egpj.md", "x"], "U+202E"),
        (["files", "write", "cafe\u0301.md", "x"], "NFC"),
        (["facts", "set", b"k\xff", "v"], "invalid fact key 'k\\xff'"),
        (["facts", "set", "k\u202e", "v"], "U+202E"),
        (["log", "append", "THOUGHT", b"bad \xff byte"], "log content is not valid UTF-8"),
        (["now", "set", b"status \xfe"], "not valid UTF-8"),
        (["facts", "get", b"k\xff"], "fact key is not valid UTF-8"),
        (["search", b"caf\xe9"], "query text is not valid UTF-8"),
    ]
    for args, said in cases:
        r = _cli(home, "--agent", "finn", *args)
        errors = [line for line in r.stderr.splitlines() if "error" in line]
        assert r.returncode == 2, (args, r.stderr)
        assert len(errors) == 1 and said in errors[0], (args, r.stderr)
        assert "internal error" not in r.stderr
    assert _memory(home) == before  # nothing was created on the way to a refusal
    for args in (["facts", "get", "k"], ["search", "v"], ["context"], ["doctor"]):
        r = _cli(home, "--agent", "finn", *args)
        assert r.returncode == 0, (args, r.stderr)


def _hand_made(home: Path) -> None:
    """Files a person made in the store with names memstrata refuses."""
    memory = os.fsencode(home / "agents" / "finn" / "memory")
    with open(os.path.join(memory, b"n\xff.md"), "wb") as fh:
        fh.write(b"hello from a badly named file\n")
    os.mkdir(os.path.join(memory, b"d\xfe"))
    with open(os.path.join(memory, b"d\xfe", b"inner.md"), "wb") as fh:
        fh.write(b"hello from a badly named folder\n")
    with open(os.path.join(memory, "invoice\u202egpj.md".encode()), "wb") as fh:
        fh.write(b"hello from a bidi name\n")


def test_a_store_holding_badly_named_files_still_works_on_every_command(home: Path) -> None:
    assert _cli(home, "--agent", "finn", "facts", "set", "k", "v").returncode == 0
    assert _cli(home, "--agent", "finn", "files", "write", "good.md", "hello good").returncode == 0
    _hand_made(home)
    for args in (
        ["--agent", "finn", "facts", "get", "k"],
        ["--agent", "finn", "search", "hello"],
        ["--agent", "finn", "context"],
        ["--agent", "finn", "files", "list"],
        ["reindex"],
        ["export", str(home.parent / "backup.tar.gz")],
    ):
        r = _cli(home, *args)
        assert r.returncode == 0, (args, r.stderr)
        assert "internal error" not in r.stderr and "Traceback" not in r.stderr, args
        assert "skipped 3 file(s) whose names memstrata refuses" in r.stderr + r.stdout or (
            args[0] == "export" and "not exported: agents/finn/memory/n\\xff.md" in r.stderr
        ), (args, r.stderr)
    assert _cli(home, "--agent", "finn", "facts", "get", "k").stdout.strip() == "v"
    found = _cli(home, "--agent", "finn", "search", "hello")
    assert "good.md" in found.stdout and "badly named" not in found.stdout
    doctor = _cli(home, "doctor")
    assert doctor.returncode == 1  # file problems: a person must rename them
    for shown in ("n\\xff.md", "d\\xfe", "invoice\\u202egpj.md"):
        assert f"agents/finn/memory/{shown} @ byte 0: file skipped: its name" in doctor.stdout
    # The export holds the good files and imports cleanly into a new store.
    other = home.parent / "other"
    r = _cli(other, "import", str(home.parent / "backup.tar.gz"))
    assert r.returncode == 0, r.stderr
    assert (other / "agents/finn/memory/good.md").read_text() == "hello good"


def test_every_library_surface_applies_the_rule_on_both_truths(backend: str, home: Path) -> None:
    with Store(home, agent="finn", room="room-1") as store:
        m = store.agent()
        m.facts.set("k", "v")
        before = [e.path for e in store.engine.truth.list("")]
        rlo = "\u202e"
        calls: dict[str, Callable[[], Any]] = {
            "file": lambda: m.files.write("n\udcff.md", "x"),
            "file bidi": lambda: m.files.write(f"a{rlo}b.md", "x"),
            "file rename": lambda: m.files.rename("CONTEXT.md", "cafe\u0301.md"),
            "fact key": lambda: m.facts.set("k\udcff", "v"),
            "fact key bidi": lambda: m.facts.set(f"k{rlo}", "v"),
            "fact value": lambda: m.facts.set("k2", "v\udcff"),
            "log content": lambda: m.log.append("THOUGHT", "bad \udcff"),
            "artifact": lambda: store.room().write_artifact(f"r{rlo}.md", "x"),
            "episode file": lambda: m.episodes.write(m.episodes.create("t"), "a\udcff.md", "x"),
            "tag": lambda: store.ledger.publish("decision", "x", tags=[f"a{rlo}"]),
            "ref": lambda: store.ledger.publish("decision", "x", ref="E\udcff"),
            "milestone": lambda: m.tasks.add("x", milestone=f"M{rlo}"),
            "message id": lambda: m.sessions.append("s1", "user", "x", id="m\udcff"),
        }
        for name, call in calls.items():
            with pytest.raises(InvalidInput):
                call()
                pytest.fail(f"{name} accepted a bad name")
        after = [e.path for e in store.engine.truth.list("")]
        assert [p for p in after if "episodes" not in p] == before  # (the episode was made)


def _rpc(proc: subprocess.Popen[bytes], mid: int, method: str, params: dict[str, Any]) -> Any:
    """One JSON-RPC request over the server's stdin, its reply from stdout. Raw lines: the
    official client cannot send a lone surrogate (its serializer refuses), an agent's
    JSON can (`"\\udcff"` is a valid JSON escape)."""
    assert proc.stdin is not None and proc.stdout is not None
    line = {"jsonrpc": "2.0", "id": mid, "method": method, "params": params}
    proc.stdin.write(json.dumps(line).encode() + b"\n")
    proc.stdin.flush()
    reply = proc.stdout.readline()
    assert reply, f"the server died (exit code {proc.wait(timeout=30)})"
    return json.loads(reply)


def test_mcp_memory_write_with_a_lone_surrogate_is_a_typed_tool_error(home: Path) -> None:
    pytest.importorskip("mcp")
    proc = subprocess.Popen(
        [EXE, "--home", str(home), "--agent", "finn", "mcp", "--tools", "all"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        init = _rpc(
            proc,
            1,
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        )
        assert init["result"]["serverInfo"]["name"]
        assert proc.stdin is not None
        proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        results = []
        for n, (name, args) in enumerate(
            [
                ("memory_write", {"path": "n\udcff.md", "content": "x"}),
                ("memory_write", {"path": "invoice\u202egpj.md", "content": "x"}),
                ("save_fact", {"key": "k\u202e", "value": "v"}),
                ("save_fact", {"key": "k\udcff", "value": "v"}),
                ("log_activity", {"entry_type": "THOUGHT", "content": "bad \udcff"}),
                ("memory_write", {"path": "fine.md", "content": "still works"}),
                ("memory_list", {}),
            ],
            start=2,
        ):
            reply = _rpc(proc, n, "tools/call", {"name": name, "arguments": args})
            result = reply["result"]
            results.append((bool(result.get("isError")), result["content"][0]["text"]))
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=60)
    for err, text in results[:5]:
        assert err and text.startswith("malformed_input"), text
        assert "internal" not in text
    assert "n\\xff.md" in results[0][1] and "U+202E" in results[1][1]
    assert not results[5][0] and not results[6][0], results[5:]
    assert "fine.md" in results[6][1]
    names = {p.name for p in (home / "agents/finn/memory").iterdir()}
    assert names == {"fine.md"}, names
    assert not (home / "agents/finn/facts.jsonl").exists()
