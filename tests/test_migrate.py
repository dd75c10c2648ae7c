"""A populated local store migrated to PostgreSQL and back, and exported from PostgreSQL:
byte-identical files (issue 14). The documented normalisation: only the truth moves;
this host's settings (config.toml) and audit trail (events*.jsonl) stay in its folder."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from memstrata import Store
from memstrata.cli.main import main
from memstrata.files.truth import is_local_only
from memstrata.operations.transfer import export_store, import_archive

HOST_LOCAL = ("config.toml", "memstrata-export.json")


def _populate(home: Path) -> None:
    with Store(home, agent="finn", room="room-1") as s:
        mem = s.agent()
        mem.now.update("Ship auth", ["tests", "PR"])
        for i in range(12):
            mem.log.append("TOOL_USE", f"step {i}: ran the suite", {"n": i})
        mem.facts.set("currency", "USD", "preference")
        mem.facts.set("currency", "EUR", "preference")
        mem.facts.forget("currency")
        mem.files.write("notes/plan.md", "# Plan\n\nünïcode and emoji 🦉\n")
        mem.files.delete("notes/plan.md")
        mem.files.write("keep.md", "kept\n")
        mem.tasks.add("Implement session locking", milestone="M1")
        mem.sessions.append("s1", "user", "hello")
        mem.sessions.append("s1", "assistant", "hi there")
        mem.episodes.create("Implement feature X")
        mem.episodes.append("implement-feature-x", "revisions.md", "rev 1")
        old = s.ledger.publish("decision", "Use MySQL", tags=["db"])
        s.ledger.publish("decision", "Use PostgreSQL", tags=["db"], supersedes=old.id)
        s.room().post("please review", type="review")
        s.room().write_artifact("api.md", "# API\n")
    log = home / "agents/finn/memory/LOG.md"
    log.write_bytes(log.read_bytes() + b"### by hand\r\nwith CRLF\r\n")  # a hand edit


def _memory_files(root: Path) -> dict[str, str]:
    out = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_file() and not is_local_only(rel) and rel not in HOST_LOCAL:
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def test_migrate_to_postgres_export_and_back_is_byte_identical(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    local = tmp_path / "local"
    _populate(local)
    before = _memory_files(local)
    assert len(before) >= 12 and "agents/finn/memory/LOG.md" in before
    assert main(["migrate", str(local), pg_url]) == 0
    assert main(["migrate", str(local), pg_url]) == 0  # again: a no-op, nothing differs

    monkeypatch.setenv("MEMSTRATA_DATABASE_URL", pg_url)
    host = tmp_path / "host"  # a host of the PostgreSQL store: index and settings only
    with Store(host, role="admin") as pg:
        assert [h.layer for h in pg.search("PostgreSQL", layers=("ledger",))] == ["ledger"]
        export_store(pg, tmp_path / "export")
    assert _memory_files(tmp_path / "export") == before
    assert not (host / "agents").exists() and not (host / "ledger.jsonl").exists()

    monkeypatch.delenv("MEMSTRATA_DATABASE_URL")
    back = tmp_path / "back"
    assert main(["migrate", pg_url, str(back)]) == 0
    assert _memory_files(back) == before
    with Store(back, agent="finn") as s:  # the migrated-back folder is a working store
        assert s.agent().files.read("keep.md") == "kept\n"
        assert len(s.agent().log.entries()) == 13


def test_import_into_a_postgres_store(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    local = tmp_path / "local"
    _populate(local)
    with Store(local, role="admin") as s:
        export_store(s, tmp_path / "export.tar.gz")
    monkeypatch.setenv("MEMSTRATA_DATABASE_URL", pg_url)
    with Store(tmp_path / "host", role="admin") as pg:
        report = import_archive(pg, tmp_path / "export.tar.gz")
        assert report.verified and report.written == len(_memory_files(local))
        assert pg.agent("finn").files.read("keep.md") == "kept\n"
        again = import_archive(pg, tmp_path / "export.tar.gz")  # identical: a no-op
        assert again.written == 0
