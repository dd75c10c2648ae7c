"""Versions (issue 24 item 1): every replace of NOW, CONTEXT, identity and memory files
keeps the content it replaced, content-addressed and deduplicated, with retention, on
both truths (`backend`); purge removes purged text from the versions; export/import
carry them; a restore is a new version, checked against the content the caller saw;
scope holds. The end-to-end surfaces (MCP stdio, CLI, `memstrata serve`) and a writer
killed mid-replace are in test_versions_e2e.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memstrata import Store
from memstrata.errors import (
    AlreadyExists,
    MalformedInput,
    NotFound,
    Refused,
    ScopeDenied,
    StaleWrite,
)
from memstrata.files.versions import FOLDER, FileHistory, Retention, parse_log, versioned
from memstrata.operations.purge import purge_file, purge_log_entry, purge_version
from memstrata.operations.transfer import export_store, import_archive
from memstrata.store.editing import sha256_text

PASSPHRASE = "the vault passphrase is Quokka-Marmot-Heron-4471"
WRONG = "the wrong customer list: Alice Zephyrine, Bob Quillfeather"


@pytest.fixture(autouse=True)
def _on_both_truths(backend: str) -> str:
    return backend


def version_files(store: Store, agent: str = "finn") -> dict[str, bytes]:
    """Every source below the agent's versions folder, as the truth holds it."""
    out = {}
    for e in store.engine.truth.list(f"agents/{agent}/{FOLDER}"):
        if not e.is_dir:
            found = store.engine.truth.read(e.path)
            assert found is not None
            out[e.path] = found.data
    return out


def blobs(store: Store, agent: str = "finn") -> dict[str, bytes]:
    return {p: d for p, d in version_files(store, agent).items() if not p.endswith(".jsonl")}


def texts(store: Store, path: str) -> list[str]:
    """The contents of a file's versions, newest first."""
    mem = store.agent()
    return [mem.versions.read(path, v.id) for v in mem.versions.history(path).versions]


def test_every_replace_of_every_overwritable_file_keeps_what_it_replaced(store: Store) -> None:
    mem = store.agent()
    mem.now.update("first objective", ["a"])
    mem.now.update("second objective", ["b"])
    mem.context.write("# Context\nv1\n")
    mem.context.write("# Context\nv2\n")
    mem.identity.write("# Finn\nv1\n")
    mem.identity.write("# Finn\nv2\n")
    mem.files.write("notes/plan.md", "step one\n")
    mem.files.replace("notes/plan.md", "one", "two")
    mem.files.insert("notes/plan.md", 0, "# Plan")
    assert [t.splitlines()[1] for t in texts(store, "CONTEXT.md")] == ["v2", "v1"]
    assert [t.splitlines()[1] for t in texts(store, "identity")] == ["v2", "v1"]
    assert texts(store, "notes/plan.md") == ["# Plan\nstep two\n", "step two\n", "step one\n"]
    now = texts(store, "NOW.md")
    assert "second objective" in now[0] and "first objective" in now[1]
    hist = mem.versions.history("memory/CONTEXT.md")
    assert hist.file == "agents/finn/memory/CONTEXT.md" and hist.layer == "context"
    newest, older = hist.versions
    assert newest.current and not older.current
    assert (newest.by, newest.role, newest.size) == ("finn", "project", len("# Context\nv2\n"))
    assert newest.sha256 == sha256_text("# Context\nv2\n") and newest.id == newest.sha256[:12]
    assert newest.changed == "v2" and newest.ts.endswith("Z") and "T" in newest.ts
    assert {f["path"] for f in mem.versions.files()} == {
        "memory/NOW.md",
        "memory/CONTEXT.md",
        "AGENT.md",
        "memory/notes/plan.md",
    }
    with pytest.raises(MalformedInput, match="append-only"):
        mem.versions.history("LOG.md")


def test_the_same_content_written_twice_is_one_blob(store: Store) -> None:
    mem = store.agent()
    for text in ("alpha\n", "beta\n", "alpha\n", "beta\n", "alpha\n"):
        mem.files.write("notes/x.md", text)
    assert sorted(blobs(store).values()) == [b"alpha\n", b"beta\n"]
    hist = mem.versions.history("notes/x.md")
    assert [v.id for v in hist.versions] == [
        sha256_text(t)[:12] for t in ("alpha\n", "beta\n") * 2
    ] + [sha256_text("alpha\n")[:12]]
    mem.files.write("notes/x.md", "alpha\n")  # the same content as now: no new version
    assert len(mem.versions.history("notes/x.md").versions) == 5


def test_retention_keeps_the_newest_by_count_and_drops_old_ones_but_never_the_newest_few(
    home: Path,
) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text("[versions]\nkeep = 5\nmax_age_days = 30\n")
    with Store(home, agent="finn") as store:
        mem = store.agent()
        for i in range(20):
            mem.files.write("notes/x.md", f"version {i}\n")
        store.drain(60)  # retention runs after the write's acknowledgement
        records = mem.versions.history("notes/x.md").versions
        assert 5 <= len(records) <= 5 + Retention(5).slack  # pruned as it went
        target = versioned("agents/finn/memory/notes/x.md")
        assert target is not None
        hist = FileHistory(store.engine.truth, target, Retention(5, 30))
        hist.prune()
        kept = [
            mem.versions.read("notes/x.md", v.id)
            for v in mem.versions.history("notes/x.md").versions
        ]
        assert kept == [f"version {i}\n" for i in range(19, 14, -1)]
        assert sorted(blobs(store).values()) == sorted(t.encode() for t in kept)  # dropped: gone
        # Age: every record but the newest made 40 days old; the newest three stay anyway.
        log = store.engine.truth.read(target.log)
        assert log is not None
        lines = [json.loads(x) for x in log.data.splitlines()]
        for rec in lines[:-1]:
            rec["ts"] = "2020-01-01T00:00:00.000Z"
        store.engine.truth.rewrite(
            target.log, b"".join((json.dumps(r) + "\n").encode() for r in lines)
        )
        mem.files.write("notes/x.md", "version 20\n")  # a write past the age prunes
        store.drain(60)
        left = [
            mem.versions.read("notes/x.md", v.id)
            for v in mem.versions.history("notes/x.md").versions
        ]
        assert left == ["version 20\n", "version 19\n", "version 18\n"]
        assert len(blobs(store)) == 3


def test_a_restore_is_a_new_version_and_checks_the_content_the_caller_saw(store: Store) -> None:
    mem = store.agent()
    mem.context.write("# Context\noriginal\n")
    mem.context.write("# Context\nclobbered\n")
    old = mem.versions.history("CONTEXT.md").versions[-1]
    with pytest.raises(StaleWrite):
        mem.versions.restore("CONTEXT.md", old.id, expected_sha=sha256_text("something else"))
    assert mem.context.read() == "# Context\nclobbered\n"  # nothing was written
    seen = sha256_text("# Context\nclobbered\n")
    hist = mem.versions.restore("CONTEXT.md", old.id[:6], expected_sha=seen)
    assert mem.context.read() == "# Context\noriginal\n"
    assert hist.versions[0].current and hist.versions[0].note == f"restore of {old.id}"
    assert [t.splitlines()[1] for t in texts(store, "CONTEXT.md")] == [
        "original",
        "clobbered",
        "original",
    ]  # the content the restore replaced is kept
    diff = mem.versions.diff("CONTEXT.md", hist.versions[1].id, "current")
    assert "-clobbered\n+original\n" in diff
    with pytest.raises(NotFound):
        mem.versions.restore("CONTEXT.md", "abcdef")
    with pytest.raises(MalformedInput):
        mem.versions.restore("CONTEXT.md", "zz")


def test_a_hand_edit_is_shown_as_current_and_kept_by_the_next_write(store: Store) -> None:
    mem = store.agent()
    mem.files.write("notes/x.md", "by the agent\n")
    store.engine.truth.rewrite("agents/finn/memory/notes/x.md", b"by hand\n")  # outside the doors
    first = mem.versions.history("notes/x.md").versions[0]
    assert first.current and not first.kept and first.by is None
    assert mem.versions.read("notes/x.md", first.id) == "by hand\n"
    mem.files.write("notes/x.md", "by the agent again\n")
    assert texts(store, "notes/x.md") == ["by the agent again\n", "by hand\n", "by the agent\n"]
    assert mem.versions.history("notes/x.md").versions[1].note.startswith("found")


def test_another_agent_can_neither_read_nor_restore_your_versions(home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text('[roles]\nadmin = ["wilco"]\nproject = ["finn", "mira"]\n')
    with Store(home, agent="finn") as finn:
        finn.agent().context.write("# finn's\nsecret plans\n")
        finn.agent().context.write("# finn's\nnew plans\n")
        old = finn.agent().versions.history("CONTEXT.md").versions[-1].id
    with Store(home, agent="mira") as mira:
        other = mira.agent("finn").versions
        with pytest.raises(ScopeDenied):
            other.history("CONTEXT.md")
        with pytest.raises(ScopeDenied):
            other.read("CONTEXT.md", old)
        with pytest.raises(ScopeDenied):
            other.restore("CONTEXT.md", old)
        with pytest.raises(ScopeDenied):
            other.files()
    with Store(home, agent="wilco") as wilco:  # an admin may
        wilco.agent("finn").versions.restore("CONTEXT.md", old)
        assert wilco.agent("finn").context.read() == "# finn's\nsecret plans\n"
        assert wilco.agent("finn").versions.history("CONTEXT.md").versions[0].by == "wilco"


def test_purge_removes_the_purged_text_from_every_version_holding_it(store: Store) -> None:
    mem = store.agent()
    mem.context.write(f"# Context\n{PASSPHRASE}\nkept line\n")
    mem.context.write("# Context\nkept line\n")  # edited out: an older version still holds it
    entry = mem.log.append("THOUGHT", PASSPHRASE)
    assert any(PASSPHRASE.encode() in d for d in blobs(store).values())
    report = purge_log_entry(store, entry.id, reason="a secret")
    assert not any(PASSPHRASE.encode() in d for d in version_files(store).values())
    assert len(report.versions) == 1 and report.to_dict()["versions"] == list(report.versions)
    old = texts(store, "CONTEXT.md")[-1]
    assert old == "# Context\n[purged]\nkept line\n"  # the rest of that version stays


def test_purge_removes_the_purged_text_from_the_records_of_now_md(store: Store) -> None:
    # NOW.md's records carry its contents (no blobs): a purge rewrites them too
    mem = store.agent()
    mem.now.update(f"rotate {PASSPHRASE}", ["step"])
    mem.now.update("rotated", ["step"])
    entry = mem.log.append("THOUGHT", PASSPHRASE)
    assert any(PASSPHRASE.encode() in d for d in version_files(store).values())
    purge_log_entry(store, entry.id, reason="a secret")
    assert not any(PASSPHRASE.encode() in d for d in version_files(store).values())
    assert "rotate [purged]" in texts(store, "NOW.md")[-1]


def test_purge_file_drops_its_history_and_purge_version_drops_one_version(store: Store) -> None:
    mem = store.agent()
    mem.files.write("notes/keys.md", f"{PASSPHRASE}\n")
    mem.files.write("notes/keys.md", "rotated\n")
    mem.context.write(f"# Context\nsee {PASSPHRASE}\n")
    mem.context.write("# Context\nsee the vault\n")
    report = purge_file(store, "notes/keys.md", reason="leaked")
    assert (
        report.versions
        and store.engine.truth.stat(versioned("agents/finn/memory/notes/keys.md").folder) is None
    )  # type: ignore[union-attr]
    assert not any(PASSPHRASE.encode() in d for d in version_files(store).values())
    # purge_version: one version out, the rest (and the file now) untouched
    mem.context.write(f"# Context\npasted {WRONG}\n")
    mem.context.write("# Context\nsee the vault\n")
    bad = mem.versions.history("CONTEXT.md").versions[1]
    with pytest.raises(Refused, match="holds now"):
        purge_version(
            store, "CONTEXT.md", mem.versions.history("CONTEXT.md").versions[0].id, reason="x"
        )
    report = purge_version(store, "CONTEXT.md", bad.id, reason="pasted a key")
    assert report.tombstone.id == f"version:finn:memory/CONTEXT.md:{bad.id}"
    assert not any(WRONG.encode() in d for d in version_files(store).values())
    assert mem.context.read() == "# Context\nsee the vault\n"
    assert bad.id not in {v.id for v in mem.versions.history("CONTEXT.md").versions}


def test_export_and_import_carry_the_versions_and_never_replace_live_content(
    home: Path, tmp_path: Path
) -> None:
    with Store(home, agent="finn") as store:
        mem = store.agent()
        mem.context.write("# Context\nv1\n")
        mem.context.write("# Context\nv2\n")
        mem.files.write("notes/a.md", "a1\n")
        mem.files.write("notes/a.md", "a2\n")
    with Store(home, role="admin") as admin:
        export_store(admin, tmp_path / "backup")
        carried = version_files(admin)
    other = tmp_path / "other"
    with Store(other, role="admin") as fresh:
        import_archive(fresh, tmp_path / "backup")
        assert version_files(fresh) == carried
        hist = fresh.agent("finn").versions.history("CONTEXT.md")
        assert [v.id for v in hist.versions] == [
            sha256_text(f"# Context\nv{i}\n")[:12] for i in (2, 1)
        ]
        assert hist.versions[0].current
    # Later writes in the other store, then the same archive again: the live files are
    # the archive's (identical: no clash) and the store's own versions are all still there.
    with Store(other, agent="finn") as s:
        s.agent().files.write("notes/a.md", "a3\n")
        s.agent().files.write("notes/a.md", "a2\n")
    with Store(other, role="admin") as fresh:
        import_archive(fresh, tmp_path / "backup")
        got = [
            fresh.agent("finn").versions.read("notes/a.md", v.id)
            for v in fresh.agent("finn").versions.history("notes/a.md").versions
        ]
        assert got == ["a2\n", "a3\n", "a2\n", "a1\n"]
    # A live file that differs is a clash (no version replaces it); --force replaces it
    # and keeps the content it replaced as a version.
    with Store(other, agent="finn") as s:
        s.agent().context.write("# Context\nother store's own\n")
    with Store(other, role="admin") as fresh:
        with pytest.raises(AlreadyExists):
            import_archive(fresh, tmp_path / "backup")
        assert fresh.agent("finn").context.read() == "# Context\nother store's own\n"
        import_archive(fresh, tmp_path / "backup", force=True)
        assert fresh.agent("finn").context.read() == "# Context\nv2\n"
        assert "# Context\nother store's own\n" in [
            fresh.agent("finn").versions.read("CONTEXT.md", v.id)
            for v in fresh.agent("finn").versions.history("CONTEXT.md").versions
        ]


def test_an_archive_whose_version_blob_is_not_its_content_is_refused(
    home: Path, tmp_path: Path
) -> None:
    with Store(home, agent="finn") as store:
        store.agent().context.write("# Context\nv1\n")
        store.agent().context.write("# Context\nv2\n")
    with Store(home, role="admin") as admin:
        export_store(admin, tmp_path / "backup")
    blob = next(p for p in (tmp_path / "backup").rglob("*") if len(p.name) == 64)
    blob.write_bytes(b"# Context\nplanted\n")
    manifest = tmp_path / "backup" / "memstrata-export.json"
    doc = json.loads(manifest.read_text())
    import hashlib

    for row in doc["files"]:
        if row["path"].endswith(blob.name):
            row["sha256"] = hashlib.sha256(b"# Context\nplanted\n").hexdigest()
            row["size"] = len(b"# Context\nplanted\n")
    manifest.write_text(json.dumps(doc))
    with (
        Store(tmp_path / "other", role="admin") as fresh,
        pytest.raises(MalformedInput, match="does not hold the content its name says"),
    ):
        import_archive(fresh, tmp_path / "backup")


def test_an_import_keeps_purged_versions_out(home: Path, tmp_path: Path) -> None:
    with Store(home, agent="finn") as store:
        mem = store.agent()
        mem.context.write(f"# Context\n{PASSPHRASE}\n")
        mem.context.write("# Context\nclean\n")
        bad = mem.versions.history("CONTEXT.md").versions[1].id
    with Store(home, role="admin") as admin:
        export_store(admin, tmp_path / "before-purge")
    with Store(home, agent="finn") as store:
        purge_version(store, "CONTEXT.md", bad, reason="a secret")
        assert not any(PASSPHRASE.encode() in d for d in version_files(store).values())
    with Store(home, role="admin") as admin:
        report = import_archive(admin, tmp_path / "before-purge")
        assert not any(PASSPHRASE.encode() in d for d in version_files(admin).values())
        assert any("purged version" in why for _, why in report.purged)


def test_the_history_log_is_plain_jsonl_one_record_per_version(store: Store) -> None:
    store.agent().now.update("objective", ["step"])
    target = versioned("agents/finn/memory/NOW.md")
    assert target is not None and target.folder.startswith("agents/finn/versions/memory__NOW.md.")
    found = store.engine.truth.read(target.log)
    assert found is not None
    (rec,) = parse_log(found.data)
    assert rec.path == "agents/finn/memory/NOW.md" and rec.by == "finn" and rec.truth
    now = store.engine.truth.read("agents/finn/memory/NOW.md")
    assert now is not None and rec.text is not None and rec.text.encode() == now.data
    # the hot file's record carries its content (no blob); another file's is a blob
    assert store.engine.truth.read(target.blob(rec.sha256)) is None
    store.agent().context.write("# Context\nv1\n")
    context = versioned("agents/finn/memory/CONTEXT.md")
    assert context is not None
    (crec,) = parse_log(store.engine.truth.read(context.log).data)  # type: ignore[union-attr]
    assert crec.text is None
    blob = store.engine.truth.read(context.blob(crec.sha256))
    assert blob is not None and blob.data == b"# Context\nv1\n"


def test_maintain_applies_retention_to_files_no_one_writes_again(home: Path) -> None:
    from memstrata.lifecycle.maintain import maintain

    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text("[versions]\nkeep = 4\n")
    with Store(home, agent="finn") as store:
        for i in range(7):  # under keep + slack: the writes leave them all
            store.agent().files.write("notes/x.md", f"v{i}\n")
        assert len(store.agent().versions.history("notes/x.md").versions) == 7
        (row,) = maintain(store)
        assert row.versions_dropped == 3 and not row.problems
        assert len(store.agent().versions.history("notes/x.md").versions) == 4


def test_mcp_versions_tools_are_a_group_of_their_own_not_served_by_default(store: Store) -> None:
    pytest.importorskip("mcp")
    from memstrata.mcp.server import select_tools
    from memstrata.mcp.tools import run

    default = {s.name for s in select_tools(store, None)}
    assert "memory_write" in default and not default & {"memory_history", "memory_restore"}
    tools = {s.name: s for s in select_tools(store, ["default", "versions"])}
    run(tools["memory_write"], {"path": "CONTEXT.md", "content": "# v1\n"})
    run(tools["memory_write"], {"path": "CONTEXT.md", "content": "# v2\n"})
    hist = run(tools["memory_history"], {"path": "CONTEXT.md"}).data
    assert [v["current"] for v in hist["versions"]] == [True, False]
    assert hist["versions"][0]["surface"] == "mcp memory_write"
    old = hist["versions"][1]["id"]
    run(tools["memory_restore"], {"path": "CONTEXT.md", "version": old})
    assert store.agent().context.read() == "# v1\n"
    assert store.agent().versions.history("CONTEXT.md").versions[0].surface == "mcp memory_restore"


def test_texts_reads_many_versions_as_read_reads_each(store: Store) -> None:
    """The context's session lines read every NOW.md version in one pass of its history
    (one `read` per version parsed the whole history each time)."""
    mem = store.agent()
    for i in range(5):
        mem.now.update(f"Objective {i}", [f"step {i}"])
    mem.files.write("notes/a.md", "# A\none\n")
    mem.files.write("notes/a.md", "# A\ntwo\n")  # a blob-kept file too
    for path in ("now", "notes/a.md"):
        ids = [v.id for v in mem.versions.history(path, changes=False).versions if v.kept]
        assert len(ids) >= 2
        got = mem.versions.texts(path, [*ids, "ffffffff"])  # an unknown id is left out
        assert got == {i: mem.versions.read(path, i) for i in ids}
