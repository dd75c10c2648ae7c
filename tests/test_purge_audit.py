"""Purge scrubs the audit trail (issue 20, item 6), end to end through the CLI.

With `[events] record_queries = true`, searches record their query text. Five strings
live in a fact, a memory file, a LOG entry, a session message and a second fact (written
and purged with the CLI); 25 searches ask for them (whole, in a sentence, by two of their words, in lower case, with
a word the content does not hold). After the five purges, neither `events.jsonl` nor an
export holds any of them, and the purges' reported counts add up to the 25 records they
changed (each search record keeps only the HMAC of its query).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

from memstrata import Store
from memstrata.store.events import audit_files

EXE = shutil.which("memstrata", path=str(Path(sys.executable).parent)) or "memstrata"
STRINGS = (
    "Quokka-Marmot-Heron",
    "Tangerine-Walrus-Comet",
    "Zanzibar-Otter-Lantern",
    "Periwinkle-Badger-Orbit",
    "Saffron-Mongoose-Drift",
)


def cli(home: Path, *args: str, agent: tuple[str, ...] = ("--agent", "finn")) -> str:
    r = subprocess.run(
        [EXE, "--home", str(home), *agent, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ),
    )
    assert r.returncode == 0, r.stderr
    return r.stdout


def queries(s: str) -> list[str]:
    first, _, last = s.split("-")
    return [s, f"where is {s}", f"{first} {last}", s.lower(), f"{s} please"]


def audit_bytes(home: Path) -> bytes:
    return b"".join(p.read_bytes() for p in audit_files(home / "events.jsonl"))


def holders(data: bytes) -> list[str]:
    """Which of the strings (or any word of them) `data` holds, in any case."""
    low = data.lower()
    return [s for s in STRINGS if any(w.lower().encode() in low for w in s.split("-"))]


def test_purge_leaves_no_purged_text_in_the_audit_trail_or_an_export(
    home: Path, tmp_path: Path
) -> None:
    home.mkdir(parents=True)
    (home / "config.toml").write_text("[events]\nrecord_queries = true\n")
    fact, note, log, chat, fact2 = STRINGS
    cli(home, "facts", "set", "vault_phrase", f"the vault phrase is {fact}")
    cli(home, "files", "write", "notes/ferry.md", f"# Ferry\nthe ferry code is {note}\n")
    entry = json.loads(cli(home, "--json", "log", "append", "THOUGHT", f"locker code {log}"))
    cli(home, "sessions", "append", "s-9", "user", f"my cat is called {chat}")
    cli(home, "facts", "set", "door_word", f"the door word is {fact2}")
    with Store(home, agent="finn") as store:  # the searches: in one process, same trail
        for s in STRINGS:
            for q in queries(s):
                store.search(q)
    before = [
        r for r in map(json.loads, audit_bytes(home).splitlines()) if r["event"] == "memory:search"
    ]
    assert len(before) == 25 and holders(audit_bytes(home)) == list(STRINGS)

    reports = [
        cli(home, "--json", "purge", "fact", "vault_phrase", "--reason", "r", "--yes"),
        cli(home, "--json", "purge", "file", "notes/ferry.md", "--reason", "r", "--yes"),
        cli(home, "--json", "purge", "log", entry["id"], "--reason", "r", "--yes"),
        cli(home, "--json", "purge", "session", "s-9", "--reason", "r", "--yes"),
        cli(home, "--json", "purge", "fact", "door_word", "--reason", "r", "--yes"),
    ]
    assert holders(audit_bytes(home)) == []
    assert sum(json.loads(r)["events"] for r in reports) == 25  # the count is what changed
    after = [
        r for r in map(json.loads, audit_bytes(home).splitlines()) if r["event"] == "memory:search"
    ]
    assert len(after) >= 25  # the searches are still on record...
    assert all(r["payload"]["query"].startswith("hmac-sha256:") for r in after[:25])  # ...hashed

    cli(home, "export", str(tmp_path / "backup.tar.gz"), agent=())  # the owner: an admin
    with tarfile.open(tmp_path / "backup.tar.gz") as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}  # type: ignore[union-attr]
    assert "events.jsonl" in members
    assert {name: holders(data) for name, data in members.items() if holders(data)} == {}
