"""Seed 001 (Chapter 12, Memory Architecture): one test per row of docs/seeds.md."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.seeds.conftest import call

from memstrata import Store
from memstrata.errors import AlreadyExists, MalformedInput, Refused

# -- memory pollution: Checklist D --------------------------------------------------------

# Seed 001 exercise 7: "six entries with slightly different descriptions of the same
# `cd evals && npm test` command".
SEED_SIX = [
    "The test command is `cd evals && npm test`.",
    "Run the test suite with cd evals && npm test",
    "To run tests: cd evals; npm test",
    "Tests are run via `npm test` inside the evals directory.",
    "cd into evals/ and run npm test to execute the tests",
    "Eval tests: (cd evals && npm test)",
]
# Held out: other commands the mechanism was not written from, grouped by meaning.
HELD_OUT_GROUPS = [
    [
        "Build the docs with `cd docs && make html`.",
        "Docs build: make html in the docs folder",
        "cd docs; make html builds the documentation",
    ],
    [
        "Start the dev server with cd web && yarn dev",
        "The web app runs locally via `yarn dev` from the web/ directory",
    ],
]
# Alike in words, different in meaning: never grouped with the six.
NOT_THE_SAME = [
    "cd api && npm test runs the API tests",
    "Lint with cd evals && npm run lint",
    "cd docs && make clean removes the build",
    "Run npm test in the root folder for unit tests",
    "The API uses Fastify.",
]


def test_checklist_d_groups_the_seeds_six_paraphrases(store: Store) -> None:
    from memstrata.lifecycle import audit, prune

    facts = store.agent("finn").facts
    for i, text in enumerate(SEED_SIX):
        facts.set(f"test-cmd-{i}", text, "reference", citations=["evals/package.json"])
    for i, text in enumerate(NOT_THE_SAME):
        facts.set(f"other-{i}", text, "reference", citations=["README.md"])
    for g, group in enumerate(HELD_OUT_GROUPS):
        for i, text in enumerate(group):
            facts.set(f"held-{g}-{i}", text, "reference", citations=["README.md"])
    report = audit(store, "finn")
    over_mcp = call(store, "memory_audit")["findings"]
    assert {f["target"] for f in over_mcp if f["kind"] == "duplicate_fact"} == {
        f.target for f in report.of_kind("duplicate_fact")
    }
    dups = report.of_kind("duplicate_fact")
    by_keep: dict[str, set[str]] = {}
    for f in dups:
        assert f.keep is not None
        by_keep.setdefault(f.keep, {f.keep}).add(f.target)
    groups = sorted(sorted(g) for g in by_keep.values())
    assert sorted(f"test-cmd-{i}" for i in range(6)) in groups  # all six, one group
    assert sorted(f"held-0-{i}" for i in range(3)) in groups
    assert sorted(f"held-1-{i}" for i in range(2)) in groups
    assert len(groups) == 3
    assert not any(f.target.startswith("other-") for f in dups)
    pruned = prune(store, "finn", report, dry_run=False)
    assert len(pruned.applied) == 5 + 2 + 1
    left = {f.key for f in facts.list()}
    assert sum(k.startswith("test-cmd-") for k in left) == 1
    assert {f"other-{i}" for i in range(len(NOT_THE_SAME))} <= left


# -- repo-persistent facts are create-only; seed 002's user facts stay upserts ---------------


def test_repo_facts_are_create_only_on_every_library_path(store: Store) -> None:
    facts = store.agent("finn").facts
    facts.set(
        "test-cmd",
        "The test command is `cd evals && npm test`.",
        "reference",
        citations=["evals/package.json"],
    )
    with pytest.raises(AlreadyExists):
        facts.set(
            "test-cmd", "The test command is `make test`.", "reference", citations=["Makefile"]
        )
    with pytest.raises(AlreadyExists):  # a seed 002 upsert cannot clobber a repo fact
        facts.set("test-cmd", "make test", "general")
    assert "cd evals" in facts.get("test-cmd").value
    facts.set("preferred_currency", "USD", "preference")  # seed 002: upsert
    facts.set("preferred_currency", "EUR", "preference")
    assert facts.get("preferred_currency").value == "EUR"
    with pytest.raises(AlreadyExists):  # nor can a repo fact take over a user fact's key
        facts.set("preferred_currency", "Prices are in EUR.", "project", citations=["prices.md"])
    facts.forget("test-cmd")  # forgetting (pruning) stays possible; the journal keeps it
    facts.set("test-cmd", "The test command is `make test`.", "reference", citations=["Makefile"])
    assert facts.get("test-cmd").value == "The test command is `make test`."


# -- ignore memory on request, by meaning ----------------------------------------------------

# Written apart from the rule in memstrata.assembly.ignore, as a user would say it.
ASKS_TO_IGNORE = [
    "no memory please",
    "Answer this one without your memory.",
    "Skip the memory for this question",
    "please disregard what you remember and look at the code",
    "Don't look at your notes, just read the file",
    "for this turn, do not consult NOTES.md or anything saved",
    "set aside your saved facts and tell me from scratch",
    "Start with a clean slate: no stored context",
    "I want a fresh context for this",
    "Forget about your memories for now and reason from first principles",
    "Don't rely on past sessions here",
    "answer without using anything from previous conversations",
    "no notes, no memory, just the diff",
    "Ignore what you have stored about me",
    "Could you not use memory this time?",
    "Leave your memory out of this one",
    "Pretend you don't remember anything about this repo",
    "Don't pull in prior context",
    "without memory: what does main.py do?",
    "Please ignore memories",
]
DOES_NOT_ASK = [
    "What do you remember about the auth module?",
    "Save this to memory: the port is 8080",
    "Remember that I prefer tabs",
    "Check your notes before answering",
    "The memory usage is too high, there should be no leaks",
    "Don't forget to update NOTES.md",
    "Use your memory of the last session",
    "I have no memory of writing this function",
    "Don't write this to memory",
    "Fix the out of memory error in the loader",
    "There's no memory leak in the cache anymore",
    "Please add notes about the migration",
    "Store the in-memory cache without locks",
    "Never mind the tests, look at the memory module",
    "Without tests this is risky; update memory afterwards",
    "Do not use the old API; it is deprecated",
    "What's in your memory about deployments?",
    "Keep this in memory for later",
    "No, the memory tool is fine",
    "Ignore the lint warnings",
]


def test_ignore_memory_is_read_by_meaning() -> None:
    from memstrata.assembly.context import wants_no_memory

    missed = [m for m in ASKS_TO_IGNORE if not wants_no_memory(m)]
    wrong = [m for m in DOES_NOT_ASK if wants_no_memory(m)]
    assert missed == [] and wrong == []


# -- session memory (scratch) ------------------------------------------------------------------


def test_session_memory_is_cleared_on_reset_and_archived(store: Store, home: Path) -> None:
    mem = store.agent("finn")
    mem.scratch.write("wip.md", "half-done refactor of parse()")
    assert [f.path for f in mem.scratch.list()] == ["session/wip.md"]
    assert mem.scratch.read("wip.md") == "half-done refactor of parse()"
    archive = mem.scratch.clear()
    assert mem.scratch.list() == []
    assert archive is not None and "half-done refactor" in "".join(
        p.read_text() for p in (home / archive).rglob("*.md")
    )  # cleared, never destroyed


def test_session_notes_template_has_the_seeds_sections(store: Store) -> None:
    mem = store.agent("finn")
    mem.scratch.start_notes()
    text = mem.scratch.read("notes.md")
    for section in (
        "Current State",
        "Files and Functions",
        "Errors & Corrections",
        "Key Results",
        "Worklog",
    ):
        assert f"# {section}" in text or f"## {section}" in text, section


def test_scratch_is_listed_not_loaded_into_context(store: Store) -> None:
    from memstrata.assembly.context import assemble_context

    store.agent("finn").scratch.write("plan.md", "SCRATCHBODY do not auto-load")
    ctx = assemble_context(store, "finn").text
    assert "plan.md" in ctx and "SCRATCHBODY" not in ctx


def test_context_lists_task_folders_with_their_verified_items_after_a_reset(store: Store) -> None:
    """Seed 001 failure mode "forgetting to read task-episodic memory after a reset": the
    assembled context names each task folder and how many items were verified in it (like
    scratch: listed, not loaded), so an agent whose context was reset knows where to read."""
    from memstrata.assembly.context import assemble_context

    eps = store.agent("finn").episodes
    slug = eps.create("Feature X")
    eps.write(slug, "plan.md", "PLANBODY not auto-loaded\n")
    eps.add_verified(slug, ["login works", "logout works"], iteration=1)
    eps.create("Docs refresh")
    ctx = assemble_context(store, "finn")
    assert "episodes" in ctx.sections and "PLANBODY" not in ctx.text
    section = ctx.text.split("## Task folders", 1)[1]
    assert (
        "- feature-x: 2 verified items" in section and "- docs-refresh: 0 verified items" in section
    )


# -- task-episodic -------------------------------------------------------------------------------


def test_task_folder_slug_is_kebab_case_of_the_title(store: Store, home: Path) -> None:
    eps = store.agent("finn").episodes
    slug = eps.create("Add OAuth2 Login Flow!")
    assert slug == "add-oauth2-login-flow"
    eps.write(slug, "plan.md", "# Plan\n\nstep one: redirect URI\n")
    eps.append(slug, "plan.md", "step two: token exchange")
    assert "token exchange" in eps.read(slug, "plan.md")
    assert eps.files(slug) == ["plan.md"]
    assert (home / "agents/finn/episodes/add-oauth2-login-flow/plan.md").is_file()
    assert any(h.layer == "episode" for h in store.search("redirect URI"))
    # over MCP
    made = call(store, "task_folder_create", title="Fix Login Timeout")
    assert made == {"task": "fix-login-timeout", "files": []}
    call(store, "task_folder_write", task="fix-login-timeout", path="plan.md", content="# Plan\n")
    call(
        store,
        "task_folder_write",
        task="fix-login-timeout",
        path="plan.md",
        content="raise the timeout to 30 s",
        append=True,
    )
    assert (
        "30 s"
        in call(store, "task_folder_read", task="fix-login-timeout", path="plan.md")["content"]
    )
    assert call(store, "task_folder_read")["tasks"] == [
        "add-oauth2-login-flow",
        "fix-login-timeout",
    ]


def test_verified_items_are_recorded_per_iteration(store: Store) -> None:
    eps = store.agent("finn").episodes
    slug = eps.create("auth refactor")
    eps.add_verified(slug, ["login works", "logout works"], iteration=1)
    eps.add_verified(slug, ["refresh token works"], iteration=2)
    assert eps.verified(slug) == [
        (1, "login works"),
        (1, "logout works"),
        (2, "refresh token works"),
    ]
    with pytest.raises(MalformedInput):
        eps.add_verified(slug, [], iteration=3)
    got = call(store, "task_verified", task=slug, items=["csrf token checked"], iteration=3)
    assert got["verified"][-1] == {"iteration": 3, "item": "csrf token checked"}


def test_gate_events_are_ndjson_per_task_and_searchable(store: Store, home: Path) -> None:
    eps = store.agent("finn").episodes
    slug = eps.create("auth refactor")
    eps.log_gate_event(
        slug, "TASK-7", {"event": "review", "verdict": "rejected", "reason": "missing CSRF check"}
    )
    path = home / f"agents/finn/episodes/{slug}/observability/TASK-7.ndjson"
    recs = [json.loads(x) for x in path.read_text().splitlines()]
    assert recs[0]["verdict"] == "rejected" and "ts" in recs[0]
    assert eps.gate_events(slug, "TASK-7")[0]["reason"] == "missing CSRF check"
    assert [h.layer for h in store.search("CSRF", layers=("gate",))] == ["gate"]
    call(
        store,
        "gate_event",
        task=slug,
        task_id="TASK-7",
        event={"event": "review", "verdict": "approved"},
    )
    assert [e["verdict"] for e in eps.gate_events(slug, "TASK-7")] == ["rejected", "approved"]


def test_notes_md_holds_objective_blockers_and_phase(store: Store, home: Path) -> None:
    (home / "agents/finn/memory").mkdir(parents=True)
    (home / "agents/finn/memory/NOTES.md").write_text("# NOTES\n")
    mem = store.agent("finn")
    mem.now.update(
        "Ship OAuth", ["wire callback"], blockers=["no client secret"], phase="implementation"
    )
    text = (home / "agents/finn/memory/NOTES.md").read_text()
    assert "Ship OAuth" in text and "no client secret" in text and "implementation" in text
    assert not (home / "agents/finn/memory/NOW.md").exists()  # NOTES.md is the hot file
    state = mem.now.state()
    assert state.objective == "Ship OAuth" and list(state.blockers) == ["no client secret"]


# -- repo-persistent facts -------------------------------------------------------------------


def test_repo_facts_are_cited_short_and_create_only(store: Store) -> None:
    from memstrata.lifecycle import promote_fact

    fact = promote_fact(store, "finn", "The API uses Fastify.", "project", ["package.json"])
    assert fact.citations == ("package.json",) or list(fact.citations) == ["package.json"]
    with pytest.raises(Refused):  # no citation
        promote_fact(store, "finn", "Deploys go through ArgoCD.", "project", [])
    with pytest.raises(Refused):  # more than 1-2 sentences
        promote_fact(store, "finn", "One. Two. Three. Four.", "project", ["x.md"])
    with pytest.raises(AlreadyExists):  # create-only by key
        promote_fact(
            store, "finn", "Deploys go through ArgoCD.", "project", ["ops.md"], key=fact.key
        )
    with pytest.raises(Refused):  # a near-duplicate of a durable fact (Checklist C "new")
        promote_fact(store, "finn", "The API uses Fastify", "project", ["package.json"])


LONG_UNCITED = (
    "The API uses Fastify. It was chosen in March. Express was slower. The team "
    "agreed. We may revisit it."
)
GIT_HISTORY = "Merged PR #41 into main on the release branch."


def test_repo_fact_rules_hold_on_every_path_that_saves_a_fact(home: Path) -> None:
    """Seed 001: a `/memories/repo/` fact is cited, 1-2 sentences and no save exclusion on
    every path (library, seed 002's MemoryManager and skill, MCP, CLI), not only promotion;
    seed 002's user facts (general, preference, personal, config) stay plain upserts."""
    from tests.seeds.conftest import cli

    from memstrata import MemoryManager
    from memstrata.mcp.tools import build_tools, run
    from memstrata.skills import save_fact

    with Store(home, agent="finn") as s:
        facts = s.agent("finn", create=True).facts
        save = next(t for t in build_tools(s) if t.name == "save_fact")
        paths = {
            "library": lambda v, c, cites: facts.set("k", v, c, citations=cites),
            "mcp": lambda v, c, cites: run(
                save,
                {"key": "k", "value": v, "category": c, **({"citations": cites} if cites else {})},
            ),
        }
        for where, path in paths.items():
            for value, cites, why in (
                (LONG_UNCITED, ["docs/api.md"], "1-2 sentences"),
                ("The API uses Fastify.", None, "citation"),
                (GIT_HISTORY, ["git log"], "git history"),
            ):
                with pytest.raises(Refused, match=why):
                    path(value, "project", cites)
            assert "k" not in {f.key for f in facts.list()}, where
        facts.set("k", "The API uses Fastify.", "project", citations=["package.json"])
        facts.set("editor", LONG_UNCITED, "preference")  # seed 002: no such rules
        facts.set("editor", "vim", "preference")
        assert facts.get("editor").value == "vim"
    with pytest.raises(Refused, match="citation"), MemoryManager("finn", home) as m:
        m.save_fact("k2", "Deploys go through ArgoCD.", "project")
    with pytest.raises(Refused, match="git history"):
        save_fact(
            agent_name="finn",
            key="k3",
            value=GIT_HISTORY,
            category="project",
            citations=["git log"],
            home=home,
        )
    code, _, err = cli(
        home,
        "--agent",
        "finn",
        "facts",
        "set",
        "k4",
        LONG_UNCITED,
        "--category",
        "project",
        "--cite",
        "docs/api.md",
    )
    assert code == 2 and "1-2 sentences" in err
    with MemoryManager("finn", home) as m:
        m.save_fact("k2", "Deploys go through ArgoCD.", "project", citations=["ops/README.md"])
        assert {f.key for f in m.memory.facts.list()} == {"k", "k2", "editor"}


def test_repo_memory_folder_is_create_only_on_every_file_path(store: Store) -> None:
    """Seed 001 `/memories/repo/`: "only create is supported - no inline edits", through the
    Anthropic memory tool, the seed 003 file tools (library and MCP) alike; each file is one
    cited fact of 1-2 sentences (a `Citations:` line)."""
    from memstrata.mcp.claude_memory import ClaudeMemoryHandler

    files = store.agent("finn").files
    tool = ClaudeMemoryHandler(files)
    path = "/memories/repo/test-cmd.md"
    text, failed = tool.handle_result(
        {
            "command": "create",
            "path": path,
            "file_text": "The test command is cd evals && npm test\n",
        }
    )
    assert failed and "citation" in text and not files.exists("repo/test-cmd.md")
    body = "The test command is cd evals && npm test\nCitations: evals/package.json\n"
    assert tool.handle_result({"command": "create", "path": path, "file_text": body}) == (
        f"File created successfully at: {path}",
        False,
    )
    for command in (
        {
            "command": "str_replace",
            "path": path,
            "old_str": "cd evals && npm test",
            "new_str": "make test",
        },
        {"command": "insert", "path": path, "insert_line": 0, "insert_text": "x"},
        {"command": "create", "path": path, "file_text": "overwritten\n"},
        {"command": "rename", "old_path": path, "new_path": "/memories/cmd.md"},
    ):
        text, failed = tool.handle_result(command)
        assert failed, command
    assert files.read("repo/test-cmd.md") == body
    with pytest.raises(AlreadyExists):
        files.write("repo/test-cmd.md", "The test command is make test.\nSource: Makefile\n")
    with pytest.raises(Refused, match="no inline edits"):
        files.replace("repo/test-cmd.md", "npm test", "make test")
    with pytest.raises(Refused, match="no inline edits"):
        files.rename("session/x.md" if files.write("session/x.md", "s") else "", "repo/x.md")
    with pytest.raises(Refused, match="git history"):
        call(
            store,
            "memory_write",
            path="repo/history.md",
            content="Merged PR #41 into main.\nCitations: git log\n",
        )
    assert files.read("repo/test-cmd.md") == body
    files.delete("repo/test-cmd.md")  # pruning stays possible (archived, as `forget` for a fact)
    assert not files.exists("repo/test-cmd.md")


def test_taxonomy_user_feedback_project_reference(store: Store) -> None:
    from memstrata.layers.facts import DURABLE_CATEGORIES
    from memstrata.lifecycle import classify_fact

    assert set(DURABLE_CATEGORIES) == {"user", "feedback", "project", "reference"}
    assert classify_fact("The user prefers tabs over spaces.") == "user"
    assert classify_fact("The test command is `cd evals && npm test`.") == "reference"
    assert classify_fact("Never force-push to main.") == "feedback"
    assert classify_fact("The API uses Fastify.") == "project"
    with pytest.raises(MalformedInput):
        from memstrata.lifecycle import promote_fact

        promote_fact(store, "finn", "Prices are in EUR.", "gossip", ["a.md"])


def test_promotion_session_to_task_to_repo_with_checklist_c(store: Store) -> None:
    from memstrata.lifecycle import promote_scratch
    from memstrata.lifecycle.phases import phase_start, task_complete
    from memstrata.lifecycle.promotion import checklist_c

    mem = store.agent("finn")
    slug = mem.episodes.create("billing gateway")
    mem.scratch.write("finding.md", "Stripe webhooks need the raw body.")
    dest = promote_scratch(store, "finn", "finding.md", slug)
    assert "Stripe webhooks" in mem.episodes.read(slug, "notes.md") and dest.endswith("notes.md")
    verdict = checklist_c(store, "finn", "It is done now.", [])
    assert not verdict.passed
    assert {c.name for c in verdict.checks if not c.passed} >= {"cited", "actionable"}
    start = phase_start(
        store,
        "finn",
        slug,
        "design",
        note="read the webhook docs",
        facts=[
            {
                "text": "Stripe webhooks must be verified against the raw request body.",
                "citations": ["docs/stripe.md"],
            },
            {"text": "This task needs two more days.", "citations": ["plan.md"]},
        ],
    )
    assert [f.value for f in start.promoted] == [
        "Stripe webhooks must be verified against the raw request body."
    ]
    assert len(start.refused) == 1 and start.refused[0].failed is not None
    promoted, refused = task_complete(
        store,
        "finn",
        slug,
        [{"text": "Payments run in EUR only.", "citations": ["config/payments.toml"]}],
    )
    assert [f.value for f in promoted] == ["Payments run in EUR only."] and refused == []
    assert [e["event"] for e in mem.episodes.gate_events(slug, slug)] == ["task_complete"]
    # over MCP: Checklist C's checks come back; a dry run writes nothing
    dry = call(
        store,
        "memory_promote",
        text="Refunds go through the billing queue.",
        citations=["docs/billing.md"],
        dry_run=True,
    )
    assert dry["checklist"]["passed"] and "fact" not in dry
    refused = call(store, "memory_promote", text="It works now.", citations=[])
    assert not refused["checklist"]["passed"] and "fact" not in refused
    done = call(
        store,
        "memory_promote",
        text="Refunds go through the billing queue.",
        citations=["docs/billing.md"],
    )
    assert mem.facts.get(done["fact"]["key"]).citations == ("docs/billing.md",)


def test_save_exclusions_refuse_derivable_history_and_ephemeral(store: Store) -> None:
    from memstrata.lifecycle import promote_fact, save_exclusion

    assert save_exclusion("Committed the fix as a1b2c3d4") is not None
    assert save_exclusion("Currently running the migration, step 3 of 5") is not None
    assert save_exclusion("parse() is defined in src/parse.py:40") is not None
    assert save_exclusion("The API uses Fastify.") is None
    with pytest.raises(Refused, match="not saved"):
        promote_fact(store, "finn", "Committed the fix as a1b2c3d4", "project", ["git"])


def test_verify_before_use_flags_moved_and_missing_claims(store: Store, tmp_path: Path) -> None:
    from memstrata.lifecycle import verify_citations

    code = tmp_path / "repo"
    (code / "src").mkdir(parents=True)
    (code / "src/auth.py").write_text("def login():\n    pass\n")
    store.agent("finn").facts.set(
        "login",
        "login() handles the OAuth callback.",
        "reference",
        citations=["login() at src/auth.py:1"],
    )
    assert verify_citations(store, "finn", code) == []
    (code / "src/auth.py").write_text("import os\n\n\ndef login():\n    pass\n")
    problems = {f.problem for f in verify_citations(store, "finn", code)}
    assert problems and problems <= {"moved", "symbol_not_on_line"}
    (code / "src/auth.py").unlink()
    assert "missing" in {f.problem for f in verify_citations(store, "finn", code)}
    assert "missing" in {
        f["problem"] for f in call(store, "memory_verify", root=str(code))["findings"]
    }


def test_ignore_memory_turn_assembles_no_memory_and_emits_no_read(store: Store) -> None:
    from memstrata.assembly.context import assemble_context

    mem = store.agent("finn")
    mem.now.update("SECRETOBJECTIVE", ["x"])
    mem.facts.set("port", "PORTFACT 8080", "config")
    with store.events.capture() as events:
        ctx = assemble_context(store, "finn", ignore_memory=True).text
    assert "SECRETOBJECTIVE" not in ctx and "PORTFACT" not in ctx
    assert not [e for e in events if e.name == "memory:read"]
    assert "SECRETOBJECTIVE" in assemble_context(store, "finn").text


def test_compaction_keeps_phase_blockers_decisions_safety_as_bullets(store: Store) -> None:
    from memstrata.lifecycle import compact_log

    mem = store.agent("finn")
    mem.now.update(
        "Migrate billing", ["run tests"], blockers=["staging DB down"], phase="migration"
    )
    for i in range(60):
        mem.log.append("TOOL_USE", f"pytest run {i}: 120 passed, 0 failed " + "." * 200)
    mem.log.append("THOUGHT", "Decision: approved switching to argon2 for hashing")
    mem.log.append("ERROR", "Warning: never run the migration against production")
    rec = compact_log(store, "finn", force=True)
    summary = rec.summary
    lines = [x for x in summary.splitlines() if x.strip()]
    assert all(x.lstrip().startswith(("-", "*", "#")) for x in lines)
    assert "argon2" in summary and "production" in summary
    assert "staging DB down" in summary and "migration" in summary
    assert summary.count("120 passed") <= 1  # tool output only as counts and outcomes


def test_scratch_is_cleared_when_the_conversation_ends(home: Path) -> None:
    """`memstrata hook session-end` (Claude Code's SessionEnd) and `end_conversation`."""
    from tests.seeds.conftest import cli

    from memstrata.lifecycle.phases import end_conversation

    with Store(home, agent="finn") as s:
        s.agent().scratch.write("wip.md", "draft")
        s.agent().sessions.append("c1", "user", "hello")
    code, _, err = cli(
        home,
        "--agent",
        "finn",
        "--json",
        "hook",
        "session-end",
        stdin=json.dumps({"session_id": "c1", "hook_event_name": "SessionEnd"}),
    )
    assert code == 0 and "not blocked" not in err, err
    with Store(home, agent="finn") as s:
        assert s.agent().scratch.list() == []
        assert next(i.ended for i in s.agent().sessions.list() if i.id == "c1")
        s.agent().scratch.write("again.md", "x")
        assert end_conversation(s, "finn") is not None and s.agent().scratch.list() == []


def test_phase_events_and_scratch_promotion_on_the_command_line_and_over_mcp(home: Path) -> None:
    """Seed 001's Read and Write Rules beyond Python: phase start (session note, Checklist C
    promotion), phase end (completion report, NOTES.md boundary), task complete, and session
    -> task-episodic promotion, via `memstrata phase ...` / `memstrata promote --scratch`
    and MCP `task_phase` / `scratch_promote`."""
    from tests.seeds.conftest import cli_json

    finn = ("--agent", "finn")
    cli_json(home, *finn, "episodes", "create", "Feature X")
    good = json.dumps({"text": "The API uses Fastify.", "citations": ["package.json"]})
    bad = json.dumps({"text": "Iteration 3 passed at 14:32.", "citations": ["ci.log"]})
    started = cli_json(
        home,
        *finn,
        "phase",
        "start",
        "feature-x",
        "1",
        "--note",
        "scope the API",
        "--fact",
        good,
        "--fact",
        bad,
    )
    assert len(started["promoted"]) == 1 and started["refused"][0]["passed"] is False
    assert started["session_note"].endswith("session/phase-1.md")
    with Store(home, agent="finn") as s:
        s.agent().scratch.write("research.md", "Fastify beats Express on our benchmark.\n")
    moved = cli_json(home, *finn, "promote", "--scratch", "research.md", "--task", "feature-x")
    assert moved["where"].endswith("episodes/feature-x/notes.md")
    ended = cli_json(
        home,
        *finn,
        "phase",
        "end",
        "feature-x",
        "1",
        "API scoped.",
        "--next-phase",
        "2",
        "--blocker",
        "waiting on auth keys",
    )
    assert ended["report"].endswith("phase-1-report.md")
    done = cli_json(
        home,
        *finn,
        "phase",
        "complete",
        "feature-x",
        "--fact",
        json.dumps(
            {"text": "Sessions expire after 30 minutes.", "citations": ["config/session.toml"]}
        ),
    )
    assert len(done["promoted"]) == 1
    with Store(home, agent="finn") as s:
        mem = s.agent()
        assert "Fastify beats Express" in mem.episodes.read("feature-x", "notes.md")
        state = mem.now.state()
        assert state.phase == "2" and state.blockers == ("waiting on auth keys",)
        events = [e["event"] for e in mem.episodes.gate_events("feature-x", "feature-x")]
        assert events == ["phase_end", "task_complete"]
        mem.scratch.write("later.md", "second pass notes\n")
        got = call(
            s,
            "task_phase",
            event="start",
            task="feature-x",
            phase="2",
            facts=[{"text": "Deploys go through ArgoCD.", "citations": ["ops/README.md"]}],
        )
        assert got["task_files"] and len(got["promoted"]) == 1
        call(s, "scratch_promote", name="later.md", task="feature-x", dest="phase-2.md")
        assert call(s, "task_phase", event="end", task="feature-x", phase="2", report="Shipped.")[
            "report"
        ].endswith("phase-2-report.md")
        assert "second pass notes" in mem.episodes.read("feature-x", "phase-2.md")
        assert call(s, "task_phase", event="complete", task="feature-x")["promoted"] == []
        assert len([f for f in mem.facts.list() if f.category in ("project", "reference")]) == 3


def test_seed_001_operations_on_the_command_line(home: Path, tmp_path: Path) -> None:
    """Task folders, verified items, gate events, promotion (Checklist C) via the CLI."""
    from tests.seeds.conftest import cli, cli_json

    finn = ("--agent", "finn")
    assert cli_json(home, *finn, "episodes", "create", "Fix Login Timeout") == {
        "task": "fix-login-timeout"
    }
    cli_json(home, *finn, "episodes", "write", "fix-login-timeout", "plan.md", "# Plan")
    assert (
        cli_json(home, *finn, "episodes", "read", "fix-login-timeout", "plan.md")["content"]
        == "# Plan"
    )
    got = cli_json(
        home, *finn, "episodes", "verified", "fix-login-timeout", "login ok", "--iteration", "1"
    )
    assert got == [{"iteration": 1, "item": "login ok"}]
    cli_json(home, *finn, "episodes", "gate", "fix-login-timeout", "T1", '{"verdict": "ok"}')
    with Store(home, agent="finn") as s:
        assert s.agent().episodes.gate_events("fix-login-timeout", "T1")[0]["verdict"] == "ok"
    code, _, err = cli(home, *finn, "promote", "It works now.")
    assert code == 2 and "citation" in err  # refused by Checklist C, with the reason
    done = cli_json(
        home, *finn, "promote", "Sessions expire after 30 minutes.", "--cite", "config/session.toml"
    )
    assert done["checklist"]["passed"] and done["key"]
    code, _, err = cli(
        home, *finn, "promote", "Sessions expire after 30 minutes.", "--cite", "config/session.toml"
    )
    assert code == 2 and "duplicate" in err  # Checklist C "new": create-only
