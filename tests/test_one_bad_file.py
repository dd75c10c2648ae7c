"""One bad file degrades one section (issue 9 item 5): `memstrata context`, the
session-start hook and the MCP resources serve everything else, exit 0, and name the
broken file in a one-line warning. Run through the real CLI."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from memstrata import Store

EXE = shutil.which("memstrata", path=str(Path(sys.executable).parent)) or "memstrata"


def _cli(home: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [EXE, "--home", str(home), "--agent", "finn", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def populated(home: Path) -> Path:
    store = Store(home, agent="finn")
    mem = store.agent()
    mem.now.update("Ship the importer", ["write the parser"])
    mem.log.append("THOUGHT", "the parser needs a streaming mode")
    mem.facts.set("editor", "helix", "preference")
    mem.tasks.add("review the streaming parser")
    mem.sessions.start("s-first", title="first session")
    mem.sessions.append("s-first", "user", "let us plan the importer")
    store.close()
    return home


def _rest_is_there(text: str) -> None:
    assert "Ship the importer" in text  # NOW
    assert "streaming mode" in text  # LOG


def _context(home: Path) -> subprocess.CompletedProcess[str]:
    r = _cli(home, "context")
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    _rest_is_there(r.stdout)
    return r


def test_corrupt_tasks_json(populated: Path) -> None:
    (populated / "agents/finn/tasks.json").write_text(
        '{"tasks": [ {"id": "TASK-001",', encoding="utf-8"
    )
    r = _context(populated)
    assert "helix" in r.stdout  # facts still served
    warning = [line for line in r.stdout.splitlines() if line.startswith("⚠")]
    assert (
        len(warning) == 1
        and "agents/finn/tasks.json" in warning[0]
        and "invalid JSON" in warning[0]
    )
    assert "## Open tasks" in r.stdout and "tasks.json" in r.stderr
    hook = _cli(populated, "hook", "session-start", stdin="{}")
    assert hook.returncode == 0, hook.stderr
    extra = json.loads(hook.stdout)["hookSpecificOutput"]["additionalContext"]
    _rest_is_there(extra)
    assert "tasks.json" in extra


def test_corrupt_sessions_json(populated: Path) -> None:
    index = populated / "agents/finn/sessions/sessions.json"
    index.write_text("{broken", encoding="utf-8")
    r = _context(populated)
    assert "sessions.json" in r.stdout and "sessions.json" in r.stderr
    listed = _cli(populated, "--json", "sessions", "list")
    assert listed.returncode == 0, listed.stderr
    assert [s["id"] for s in json.loads(listed.stdout)] == ["s-first"]  # from its transcript
    started = _cli(populated, "sessions", "start", "s-second", "--title", "after the damage")
    assert started.returncode == 0, started.stderr  # a damaged index never blocks a new session
    appended = _cli(populated, "sessions", "append", "s-third", "user", "hello")
    assert appended.returncode == 0, appended.stderr
    doc = json.loads(index.read_text(encoding="utf-8"))
    assert {"s-second", "s-third"} <= {s["id"] for s in doc["sessions"]}
    broken = list(index.parent.glob("sessions.json.broken-*"))
    assert len(broken) == 1 and broken[0].read_text(encoding="utf-8") == "{broken"  # kept
    again = _context(populated)
    assert "sessions.json.broken-" in again.stdout  # still reported until a person looks


def test_corrupt_sessions_json_with_transcripts_lists_them(home: Path) -> None:
    store = Store(home, agent="finn")
    sessions = store.agent().sessions
    sessions.append("s-talk", "user", "hello")
    sessions.index_path.write_text("[1, 2", encoding="utf-8")
    assert [s.id for s in sessions.list()] == ["s-talk"]  # rebuilt from the transcripts
    sessions.start("s-next")
    assert [s.id for s in sessions.list()] == ["s-talk", "s-next"]
    store.close()


def test_corrupt_facts_line(populated: Path) -> None:
    facts = populated / "agents/finn/facts.jsonl"
    with open(facts, "a", encoding="utf-8") as fh:
        fh.write('{"op": "set", "key": "sho\n')  # torn by hand
        fh.write(
            json.dumps(
                {
                    "op": "set",
                    "key": "deadline",
                    "value": "friday",
                    "category": "project",
                    "created_at": 1767225600,
                    "updated_at": 1767225600,
                }
            )
            + "\n"
        )
    listed = _cli(populated, "--json", "facts", "list")
    assert listed.returncode == 0, listed.stderr
    got = {f["key"]: f for f in json.loads(listed.stdout)}
    assert (
        got["deadline"]["updated_at"].startswith("2026-01-01") and got["editor"]["value"] == "helix"
    )
    assert "facts.jsonl" in listed.stderr
    r = _context(populated)
    assert "friday" in r.stdout and "helix" in r.stdout
    warning = [line for line in r.stdout.splitlines() if line.startswith("⚠")]
    assert len(warning) == 1 and "agents/finn/facts.jsonl" in warning[0]


def test_hand_written_fact_records_read_and_update(home: Path) -> None:
    store = Store(home, agent="finn")
    facts = store.agent().facts
    facts.set("editor", "helix")
    with open(facts.path, "a", encoding="utf-8") as fh:  # no created_at, a number for a value
        fh.write(
            json.dumps({"op": "set", "key": "port", "value": 8080, "updated_at": 1767225600}) + "\n"
        )
    got = facts.get("port")
    assert got.value == "8080" and got.updated_at.startswith("2026-01-01")
    assert facts.set("port", "9090").value == "9090"
    assert facts.get("port").value == "9090"
    store.close()


@pytest.mark.parametrize(
    "config",
    ["[serch]\nmode = 'lexical'\n", "[search\nbroken toml", '[tools.memory]\nenabled = "no"\n'],
)
def test_broken_config(populated: Path, config: str) -> None:
    (populated / "config.toml").write_text(config, encoding="utf-8")
    r = _context(populated)
    assert "review the streaming parser" in r.stdout and "helix" in r.stdout
    assert "config.toml" in r.stderr
    assert any(line.startswith("⚠ config.toml") for line in r.stdout.splitlines())


def test_unreadable_context_file_costs_its_section_only(populated: Path) -> None:
    ctx = populated / "agents/finn/memory/CONTEXT.md"
    ctx.unlink(missing_ok=True)
    ctx.mkdir()  # something no read can handle
    r = _context(populated)
    warning = [line for line in r.stdout.splitlines() if line.startswith("⚠")]
    assert len(warning) == 1 and "CONTEXT.md" in warning[0]
    assert "review the streaming parser" in r.stdout


def test_mcp_resources_degrade(populated: Path) -> None:
    pytest.importorskip("mcp")
    from mcp import Client
    from memstrata.mcp.server import build_server

    (populated / "agents/finn/tasks.json").write_text("not json", encoding="utf-8")
    ctx = populated / "agents/finn/memory/CONTEXT.md"
    ctx.unlink(missing_ok=True)
    ctx.mkdir()
    store = Store(populated, agent="finn")

    async def main() -> None:
        async with Client(build_server(store)) as c:
            prompt = (await c.read_resource("memory://prompt-context")).contents[0].text
            _rest_is_there(prompt)
            assert "tasks.json" in prompt and "CONTEXT.md" in prompt
            memory = (await c.read_resource("memory://context")).contents[0].text
            assert memory.startswith("⚠") and "CONTEXT.md" in memory
            r = await c.call_tool("recall_memory", {"query": "streaming"})
            assert not r.is_error

    anyio.run(main)
    store.close()
