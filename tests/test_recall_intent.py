"""Recall ranks meaning over traces (issue 19 item 1): what a question asks for beyond its words.

Defects found by reading back `memstrata bench agent`'s dev scenario ml-wrensong's recall
lists as the agent gets them, each a class: a name and its initials ("Weights & Biases",
"W&B") did not find each other; a question about what is still open or stuck did not
return the task state; a user's bare "continue" was a hit; a hit's shown score was 0.0 at
rank 2. The stores are written the way the agent writes them (the prompt hook in process,
fed Claude Code's JSON; the agent's own calls through the Python API its MCP tools call);
what comes back is read through the CLI (`memstrata --json search`, a process), a real
stdio MCP client (`recall_memory`) and `memstrata serve` on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")
pytest.importorskip("fastapi")
from mcp.client.stdio import StdioServerParameters
from tests.claude_code import EXE, ClaudeSession

from mcp import Client
from memstrata import Store
from web.conftest import start_server, stop_server

AGENT = "me"


def _search(home: Path, query: str, *args: str) -> list[dict[str, Any]]:
    """`memstrata --json search QUERY` as a process: the hits as the CLI gives them."""
    r = subprocess.run(
        [EXE, "--home", str(home), "--agent", AGENT, "--json", "search", query, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ.copy(),
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    hits = out["results"] if isinstance(out, dict) else out
    assert isinstance(hits, list)
    return hits


def _said(hit: dict[str, Any]) -> str:
    return f"{hit.get('title', '')} {hit.get('text') or hit.get('snippet', '')}"


def _rank(hits: list[dict[str, Any]], phrase: str) -> int | None:
    for n, h in enumerate(hits, 1):
        if phrase.lower() in _said(h).lower():
            return n
    return None


def test_a_name_and_its_initials_find_each_other(home: Path) -> None:
    """ml-wrensong q-wandb: "Why aren't we on Weights & Biases any more?" missed, as the
    records say "W&B" (unicode61 reads `w`, `b`); the other way round, a question that says
    "W&B" finds the record that spells the name out. No list of terms: the initials of a
    capitalised name, and the capitalised names the store's own text spells initials with."""
    with Store(home, agent=AGENT) as s:
        log = s.agent(AGENT).log
        log.append("THOUGHT", "Pretrained weights for CNN14 come from Zenodo; class weights on")
        log.append("THOUGHT", "The proxy blocks api.example.org: no W&B at all, MLflow then")
        log.append("THOUGHT", "Use uv for everything, never pip")
    hits = _search(home, "Why aren't we on Weights & Biases any more?")
    assert _rank(hits, "no W&B at all") == 1, [_said(h) for h in hits]
    with Store(home, agent=AGENT) as s:
        log = s.agent(AGENT).log
        log.append("THOUGHT", "Decision: track experiments in Weights & Biases, project birds")
    hits = _search(home, "What do we use W&B for?", "--explain")  # both records name it
    assert _rank(hits, "track experiments in Weights & Biases") in (1, 2), [_said(h) for h in hits]
    assert "weights biases" in json.dumps(hits[0]["explain"])  # the long form searched


def _work(home: Path, tmp_path: Path) -> ClaudeSession:
    """Tasks done, in progress and blocked; prompts through the prompt hook, bare ones too."""
    s = ClaudeSession(home, tmp_path / "proj", agent=AGENT)
    s.call("user-prompt-submit", s.prompt("Export the model to TFLite before we ship it."))
    with Store(home, agent=AGENT) as st:
        tasks = st.agent(AGENT).tasks
        export = tasks.add("Export the model to TFLite for the phone app", priority=2)
        handoff = tasks.add("Hand the model and the mel parameters to the app team", priority=1)
        sync = tasks.add(
            "Copy the local runs to the lab tracking server once it is back", priority=3
        )
        tasks.update(export.id, status="done")
        tasks.update(handoff.id, status="in_progress")
        tasks.update(sync.id, status="blocked")
        st.agent(AGENT).log.append("THOUGHT", "Shipped the export: the model is 4.1 MB")
    for bare in ("continue", "ok go on", "yes", "ignore memory for this one"):
        s.call("user-prompt-submit", s.prompt(bare))
        s.call("stop", s.answer("Working on the hand-off to the app team."))
    return s


def test_a_question_about_open_work_returns_the_task_state(home: Path, tmp_path: Path) -> None:
    """ml-wrensong q-left and q-blocked: "What's still open before we can call this shipped?"
    returned the user's earlier "... before we ship" prompt first and no open task; "Is
    anything stuck waiting on something outside our control?" found no blocker. The task
    state answers both, though it shares no word with them."""
    s = _work(home, tmp_path)
    question = "What's still open before we can call this shipped?"
    s.call("user-prompt-submit", s.prompt(question))  # asked as the agent is asked
    hits = _search(home, question)
    assert _rank(hits, "Hand the model and the mel parameters") == 1, [_said(h) for h in hits]
    assert _rank(hits, "Copy the local runs") is not None
    assert _rank(hits, "Export the model to TFLite for the phone app") is None  # done
    question = "Is anything stuck waiting on something outside our control?"
    s.call("user-prompt-submit", s.prompt(question))
    hits = _search(home, question, "--explain")
    assert _rank(hits, "Copy the local runs") == 1, [_said(h) for h in hits]
    assert hits[0]["explain"]["open_work"]["key"] == "recall.open_work"


def test_a_bare_prompt_is_never_a_hit(home: Path, tmp_path: Path) -> None:
    """ml-wrensong q-blocked: a bare "continue" prompt came back 3rd. A prompt with no
    content ("continue", "ok go on", "yes", "ignore memory for this one") answers nothing,
    whatever words the question shares with it; a prompt with content stays a hit."""
    _work(home, tmp_path)
    for query in (
        "Should we continue with the export, yes or no?",
        "Did we go on to ignore the memory budget of the export for this one?",
    ):
        hits = _search(home, query, "-k", "10")
        said = [_said(h).strip() for h in hits]
        for bare in ("continue", "ok go on", "yes", "ignore memory for this one"):
            assert not any(x.endswith(bare) or x == bare for x in said), (query, said)
        assert any("export" in x.lower() or "ship" in x.lower() for x in said), (query, said)


def test_the_score_shown_follows_the_rank_on_every_surface(home: Path) -> None:
    """Via MCP `recall_memory` pipeline-harvest's polars decision came back at rank 2
    reading "score 0.0", and lists read 0.81 at rank 1 above 0.99 at rank 2: the newer of two
    near-tie decisions moves above the older (`recall.newer`) with its own, lower worth. The
    score shown never rises down the list, on MCP, the CLI and HTTP alike (and explain keeps
    the hit's worth)."""
    with Store(home, agent=AGENT) as s:
        log = s.agent(AGENT).log
        log.append("THOUGHT", "Decision: backfill the sales history with pandas")
        log.append(
            "THOUGHT",
            "Decision: backfill the sales history with polars, file by file, pandas ran out "
            "of memory on the backfill",
        )
    question = "how do we backfill the sales history"
    params = StdioServerParameters(
        command=EXE,
        args=["--home", str(home), "--agent", AGENT, "mcp"],
        env=os.environ.copy(),  # the lexical search of the other surfaces (MEMSTRATA_EMBEDDER)
    )

    async def recall() -> list[dict[str, Any]]:
        async with Client(params) as c:
            r = await c.call_tool("recall_memory", {"query": question})
            assert not r.is_error and isinstance(r.structured_content, dict), r.content
            return list(r.structured_content["results"])

    server = start_server(home, env={"MEMSTRATA_AGENT": AGENT})
    try:
        with server.client() as http:
            api = http.get("/api/search", params={"q": question, "k": 5})
            assert api.status_code == 200, api.text
            over_http = api.json()["hits"]
    finally:
        stop_server(server)
    surfaces = {"mcp": anyio.run(recall), "cli": _search(home, question), "http": over_http}
    for name, hits in surfaces.items():
        assert "polars" in _said(hits[0]), (name, [_said(h) for h in hits])
        scores = [h["score"] for h in hits]
        assert scores == sorted(scores, reverse=True), (name, scores)
        assert all(x > 0 for x in scores), (name, scores)
