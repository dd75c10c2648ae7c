"""Archives carry no authority (issue 20 item 3), end to end through the CLI with real
archives on disk, on both truths (the restore target is a new folder, or a new
PostgreSQL database).

Before: an archive holding only `purged.jsonl`, with a valid manifest computed by its
maker and markers claiming `"by": "mallory", "role": "admin"`, imported cleanly; the live
fact still read, but the victim's next export and restore silently dropped the fact and
CONTEXT.md. And an honest restore dropped a fact or file written again after its purge.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memstrata import NotFound, Store
from memstrata.model import iso
from memstrata.operations import purge
from memstrata.operations.transfer import MANIFEST, export_store

EXE = shutil.which("memstrata", path=str(Path(sys.executable).parent)) or "memstrata"
CLAIMS = {"by": "mallory", "role": "admin", "reason": "gdpr"}


def crafted(path: Path) -> Path:
    """An archive holding only deletion markers, dated now, with a valid manifest its
    maker computed."""
    now = iso(time.time())
    marks = b"".join(
        json.dumps(
            {"id": uid, "layer": uid.split(":")[0], "owner": "finn", "ts": now, **CLAIMS}
        ).encode()
        + b"\n"
        for uid in ("fact:finn:k", "file:finn:CONTEXT.md")
    )
    manifest = {
        "format": "memstrata-export",
        "version": 1,
        "files": [
            {
                "path": "purged.jsonl",
                "size": len(marks),
                "sha256": hashlib.sha256(marks).hexdigest(),
            }
        ],
    }
    with tarfile.open(path, "w:gz") as tar:
        for name, data in (("purged.jsonl", marks), (MANIFEST, json.dumps(manifest).encode())):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


class Cli:
    """`memstrata` on one store (its folder, and its own database on PostgreSQL): archive
    steps run as real processes, setup and checks through the library."""

    def __init__(self, home: Path, database: str | None) -> None:
        self.home, self.database = home, database
        self.env = {**os.environ, "MEMSTRATA_HOME": str(home)}
        self.env.pop("MEMSTRATA_DATABASE_URL", None)
        if database is not None:
            self.env["MEMSTRATA_DATABASE_URL"] = database

    def __call__(self, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        r = subprocess.run(
            [EXE, "--home", str(self.home), *args],
            capture_output=True,
            text=True,
            env=self.env,
            timeout=120,
        )
        if ok:
            assert r.returncode == 0, (args, r.stderr)
        return r

    @contextlib.contextmanager
    def store(self, **kw: Any) -> Iterator[Store]:
        with pytest.MonkeyPatch.context() as mp:
            if self.database is None:
                mp.delenv("MEMSTRATA_DATABASE_URL", raising=False)
            else:
                mp.setenv("MEMSTRATA_DATABASE_URL", self.database)
            s = Store(self.home, **kw)
        try:
            yield s
        finally:
            s.close()

    def finn(self) -> contextlib.AbstractContextManager[Store]:
        return self.store(agent="finn")

    def fact(self, key: str) -> str | None:
        with self.finn() as s:
            try:
                return s.agent().facts.get(key).value
            except NotFound:
                return None

    def file(self, path: str) -> str | None:
        with self.finn() as s:
            try:
                return s.agent().files.read(path)
            except NotFound:
                return None

    def messages(self, sid: str) -> list[str]:
        with self.finn() as s:
            return [m.content for m in s.agent().sessions.messages(sid)]

    def tombstones(self) -> list[dict[str, Any]]:
        with self.store() as s:
            return purge.tombstones(s)


@pytest.fixture
def stores(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> tuple[Cli, Cli]:
    """The victim's store, and a new store to restore into (same kind of truth)."""
    if backend == "postgres":
        server = request.getfixturevalue("pg_server")
        return Cli(tmp_path / "victim", os.environ["MEMSTRATA_DATABASE_URL"]), Cli(
            tmp_path / "restored", server.create_database()
        )
    return Cli(tmp_path / "victim", None), Cli(tmp_path / "restored", None)


def test_a_crafted_tombstone_archive_takes_nothing_from_the_store_or_its_restores(
    stores: tuple[Cli, Cli], tmp_path: Path
) -> None:
    victim, restored = stores
    with victim.finn() as s:
        s.agent().facts.set("k", "precious")
        s.agent().files.write("CONTEXT.md", "# Finn\nkeeps notes\n")
    victim("export", str(tmp_path / "before.tar.gz"))

    r = victim("import", str(crafted(tmp_path / "evil.tar.gz")))
    assert victim.tombstones() == []  # nothing was merged
    assert victim.fact("k") == "precious"

    victim("export", str(tmp_path / "after.tar.gz"))
    restored("import", str(tmp_path / "after.tar.gz"))
    assert restored.fact("k") == "precious"
    assert restored.file("CONTEXT.md") == "# Finn\nkeeps notes\n"

    # The victim's own pre-attack backup, restored over a store that lost the file.
    with victim.finn() as s:
        s.agent().files.delete("CONTEXT.md")
    victim("import", str(tmp_path / "before.tar.gz"))
    assert victim.file("CONTEXT.md") == "# Finn\nkeeps notes\n"
    assert victim.fact("k") == "precious"
    # What the import said about the archive's markers: who they claim, not adopted.
    assert "claims to be by 'mallory', role 'admin'" in r.stderr and "not adopted" in r.stderr


def test_merge_tombstones_shows_what_they_purge_and_adopts_them_as_the_importer(
    stores: tuple[Cli, Cli], tmp_path: Path
) -> None:
    victim, _ = stores
    with victim.finn() as s:
        s.agent().facts.set("k", "precious")
    evil = str(crafted(tmp_path / "evil.tar.gz"))

    shown = victim("import", evil, "--merge-tombstones", ok=False)
    assert shown.returncode == 2 and "nothing was imported" in shown.stderr
    assert (
        "fact:finn:k (claims to be by 'mallory', role 'admin'; the store holds content it "
        "names: adopting purges it)" in shown.stderr
    )
    assert "file:finn:CONTEXT.md" in shown.stderr and "holds nothing it would purge" in shown.stderr
    assert victim.fact("k") == "precious"  # a preview changes nothing
    assert victim.tombstones() == []

    adopted = victim("import", evil, "--merge-tombstones", "--yes")
    assert "adopted the archive's tombstone fact:finn:k, as you" in adopted.stderr
    assert victim.fact("k") is None  # the purge ran on the store, as the admin
    records = victim.tombstones()
    assert {r["id"] for r in records} == {"fact:finn:k", "file:finn:CONTEXT.md"}
    for r in records:
        assert r["by"] != "mallory" and r["role"] == "admin", r
        assert r["reason"].startswith("adopted from evil.tar.gz: "), r


def test_an_honest_restore_keeps_what_was_written_again_after_a_purge(
    stores: tuple[Cli, Cli], tmp_path: Path
) -> None:
    own, restored = stores
    with own.finn() as s:
        m = s.agent()
        m.facts.set("k", "old value")
        m.files.write("notes.md", "old notes")
        m.sessions.append("s1", "user", "old message")
    with own.store() as admin:
        export_store(admin, tmp_path / "old.tar")
    with own.finn() as s:
        m = s.agent()
        why = "pasted by mistake"
        purge.purge_fact(s, "k", reason=why)
        purge.purge_file(s, "notes.md", reason=why)
        purge.purge_session(s, "s1", reason=why)
        m.facts.set("k", "new value")
        m.files.write("notes.md", "new notes")
        m.sessions.append("s1", "user", "new message")
    own("export", str(tmp_path / "now.tar"))

    restored("import", str(tmp_path / "now.tar"))
    assert restored.fact("k") == "new value"
    assert restored.file("notes.md") == "new notes"
    assert restored.messages("s1") == ["new message"]
    # Adopting the backup's own tombstones purges nothing written after them.
    restored("import", str(tmp_path / "now.tar"), "--merge-tombstones", "--yes")
    assert restored.fact("k") == "new value" and restored.file("notes.md") == "new notes"
    assert len(restored.tombstones()) == 3
    # And the old backup, restored over the live store, takes nothing from it.
    own("import", str(tmp_path / "old.tar"), ok=False)
    assert own.fact("k") == "new value" and own.file("notes.md") == "new notes"
    assert own.messages("s1") == ["new message"]
