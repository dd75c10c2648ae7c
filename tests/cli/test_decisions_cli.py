"""`memstrata decisions record|list`: a decision in one call on the CLI (issue 19 item 2)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.claude_code import EXE

from memstrata import Store


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [EXE, "--home", str(home), "--agent", "finn", "--json", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def _ok(home: Path, *args: str) -> Any:
    r = _cli(home, *args)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_cli_records_a_decision_and_replaces_it_by_text(home: Path) -> None:
    old = _ok(home, "decisions", "record", "Use WeasyPrint for the PDF export")["entry"]
    _ok(home, "decisions", "record", "Never deploy on Fridays", "--kind", "constraint")
    new = _ok(
        home,
        "decisions",
        "record",
        "Use ReportLab: WeasyPrint needs pango",
        "--replaces",
        "weasyprint",
    )
    assert new["replaced"] == old["id"] and new["entry"]["supersedes"] == old["id"]
    live = _ok(home, "decisions", "list")
    assert [(e["kind"], e["summary"]) for e in live] == [
        ("decision", "Use ReportLab: WeasyPrint needs pango"),
        ("constraint", "Never deploy on Fridays"),
    ]
    history = {e["id"]: e["replaced_by"] for e in _ok(home, "decisions", "list", "--all")}
    assert history[old["id"]] == new["entry"]["id"]  # history keeps the replaced one
    context = _ok(home, "context")["text"]
    assert "Use ReportLab: WeasyPrint needs pango" in context
    assert "Use WeasyPrint for the PDF export" not in context
    with Store(home, agent="finn") as s:  # the file and the index say the same
        assert s.ledger.is_superseded(old["id"]) and s.ledger.get(old["id"]).summary.endswith(
            "PDF export"
        )


def test_cli_replaces_matching_two_records_is_a_conflict_naming_them(home: Path) -> None:
    a = _ok(home, "decisions", "record", "Use PostgreSQL 16 for the app database")["entry"]
    b = _ok(home, "decisions", "record", "Use PostgreSQL row-level security for tenants")["entry"]
    r = _cli(home, "decisions", "record", "Use SQLite", "--replaces", "PostgreSQL")
    assert r.returncode == 4, r.stderr  # a conflict: say which one
    error = json.loads(r.stderr.splitlines()[-1])["error"]
    assert (
        error["code"] == "not_unique"
        and a["id"] in error["message"]
        and b["id"] in error["message"]
    )
    r = _cli(home, "decisions", "record", "Use SQLite", "--replaces", "MongoDB")
    assert r.returncode == 3 and "unknown_supersedes" in r.stderr
    assert len(_ok(home, "decisions", "list")) == 2  # nothing was written by the refusals
