"""Recall priors on plain values (`search.priors`, `search.toolcalls`): signals, weights,
exclusions, collapse of one tool call, replaced decisions, and the `[recall]` config."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from memstrata.config import load_config
from memstrata.config.recall import DEFAULT_ASKED
from memstrata.search.coverage import QueryTerm, coverage
from memstrata.search.priors import (
    PriorSettings,
    Signal,
    apply_priors,
    asked_signals,
    bookkeeping_reason,
    is_question,
    replaced_decisions,
    same_words,
    signal_of,
)
from memstrata.search.query import Hit

T0 = 1_790_000_000.0


def log(
    uid: str, entry_type: str, text: str, score: float = 1.0, ts: float = T0, **metadata: Any
) -> Hit:
    """A LOG entry as the index holds it: its footer under meta["metadata"]."""
    meta = {"entry_type": entry_type, "content": text, "metadata": metadata}
    return Hit(
        uid,
        "log",
        score,
        entry_type,
        text,
        text,
        ts,
        "LOG.md",
        owner="coder",
        kind=entry_type,
        meta=meta,
    )


def msg(
    uid: str,
    role: str,
    text: str,
    session: str = "s1",
    ts: float = T0,
    score: float = 1.0,
    **rec: Any,
) -> Hit:
    """A transcript message: its record is its meta, its file names the session."""
    meta = {"role": role, "content": text, **rec}
    return Hit(
        uid,
        "session",
        score,
        role,
        text,
        text,
        ts,
        f"agents/coder/sessions/{session}.jsonl",
        owner="coder",
        kind=role,
        meta=meta,
    )


def rec(
    uid: str,
    layer: str,
    title: str,
    text: str,
    kind: str | None = None,
    score: float = 1.0,
    ts: float = T0,
    **kw: Any,
) -> Hit:
    return Hit(uid, layer, score, title, text, text, ts, f"{layer}.md", kind=kind, **kw)


@pytest.mark.parametrize(
    ("hit", "signal"),
    [
        (log("a", "THOUGHT", "Decision: PostgreSQL 16 with row-level security"), "decision"),
        (log("b", "SYSTEM", "Final response: OK, we decided: 15-minute access tokens"), "decision"),
        (
            log("c", "SYSTEM", "Final response: the tests pass now", event="final_response"),
            "reply",
        ),
        (log("d", "THOUGHT", "Constraint: never run migrations in business hours"), "constraint"),
        (log("e", "THOUGHT", "the user prefers dark mode everywhere"), "preference"),
        (log("f", "THOUGHT", "PDF export blocked: WeasyPrint needs pango"), "status"),
        (log("g", "THOUGHT", "the retry decorator hides the race"), "activity"),
        (log("h", "TOOL_USE", 'Read(file_path="app/db.py") -> ok, 812 chars', tool="Read"), "tool"),
        (
            log("i", "TOOL_USE", 'Bash(command="pytest") -> error, 90 chars'),
            "tool",
        ),  # old: no metadata
        (log("j", "TOOL_USE", "bumped requests to 2.32 to fix the proxy CVE"), "activity"),
        (log("k", "USER_FEEDBACK", "which database?", event="user_intent"), "intent"),
        (
            log("k2", "USER_FEEDBACK", "For the record: I prefer httpx", event="user_intent"),
            "intent",  # a prompt that states a preference is what was said (states: preference)
        ),
        (log("k3", "TOOL_USE", 'web_search("Bolt profits") -> 10 results'), "tool"),  # self-logged
        (rec("k4", "context", "2026-03-12 (session s1, memory flush)", "- Decision: x"), "digest"),
        (log("l", "USER_FEEDBACK", "keep status updates short"), "constraint"),  # a directive
        (log("l2", "USER_FEEDBACK", "nice, that worked"), "activity"),
        (log("m", "ERROR", "Error: tool Bash failed: exit code 1", tool="Bash"), "error"),
        (
            log(
                "n",
                "SYSTEM",
                "LOG compacted: 40 entries archived to a.md.\n\n- Decision: x",
                compacted=True,
                archive_id="arc-1",
            ),
            "digest",
        ),
        (log("o", "THOUGHT", "we will use uv for installs", kind="constraint"), "constraint"),
        (log("p", "THOUGHT", "anything", tags=["decision"]), "decision"),
        (msg("q", "assistant", '[tool_use Read] {"file_path": "a.py"}'), "tool"),
        (msg("r", "user", "[tool_result] 5 passed"), "tool"),
        (msg("s", "tool_call", "", name="Read"), "tool"),
        (msg("t", "summary", "Earlier: we set up the database"), "digest"),
        (msg("u", "user", "which database should we use?"), "message"),
        (rec("v", "fact", "db_engine", "PostgreSQL 16", kind="config"), "fact"),
        (rec("w", "fact", "theme", "dark", kind="preference"), "preference"),
        (rec("x", "ledger", "Chose bcrypt", "Chose bcrypt", kind="decision"), "decision"),
        (rec("y", "ledger", "All APIs use /api/v1", "...", kind="convention"), "constraint"),
        (rec("z", "ledger", "AuthService.verify", "...", kind="interface"), "fact"),
        (rec("A", "ledger", "JWT helper", "...", kind="code"), "note"),
        (rec("B", "context", "Key Decisions", "## Key Decisions\n- SQLite"), "decision"),
        (rec("C", "context", "User Preferences", "## User Preferences\n- terse"), "preference"),
        (rec("D", "context", "Project context", "- Database: PostgreSQL 16"), "note"),
        (rec("E", "now", "NOW", "PDF export blocked"), "status"),
        (rec("F", "task", "TASK-001", "Ship auth", kind="pending"), "task"),
        (rec("G", "item", "Use Fastify", "We chose Fastify", kind="decision"), "decision"),
        (rec("H", "item", "Sessions are JSONL", "...", kind="claim"), "fact"),
        (rec("I", "compaction", "LOG compaction arc-1", "- Objective: ...", kind="log"), "digest"),
        (rec("J", "source", "app.py", "def main(): ..."), "source"),
    ],
)
def test_signal_of_each_record_shape(hit: Hit, signal: str) -> None:
    assert signal_of(hit).name == signal


def test_bookkeeping_by_tag_metadata_and_text_shape() -> None:
    notice = "stop hook: captured 26 new message(s) of session 3f2a9c1e-77aa-4c1b; last: user: hi"
    assert bookkeeping_reason(log("a", "SYSTEM", notice, session="s", event="stop", captured=26))
    assert bookkeeping_reason(log("b", "SYSTEM", notice))  # an old entry: its shape says it
    assert bookkeeping_reason(log("c", "SYSTEM", "hook housekeeping", tags=["bookkeeping"]))
    assert bookkeeping_reason(rec("d", "ledger", "x", "x", tags=("bookkeeping",)))
    assert bookkeeping_reason(log("e", "SYSTEM", "session 3f2a9c1e-77aa-4c1b-9d0e-5b6f"))
    assert bookkeeping_reason(log("f", "SYSTEM", "session_id: abc-123-def-456"))
    for meaning in (
        "session compaction-policy notes",  # no digit: words, not an id
        "the stop hook: captured the right messages after the fix",
        "Session 3f2a9c1e-77aa-4c1b ended with the tests green",  # more than the id
    ):
        assert bookkeeping_reason(log("g", "THOUGHT", meaning)) is None, meaning
    assert bookkeeping_reason(msg("h", "user", notice)) is None  # only LOG entries are hook notices


def test_asked_signals_and_same_words() -> None:
    assert asked_signals("what did we decide about the database last week?") == {"decision"}
    assert asked_signals("which editor does the user prefer") == {"preference"}
    assert asked_signals("why did the build fail?") == {"error"}
    assert asked_signals("database engine") == frozenset()
    assert same_words(
        "What did we decide about the database?", "what did we DECIDE about the database"
    )
    assert not same_words("what did we decide", "what did we decide about the database")
    assert not same_words("?!", "?!")


def test_worth_is_score_times_prior_with_explain() -> None:
    decision = log("d", "THOUGHT", "Decision: PostgreSQL 16 for the database", score=0.5)
    trace = log("t", "TOOL_USE", 'Read(file_path="db/database.py") -> ok, 90 chars', tool="Read")
    settings = PriorSettings({"decision": 1.0, "tool": 0.35}, asked=1.5, replaced=0.5)
    out = apply_priors([trace, decision], "what did we decide about the database?", settings)
    assert [h.uid for h in out] == ["d", "t"]
    d, t = out
    assert d.score == pytest.approx(0.5 * 1.0 * 1.5) and t.score == pytest.approx(0.35)
    assert d.explain["before_prior"] == 0.5 and d.explain["score"] == pytest.approx(0.75)
    assert d.explain["prior"] == {
        "signal": "decision",
        "why": "THOUGHT text reads as a decision",
        "weight": 1.0,
        "key": "recall.decision",
        "asked": 1.5,
        "asked_key": "recall.asked",
        "value": 1.5,
    }
    assert t.explain["prior"]["key"] == "recall.tool" and "asked" not in t.explain["prior"]


def test_exclusions_never_come_back_and_the_first_hit_says_why() -> None:
    q = "what did we decide about the database last week?"
    pool = [
        log(
            "question",
            "USER_FEEDBACK",
            "What did we decide about the database last week?",
            event="user_intent",
        ),
        log("rephrased", "USER_FEEDBACK", "remind me of the database choice", event="user_intent"),
        log("older", "USER_FEEDBACK", "which database do we use?", event="user_intent", score=0.9),
        log(
            "notice", "SYSTEM", "stop hook: captured 9 new message(s) of session s1; last: database"
        ),
        msg("said", "user", "what did we decide about the database last week"),
        rec(
            "hidden", "ledger", "MySQL", "MySQL for the database", kind="decision", superseded=True
        ),
        log("answer", "THOUGHT", "Decision: PostgreSQL 16 for the database", score=0.4),
    ]
    out = apply_priors(pool, q, open_prompts={"rephrased"})
    assert [h.uid for h in out] == ["answer", "older"]
    dropped = out[0].explain["dropped"]
    assert dropped["the question being asked (same words)"] == ["question", "said"]
    assert dropped["the prompt being asked (the newest intent, no final response yet)"] == [
        "rephrased"
    ]
    assert dropped["superseded"] == ["hidden"]
    assert list(dropped) == [
        "the question being asked (same words)",
        "the prompt being asked (the newest intent, no final response yet)",
        "bookkeeping: capture notice (text shape)",
        "superseded",
    ]
    asked_for = apply_priors(pool, q, include_superseded=True, open_prompts={"rephrased"})
    assert "hidden" in [h.uid for h in asked_for]


def test_a_weight_of_zero_means_never_and_ties_go_to_the_newer() -> None:
    a = rec("a", "fact", "k1", "v", kind="config", ts=T0)
    b = rec("b", "fact", "k2", "v", kind="config", ts=T0 + 60)
    c = rec("c", "fact", "k3", "v", kind="config", ts=T0 + 60)
    trace = log("t", "TOOL_USE", 'Read(file_path="a") -> ok, 1 chars', tool="Read", score=5.0)
    out = apply_priors([a, c, trace, b], "v", PriorSettings({"fact": 1.0, "tool": 0.0}))
    assert [h.uid for h in out] == ["b", "c", "a"]
    assert out[0].explain["dropped"] == {"weight 0 (recall.tool)": ["t"]}


def _call(ts: float, **ids: Any) -> list[Hit]:
    """One tool call as the hooks record it: the PostToolUse LOG entry (with its id), the
    captured transcript tool_use and tool_result (no id: captured by today's hooks)."""
    return [
        log(
            f"log@{ts}",
            "TOOL_USE",
            'Bash(command="pytest tests/test_db.py") -> ok, 40 chars',
            ts=ts + 2,
            tool="Bash",
            args={"command": "pytest tests/test_db.py"},
            session="s1",
            **ids,
        ),
        msg(
            f"use@{ts}",
            "assistant",
            '[tool_use Bash] {"command": "pytest tests/test_db.py"}',
            ts=ts,
            score=0.9,
        ),
        msg(
            f"result@{ts}",
            "user",
            "[tool_result] tests/test_db.py ..... 5 passed",
            ts=ts + 1.5,
            score=0.8,
        ),
    ]


def test_the_records_of_one_tool_call_come_back_once() -> None:
    out = apply_priors(_call(T0, tool_use_id="toolu_01"), "pytest tests/test_db.py")
    assert [h.uid for h in out] == [f"log@{T0}"]
    assert {c["uid"] for c in out[0].explain["collapsed"]} == {f"use@{T0}", f"result@{T0}"}
    # by the id alone: the transcript message carries it too (the design note's contract)
    tagged = [
        log("l", "TOOL_USE", "Read(...) -> ok, 1 chars", tool="Read", tool_use_id="toolu_9"),
        msg("m", "user", "[tool_result] x", session="other", ts=T0 + 5000, tool_use_id="toolu_9"),
    ]
    [kept] = apply_priors(tagged, "x")  # equal worth: the newer one stands for both
    assert kept.uid == "m" and kept.explain["collapsed"] == [{"uid": "l", "why": "same tool call"}]


def test_different_tool_calls_stay_apart() -> None:
    two_runs = _call(T0, tool_use_id="toolu_01") + _call(T0 + 3600, tool_use_id="toolu_02")
    assert len(apply_priors(two_runs, "pytest")) == 2
    other_file = log(
        "o",
        "TOOL_USE",
        'Bash(command="pytest tests/test_api.py") -> ok, 9 chars',
        ts=T0 + 3,
        tool="Bash",
        args={"command": "pytest tests/test_api.py"},
        session="s1",
    )
    out = apply_priors([*_call(T0), other_file], "pytest")
    assert len(out) == 2  # the other command is another call
    elsewhere = msg("x", "user", "[tool_result] 5 passed", session="s2", ts=T0 + 1)
    assert len(apply_priors([*_call(T0), elsewhere], "passed")) == 2  # another session
    use, result = _call(T0)[1:]
    early = replace(result, uid="early", ts=T0 - 60)
    assert len(apply_priors([use, early], "passed")) == 2  # a result before its tool_use
    late = replace(result, uid="late", ts=T0 + 2 + 3600)
    assert len(apply_priors([_call(T0)[0], late], "passed")) == 2  # long after the call ended


def test_a_failed_call_keeps_its_error_entry() -> None:
    use = log(
        "u",
        "TOOL_USE",
        'Bash(command="make") -> error, 0 chars: exit 2',
        tool="Bash",
        tool_use_id="toolu_3",
        outcome="error",
    )
    err = log(
        "e",
        "ERROR",
        "Error: tool Bash failed: exit code 2",
        tool="Bash",
        tool_use_id="toolu_3",
        score=0.9,
    )
    out = apply_priors([use, err], "make failed")
    assert [h.uid for h in out] == ["e"] and out[0].explain["collapsed"][0]["uid"] == "u"


def test_captured_tool_calls_share_the_hooks_tool_use_id() -> None:
    """Claude Code's blocks captured as seed 004 tool_call / tool_result with the call's
    id (the useful-memory hooks), and the PostToolUse entry with `tool_use_id`: one call."""
    entry = _call(T0, tool_use_id="toolu_7")[0]
    call = msg("c", "tool_call", "", id="toolu_7", name="Bash", input={"command": "make"}, ts=T0)
    result = msg("r", "tool_result", "ok", id="toolu_7", name="Bash", ts=T0 + 1)
    [kept] = apply_priors([entry, call, result], "make")
    assert {c["uid"] for c in kept.explain["collapsed"]} == {"c", "r", entry.uid} - {kept.uid}


def test_seed_004_tool_call_and_result_share_their_message_id() -> None:
    call = msg("c", "tool_call", "", name="read", id="tool_001", input={"path": "README.md"})
    result = msg("r", "tool_result", "# Project...", id="tool_001", ts=T0 + 1)
    other = msg("o", "tool_result", "# Other", id="tool_002", ts=T0 + 2)
    again = msg("a", "tool_result", "# Again", id="tool_001", session="s2", ts=T0 + 3, score=0.5)
    out = apply_priors([call, result, other, again], "project")
    assert [h.uid for h in out] == ["o", "r", "a"]  # equal worth: newer first; r stands for c
    assert out[1].explain["collapsed"] == [{"uid": "c", "why": "same tool call"}]
    assert "collapsed" not in out[2].explain  # tool_001 of session s2 is another call


def test_a_decision_a_newer_one_replaces_ranks_below_it() -> None:
    old = log("old", "THOUGHT", "Decision: PDF export uses WeasyPrint (HTML templates)", ts=T0)
    new = log(
        "new",
        "THOUGHT",
        "Decision: replace WeasyPrint with ReportLab for the PDF export",
        ts=T0 + 86400,
        score=0.8,
    )
    assert replaced_decisions([old, new]) == {"old": ("new", "weasyprint")}
    out = apply_priors([old, new], "PDF library decision")
    assert [h.uid for h in out] == ["new", "old"]
    assert out[1].explain["prior"]["replaced_by"] == "new"
    assert out[1].explain["prior"]["replaced_key"] == "recall.replaced"
    # "drop Python 3.8" shares nothing else with "Python 3.11 for the API": not a replacement
    api = log("api", "THOUGHT", "Decision: Python 3.11 for the API", ts=T0)
    drop = log("drop", "THOUGHT", "Decision: drop Python 3.8 support in the CLI", ts=T0 + 1)
    assert replaced_decisions([api, drop]) == {}
    # the newer one that replaces is never replaced by the older mention
    assert "new" not in replaced_decisions([old, new])


def test_recall_config_table(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("[recall]\ntool = 0.1\nasked = 2\ntoool = 3\n")
    cfg = load_config(tmp_path, env={})
    assert cfg.recall_weights["tool"] == 0.1 and cfg.recall_weights["asked"] == 2.0
    assert any("toool" in p and "did you mean 'tool'" in p for p in cfg.problems)
    rows = {name: (value, origin) for name, value, origin in cfg.effective()}
    assert rows["recall.tool"] == (0.1, "config.toml")
    assert rows["recall.decision"] == (1.0, "default")
    settings = PriorSettings.from_config(cfg.recall_weights)
    assert settings.weights["tool"] == 0.1 and settings.asked == 2.0 and settings.replaced == 0.5


def test_memstrata_config_lists_the_recall_keys(home: Path) -> None:
    home.mkdir(parents=True)
    (home / "config.toml").write_text("[recall]\ndigest = 0.25\n")
    out = subprocess.run(
        [sys.executable, "-m", "memstrata", "--home", str(home), "config"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    lines = {line.split()[0]: line for line in out.splitlines() if line.startswith("recall.")}
    assert "0.25" in lines["recall.digest"] and "config.toml" in lines["recall.digest"]
    assert {"recall.tool", "recall.asked", "recall.replaced", "recall.decision"} <= set(lines)


@pytest.mark.parametrize("mode", ["lexical", "hybrid", "semantic"])
def test_every_search_path_ranks_by_worth(home: Path, mode: str) -> None:
    """The one call site runs in the lexical and the hybrid (and semantic) path alike:
    the prompt being asked and bookkeeping are gone, one call is one hit, traces rank
    below the decision."""
    from memstrata import SearchQuery, Store
    from memstrata.embed.base import FakeEmbedder
    from memstrata.operations.loop import log_intent, log_tool

    with Store(home, agent="coder") as store:
        store.use_embedder(FakeEmbedder(dim=64))
        log = store.agent().log
        log.append("THOUGHT", "Decision: the cache runs on Redis 7 with LRU eviction")
        for n in range(3):
            log_tool(
                store,
                "coder",
                "Read",
                {"file_path": f"cache/redis_{n}.py"},
                "x" * 40,
                session="s1",
                tool_use_id=f"toolu_{n}",
            )
        log.append(
            "ERROR",
            "Error: tool Read failed: cache/redis_0.py vanished",
            {"tool": "Read", "session": "s1", "tool_use_id": "toolu_0"},
        )
        log.append(
            "SYSTEM",
            "stop hook: captured 4 new message(s) of session s1; last: redis cache",
            {"session": "s1", "event": "stop", "captured": 4},
        )
        log_intent(store, "coder", "which cache did we pick, redis?", session="s2")
        hits = store.search(SearchQuery(text="which cache did we pick, redis?", mode=mode, k=10))
    uids = [h.uid for h in hits]
    texts = [h.text for h in hits]
    decision = next(n for n, t in enumerate(texts) if t.startswith("Decision: the cache runs"))
    traces = [n for n, h in enumerate(hits) if h.kind == "TOOL_USE"]
    assert traces and all(decision < n for n in traces), texts
    assert not any(t.startswith(("stop hook:", "which cache did we pick")) for t in texts), texts
    assert sum("redis_0.py" in t for t in texts) == 1  # the TOOL_USE and the ERROR of one call
    assert all("prior" in h.explain and "before_prior" in h.explain for h in hits)
    assert len(uids) == len(set(uids))


def test_a_ledger_decision_says_what_it_replaces_in_its_summary() -> None:
    """A ledger entry's summary is its title and its detail the text: "Y instead of X" in
    the summary replaces an older decision that mentions X (before, only the detail was
    read, so a user's old "let's do that with X" outranked the ledger's replacement)."""
    old = log("old", "USER_FEEDBACK", "Receipts as PDF: let's use WeasyPrint, I like HTML")
    new = Hit(
        "new",
        "ledger",
        0.9,
        "Render PDF receipts with fpdf2 instead of WeasyPrint",
        "the host will not install libpango",
        "the host will not install libpango",
        T0 + 86400,
        "ledger.jsonl",
        kind="decision",
        meta={"kind": "decision"},
    )
    assert replaced_decisions([old, new]) == {"old": ("new", "weasyprint")}


def test_a_question_about_what_holds_something_up_asks_for_status() -> None:
    assert asked_signals("What is holding up the deployment?") == {"status"}
    assert asked_signals("what stopped the receipts from being generated?") == {"status"}
    # stuck, blocked, waiting: the task state too (a blocked task, `search.intent`)
    assert asked_signals("are we stuck on the token?") == {"status", "task"}


def _terms(*pairs: tuple[str, float]) -> list[QueryTerm]:
    return [QueryTerm(w, (w,), idf) for w, idf in pairs]


def test_a_newer_record_on_the_same_subject_wins_a_near_tie() -> None:
    """bench agent: "What database does the service run on now?" put the old final
    response ("... SQLite database layer ...") just above the newer Decisions section.
    Both hold the same query word: the newer one, within `recall.newer` of the older,
    goes first; a record on another subject, or far behind, does not move."""
    said = "Final response: The skeleton is up: SQLite database layer"
    old = log("old", "SYSTEM", said, score=0.75, event="final_response")  # reply: x 0.7
    new = rec("new", "context", "Decisions", "Database: PostgreSQL 16", ts=T0 + 9, score=0.49)
    other = rec("other", "fact", "db", "service runs on PythonAnywhere", ts=T0 + 99, score=0.5)
    far = rec("far", "fact", "db", "database backups nightly", ts=T0 + 50, score=0.3)
    turn = msg("turn", "user", "the database is slow today", ts=T0 + 60, score=0.51)
    terms = _terms(("database", 2.0), ("service", 1.0))
    pool = [old, new, other, far, turn]
    question = "what database does the service run on"
    off = apply_priors(pool, question, PriorSettings(newer=0.0), terms=terms)
    assert [h.uid for h in off] == ["old", "turn", "other", "new", "far"]  # off
    on = apply_priors(pool, question, terms=terms)  # the default, recall.newer = 0.2
    # a conversation turn is an event: being newer does not make it an update
    assert [h.uid for h in on] == ["new", "old", "turn", "other", "far"]
    assert on[0].explain["prior"]["newer_than"] == "old"
    assert on[0].explain["prior"]["newer_key"] == "recall.newer"
    assert on[0].explain["prior"]["terms_held"] == ["database"]


def test_a_newer_statement_updates_an_older_trace_or_task_but_an_account_never_moves() -> None:
    """The newer-first rule moves only records that state how things are: a preference
    set after the `uv add` trace passes it; a newer final response (an account) does not
    pass an older note; "what went wrong" asks about errors."""
    trace = log("t", "TOOL_USE", 'Bash(command="uv add pandas") -> ok, 9 chars', score=0.99)
    pref = rec("p", "fact", "package_manager", "uv only, never pip", ts=T0 + 5, kind="preference")
    terms = _terms(("uv", 2.0))
    got = apply_priors(
        [trace, replace(pref, score=0.34)], "which tool adds a dependency", terms=terms
    )
    assert [h.uid for h in got] == ["p", "t"]  # 0.34 vs 0.99 x 0.35 (tool weight)
    note = rec("n", "note", "Locks", "uv lock holds the versions", score=0.8)
    reply = log("r", "SYSTEM", "Final response: uv lock is done", ts=T0 + 9, score=1.0)
    got = apply_priors(
        [note, replace(reply, meta={**reply.meta, "metadata": {"event": "final_response"}})],
        "uv",
        terms=terms,
    )
    assert [h.uid for h in got] == ["n", "r"]  # 0.8 vs 0.7: the reply does not move
    assert asked_signals("What went wrong when the nightly run met Metabase?") == {"error"}


def test_a_question_does_not_answer_a_question() -> None:
    """bench agent: "How much did an operator earn on a single Paris trip?" put a list of
    interview questions ("Does a single ride make money ...?") above the fact that states
    the revenue per ride. A record that mostly asks counts for `recall.question`, unless
    the query asks what to ask."""
    asks = rec("q", "file", "Questions", "1. Does a single ride make money?\n2. Who pays?")
    says = rec("f", "fact", "ride", "About 3.10 euros of revenue per ride in Paris", score=0.7)
    assert is_question(asks) and not is_question(says)
    settings = PriorSettings(question=0.5)
    got = apply_priors([asks, says], "how much did an operator earn on a trip", settings)
    assert [h.uid for h in got] == ["f", "q"]
    assert got[1].explain["prior"]["question"] == 0.5
    assert got[1].explain["prior"]["question_key"] == "recall.question"
    what_to_ask = apply_priors([asks, says], "what do we ask the operator first", settings)
    assert [h.uid for h in what_to_ask] == ["q", "f"]
    turn = msg("t", "user", "How is Max, your new puppy?")  # a dialogue's turn: left alone
    assert [h.uid for h in apply_priors([turn, says], "puppy", settings)] == ["t", "f"]


def test_a_question_about_what_to_ask_asks_for_the_questions() -> None:
    """bench agent, research-scooters: "What do we ask the Bolt policy head first?" ranked
    the list of questions for him 4th, below the fact that names him and a note that
    mentions asking. A query that asks what to ask asks for the records that ask, as
    "what did we decide" asks for decisions: they get `recall.asked`, shown in explain."""
    asks = rec(
        "q", "file", "Questions for Jonas", "1. Does a single ride make money?\n2. Who pays?"
    )
    names = rec("f", "fact", "interview", "Jonas Berg, Bolt's head of policy: April 23", score=0.8)
    got = apply_priors([replace(asks, score=0.6), names], "what do we ask the Bolt policy head?")
    assert [h.uid for h in got] == ["q", "f"]  # 0.6 x 1.5 against 0.8
    assert got[0].explain["prior"]["asked"] == 1.5
    assert got[0].explain["prior"]["asked_for"] == "questions"
    got = apply_priors([replace(asks, score=0.6), names], "who is the Bolt interview with?")
    assert [h.uid for h in got] == ["f", "q"]  # not asked what to ask: counts for half


def test_coverage_weighs_the_query_terms_a_record_holds_by_idf() -> None:
    """A record holding one incidental word of the question covers little of it; one that
    holds its rare words covers most (`search.coverage`); `recall.coverage` turns the
    share into a factor, shown by explain."""
    terms = _terms(("page", 0.5), ("database", 3.0), ("decide", 1.5))
    incidental = rec("i", "note", "Pages", "the member page lists loans", score=1.0)
    key = rec("k", "ledger", "db", "Databases: we decide on PostgreSQL", score=0.8)
    assert coverage(incidental, terms) == (0.1, ["page"])
    assert coverage(key, terms) == (0.9, ["database", "decide"])
    got = apply_priors([incidental, key], "page database decide", PriorSettings(coverage=0.5))
    assert [h.uid for h in got] == ["i", "k"]  # no terms handed over: no coverage
    got = apply_priors(
        [incidental, key], "page database decide", PriorSettings(coverage=0.5), terms=terms
    )
    assert [h.uid for h in got] == ["k", "i"]
    assert got[1].explain["prior"]["coverage"] == 0.1
    assert got[1].explain["prior"]["coverage_factor"] == 0.55


def test_a_prompt_that_states_a_choice_is_an_account_of_it_below_its_record() -> None:
    """The user's prompt stating a preference or a decision is what was said, weighed as the
    prompt it is (`recall.intent`), still asked about as what it states; the record the
    agent made of it ranks above it. Before, the prompt weighed as the preference itself and
    its extra words ("Two things about how I like to work: use uv ... and keep the
    transformations as plain SQL files") put it above the decision a question was after."""
    said = "For the record: I prefer httpx to requests for HTTP calls"
    prompt = log("k2", "USER_FEEDBACK", said, score=1.0, event="user_intent")
    assert signal_of(prompt) == Signal(
        "intent", "the user's prompt states a preference", "preference"
    )
    pref = rec("p", "fact", "http_client", "httpx, never requests", kind="preference", score=0.8)
    top = apply_priors([prompt, pref], "which HTTP library do I prefer")
    assert [h.uid for h in top] == ["p", "k2"]
    assert top[1].explain["prior"]["asked"] == DEFAULT_ASKED  # asked about as a preference
    assert top[1].explain["prior"]["key"] == "recall.intent"
