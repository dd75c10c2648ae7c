"""Seed 003 (auto-loaded CONTEXT.md + five file tools): one test per row of docs/seeds.md."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from tests.seeds.conftest import call, tool_names

from memstrata import MemoryManager, Store
from memstrata.errors import MalformedInput, NotFound, NotUnique, ScopeDenied

FILE_TOOLS = {"memory_read", "memory_write", "memory_replace", "memory_insert", "memory_list"}


def _resource(store: Store, uri: str) -> str:
    from memstrata.mcp.resources import build_resources

    return next(r for r in build_resources(store) if r.uri == uri).read()


def test_context_md_is_auto_loaded_into_the_system_prompt(home: Path) -> None:
    from memstrata.assembly.context import assemble_context

    with Store(home, agent="finn") as s:
        call(s, "memory_write", path="CONTEXT.md", content="The user prefers metric units.\n")
        assert "prefers metric units" in assemble_context(s, "finn").text
        assert "prefers metric units" in _resource(s, "memory://context")
        assert "prefers metric units" in _resource(s, "memory://prompt-context")


def test_system_prompt_order_identity_context_datetime_workspace(home: Path) -> None:
    from memstrata.assembly.context import assemble_context

    with Store(home, agent="finn") as s:
        s.agent().identity.write("# Finn\nI am Finn, a data analyst.\n")
        s.agent().context.write("User likes short answers.\n")
        s.agent().now.update("Analyse Q3", [])
        text = assemble_context(s, "finn", workspace="/srv/project").text
    order = [
        text.index(x)
        for x in (
            "I am Finn",
            "User likes short answers",
            "## Current date and time",
            "/srv/project",
        )
    ]
    assert order == sorted(order)


def test_the_five_file_tools_read_write_replace_insert_list(home: Path) -> None:
    with Store(home, agent="finn") as s:
        assert tool_names(s) >= FILE_TOOLS
        call(s, "memory_write", path="notes/plan.md", content="line one\nline two\n")
        call(s, "memory_replace", path="notes/plan.md", old_str="line two", new_str="line 2")
        call(s, "memory_insert", path="notes/plan.md", line=1, text="inserted")
        assert (
            call(s, "memory_read", path="notes/plan.md")["content"]
            == "line one\ninserted\nline 2\n"
        )
        assert [f["path"] for f in call(s, "memory_list", path="")["files"]] == ["notes/plan.md"]
        s.agent().files.write("dup.md", "x\nx\n")
        with pytest.raises(NotUnique):  # replace needs a unique match
            s.agent().files.replace("dup.md", "x", "y")
    assert (home / "agents/finn/memory/notes/plan.md").read_text() == "line one\ninserted\nline 2\n"


def test_file_tools_are_per_agent_and_isolated(home: Path) -> None:
    with Store(home, agent="finn") as finn:
        call(finn, "memory_write", path="private.md", content="finn's notes")
    with Store(home, agent="ivy") as ivy:
        with pytest.raises(NotFound):
            ivy.agent().files.read("private.md")  # ivy's own folder has no such file
        with pytest.raises(ScopeDenied):
            ivy.agent("finn").files.read("private.md")
        assert call(ivy, "memory_list", path="")["files"] == []


def test_agent_controlled_mode_writes_nothing_on_the_agents_behalf(home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text('[memory]\nmode = "agent-controlled"\n')
    m = MemoryManager("finn", home)
    assert not (home / "agents/finn/memory/NOW.md").exists()  # no default files either
    for i in range(120):  # past the LOG limits: no automatic compaction
        m.append_log("THOUGHT", f"the agent's own note {i}")
    m.store.drain(30)
    assert m.memory.log.count() == 120
    with m.turn("Do it") as turn:  # the harness's automatic writes are off
        turn.tool_executed("grep", {"q": "x"}, "found", duration=0.1)
        turn.final_response("done")
    assert m.memory.log.count() == 120 and not m.memory.now.exists()
    m.close()


def test_memory_is_plain_files_and_the_index_is_derived(home: Path) -> None:
    with Store(home, agent="finn") as s:
        s.agent().files.write("plan.md", "migrate the zebra database\n")
        s.agent().context.write("Long-term: zebra is the codename.\n")
    assert "zebra" in (home / "agents/finn/memory/plan.md").read_text()
    shutil.rmtree(home / "index")  # the index is derived: delete it, reopen, search again
    (home / "agents/finn/memory/hand.md").write_text("hand-written okapi note\n")
    with Store(home, agent="finn") as s:
        assert {h.layer for h in s.search("zebra")} >= {"file", "context"}
        assert s.search("okapi")


@pytest.mark.parametrize(
    "config_file, text",
    [
        ("config.toml", "[tools.memory]\nenabled = false\n"),
        ("config.yaml", "tools:\n  memory:\n    enabled: false\n"),
    ],
)
def test_memory_tools_disabled_context_still_loads(home: Path, config_file: str, text: str) -> None:
    from memstrata.mcp.server import select_tools

    home.mkdir(parents=True, exist_ok=True)
    (home / config_file).write_text(text)
    with Store(home, agent="finn") as s:
        s.agent().context.write("Still loaded: the user is in Berlin.\n")
        names = {t.name for t in select_tools(s, None)}
        assert not names & FILE_TOOLS and "recall_memory" in names
        assert "Berlin" in _resource(s, "memory://context")
        # The Anthropic memory tool edits the same files: it is off too, even when named.
        with pytest.raises(MalformedInput, match="unknown or disabled tool"):
            select_tools(s, ["memory", "recall_memory"])
    (home / config_file).unlink()
    with Store(home, agent="finn") as s:
        assert [t.name for t in select_tools(s, ["memory"])] == ["memory"]  # on by default


def test_memory_write_refuses_log_md_which_is_append_only(home: Path) -> None:
    """Seed 003's memory_write writes any file; LOG.md is seed 002's append-only log, so the
    file tools refuse to rewrite it (docs/seeds.md: differs) and log_activity appends."""
    from memstrata.errors import ReservedFile

    with Store(home, agent="finn") as s:
        call(s, "log_activity", entry_type="THOUGHT", content="kept")
        with pytest.raises(ReservedFile):
            call(s, "memory_write", path="LOG.md", content="rewritten history")
        with pytest.raises(ReservedFile):
            call(s, "memory_replace", path="LOG.md", old_str="kept", new_str="gone")
        assert "kept" in call(s, "memory_read", path="LOG.md")["content"]
