"""Seed 004 (Brain: working / episodic / long-term / extracted / task memory): one test
per row of docs/seeds.md. Rows proven by tests elsewhere (flush and compaction
thresholds, hybrid search, retention on server start) name those in docs/seeds.md."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.seeds.conftest import cli_json

from memstrata import Store
from memstrata.config import load_config
from memstrata.errors import EntryTooLarge, ScopeDenied


def _files(home: Path) -> dict[str, bytes]:
    return {
        p.relative_to(home).as_posix(): p.read_bytes()
        for p in home.rglob("*")
        if p.is_file()
        and not p.relative_to(home).as_posix().startswith(("index", "events", ".locks"))
    }


def test_working_memory_is_assembled_at_runtime_and_never_stored(home: Path) -> None:
    from memstrata.assembly.context import assemble_context

    with Store(home, agent="finn") as s:
        s.agent().now.update("Ship the importer", ["tests"])
        s.agent().context.write("User is in Berlin.\n")
        before = _files(home)
        text = assemble_context(s, "finn").text
        assert "Ship the importer" in text and "Berlin" in text
        assert _files(home) == before


def test_sessions_are_jsonl_messages_with_roles_ids_and_timestamps(home: Path) -> None:
    with Store(home, agent="finn") as s:
        sess = s.agent().sessions
        sess.append("s1", "user", "find the bug")
        sess.append("s1", "tool_call", "grep", name="grep", input={"q": "bug"})
        sess.append("s1", "tool_result", "3 matches", name="grep")
        sess.append("s1", "assistant", "found it")
        lines = [
            json.loads(x) for x in (home / "agents/finn/sessions/s1.jsonl").read_text().splitlines()
        ]
    assert [r["role"] for r in lines] == ["user", "tool_call", "tool_result", "assistant"]
    assert len({r["id"] for r in lines}) == 4 and all(r["timestamp"] for r in lines)
    assert lines[1]["name"] == "grep" and lines[1]["input"] == {"q": "bug"}


def test_session_tool_calls_are_written_over_mcp_as_the_seed_shows_them(home: Path) -> None:
    """Seed 004's transcript format over MCP `session_append`: a tool_call with its name and
    input, and its tool_result under the same id."""
    from tests.seeds.conftest import call

    with Store(home, agent="finn") as s:
        call(s, "session_append", session_id="s1", role="user", content="Hello")
        call(
            s,
            "session_append",
            session_id="s1",
            role="tool_call",
            content="",
            id="tool_001",
            name="read",
            input={"path": "README.md"},
        )
        call(
            s,
            "session_append",
            session_id="s1",
            role="tool_result",
            content="# Project...",
            id="tool_001",
            name="read",
        )
    lines = [
        json.loads(x) for x in (home / "agents/finn/sessions/s1.jsonl").read_text().splitlines()
    ]
    assert {k: lines[1][k] for k in ("id", "role", "name", "input")} == {
        "id": "tool_001",
        "role": "tool_call",
        "name": "read",
        "input": {"path": "README.md"},
    }
    assert (lines[2]["id"], lines[2]["role"], lines[2]["content"]) == (
        "tool_001",
        "tool_result",
        "# Project...",
    )
    assert all(r["timestamp"] for r in lines)


def test_session_index_lists_sessions_with_start_and_end(home: Path) -> None:
    with Store(home, agent="finn") as s:
        sess = s.agent().sessions
        sess.start("s1", title="bug hunt")
        sess.append("s1", "user", "hello")
        sess.end("s1")
        [info] = sess.list()
    index = json.loads((home / "agents/finn/sessions/sessions.json").read_text())
    [row] = index["sessions"]
    assert row["id"] == "s1" and row["ended"] and info.id == "s1"


def test_long_term_memory_md_is_agent_writable_up_to_50000_chars(home: Path) -> None:
    with Store(home, agent="finn") as s:
        ctx = s.agent().context
        ctx.write("x" * 50_000)
        with pytest.raises(EntryTooLarge):
            ctx.write("x" * 50_001)


def test_agent_memory_md_beside_identity_is_long_term_memory(home: Path) -> None:
    from memstrata.assembly.context import assemble_context

    (home / "agents/finn").mkdir(parents=True)
    (home / "agents/finn/MEMORY.md").write_text("# Agent Memory\n- prefers the metric system\n")
    with Store(home, agent="finn") as s:
        assert "metric system" in assemble_context(s, "finn").text
        assert [h.layer for h in s.search("metric system", layers=("memory",))] == ["context"]
        s.agent().context.write("# Agent Memory\n- prefers imperial units\n")
    assert "imperial" in (home / "agents/finn/MEMORY.md").read_text()


def test_extracted_items_have_the_seeds_fields(home: Path, tmp_path: Path) -> None:
    from memstrata.lifecycle import extract_items

    project = tmp_path / "proj"
    project.mkdir()
    (project / "README.md").write_text("# Setup\n\nDecision: we use PostgreSQL 16 for storage.\n")
    with Store(home) as owner:
        extract_items(owner, project)
    items = json.loads((home / "items.json").read_text())
    # The seed's eight fields, and the project (the seed's `<project>/items.json`, one file
    # per project; here one file per store, each item naming its project).
    assert items and set(items[0]) == {
        "id",
        "type",
        "title",
        "content",
        "sourceFile",
        "lineNumber",
        "confidence",
        "extractedAt",
        "project",
    }
    assert items[0]["sourceFile"] == "README.md" and items[0]["lineNumber"] >= 1
    assert items[0]["project"] == "proj"


def test_items_are_kept_per_project(home: Path, tmp_path: Path) -> None:
    """Seed 004 `<project>/items.json`: two projects' README.md are two sets of items, and
    re-extracting one project replaces only its own."""
    from memstrata.lifecycle import extract_items

    for name, text in (
        ("pa", "Decision: project A uses Fastify."),
        ("pb", "Decision: project B uses Django."),
    ):
        (tmp_path / name).mkdir()
        (tmp_path / name / "README.md").write_text(f"# {name}\n\n{text}\n")
    with Store(home) as owner:
        extract_items(owner, tmp_path / "pa")
        extract_items(owner, tmp_path / "pb")
        both = {
            (i.project, i.sourceFile): i.content for i in owner.items.list() if i.type == "decision"
        }
        (tmp_path / "pa" / "README.md").write_text("# pa\n\nDecision: project A uses Hono.\n")
        extract_items(owner, tmp_path / "pa")
        after = sorted(i.content for i in owner.items.list() if i.type == "decision")
        assert owner.items.projects() == ["pa", "pb"]
        assert {h.meta["project"] for h in owner.items.search("Django")} == {"pb"}
        assert owner.items.search("Django", project="pa") == []  # /projects/pa/knowledge
        assert [i.content for i in owner.items.list(project="pb") if i.type == "decision"] == [
            "project B uses Django."
        ]
    assert both == {
        ("pa", "README.md"): "project A uses Fastify.",
        ("pb", "README.md"): "project B uses Django.",
    }
    assert after == ["project A uses Hono.", "project B uses Django."]


def test_tasks_json_has_the_seeds_fields(home: Path) -> None:
    with Store(home, agent="finn") as s:
        t = s.agent().tasks.add(
            "Write the importer",
            milestone="M1",
            priority=1,
            acceptance_criteria=["imports 1k rows"],
        )
        s.agent().tasks.update(t.id, status="done")
    [row] = json.loads((home / "agents/finn/tasks.json").read_text())["tasks"]
    assert set(row) >= {
        "id",
        "milestone",
        "priority",
        "status",
        "description",
        "acceptance_criteria",
        "created",
        "completed",
        "blocked_by",
    }
    assert row["status"] == "done" and row["completed"]


def test_storage_is_jsonl_markdown_json_and_a_derived_sqlite_index(home: Path) -> None:
    with Store(home, agent="finn") as s:
        m = s.agent()
        m.sessions.append("s1", "user", "hi")
        m.context.write("long-term\n")
        m.tasks.add("a task")
        m.facts.set("k", "v")
    files = [p for p in (home / "agents/finn").rglob("*") if p.is_file()]
    # versions/<file>.<id>/<sha256> are earlier contents of a Markdown file, kept by hash
    # (docs/versions.md): the replaced template of CONTEXT.md, byte for byte
    blobs = [p for p in files if "versions" in p.parts and p.suffix == ""]
    assert blobs and all(".md." in p.parent.name for p in blobs)
    kinds = {p.suffix for p in files if p not in blobs}
    assert kinds <= {".jsonl", ".md", ".json"} and {".jsonl", ".md", ".json"} <= kinds
    assert list((home / "index").rglob("*.db"))  # FTS5 + metadata, derived


def test_write_rules_episodic_append_only_items_pipeline_only_tasks_explicit(
    roles: Path, tmp_path: Path
) -> None:
    from memstrata.layers.sessions import Sessions
    from memstrata.lifecycle import extract_items

    assert not any(hasattr(Sessions, n) for n in ("edit", "replace", "update_message", "delete"))
    (tmp_path / "doc.md").write_text("# Notes\n\nDecision: cache for 5 minutes.\n")
    with Store(roles, agent="finn") as agent:
        with pytest.raises(ScopeDenied):  # a project agent cannot hand-write items
            agent.items.replace_source("x.md", [{"type": "note", "title": "t", "content": "c"}])
        extract_items(agent, tmp_path)  # ... but may run the pipeline
        assert agent.items.list()
        ids = [i.id for i in agent.items.list()]
        with pytest.raises(ScopeDenied):  # ... nor remove them: cleanup is an admin's
            agent.items.remove(ids[:1])
        assert [i.id for i in agent.items.list()] == ids
    with Store(roles, agent="wilco") as admin:
        assert [i.id for i in admin.items.remove(ids[:1])] == ids[:1]
        assert [i.id for i in admin.items.list()] == ids[1:]
        t = agent.agent().tasks.add("explicit task")  # tasks only change when asked
        assert agent.agent().tasks.get(t.id).status == "pending"


def test_tool_results_are_pruned_in_context_and_compaction_keeps_recent_n(home: Path) -> None:
    from memstrata.lifecycle import compact_session, context_view

    with Store(home, agent="finn") as s:
        sess = s.agent().sessions
        for i in range(8):
            sess.append("s1", "tool_result", f"OUTPUT-{i} " + "x" * 200, name="grep")
        view = context_view(sess.messages("s1"), keep_tool_results=5)
        kept = [m for m in view if m.content.startswith("OUTPUT-")]
        assert [m.content[:8] for m in kept] == [f"OUTPUT-{i}" for i in range(3, 8)]
        assert len(sess.messages("s1")) == 8  # the transcript itself is untouched
        compact_session(s, "finn", "s1", keep_recent=3, summary="Eight greps.")
        msgs = sess.messages("s1")
    assert msgs[0].role == "summary" and len(msgs) == 4


def test_scope_rules_admin_project_skill(roles: Path) -> None:
    with Store(roles, agent="finn") as finn:
        finn.agent().facts.set("k", "finn's")
    with Store(roles, agent="wilco") as admin:  # admin: reads and writes all
        assert admin.agent("finn").facts.get("k").value == "finn's"
        admin.agent("finn").facts.set("k2", "set by admin")
    with Store(roles, agent="ivy") as other, pytest.raises(ScopeDenied):  # project: own only
        other.agent("finn").facts.get("k")
    with Store(roles, agent="wilco") as admin:
        admin.agent().facts.set("house_style", "Answers are concise", "preference")
        admin.agent().now.update("Review the Q3 roadmap", [])
    with Store(roles, agent="finn") as finn:  # project: own + admin memory (read only)
        assert finn.agent("wilco").facts.get("house_style").value == "Answers are concise"
        assert "Q3 roadmap" in finn.agent("wilco").now.read()
        assert any(h.owner == "wilco" for h in finn.search("concise answers"))
        with pytest.raises(ScopeDenied):
            finn.agent("wilco").facts.set("house_style", "verbose")
    with Store(roles, agent="seo") as skill:  # skill: nothing
        with pytest.raises(ScopeDenied):
            skill.agent("seo").facts.set("k", "v")
        with pytest.raises(ScopeDenied):
            skill.agent("finn").facts.get("k")


def test_skill_reads_only_the_context_it_is_handed(roles: Path) -> None:
    from memstrata.operations.envelope import SkillContext, hand_off

    with Store(roles, agent="wilco") as admin:
        admin.agent().context.write("User prefers concise responses.\n")
        env = hand_off(
            admin, "seo", "analyze", brief="blog", project_context="SEO optimization for blog"
        )
        with pytest.raises(ScopeDenied):
            hand_off(Store(roles, agent="finn"), "seo", "analyze")
    raw = json.loads(env.to_json())
    assert (raw["from"], raw["to"], raw["type"]) == ("wilco", "seo", "request")
    assert "concise responses" in raw["payload"]["context"]["memory_snippet"]
    ctx = SkillContext(env.to_json())
    assert "concise responses" in ctx.text() and "SEO optimization" in ctx.text()


def test_skill_handoff_on_the_command_line_and_over_mcp(roles: Path) -> None:
    """Seed 004's Memory Sharing Protocol beyond Python: `memstrata handoff` prints the
    request envelope, MCP `skill_handoff` returns it (group "admin", `--tools admin`); the skill
    reads exactly that."""
    from tests.seeds.conftest import call, cli, tool_names

    from memstrata.mcp.server import select_tools
    from memstrata.operations.envelope import SkillContext

    with Store(roles, agent="wilco") as admin:
        admin.agent().facts.set("tone", "User prefers concise responses", "preference")
        assert "skill_handoff" not in {t.name for t in select_tools(admin, None)}  # lean default
        assert [t.name for t in select_tools(admin, ["admin"])] == ["skill_handoff"]
        env = call(
            admin,
            "skill_handoff",
            skill="seo",
            action="analyze",
            brief="tone",
            project_context="SEO optimization for blog",
        )
    assert env["from"] == "wilco" and env["to"] == "seo" and env["type"] == "request"
    assert "concise responses" in env["payload"]["context"]["memory_snippet"]
    code, out, err = cli(
        roles,
        "--agent",
        "wilco",
        "handoff",
        "seo",
        "analyze",
        "--brief",
        "tone",
        "--project-context",
        "SEO optimization for blog",
    )
    assert code == 0, err
    ctx = SkillContext(out)
    assert ctx.action == "analyze" and ctx.project_context == "SEO optimization for blog"
    assert "concise responses" in ctx.memory_snippet
    with Store(roles, agent="finn") as project:
        assert "skill_handoff" not in {t.name for t in select_tools(project, None)}
        assert "skill_handoff" in tool_names(project)  # still callable, and refused
        with pytest.raises(ScopeDenied):
            call(project, "skill_handoff", skill="seo", action="analyze")
    code, _, err = cli(roles, "--agent", "finn", "handoff", "seo", "analyze")
    assert code == 2 and "admins spawn skills" in err


def test_fts5_keyword_search(home: Path) -> None:
    with Store(home, agent="finn") as s:
        s.agent().log.append("THOUGHT", "the zebra cache is warm")
        s.agent().log.append("THOUGHT", "unrelated")
        with s.db.read() as conn:
            assert (
                conn.execute(
                    "SELECT count(*) FROM docs_fts WHERE docs_fts MATCH 'zebra'"
                ).fetchone()[0]
                == 1
            )
        assert [h.text for h in s.search("zebra")] == ["the zebra cache is warm"]


def test_search_scopes_memory_items_sessions_sources(home: Path, tmp_path: Path) -> None:
    from memstrata.layers.sources import Sources

    project = tmp_path / "proj"
    (project / "src").mkdir(parents=True)
    (project / "src/billing.py").write_text("def ocelot_invoice():\n    return 42\n")
    with Store(home) as owner:
        owner.acting_as(None).items.replace_source(
            "a.md", [{"type": "note", "title": "ocelot item", "content": "ocelot"}]
        )
        Sources(owner).add(project)
    with Store(home, agent="finn") as s:
        s.agent().context.write("ocelot in long-term memory\n")
        s.agent().sessions.append("s1", "user", "ocelot in a transcript")
        s.agent().log.append("THOUGHT", "ocelot in the log")
        by_scope = {
            scope: {h.layer for h in s.search("ocelot", layers=(scope,), k=50)}
            for scope in ("memory", "items", "sessions", "sources")
        }
        default = {h.layer for h in s.search("ocelot", k=50)}
    assert by_scope == {
        "memory": {"context"},
        "items": {"item"},
        "sessions": {"session"},
        "sources": {"source"},
    }
    assert "session" not in default  # transcripts are opt-in


def test_sources_scope_indexes_a_project_folder_on_request(home: Path, tmp_path: Path) -> None:
    from memstrata.layers.sources import Sources

    project = tmp_path / "proj"
    project.mkdir()
    (project / "notes.md").write_text("# Deploy\n\nThe narwhal service deploys on Fridays.\n")
    (project / "node_modules").mkdir()
    (project / "node_modules/x.md").write_text("narwhal in a dependency\n")
    with Store(home) as owner:
        assert not owner.search("narwhal", layers=("sources",))
        Sources(owner).add(project)
        hits = owner.search("narwhal", layers=("sources",))
        assert [h.meta["path"] for h in hits] == ["notes.md"] and hits[0].line >= 1
    assert cli_json(home, "doctor")["ok"] is True  # doctor reads project files where they are
    with Store(home) as owner:
        (project / "notes.md").unlink()
        Sources(owner).sync()
        assert not owner.search("narwhal", layers=("sources",))
    with Store(home, agent="finn") as agent, pytest.raises(ScopeDenied):
        Sources(agent).add(project)  # registering folders is the owner's (admins')
    (project / "notes.md").write_text("the narwhal is back\n")  # on the command line
    assert cli_json(home, "sources", "sync")["scanned"] == 1
    with Store(home) as owner:
        assert owner.search("narwhal", layers=("sources",))
    assert [r["files"] for r in cli_json(home, "sources", "list")] == [1]
    assert cli_json(home, "sources", "remove", str(project)) == {"dropped": 1}


def test_memory_events_read_write_flush_compact_search(home: Path) -> None:
    from memstrata.lifecycle import compact_log, compact_session
    from memstrata.lifecycle.flush import flush_session

    with Store(home, agent="finn") as s, s.events.capture() as events:
        m = s.agent()
        m.log.append("THOUGHT", "decision: use argon2")
        m.log.read_text()
        s.search("argon2")
        m.sessions.append("s1", "user", "Decision: ship on Friday")
        m.sessions.append("s1", "assistant", "ok")
        m.sessions.append("s1", "user", "and the release notes?")
        m.sessions.append("s1", "assistant", "drafted")
        flush_session(s, "finn", "s1")
        compact_session(s, "finn", "s1", keep_recent=1, summary="short")
        compact_log(s, "finn", force=True)
    names = {e.name for e in events}
    assert {
        "memory:read",
        "memory:write",
        "memory:flush",
        "memory:compact",
        "memory:search",
    } <= names
    assert all(e.agent == "finn" and e.ts for e in events)
    # The seed's payloads: read {type, path, size}, write {type, path, delta}, flush
    # {sessionId}, compact {sessionId, before, after}, search {query, results}.
    seed_keys = {
        "memory:read": {"type", "path", "size"},
        "memory:write": {"type", "path", "delta"},
        "memory:flush": {"sessionId"},
        "memory:compact": {"sessionId", "before", "after"},
        "memory:search": {"query", "results"},
    }
    for e in events:
        assert seed_keys[e.name] <= set(e.payload), (e.name, e.payload)
    log_write = next(
        e.payload for e in events if e.name == "memory:write" and e.payload["type"] == "log"
    )
    assert log_write["path"] == "agents/finn/memory/LOG.md" and log_write["delta"] > 0
    read = next(e.payload for e in events if e.name == "memory:read" and e.payload["type"] == "log")
    assert read["path"] == "agents/finn/memory/LOG.md" and read["size"] > 0
    search = next(e.payload for e in events if e.name == "memory:search")
    assert search["query"] == "argon2" and search["results"] and isinstance(search["results"], list)
    flushes = [e.payload for e in events if e.name == "memory:flush"]  # ours, compaction's
    assert flushes and all(p == {"sessionId": "s1"} for p in flushes)
    compacts = {e.payload["sessionId"]: e.payload for e in events if e.name == "memory:compact"}
    assert compacts["s1"]["before"] > compacts["s1"]["after"] >= 1
    assert None in compacts  # the LOG compaction belongs to no session


def test_memory_config_keys_by_the_seeds_names_with_the_seeds_defaults(
    home: Path, semantic_default: None
) -> None:
    defaults = load_config(home)
    assert (
        defaults.max_memory_chars,
        defaults.session_retention_days,
        defaults.session_compaction_threshold,
        defaults.session_keep_recent,
        defaults.session_flush_enabled,
        defaults.session_flush_threshold,
        defaults.search_provider,
        defaults.embedder,
        defaults.tool_result_retention,
    ) == (50000, 30, 100_000, 10, True, 80_000, "auto", None, 5)  # auto: fts5 until vectors
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(
        '[memory]\nmemoryPath = "<agent>/MEMORY.md"\nmaxMemorySize = 1000\n'
        "sessionRetentionDays = 7\ncompactionThreshold = 5000\ncompactionKeepRecent = 4\n"
        'flushEnabled = false\nflushThreshold = 4000\nsearchProvider = "hybrid"\n'
        'vectorModel = "fake"\ntoolResultRetention = 2\n'
    )
    c = load_config(home, strict=True)
    assert (
        c.memory_path,
        c.max_memory_chars,
        c.session_retention_days,
        c.session_compaction_threshold,
        c.session_keep_recent,
        c.session_flush_enabled,
        c.session_flush_threshold,
        c.search_provider,
        c.embedder,
        c.tool_result_retention,
    ) == ("MEMORY.md", 1000, 7, 5000, 4, False, 4000, "hybrid", "fake", 2)
    (home / "config.toml").write_text('[memory]\nmemoryPath = "<agent>/MEMORY.md"\n')
    with Store(home, agent="finn") as s:
        s.agent().context.write("pinned by memoryPath\n")
    assert (home / "agents/finn/MEMORY.md").read_text() == "pinned by memoryPath\n"


def test_every_write_path_emits_memory_write(home: Path) -> None:
    writes = {
        "now": lambda s: s.agent().now.update("x", []),
        "log": lambda s: s.agent().log.append("THOUGHT", "x"),
        "fact": lambda s: s.agent().facts.set("k", "v"),
        "file": lambda s: s.agent().files.write("a.md", "x"),
        "context": lambda s: s.agent().context.write("x"),
        "task": lambda s: s.agent().tasks.add("x"),
        "session append": lambda s: s.agent().sessions.append("s9", "user", "x"),
        "session start": lambda s: s.agent().sessions.start("s2"),
        "session end": lambda s: s.agent().sessions.end("s2"),
        "episode create": lambda s: s.agent().episodes.create("a task"),
        "episode write": lambda s: s.agent().episodes.write("a-task", "n.md", "x"),
        "gate event": lambda s: s.agent().episodes.log_gate_event("a-task", "T1", {"e": 1}),
        "ledger": lambda s: s.ledger.publish("decision", "x"),
        "channel": lambda s: s.room().post("x"),
        "artifact": lambda s: s.room().write_artifact("a.md", "x"),
        "log compaction": lambda s: __import__("memstrata.lifecycle", fromlist=["x"]).compact_log(
            s, "finn", force=True
        ),
    }
    silent = []
    with Store(home, agent="finn", room="room-1") as s:
        for name, write in writes.items():
            with s.events.capture() as events:
                write(s)
            if not any(e.name == "memory:write" for e in events):
                silent.append(name)
    assert silent == []


def test_gate_events_and_compaction_history_are_searchable(home: Path) -> None:
    from memstrata.lifecycle import compact_log

    with Store(home, agent="finn") as s:
        m = s.agent()
        slug = m.episodes.create("auth")
        m.episodes.log_gate_event(slug, "T1", {"event": "review", "verdict": "wombat rejected"})
        m.log.append("THOUGHT", "one")
        compact_log(s, "finn", summary="Compacted the quokka investigation.")
        assert [h.layer for h in s.search("wombat")] == ["gate"]
        assert "compaction" in {h.layer for h in s.search("quokka investigation")}


def test_invariants_human_readable_and_timestamped(home: Path, tmp_path: Path) -> None:
    """Invariants 4 and 6: every memory file is text, and every entry of every append-only
    record (JSONL line, LOG entry, item, task, session index row) has its creation time."""
    import re

    from memstrata.lifecycle import extract_items

    (tmp_path / "doc.md").write_text("# Doc\n\nDecision: cache for 5 minutes.\n")
    with Store(home, agent="finn", room="room-1") as s:
        m = s.agent()
        m.log.append("THOUGHT", "readable")
        m.facts.set("k", "v")
        m.facts.forget("k")
        m.sessions.append("s1", "user", "hi")
        m.tasks.add("a task")
        eps = m.episodes
        eps.log_gate_event(eps.create("Feature X"), "T1", {"verdict": "ok"})
        s.ledger.publish("decision", "use argon2")
        s.room().post("hello")
        extract_items(s, tmp_path)
        m.log.append("THOUGHT", "x " * 40)
        from memstrata.lifecycle import compact_log

        compact_log(s, "finn", force=True)
    stamps = ("ts", "timestamp", "created_at", "updated_at", "extractedAt", "compacted_at")
    jsonl = [p for p in home.rglob("*.jsonl") if "index" not in p.parts] + list(
        home.rglob("*.ndjson")
    )
    assert len(jsonl) >= 6
    for path in jsonl:
        for line in path.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            assert any(rec.get(k) for k in stamps), (path, rec)
    for path in home.rglob("*"):
        if path.is_file() and "index" not in path.parts and not path.name.startswith("."):
            path.read_text(encoding="utf-8")  # every memory file is text
    log = (home / "agents/finn/memory/LOG.md").read_text()
    heads = re.findall(r"^### .*$", log, re.M)
    assert heads and all(re.search(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}", h) for h in heads)
    assert all(i["extractedAt"] for i in json.loads((home / "items.json").read_text()))
    assert all(
        t["created"] for t in json.loads((home / "agents/finn/tasks.json").read_text())["tasks"]
    )
    assert all(
        r["created"]
        for r in json.loads((home / "agents/finn/sessions/sessions.json").read_text())["sessions"]
    )


def test_maintain_archives_idle_sessions(home: Path) -> None:
    import os
    import time

    with Store(home, agent="finn") as s:
        s.agent().sessions.append("old", "user", "long ago", timestamp="2020-01-01T00:00:00Z")
        s.agent().sessions.append("new", "user", "today")
    old = home / "agents/finn/sessions/old.jsonl"
    os.utime(old, (time.time() - 90 * 86400,) * 2)
    rows = cli_json(home, "maintain")
    assert rows[0]["sessions_archived"] == ["old"]
    assert not old.exists() and (home / "agents/finn/sessions/new.jsonl").exists()
