"""Issue 19 item 2 through Claude Code's hooks: a decision the pre-compact flush copied into
CONTEXT.md is never presented as current once a newer decision replaced it.

Seen by the lead on `bench agent`: the flush wrote "- Decision: Members want a PDF receipt
... Let's do that with WeasyPrint, I like HTML templates." under "(memory flush)"; fpdf2
later replaced the WeasyPrint decision and the session-start context still showed the
flushed line as a decision of the project.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.claude_code import EXE, ClaudeSession

WEASY = (
    "Members want a PDF receipt when they return a tool. Let's do that with WeasyPrint,"
    " I like HTML templates."
)


def _decide(home: Path, text: str, *more: str) -> str:
    """The agent's own `record_decision` (through the CLI, another process); its id."""
    args = [EXE, "--home", str(home), "--agent", "me", "--json", "decisions", "record", text]
    out = subprocess.run([*args, *more], check=True, capture_output=True, text=True, timeout=60)
    return str(json.loads(out.stdout)["entry"]["id"])


def _current_lines(context: str) -> list[str]:
    """The lines of the context's persistent memory (CONTEXT.md) and decisions in force
    that present the WeasyPrint choice as current."""
    source = 'source="agents/me/memory/CONTEXT.md">'
    memory = context.split(source, 1)[1].split("</memory>")[0] if source in context else ""
    decisions = context.split("## Decisions and constraints in force\n", 1)[-1].split("\n## ")[0]
    return [
        line
        for line in (memory + "\n" + decisions).splitlines()
        if "WeasyPrint" in line and "(replaced by" not in line and "instead of" not in line
    ]


def test_a_flushed_copy_of_a_recorded_decision_is_not_written(home: Path, tmp_path: Path) -> None:
    """The agent recorded the decision itself; the flush finds it in the prompt in other
    words: the record is the decision, CONTEXT.md gets no copy that would outlive it."""
    s = ClaudeSession(home, tmp_path / "proj")
    s.hook("user-prompt-submit", s.prompt(WEASY))
    old = _decide(home, "Render PDF receipts with WeasyPrint from a Jinja2 HTML template")
    s.hook("stop", s.answer("Receipts render with WeasyPrint now."))
    s.hook("pre-compact", s.payload("PreCompact", trigger="auto"))
    memory = home / "agents" / "me" / "memory" / "CONTEXT.md"
    assert "WeasyPrint" not in (memory.read_text() if memory.exists() else "")
    _decide(
        home,
        "Render PDF receipts with fpdf2 (pure Python) instead of WeasyPrint",
        "--replaces",
        old,
    )
    context = ClaudeSession(home, tmp_path / "proj").context()
    assert _current_lines(context) == [], _current_lines(context)
    assert "Render PDF receipts with fpdf2" in context


def test_a_flushed_decision_a_newer_one_replaces_shows_as_replaced(
    home: Path, tmp_path: Path
) -> None:
    """Flushed before any record said it; then a decision says it replaces WeasyPrint: the
    context shows the flushed line as replaced, with the id of what replaced it."""
    s = ClaudeSession(home, tmp_path / "proj")
    s.hook("user-prompt-submit", s.prompt(WEASY))
    s.hook("stop", s.answer("Started on the receipt template."))
    s.hook("pre-compact", s.payload("PreCompact", trigger="auto"))
    memory = (home / "agents" / "me" / "memory" / "CONTEXT.md").read_text()
    assert "Let's do that with WeasyPrint" in memory  # seed 004: the flush keeps it
    new = _decide(home, "Render PDF receipts with fpdf2 (pure Python) instead of WeasyPrint")
    context = ClaudeSession(home, tmp_path / "proj").context()
    assert _current_lines(context) == [], _current_lines(context)
    assert f"(replaced by {new}): {WEASY}" in context


def _search(home: Path, query: str, *more: str) -> list[dict[str, object]]:
    """`memstrata --json search --full` as a user runs it; its hits. Lexical: the same
    exclusions and priors as hybrid (`search.worth`), without loading the model."""
    args = [
        EXE,
        "--home",
        str(home),
        "--agent",
        "me",
        "--json",
        "search",
        "--full",
        "--mode",
        "lexical",
        query,
    ]
    out = subprocess.run([*args, *more], check=True, capture_output=True, text=True, timeout=60)
    found = json.loads(out.stdout)
    return list(found["results"] if isinstance(found, dict) else found)


def test_a_flushed_section_a_newer_decision_replaces_is_not_a_current_recall_hit(
    home: Path, tmp_path: Path
) -> None:
    """Issue 19 item 2 in recall: the CONTEXT.md section the pre-compact flush wrote came
    back from search as it was written ("- Decision: ... with WeasyPrint") after fpdf2
    replaced it. A section whose every item is replaced is not a hit (history still has it,
    shown replaced); one with items in force shows the replaced line as replaced."""
    s = ClaudeSession(home, tmp_path / "proj")
    s.hook("user-prompt-submit", s.prompt(WEASY))
    s.hook("stop", s.answer("Started on the receipt template."))
    s.hook("pre-compact", s.payload("PreCompact", trigger="auto"))
    new = _decide(home, "Render PDF receipts with fpdf2 (pure Python) instead of WeasyPrint")

    def flushed(hits: list[dict[str, object]]) -> list[dict[str, object]]:
        return [h for h in hits if h["layer"] == "context" and "memory flush" in str(h["title"])]

    hits = _search(home, "which library makes the PDF receipts")
    assert (
        hits
        and hits[0]["title"] == "Render PDF receipts with fpdf2 (pure Python) instead of WeasyPrint"
    )
    assert flushed(hits) == [], flushed(hits)
    history = flushed(_search(home, "which library makes the PDF receipts", "--include-superseded"))
    assert len(history) == 1
    assert f"- Decision (replaced by {new}): {WEASY}" in str(history[0]["text"])
    assert "- Decision: Members" not in str(history[0]["snippet"])

    # a later flush section holds one item in force beside the replaced one
    memory = home / "agents" / "me" / "memory" / "CONTEXT.md"
    text = memory.read_text()
    memory.write_text(
        text.rstrip("\n") + "\n- Preference: receipts printed on A5 paper, never A4\n"
    )
    hits = flushed(_search(home, "PDF receipts WeasyPrint A5 paper"))
    assert len(hits) == 1
    assert f"- Decision (replaced by {new}): {WEASY}" in str(hits[0]["text"])
    assert f"(replaced by {new}): Members" in str(hits[0]["snippet"])
    assert "Decision: Members" not in str(hits[0]["snippet"])
    assert "- Preference: receipts printed on A5 paper" in str(hits[0]["text"])
