"""Hand edits to tasks.json, items.json and sessions.json are never dropped, and a bad
field is a typed error naming the file and the field (issue 9 item 4)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memstrata import Store
from memstrata.errors import MalformedInput

EXE = shutil.which("memstrata", path=str(Path(sys.executable).parent)) or "memstrata"


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [EXE, "--home", str(home), "--agent", "finn", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def _edit(path: Path, change: Any) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    change(doc)
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")


def test_hand_added_task_without_id_and_unknown_key_survive_tasks_add(home: Path) -> None:
    assert _cli(home, "tasks", "add", "first task").returncode == 0
    path = home / "agents/finn/tasks.json"
    no_id = {"description": "added by hand, no id yet", "priority": 1}

    def hand(doc: dict[str, Any]) -> None:
        doc["owner_notes"] = {"sprint": 7, "by": "a person"}
        doc["tasks"][0]["estimate"] = "2h"  # an unknown field on a known task
        doc["tasks"] += [no_id, "a bare string"]

    _edit(path, hand)
    added = _cli(home, "tasks", "add", "second task")
    assert added.returncode == 0, added.stderr
    updated = _cli(home, "tasks", "update", "TASK-001", "--status", "done")
    assert updated.returncode == 0, updated.stderr
    for wrote in (added, updated):  # each write says what it kept without understanding it
        warned = [x for x in wrote.stderr.splitlines() if x.startswith("memstrata: warning:")]
        assert len(warned) == 2, wrote.stderr
        assert "entry 2 has no string id; kept unchanged" in warned[0]
        assert "entry 3 is not an object; kept unchanged" in warned[1]
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["owner_notes"] == {"sprint": 7, "by": "a person"}
    assert doc["tasks"][1:3] == [no_id, "a bare string"]  # in place, unchanged
    assert doc["tasks"][0]["estimate"] == "2h" and doc["tasks"][0]["status"] == "done"
    assert [t.get("id") for t in doc["tasks"] if isinstance(t, dict)] == [
        "TASK-001",
        None,
        "TASK-002",
    ]
    listed = _cli(home, "tasks", "list")
    assert listed.returncode == 0 and "second task" in listed.stdout
    assert "tasks.json" in listed.stderr and "no string id" in listed.stderr  # reported


def test_bad_field_is_a_typed_error_naming_file_and_field(home: Path) -> None:
    store = Store(home, agent="finn")
    tasks = store.agent().tasks
    tasks.add("fine task")
    _edit(
        tasks.path,
        lambda d: d["tasks"].append(
            {"id": "TASK-007", "priority": "high", "status": "pending", "description": "hand task"}
        ),
    )
    with pytest.raises(MalformedInput) as err:
        tasks.get("TASK-007")
    assert str(tasks.path) in str(err.value) and "'priority'" in str(err.value)
    assert [t.id for t in tasks.list()] == ["TASK-001"]  # the rest still reads
    assert any("'priority'" in p for p in tasks.problems())
    with pytest.raises(MalformedInput):  # nothing is written on top of a task we cannot read
        tasks.update("TASK-007", status="done")
    assert tasks.update("TASK-007", priority=1).priority == 1  # fixing the field works
    store.close()
    got = _cli(home, "tasks", "get", "TASK-001")
    assert got.returncode == 0
    _edit(home / "agents/finn/tasks.json", lambda d: d["tasks"][0].update(priority="low"))
    bad = _cli(home, "tasks", "get", "TASK-001")
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
    assert "tasks.json" in bad.stderr and "'priority'" in bad.stderr


def test_items_keep_entries_they_do_not_understand(home: Path) -> None:
    store = Store(home)  # the store's owner (items are pipeline-only)
    items = store.items
    items.replace_source("a.md", [{"type": "claim", "title": "t", "content": "old claim"}])
    hand = [
        {"note": "curated by hand"},
        {
            "id": "item_hand",
            "type": "note",
            "title": "h",
            "content": "hand item",
            "confidence": "very",
        },
    ]
    doc = json.loads(items.path.read_text(encoding="utf-8"))
    items.path.write_text(json.dumps(doc + hand), encoding="utf-8")
    items.replace_source("a.md", [{"type": "claim", "title": "t", "content": "new claim"}])
    after = json.loads(items.path.read_text(encoding="utf-8"))
    assert hand[0] in after and hand[1] in after
    assert [i.content for i in items.list()] == ["new claim"]
    assert any("'confidence'" in p for p in items.problems())
    store.close()


def test_sessions_index_keeps_unknown_keys(home: Path) -> None:
    store = Store(home, agent="finn")
    sessions = store.agent().sessions
    sessions.start("s-one", title="first")
    _edit(
        sessions.index_path, lambda d: (d.update(team="blue"), d["sessions"][0].update(pinned=True))
    )
    sessions.start("s-two")
    sessions.end("s-one")
    doc = json.loads(sessions.index_path.read_text(encoding="utf-8"))
    assert doc["team"] == "blue" and doc["sessions"][0]["pinned"] is True
    assert [s.id for s in sessions.list()] == ["s-one", "s-two"]
    store.close()
