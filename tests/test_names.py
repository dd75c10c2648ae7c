"""Names that become files or ids are fully matched and refuse every control character, on
every surface (issue 10 item 4); an unknown agent is an error or a clear warning, never a
silently created empty agent (item 3)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memstrata import InvalidInput, NotFound, Store
from memstrata.cli.main import main
from memstrata.model import check_name

BAD = ["finn\n", "finn\r", "fi\tnn", "finn\x00", "finn\x7f", "finn\u2028", "finn\x85"]


def _tree(home: Path) -> set[str]:
    return {p.relative_to(home).as_posix() for p in home.rglob("*") if ".locks" not in p.parts}


@pytest.mark.parametrize("bad", BAD)
def test_check_name_is_a_full_match(bad: str) -> None:
    with pytest.raises(InvalidInput):
        check_name(bad, "agent")
    assert check_name("finn-2.b_c", "agent") == "finn-2.b_c"


def test_every_api_surface_refuses_control_characters(store: Store, home: Path) -> None:
    m = store.agent()
    m.tasks.add("real task")
    slug = m.episodes.create("release")
    before = _tree(home)
    calls: dict[str, Callable[[], Any]] = {
        "store agent": lambda: Store(home, agent="finn\n"),
        "store room": lambda: Store(home, agent="finn", room="r\n"),
        "agent handle": lambda: store.agent("finn\n"),
        "room handle": lambda: store.room("r\n"),
        "session append": lambda: m.sessions.append("evil\n", "user", "hi"),
        "session start": lambda: m.sessions.start("evil\n"),
        "episode slug": lambda: m.episodes.write(f"{slug}\n", "a.md", "x"),
        "gate task id": lambda: m.episodes.log_gate_event(slug, "T-1\n", {"ok": True}),
        "fact key": lambda: m.facts.set("key\n", "v"),
        "fact key tab": lambda: m.facts.set("ke\ty", "v"),
        "file path": lambda: m.files.write("notes\n.md", "x"),
        "file path cr": lambda: m.files.write("dir\r/notes.md", "x"),
        "file rename": lambda: m.files.rename("CONTEXT.md", "new\n.md"),
        "artifact": lambda: store.room().write_artifact("a\n.md", "x"),
        "ledger room": lambda: store.ledger.publish("decision", "x", room_id="r\n"),
        "ledger tag": lambda: store.ledger.publish("decision", "x", tags=["auth\n"]),
        "ledger ref": lambda: store.ledger.publish("decision", "x", ref="EPIC-7\n"),
        "ledger author": lambda: store.ledger.publish("decision", "x", author_role="finn\n"),
        "channel tag": lambda: store.room().post("x", tags=["a\x00"]),
        "milestone": lambda: m.tasks.add("x", milestone="M1\n"),
        "task update milestone": lambda: m.tasks.update("TASK-001", milestone="M1\n"),
        "message speaker": lambda: m.sessions.append("s1", "user", "x", speaker="bob\n"),
        "item source": lambda: store.acting_as(None).items.replace_source("a\n.md", []),
    }
    for name, call in calls.items():
        with pytest.raises(InvalidInput):
            call()
            pytest.fail(f"{name} accepted a control character")
    with pytest.raises(NotFound):
        m.tasks.update("TASK-001\n", status="done")
    assert _tree(home) == before  # nothing was created on the way to the refusal


def test_cli_refuses_control_characters(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    h = ["--home", str(home)]
    assert main([*h, "--agent", "finn", "now", "set", "ok"]) == 0
    cases = [
        ["--agent", "finn\n", "now", "set", "x"],
        ["--agent", "finn", "--room", "r\n", "ledger", "publish", "decision", "x"],
        ["--agent", "finn", "sessions", "append", "evil\n", "user", "x"],
        ["--agent", "finn", "files", "write", "notes\n.md", "x"],
        ["--agent", "finn", "facts", "set", "k\n", "v"],
        ["--agent", "finn", "ledger", "publish", "decision", "x", "--tag", "a\n"],
        ["--agent", "finn", "tasks", "add", "x", "--milestone", "M\n"],
    ]
    before = _tree(home)
    for args in cases:
        assert main([*h, *args]) == 2, args
        assert "error" in capsys.readouterr().err
    assert _tree(home) == before
    assert not (home / "agents" / "finn\n").exists()


def test_mcp_refuses_control_characters(store: Store, home: Path) -> None:
    pytest.importorskip("mcp")
    import anyio

    from mcp import Client
    from memstrata.mcp.server import build_server

    async def main_() -> list[tuple[str, bool, str]]:
        out = []
        async with Client(build_server(store, ["all"])) as c:
            for tool, args in [
                ("session_append", {"session_id": "evil\n", "role": "user", "content": "x"}),
                ("memory_write", {"path": "notes\n.md", "content": "x"}),
                ("save_fact", {"key": "k\n", "value": "v"}),
                ("memory_publish", {"kind": "decision", "summary": "x", "tags": ["a\n"]}),
                ("task_add", {"description": "x", "milestone": "M\n"}),
            ]:
                r = await c.call_tool(tool, args)
                out.append((tool, bool(r.is_error), r.content[0].text))
        return out

    for tool, is_error, text in anyio.run(main_):
        assert is_error and ("malformed_input" in text or "path_outside_store" in text), (
            tool,
            text,
        )
    assert not (home / "agents/finn/sessions").exists()
    assert not (home / "ledger.jsonl").exists()


def test_mcp_server_refuses_a_control_character_agent(home: Path) -> None:
    exe = Path(sys.executable).parent / "memstrata"
    r = subprocess.run(
        [str(exe), "--home", str(home), "--agent", "finn\n", "mcp", "--list-tools"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PATH": os.environ.get("PATH", "")},
    )
    assert r.returncode == 2 and "invalid agent" in r.stderr and "Traceback" not in r.stderr
    assert not (home / "agents").exists()


# -- unknown agents ------------------------------------------------------------------------


def test_another_unknown_agent_is_an_error_with_a_suggestion(store: Store, home: Path) -> None:
    store.agent().facts.set("k", "v")
    with Store(home) as admin:
        with pytest.raises(NotFound, match="did you mean 'finn'"):
            admin.agent("fnn")
        assert admin.agent("finn").facts.get("k").value == "v"
        fresh = admin.agent("newbie", create=True)  # explicit creation stays possible
        fresh.facts.set("k", "v")
    assert (home / "agents/newbie/facts.jsonl").exists()
    assert not (home / "agents/fnn").exists()


def test_configured_agents_are_known_before_their_first_write(home: Path) -> None:
    home.mkdir(parents=True)
    (home / "config.toml").write_text('[roles]\nadmin = ["wilco"]\nproject = ["finn"]\n')
    with Store(home) as admin:
        assert admin.agent("finn").facts.list() == []
        assert admin.agent("wilco").now.read() == ""
    assert not (home / "agents").exists()  # reading creates nothing


def test_cli_warns_about_an_unknown_agent_and_reads_create_nothing(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    h = ["--home", str(home)]
    assert main([*h, "init", "finn"]) == 0
    assert "warning" not in capsys.readouterr().err
    assert main([*h, "--agent", "fnn", "files", "list"]) == 0
    err = capsys.readouterr().err
    assert "agent 'fnn' has no memory" in err and "did you mean 'finn'" in err
    assert main([*h, "--agent", "fnn", "log", "tail"]) == 0
    assert "did you mean 'finn'" in capsys.readouterr().err
    assert not (home / "agents/fnn").exists()
    assert main([*h, "--agent", "finn", "log", "tail"]) == 0
    assert "warning" not in capsys.readouterr().err


@pytest.fixture(scope="module")
def http_server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    pytest.importorskip("fastapi")
    from tests.web.conftest import seed, start_server, stop_server

    home = tmp_path_factory.mktemp("names-http") / "store"
    seed(home)
    server = start_server(home)
    try:
        yield server
    finally:
        stop_server(server)


# Percent-encoded control characters: `{name:path}` routes end in `$`, which matches before
# a final newline, so `facts/k%0A` reached the handler as the key `k`.
ENCODED = ["%0A", "%0D", "%09", "%00", "%7F", "%C2%85", "%E2%80%A8"]


@pytest.mark.parametrize("code", ENCODED)
def test_http_refuses_control_characters_in_path_names(http_server: Any, code: str) -> None:
    files_before = _tree(http_server.home)
    with http_server.client("finn") as c:
        calls = [
            ("PUT", f"/api/agents/finn/facts/k{code}", {"value": "hijack"}),
            ("DELETE", f"/api/agents/finn/facts/preferred_currency{code}", None),
            ("PUT", f"/api/agents/finn/memory-files/x.md{code}", {"content": "hijack"}),
            ("DELETE", f"/api/agents/finn/memory-files/notes/plan.md{code}", None),
            ("GET", f"/api/agents/finn{code}/facts/preferred_currency", None),
        ]
        for method, url, body in calls:
            r = c.request(method, url, json=body)
            assert r.status_code == 400, (method, url, r.status_code, r.text)
            assert r.json()["error"]["code"] == "malformed_input"  # as the library names it
        assert c.get("/api/agents/finn/facts/preferred_currency").json()["value"] == "USD"
        assert c.get("/api/agents/finn/facts/k").status_code == 404
        assert "plan" in c.get("/api/agents/finn/memory-files/notes/plan.md").json()["text"].lower()
        assert c.get("/api/agents/finn/memory-files/x.md").status_code == 404
    assert {
        p for p in _tree(http_server.home) - files_before if not p.startswith(("index", "events"))
    } == set()
