"""Issue 19 items 1 and 7 through the real surfaces: what recall hands back, and scopes.

One store is built the way issue 19's coding agent built it: Claude Code's hooks as real
processes fed Claude Code's JSON (UserPromptSubmit, PostToolUse, PostToolUseFailure,
Stop, with transcripts in Claude Code's format) and the agent's own calls over a real
stdio MCP client (`log_activity`, `save_fact`, `memory_write`, `update_status`), a LOG
compaction from the CLI, then the question "what did we decide about the database last
week?" logged by the prompt hook. It is then read through MCP (`recall_memory`), the CLI
(`memstrata search`) and a real `memstrata serve` on 127.0.0.1 (`/api/search` and the
search page), which must agree.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")
pytest.importorskip("fastapi")
from mcp.client.stdio import StdioServerParameters

from mcp import Client
from memstrata import Store
from memstrata.layers.sources import Sources
from web.conftest import Served, start_server, stop_server

EXE = shutil.which("memstrata", path=str(Path(sys.executable).parent)) or "memstrata"
AGENT = "coder"
QUESTION = "what did we decide about the database last week?"


def _memstrata(home: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    r = subprocess.run(
        [EXE, "--home", str(home), "--agent", AGENT, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ),
    )
    assert r.returncode == 0, (args, r.stdout, r.stderr)
    return r


def _params(home: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=EXE,
        args=["--home", str(home), "--agent", AGENT, "mcp"],
        env={k: os.environ[k] for k in ("PATH", "PYTHONPATH") if k in os.environ},
    )


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class ClaudeSession:
    """One Claude Code session: its transcript (Claude Code's JSONL) and its hooks, run as
    the real `memstrata hook ...` processes with Claude Code's JSON on stdin."""

    def __init__(self, home: Path, sid: str) -> None:
        self.home, self.sid = home, sid
        self.transcript = home.parent / f"transcript-{sid}.jsonl"
        self.tools = 0
        self.last_text = ""

    def _record(self, role: str, content: Any) -> None:
        rec = {
            "type": role,
            "uuid": str(uuid.uuid4()),
            "sessionId": self.sid,
            "timestamp": _now(),
            "message": {"role": role, "content": content},
        }
        with self.transcript.open("a", encoding="utf-8") as f:
            f.write(json.dumps(rec) + "\n")

    def _hook(self, event: str, name: str, **fields: Any) -> None:
        payload = {
            "session_id": self.sid,
            "transcript_path": str(self.transcript),
            "cwd": str(self.home.parent),
            "permission_mode": "default",
            "hook_event_name": name,
            **fields,
        }
        _memstrata(self.home, "hook", event, stdin=json.dumps(payload))

    def prompt(self, text: str) -> None:
        self._record("user", text)
        self._hook("user-prompt-submit", "UserPromptSubmit", prompt=text)

    def tool(self, name: str, args: dict[str, Any], result: str, *, error: str = "") -> str:
        """A tool call: tool_use and tool_result in the transcript, then PostToolUse (or
        PostToolUseFailure); memstrata's own MCP tools get no hook (the hooks skip them)."""
        self.tools += 1
        use_id = f"toolu_{self.sid}_{self.tools:02d}"
        self._record("assistant", [{"type": "tool_use", "id": use_id, "name": name, "input": args}])
        block = {"type": "tool_result", "tool_use_id": use_id, "content": error or result}
        self._record("user", [{**block, "is_error": True} if error else block])
        if name.startswith("mcp__memstrata__"):
            return use_id
        if error:
            self._hook(
                "post-tool-use-failure",
                "PostToolUseFailure",
                tool_name=name,
                tool_input=args,
                tool_use_id=use_id,
                error=error,
                is_interrupt=False,
            )
        else:
            self._hook(
                "post-tool-use",
                "PostToolUse",
                tool_name=name,
                tool_input=args,
                tool_response={"stdout": result},
                tool_use_id=use_id,
            )
        return use_id

    def say(self, text: str) -> None:
        self._record("assistant", [{"type": "text", "text": text}])
        self.last_text = text

    def stop(self) -> None:
        self._hook("stop", "Stop", stop_hook_active=False, last_assistant_message=self.last_text)


async def _own(c: Client, s: ClaudeSession, tool: str, args: dict[str, Any]) -> None:
    """The agent calls memstrata itself (over MCP); the transcript shows the call too."""
    r = await c.call_tool(tool, args)
    assert not r.is_error, (tool, r.content)
    s.tool(f"mcp__memstrata__{tool}", args, r.content[0].text if r.content else "")


async def _build(home: Path) -> None:
    async with Client(_params(home)) as c:
        pdf = ClaudeSession(home, "s4-pdf")
        pdf.prompt("Start the PDF export. Also, remember that I prefer dark mode in the UI.")
        await _own(
            c,
            pdf,
            "log_activity",
            {
                "entry_type": "THOUGHT",
                "content": "Decision: the PDF export uses WeasyPrint (HTML templates rendered to PDF)",
            },
        )
        pdf.tool("Bash", {"command": "pip install weasyprint"}, "Successfully installed weasyprint")
        pdf.tool(
            "Bash",
            {"command": "python -m app.pdf sample"},
            "",
            error="OSError: cannot load library 'pango-1.0-0'",
        )
        await _own(
            c,
            pdf,
            "update_status",
            {
                "new_status": "PDF export blocked: WeasyPrint needs pango, which the CI image lacks",
                "next_steps": ["ask about the CI image, else ReportLab"],
            },
        )
        pdf.say("WeasyPrint needs pango, which the CI image lacks: the PDF export is blocked.")
        pdf.stop()
        pdf = ClaudeSession(home, "s5-pdf")
        pdf.prompt("The CI image cannot get pango. Go with ReportLab.")
        await _own(
            c,
            pdf,
            "log_activity",
            {
                "entry_type": "THOUGHT",
                "content": "Decision: replace WeasyPrint with ReportLab for the PDF export: the CI image "
                "has no pango",
            },
        )
        pdf.tool(
            "Edit",
            {"file_path": "app/pdf.py", "old_string": "weasyprint", "new_string": "reportlab"},
            "ok",
        )
        pdf.say("Done: the PDF export now renders with ReportLab.")
        pdf.stop()
        _memstrata(home, "compact", "--force")  # the LOG digest of the PDF sessions

        db = ClaudeSession(home, "s1-db")
        db.prompt(
            "Which database should we use for the multi-tenant app? Tenants must be isolated."
        )
        db.tool(
            "Read",
            {"file_path": "docs/requirements.md"},
            "Tenants must never see each other's rows. Expect 200 tenants in year one.",
        )
        await _own(
            c,
            db,
            "log_activity",
            {
                "entry_type": "THOUGHT",
                "content": "Decision: PostgreSQL 16 with row-level security for the database; every "
                "tenant table gets an RLS policy, SQLite stays for unit tests only.",
            },
        )
        await _own(
            c,
            db,
            "save_fact",
            {
                "key": "db_engine",
                "category": "config",
                "value": "PostgreSQL 16 with row-level security",
            },
        )
        await _own(
            c,
            db,
            "memory_write",
            {
                "path": "CONTEXT.md",
                "content": "# Project context\n\n- Stack: FastAPI and SQLAlchemy 2\n- Database: PostgreSQL "
                "16 with row-level security (decided in the first session)\n",
            },
        )
        db.tool(
            "Write",
            {
                "file_path": "app/db.py",
                "content": "engine = create_engine(DATABASE_URL)  # the PostgreSQL 16 database, RLS on",
            },
            "File created successfully at: app/db.py",
        )
        db.tool(
            "Read",
            {"file_path": "app/database/session.py"},
            "def get_session():\n    # one database session per request\n",
        )
        db.tool(
            "Bash",
            {"command": "pytest tests/test_db.py -q"},
            "tests/test_db.py .....  [100%]\n5 passed in 0.42s",
        )
        db.say(
            "OK, we decided: PostgreSQL 16 with row-level security; the app connects through "
            "app/db.py."
        )
        db.stop()

        auth = ClaudeSession(home, "s2-auth")
        auth.prompt("Add login with short-lived tokens.")
        await _own(
            c,
            auth,
            "log_activity",
            {
                "entry_type": "THOUGHT",
                "content": "Decision: 15-minute access tokens with rotating refresh tokens for auth",
            },
        )
        auth.tool(
            "Read",
            {"file_path": "app/database/models.py"},
            "class User(Base):\n    # the users table of the database\n",
        )
        auth.tool(
            "Edit",
            {
                "file_path": "app/auth.py",
                "old_string": "pass",
                "new_string": "return issue_tokens(user)",
            },
            "ok",
        )
        auth.say("Login issues 15-minute access tokens and a refresh token.")
        auth.stop()
    with Store(home, agent=AGENT) as s:  # a store from before the hooks stopped writing notices
        s.agent().log.append(
            "SYSTEM",
            "stop hook: captured 26 new message(s) of session s1-db; last: assistant: OK, we "
            "decided the database last week",
            {"session": "s1-db", "event": "stop", "captured": 26},
        )
    ClaudeSession(home, "s10-now").prompt(QUESTION)  # asked now: the prompt hook logged it


def _scope_records(home: Path, project: Path) -> None:
    """One word (ocelot) in every seed 004 scope, for the scope tests."""
    (project / "src").mkdir(parents=True)
    (project / "src" / "billing.py").write_text("def ocelot_invoice():\n    return 42\n")
    with Store(home) as owner:
        owner.acting_as(None).items.replace_source(
            "docs/a.md", [{"type": "note", "title": "ocelot item", "content": "the ocelot item"}]
        )
        Sources(owner).add(project)
    with Store(home, agent=AGENT) as s:
        s.agent().files.write("MEMORY.md", "# Memory\n\n- the ocelot lives in long-term memory\n")
        s.agent().sessions.append("s-ocelot", "user", "an ocelot in a transcript")


@dataclass(frozen=True)
class World:
    home: Path
    server: Served
    uids: dict[str, set[str]]  # what each record is, read from the index once built


KNOWN = {  # name -> the records it names, as a condition on the index's docs table
    "question": "kind = 'USER_FEEDBACK' AND body = :question",
    "notice": "layer IN ('log', 'archive') AND body LIKE '% hook: captured % of session %' "
    "AND body NOT LIKE 'LOG compacted%'",
    "postgres": "(body LIKE '%PostgreSQL 16%' OR title LIKE '%PostgreSQL 16%') AND layer IN ('log', 'archive', 'fact', 'context', 'ledger') "
    "AND kind IS NOT 'TOOL_USE'",
    "thought": "kind = 'THOUGHT' AND body LIKE 'Decision: PostgreSQL 16%'",
    "trace": "kind = 'TOOL_USE' OR (layer = 'session' AND kind IN ('tool_call', 'tool_result'))",
    "db_test_call": "(body LIKE '%test_db.py%' OR title LIKE '%test_db.py%') "
    "AND kind IN ('TOOL_USE', 'tool_call', 'tool_result')",
    "digest": "layer = 'compaction' OR body LIKE 'LOG compacted:%'",
    "new_pdf": "body LIKE 'Decision: replace WeasyPrint with ReportLab%'",
    "old_pdf": "body LIKE 'Decision: the PDF export uses WeasyPrint%'",
}


def _known(home: Path) -> dict[str, set[str]]:
    """The uids of the records the assertions name, straight from the built index."""
    with Store(home) as s, s.db.read() as conn:
        return {
            name: {
                r[0]
                for r in conn.execute(f"SELECT uid FROM docs WHERE {where}", {"question": QUESTION})
            }
            for name, where in KNOWN.items()
        }


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    root = tmp_path_factory.mktemp("recall")
    home = root / "store"
    _memstrata(home, "init", AGENT)
    _scope_records(home, root / "proj")
    anyio.run(_build, home)
    # A search in the default mode uses the vectors built so far (`search.hybrid`); on a
    # loaded machine the background embedder was still behind when the questions came, and
    # a half-embedded store ranked the pango ERROR above the ReportLab decision. A search
    # that names `hybrid` catches the vectors up first: the questions see a settled store.
    _memstrata(home, "search", "PDF", "--mode", "hybrid")
    uids = _known(home)
    assert all(uids.values()), uids  # the scenario recorded what the tests look for
    assert len(uids["db_test_call"]) == 3  # LOG TOOL_USE, transcript tool_use and tool_result
    server = start_server(home, env={"MEMSTRATA_AGENT": AGENT})
    try:
        yield World(home, server, uids)
    finally:
        stop_server(server)


def _recall(home: Path, **args: Any) -> list[dict[str, Any]]:
    return _recalls(home, args)[0]


def _recalls(home: Path, *calls: dict[str, Any]) -> list[list[dict[str, Any]]]:
    """`recall_memory` called with each argument set in turn, over one real stdio session."""

    async def main() -> list[list[dict[str, Any]]]:
        out = []
        async with Client(_params(home)) as c:
            for args in calls:
                r = await c.call_tool("recall_memory", args)
                assert not r.is_error, (args, r.content)
                assert isinstance(r.structured_content, dict)
                out.append(list(r.structured_content["results"]))
        return out

    return anyio.run(main)


def _shown(hits: list[dict[str, Any]]) -> list[str]:
    return [f"{h['layer']} {h.get('kind')}: {h['snippet'][:70]}" for h in hits]


def _check_database_answer(world: World, hits: list[dict[str, Any]]) -> None:
    """What issue 19 saw go wrong, as assertions on one ranked list."""
    order, u = [h["uid"] for h in hits], world.uids
    assert not u["question"] & set(order), ("the question answers itself", _shown(hits))
    assert not u["notice"] & set(order), ("hook bookkeeping is a hit", _shown(hits))
    assert set(order[:3]) <= u["postgres"], ("top 3: not the PostgreSQL decision", _shown(hits))
    found = [n for n, uid in enumerate(order) if uid in u["postgres"]]
    traces = [n for n, uid in enumerate(order) if uid in u["trace"]]
    assert u["thought"] & set(order), _shown(hits)
    assert {"fact", "context"} <= {hits[n]["layer"] for n in found}, _shown(hits)
    assert all(p < t for p in found for t in traces), ("a trace above it", _shown(hits))


def test_the_database_decision_over_mcp_not_the_question_or_bookkeeping(world: World) -> None:
    """Issue 19: recall_memory returned the question itself (rank 1) and bookkeeping; the
    PostgreSQL decision (THOUGHT, db_engine fact, CONTEXT.md line) was not in the top 5."""
    _check_database_answer(world, _recall(world.home, query=QUESTION, n_results=10))


def test_the_database_decision_from_the_cli(world: World) -> None:
    out = _memstrata(world.home, "search", QUESTION, "-k", "10", "--json").stdout
    _check_database_answer(world, json.loads(out))


def test_web_search_and_its_page_show_the_same_order(world: World) -> None:
    """Issue 19: the web app's search ranked the THOUGHT 6th, below the question, an
    unrelated decision and a Write(...) trace."""
    mcp_order = [h["uid"] for h in _recall(world.home, query=QUESTION, n_results=10)]
    with world.server.client() as http:
        api = http.get("/api/search", params={"q": QUESTION, "k": 10})
        assert api.status_code == 200, api.text
        hits = api.json()["hits"]
        page = http.get("/search", params={"q": QUESTION, "k": 10})
        assert page.status_code == 200
    _check_database_answer(world, hits)
    assert [h["uid"] for h in hits] == mcp_order
    assert re.findall(r'<li class="hit" data-uid="([^"]+)"', page.text) == mcp_order


def test_a_rephrased_question_does_not_answer_itself_either(world: World) -> None:
    """The agent may search with other words than the prompt: the prompt being answered
    (the newest intent, no final response yet) is still no hit, and explain says why."""
    hits = _recall(world.home, query="database decision", n_results=10, explain=True)
    assert not world.uids["question"] & {h["uid"] for h in hits}
    dropped = hits[0]["explain"]["dropped"]
    assert any(why.startswith("the prompt being asked") for why in dropped), dropped
    prior = hits[0]["explain"]["prior"]
    assert prior["key"] == f"recall.{prior['signal']}" and prior["weight"] > 0


def test_pdf_library_decision_is_the_one_that_replaced_weasyprint(world: World) -> None:
    """Issue 19: a compaction digest came first and the decision that replaced WeasyPrint
    with ReportLab was 5th."""
    hits = _recall(world.home, query="PDF library decision", n_results=10)
    order = [h["uid"] for h in hits]
    assert order and order[0] in world.uids["new_pdf"], _shown(hits)
    assert world.uids["digest"] & set(order[1:]), _shown(hits)  # still recalled, below it


def test_one_tool_call_comes_back_once(world: World) -> None:
    """The LOG TOOL_USE entry, the transcript's tool_use and its tool_result are one hit."""
    hits = _recall(
        world.home, query="pytest tests/test_db.py", layers=["log", "session"], n_results=20
    )
    call = [h["uid"] for h in hits if h["uid"] in world.uids["db_test_call"]]
    assert len(call) == 1, _shown(hits)


# -- item 7: seed 004's scopes and the filters on every surface --------------------------------

SCOPE_LAYERS = {
    "memory": {"context"},
    "items": {"item"},
    "sessions": {"session"},
    "sources": {"source"},
}


def test_scopes_on_the_cli(world: World) -> None:
    """docs/seeds.md said `memstrata search --layer memory` works; it was a usage error."""
    for scope, layers in SCOPE_LAYERS.items():
        out = _memstrata(world.home, "search", "ocelot", "--layer", scope, "--json").stdout
        assert {h["layer"] for h in json.loads(out)} == layers, scope


def test_scopes_and_filters_on_recall_memory(world: World) -> None:
    """recall_memory takes the scopes, and kind, since and until (the engine had them)."""
    hour, now = timedelta(hours=1), datetime.now(UTC)
    scopes = [{"query": "ocelot", "layers": [scope]} for scope in SCOPE_LAYERS]
    thoughts, recent, future, past, *by_scope = _recalls(
        world.home,
        {"query": "decision", "kind": "THOUGHT", "n_results": 20},
        {"query": "decision", "since": (now - hour).isoformat()},
        {"query": "decision", "since": (now + hour).isoformat()},
        {"query": "decision", "until": (now - hour).isoformat()},
        *scopes,
    )
    assert [{h["layer"] for h in hits} for hits in by_scope] == list(SCOPE_LAYERS.values())
    assert thoughts and {h["kind"] for h in thoughts} == {"THOUGHT"}
    assert recent and future == [] and past == []

    async def bad() -> str:
        async with Client(_params(world.home)) as c:
            r = await c.call_tool("recall_memory", {"query": "x", "since": "last tuesday-ish"})
            assert r.is_error
            return r.content[0].text

    assert anyio.run(bad).startswith("malformed_input")


def test_scopes_over_http_and_on_the_search_page(world: World) -> None:
    """`GET /api/search?layers=items` was a 422."""
    with world.server.client() as http:
        for scope, layers in SCOPE_LAYERS.items():
            got = http.get("/api/search", params={"q": "ocelot", "layers": scope})
            assert got.status_code == 200, got.text
            assert {h["layer"] for h in got.json()["hits"]} == layers, scope
            posted = http.post("/api/search", json={"text": "ocelot", "layers": [scope]})
            assert {h["layer"] for h in posted.json()["hits"]} == layers
        page = http.get("/search", params={"q": "ocelot", "layers": "items"})
        assert page.status_code == 200 and 'value="items" checked' in page.text
        assert len(re.findall(r'<li class="hit" data-uid="item:', page.text)) == 1
        assert http.get("/api/search", params={"q": "x", "layers": "dreams"}).status_code == 422
