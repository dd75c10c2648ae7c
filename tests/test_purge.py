"""Purge means gone: after a purge, the purged text is in no byte of any file under the
store (journals, archive, index.db and its -wal/-shm, FTS segments, vectors, events)
nor in a later export, and a tombstone says what, who, when and why. Plain forget and
delete stay soft.

Every test runs on both truths. On PostgreSQL the memory is in the database and the
home folder keeps this host's index and audit trail: `stored` searches both, the
folder byte by byte and every row of every memstrata table (its live content: rows a
purge deleted stay in the table's dead tuples and the WAL until PostgreSQL vacuums
and recycles them, which no SQL query can see)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from memstrata import Store
from memstrata.errors import MalformedInput, NotFound, ScopeDenied
from memstrata.files.versions import versioned
from memstrata.operations.purge import (
    purge_fact,
    purge_file,
    purge_ledger_entry,
    purge_session,
    tombstones,
)
from memstrata.operations.transfer import export_store
from memstrata.search.query import SearchQuery

# FTS5 stores the lower-cased token "qx7zebra9fluxt3blbkfjq9zx8qp2lm9vt4rw7": the byte
# search is case-insensitive so that it finds the token as well as the original text.
SECRET = "sk-proj-Qx7Zebra9FluxT3BlbkFJq9Zx8Qp2Lm9Vt4Rw7"
OLD_SECRET = "sk-proj-Wq3Yak5MarmotT3BlbkFJz8Hn4Rp6Lm2Ck9Vb1"
# Personal data, no secret's shape: the index holds it (a secret it never holds,
# `index.masked`), so a purge has to take it out of FTS5, free pages and the WAL.
PERSONAL = "Margit-Okonkwo-Heronsgaterow14"  # (its FTS token: the last part)
EXE = str(Path(sys.executable).parent / "memstrata")


def holders(root: Path, *texts: str) -> list[str]:
    """Every file under `root` (hidden ones included) holding any text, any case."""
    needles = [t.lower().encode() for t in texts]
    tokens = [n.split(b"-")[-1] for n in needles]  # the FTS token of each secret
    out = []
    for p in sorted(root.rglob("*")):
        if p.is_file():
            data = p.read_bytes().lower()
            if any(n in data for n in needles + tokens):
                out.append(p.relative_to(root).as_posix())
    return out


@pytest.fixture(autouse=True)
def _on_both_truths(backend: str) -> str:
    return backend


def in_postgres(*texts: str) -> list[str]:
    """The memory (source paths; other tables by name) in the PostgreSQL truth named by
    MEMSTRATA_DATABASE_URL holding any text, any case, as `holders` does; [] if none."""
    url = os.environ.get("MEMSTRATA_DATABASE_URL")
    if not url:
        return []
    import psycopg

    needles = [t.lower().encode() for t in texts]
    needles += [n.split(b"-")[-1] for n in needles]
    out: set[str] = set()
    with psycopg.connect(url, autocommit=True) as conn:
        paths = dict(conn.execute("SELECT id, path FROM memstrata_sources").fetchall())
        for (table,) in conn.execute(
            "SELECT tablename FROM pg_tables WHERE tablename LIKE 'memstrata%'"
        ).fetchall():
            cur = conn.execute(f'SELECT * FROM "{table}"')
            names = [c.name for c in cur.description or []]
            for row in cur:
                for name, value in zip(names, row, strict=True):
                    data = (
                        bytes(value)
                        if isinstance(value, bytes | memoryview)
                        else str(value).encode()
                    )
                    if any(n in data.lower() for n in needles):
                        out.add(paths[row[0]] if table == "memstrata_chunks" else f"{table}.{name}")
    return sorted(out)


def stored(home: Path, *texts: str) -> list[str]:
    """Where the store keeps any text: files of its home folder, and its PostgreSQL truth."""
    return sorted({*holders(home, *texts), *in_postgres(*texts)})


def source_bytes(home: Path, rel: str) -> bytes:
    """A source as the store's truth holds it."""
    with Store(home, sync=False, watch=False) as s:
        return s.engine.truth.read_from(rel)


def index_db(home: Path) -> Path:
    """The live index generation's database file."""
    from memstrata.index.generations import live_database

    path = live_database(home / "index")
    assert path is not None
    return path


def index_rel(home: Path) -> str:
    return index_db(home).relative_to(home).as_posix()


def fts_holds(home: Path, text: str) -> bool:
    """Whether the FTS5 segment blobs hold the token (bytes, not a MATCH query)."""
    conn = sqlite3.connect(index_db(home))
    try:
        blobs = [r[0] for r in conn.execute("SELECT block FROM docs_fts_data") if r[0]]
    finally:
        conn.close()
    token = text.lower().split("-")[-1].encode()
    return any(token in bytes(b) for b in blobs)


@pytest.fixture
def hybrid_home(home: Path, semantic_default: None) -> Path:
    home.mkdir(parents=True)
    (home / "config.toml").write_text(
        '[search]\nembedder = "fake"\n[events]\nrecord_queries = true\n'
        "[secrets]\nshare_in_ledger = true\n"
    )
    return home


def insecure(store: Store) -> Store:
    """As on SQLite builds without SECURE_DELETE (Debian's has it on): deleted rows
    would stay in free pages, so the purge has to do more than delete them."""
    with store.db.read() as conn:
        conn.execute("PRAGMA secure_delete = OFF")
    return store


def test_purge_fact_leaves_no_byte_of_it_anywhere(hybrid_home: Path, tmp_path: Path) -> None:
    home = hybrid_home
    with insecure(Store(home, agent="finn", room="r1")) as s:
        mem = s.agent()
        with pytest.warns(UserWarning):
            mem.facts.set("bot_key", OLD_SECRET)
            mem.facts.set("bot_key", SECRET)  # history: both values are in facts.jsonl
        mem.facts.set("lang", "python")
        # Never indexed (`index.masked`), but the query itself is in events.jsonl
        assert s.search(SECRET) == []
        assert s.search("bot key", mode="hybrid")  # the fact is indexed and embedded, masked
        with s.db.read() as conn:
            assert (
                conn.execute(
                    "SELECT count(*) FROM vectors WHERE uid = 'fact:finn:bot_key'"
                ).fetchone()[0]
                == 1
            )
        before = stored(home, SECRET, OLD_SECRET)
        assert {"agents/finn/facts.jsonl", "events.jsonl"} <= set(before)
        # FTS5 never held it (`index.masked`); the index's copy of the fact's record (`meta`,
        # what `facts get` reads, never searched) does, so the purge still has to scrub it
        assert any(h.startswith("index/") for h in before) and not fts_holds(home, SECRET)

        report = purge_fact(s, "bot_key", reason="pasted a key by mistake")

        assert stored(home, SECRET, OLD_SECRET) == []
        assert report.wal_truncated and report.vectors >= 1 and report.events >= 1
        assert not fts_holds(home, SECRET)
        with pytest.raises(NotFound):
            mem.facts.get("bot_key")
        assert mem.facts.get("lang").value == "python"
        with s.db.read() as conn:
            assert (
                conn.execute(
                    "SELECT count(*) FROM vectors WHERE uid = 'fact:finn:bot_key'"
                ).fetchone()[0]
                == 0
            )
    with Store(home) as admin:
        export_store(admin, tmp_path / "after")
        (tomb,) = tombstones(admin)
    assert holders(tmp_path / "after", SECRET, OLD_SECRET) == []
    assert tomb["id"] == "fact:finn:bot_key" and tomb["by"] == "finn"
    assert tomb["reason"] == "pasted a key by mistake" and tomb["ts"]
    assert "value" not in tomb and SECRET not in json.dumps(tomb)
    with Store(home, agent="finn") as s:
        assert s.search(SECRET) == []  # (this records the query again: record_queries)


def test_purge_file_leaves_no_free_page_behind(store: Store, home: Path) -> None:
    mem = insecure(store).agent()
    for i in range(30):
        mem.files.write(f"notes/n{i}.md", f"# n{i}\n" + "filler words here " * 300)
    # a body long enough for overflow pages
    mem.files.write("notes/keys.md", "# keys\n" + "filler " * 900 + PERSONAL + " end" * 300)
    with store.db.read() as conn:  # the content is in index.db itself, not only the WAL
        assert conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] == 0
    assert index_rel(home) in stored(home, PERSONAL)
    purge_file(store, "notes/keys.md", reason="leaked")
    assert stored(home, PERSONAL) == []
    assert len(mem.files.list("notes")) == 30


def test_purge_clears_what_earlier_edits_left_in_free_pages(store: Store, home: Path) -> None:
    mem = insecure(store).agent()
    for i in range(30):
        mem.files.write(f"notes/n{i}.md", f"# n{i}\n" + "filler words here " * 300)
    mem.files.write("notes/keys.md", "# keys\n" + "filler " * 900 + PERSONAL + " end" * 300)
    store.engine.settle()  # indexed (index work follows the acknowledgement)...
    mem.files.write("notes/keys.md", "# keys\nrotated, see the vault\n")  # ...then edited out
    with store.db.read() as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    kept = mem.versions.history("notes/keys.md").versions[1]  # ...but still in its version
    target = versioned("agents/finn/memory/notes/keys.md")
    assert target is not None
    # ...and in the index's free pages
    assert stored(home, PERSONAL) == sorted([index_rel(home), target.blob(kept.sha256)])
    purge_file(store, "notes/keys.md", reason="it was there once")
    assert stored(home, PERSONAL) == []


def test_plain_forget_and_delete_stay_soft(store: Store, home: Path) -> None:
    mem = store.agent()
    mem.facts.set("city", "Zanzibar-Quokka-City")
    mem.facts.forget("city")
    mem.files.write("notes/trip.md", "# Trip\nQuokka island\n")
    mem.files.delete("notes/trip.md")
    assert b"Zanzibar-Quokka-City" in source_bytes(home, "agents/finn/facts.jsonl")
    assert [h for h in stored(home, "Quokka island") if h.startswith("agents/finn/archive/")]


def test_purge_file_removes_it_and_every_archived_copy(store: Store, home: Path) -> None:
    mem = insecure(store).agent()
    with pytest.warns(UserWarning):
        mem.files.write("notes/keys.md", f"# Keys\nprod: {OLD_SECRET}\n")
    mem.files.delete("notes/keys.md")  # soft: a copy in archive/deleted
    with pytest.warns(UserWarning):
        mem.files.write("notes/keys.md", f"# Keys\nprod: {SECRET}\n")
    with pytest.warns(UserWarning):
        mem.scratch.write("keys.md", SECRET)
    mem.scratch.clear()  # soft: a copy in archive/scratch/<stamp>/
    mem.files.write("notes/other.md", "# Other\nkeep me\n")
    assert len(stored(home, SECRET, OLD_SECRET)) >= 3
    report = purge_file(store, "notes/keys.md", reason="rotate and forget")
    assert len(report.removed) == 2
    purge_file(store, "session/keys.md", reason="scratch copy too")
    assert stored(home, SECRET, OLD_SECRET) == []
    assert mem.files.read("notes/other.md") == "# Other\nkeep me\n"
    with pytest.raises(NotFound):
        purge_file(store, "notes/keys.md", reason="again")


def test_purge_ledger_entry_is_admin_only_and_keeps_the_chain(hybrid_home: Path) -> None:
    home = hybrid_home
    with Store(home, agent="ops", room="r1") as ops:
        old = ops.ledger.publish("decision", "deploy with static keys", tags=["deploy"])
        with pytest.warns(UserWarning):
            bad = ops.ledger.publish(
                "decision",
                f"deploy key is {SECRET}",
                tags=["deploy"],
                detail=f"also {OLD_SECRET}",
                supersedes=old.id,
            )
        with pytest.raises(ScopeDenied, match="admin"):
            purge_ledger_entry(ops, bad.id, reason="leaked")
    with Store(home) as admin:
        purge_ledger_entry(admin, bad.id, reason="leaked key")
        assert stored(home, SECRET, OLD_SECRET) == []
        stub = json.loads(admin.engine.truth.read_from("ledger.jsonl").splitlines()[1])
        assert list(stub) == [
            "id",
            "ts",
            "kind",
            "room_id",
            "author_role",
            "ref",
            "tags",
            "summary",
            "detail",
            "supersedes",
        ]  # seed 000's fields
        assert (stub["id"], stub["ts"], stub["supersedes"]) == (bad.id, bad.ts, old.id)
        assert stub["summary"] == "[purged]" and stub["detail"] is None
        live = [e.id for e in admin.ledger.query()]
        assert old.id not in live and bad.id not in live  # still superseded; stub hidden
        assert [e.id for e in admin.ledger.entries()] == []
        assert admin.ledger.get(bad.id).summary == "[purged]"


def test_purge_session_message_and_whole_session(store: Store, home: Path) -> None:
    sessions = insecure(store).agent().sessions
    for text in ("hello there", "what is the deploy key?"):
        sessions.append("s1", "user", text)
    with pytest.warns(UserWarning):
        leak = sessions.append("s1", "assistant", f"it is {SECRET}")
    sessions.append("s1", "user", "thanks, noted")
    hits = store.search("thanks noted", layers=("sessions",))  # transcripts: opt-in
    assert hits and any(h.uid.startswith("session:") for h in hits)
    purge_session(store, "s1", message_id=leak.id, reason="secret in chat")
    assert stored(home, SECRET) == []  # neighbour context of the other messages too
    assert [m.content for m in sessions.messages("s1")] == [
        "hello there",
        "what is the deploy key?",
        "thanks, noted",
    ]
    with pytest.warns(UserWarning):
        sessions.append("s2", "user", f"again {OLD_SECRET}")
    purge_session(store, "s2", reason="whole session")
    assert stored(home, OLD_SECRET) == []
    assert [s.id for s in sessions.list()] == ["s1"]
    assert len(tombstones(store)) == 2


RACER = """
import os, sys
from memstrata import Store
with Store(sys.argv[1], agent="racer") as s:
    facts = s.agent().facts
    i = 0
    # At least n writes, and on until the purger is done (the stop file), so the two overlap
    # whatever the machine's load.
    while i < int(sys.argv[2]) or not os.path.exists(sys.argv[3]):
        facts.set(f"k{i}", f"v{i}")
        print(f"ack {i}", flush=True)
        i += 1
"""


def test_purge_rewrites_lose_no_racing_append(home: Path, tmp_path: Path) -> None:
    n = 150
    stop = tmp_path / "stop"
    with Store(home, agent="racer") as s:
        s.agent().facts.set("victim", "Zanzibar-Quokka-City")
    p = subprocess.Popen(
        [sys.executable, "-c", RACER, str(home), str(n), str(stop)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert p.stdout is not None
    acked = [p.stdout.readline().strip()]
    assert acked[0] == "ack 0"
    with Store(home, agent="racer") as s:
        for rounds in range(5):  # every round runs while the racer is still writing
            s.agent().facts.set("victim", f"Zanzibar-Quokka-{rounds}")
            purge_fact(s, "victim", reason="race")
            assert p.poll() is None
    stop.touch()
    acked += [line.strip() for line in p.stdout]
    assert p.wait(timeout=120) == 0 and len(acked) >= n
    assert acked == [f"ack {i}" for i in range(len(acked))]
    with Store(home, agent="racer") as s:
        facts = {f.key: f.value for f in s.agent().facts.list()}
    assert facts == {f"k{i}": f"v{i}" for i in range(len(acked))}
    assert b"Quokka" not in source_bytes(home, "agents/racer/facts.jsonl")
    racer_writes = [json.loads(x) for x in (home / "events.jsonl").read_text().splitlines()]
    assert sum(
        1
        for r in racer_writes
        if r["event"] == "memory:write" and r["payload"].get("path") == "agents/racer/facts.jsonl"
    ) >= len(acked)


def test_cli_purge_needs_confirmation_and_an_admin_for_the_ledger(home: Path) -> None:
    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [EXE, "--home", str(home), *args], capture_output=True, text=True, timeout=60
        )

    assert cli("--agent", "finn", "facts", "set", "pin", "Zanzibar-Quokka").returncode == 0
    r = cli("--agent", "finn", "purge", "fact", "pin", "--reason", "oops")
    assert r.returncode == 2 and "--yes" in r.stderr
    assert b"Quokka" in source_bytes(home, "agents/finn/facts.jsonl")
    r = cli("--agent", "finn", "--json", "purge", "fact", "pin", "--reason", "oops", "--yes")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["tombstone"]["id"] == "fact:finn:pin"
    assert stored(home, "Zanzibar-Quokka") == []
    entry = json.loads(cli("--json", "ledger", "publish", "decision", "x").stdout)
    r = cli("--agent", "finn", "purge", "ledger", entry["id"], "--reason", "x", "--yes")
    assert r.returncode == 2 and "admin" in r.stderr
    assert cli("purge", "ledger", entry["id"], "--reason", "x", "--yes").returncode == 0
    listed = json.loads(cli("--json", "purge", "list").stdout)
    assert [t["id"] for t in listed] == ["fact:finn:pin", f"ledger:{entry['id']}"]


def test_a_purge_needs_a_reason(store: Store) -> None:
    store.agent().facts.set("k", "v")
    with pytest.raises(MalformedInput, match="reason"):
        purge_fact(store, "k", reason=" ")


def test_search_of_a_purged_text_through_hybrid_finds_nothing(hybrid_home: Path) -> None:
    with Store(hybrid_home, agent="finn") as s:
        with pytest.warns(UserWarning):
            s.agent().facts.set("bot_key", SECRET)
        before = s.search(SearchQuery(text="bot key", mode="hybrid"))
        assert "fact:finn:bot_key" in [h.uid for h in before]  # found before the purge
        purge_fact(s, "bot_key", reason="x")
        assert all(
            h.uid != "fact:finn:bot_key"
            for h in s.search(SearchQuery(text="bot key", mode="hybrid"))
        )


def test_purge_log_entry_from_log_md_and_its_compaction_archive(store: Store, home: Path) -> None:
    from memstrata.operations.purge import purge_log_entry

    log = insecure(store).agent().log
    log.append("THOUGHT", "before")
    with pytest.warns(UserWarning):
        leak = log.append("TOOL_USE", f"curl -H 'Authorization: Bearer {SECRET}' api")
    log.append("THOUGHT", "after")
    pytest.importorskip("memstrata.lifecycle.compaction")
    from memstrata.lifecycle.compaction import compact_log

    compact_log(store, "finn", summary="three entries", force=True)
    log.append("TOOL_USE", "a later entry")
    with pytest.warns(UserWarning):
        live = log.append("TOOL_USE", f"again {OLD_SECRET}")  # still in LOG.md itself
    assert len(stored(home, SECRET)) >= 2  # the archive, the index
    purge_log_entry(store, leak.id, reason="token in a tool call")
    purge_log_entry(store, live.id, reason="token in a tool call")
    assert stored(home, SECRET, OLD_SECRET) == []
    archived = [h.text for h in store.search("before after", layers=("archive",))]
    assert any("before" in t for t in archived) and any("after" in t for t in archived)
    assert [e.content for e in log.entries()][-1] == "a later entry"


READER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN")
conn.execute("SELECT count(*) FROM docs").fetchone()
print("reading", flush=True)
sys.stdin.readline()
"""


def test_a_reader_holding_the_index_is_reported_and_a_later_purge_finishes(
    store: Store, home: Path
) -> None:
    from memstrata.index import scrub

    mem = insecure(store).agent()
    with pytest.warns(UserWarning):
        mem.facts.set("bot_key", SECRET)
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, str(index_db(home))],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert reader.stdout is not None and reader.stdout.readline().strip() == "reading"
    report = purge_fact(store, "bot_key", reason="leaked")
    assert not report.wal_truncated and "another process" in report.notes[0]
    assert [h for h in stored(home, SECRET) if not h.startswith("index/")] == []
    assert reader.stdin is not None
    reader.stdin.write("done\n")
    reader.stdin.flush()
    assert reader.wait(timeout=60) == 0
    assert scrub.compact(store.db)  # what a later purge's last step does
    assert stored(home, SECRET) == []


# -- derived copies: what memstrata itself wrote from the purged content ------------------

PASSPHRASE = "Quokka-Marmot-Heron"  # holders() also looks for its FTS token "heron"


def test_purge_log_entry_scrubs_the_default_compaction_digest(hybrid_home: Path) -> None:
    from memstrata.lifecycle.compaction import compact_log
    from memstrata.operations.purge import purge_log_entry
    from memstrata.operations.purge_copies import PURGED

    home = hybrid_home
    store = insecure(Store(home, agent="finn"))
    log = store.agent().log
    log.append("THOUGHT", "before the decision")
    leak = log.append("THOUGHT", f"Decided: the vault passphrase is {PASSPHRASE}")
    log.append("ERROR", "the deploy failed after it")
    compact_log(store, "finn", force=True)  # the default digest quotes the decision
    assert store.search("vault passphrase", mode="hybrid")  # the summary is embedded
    (summary,) = log.entries()
    vector = "SELECT count(*) FROM vectors WHERE uid = ?"
    with store.db.read() as conn:
        assert conn.execute(vector, (f"log:finn:{summary.id}",)).fetchone()[0] == 1
    before = stored(home, PASSPHRASE)
    assert {"agents/finn/memory/LOG.md", "agents/finn/compactions.jsonl"} <= set(before)
    report = purge_log_entry(store, leak.id, reason="a passphrase in the LOG")
    assert stored(home, PASSPHRASE) == []
    assert "agents/finn/memory/LOG.md" in report.rewritten
    (summary,) = log.entries()
    assert PURGED in summary.content and "the deploy failed after it" in summary.content
    assert not summary.edited  # re-encoded with its new hash, not a hand edit
    assert summary.metadata.get("compacted") is True
    (record,) = store.agent().compactions.list()
    assert PURGED in record["summary"] and "before the decision" in record["summary"]
    with store.db.read() as conn:  # its embedding was of the old text
        assert conn.execute(vector, (f"log:finn:{summary.id}",)).fetchone()[0] == 0
    store.close()


def test_purge_session_message_scrubs_its_summary_flush_and_log(store: Store, home: Path) -> None:
    from memstrata.lifecycle import compact_session

    sessions = insecure(store).agent().sessions
    sessions.append("s1", "user", "hello")
    leak = sessions.append("s1", "user", f"We decided the vault passphrase is {PASSPHRASE}")
    for i in range(12):
        sessions.append("s1", "assistant", f"reply {i}")
    compact_session(store, "finn", "s1", keep_recent=2)
    before = set(stored(home, PASSPHRASE))
    assert {
        "agents/finn/sessions/s1.jsonl",
        "agents/finn/memory/LOG.md",
        "agents/finn/memory/CONTEXT.md",
    } <= before  # summary message, flush entry, flush
    purge_session(store, "s1", message_id=leak.id, reason="a passphrase in chat")
    assert stored(home, PASSPHRASE) == []
    summary = sessions.messages("s1")[0]
    assert summary.role == "summary" and "hello" in summary.content
    assert "reply 11" in [m.content for m in sessions.messages("s1")]
    # A whole session: every message of it is looked for in what was derived from it.
    for i in range(6):
        sessions.append("s2", "user", f"Decision: message {i} says Ocelot-Pangolin-Tapir")
    compact_session(store, "finn", "s2", keep_recent=1)
    assert len(stored(home, "Ocelot-Pangolin-Tapir")) >= 3
    purge_session(store, "s2", reason="the whole chat")
    assert stored(home, "Ocelot-Pangolin-Tapir") == []


def test_purge_fact_scrubs_its_auto_logged_tool_call(home: Path) -> None:
    pytest.importorskip("mcp")
    import anyio

    from mcp import Client
    from memstrata.mcp.server import build_server

    value = "Zanzibar-Quokka-Pelicanstreet"  # holders() also seeks "pelicanstreet"
    home.mkdir(parents=True)
    (home / "config.toml").write_text("[mcp]\nauto_log = true\n")

    async def main(store: Store) -> None:
        async with Client(build_server(store)) as c:
            assert not (
                await c.call_tool("save_fact", {"key": "home_address", "value": value})
            ).is_error
            assert not (await c.call_tool("save_fact", {"key": "editor", "value": "vim"})).is_error

    with Store(home, agent="finn") as s:
        anyio.run(main, s)
        assert "agents/finn/memory/LOG.md" in stored(home, value)
        purge_fact(s, "home_address", reason="an address")
        assert stored(home, value) == []
        calls = [e for e in s.agent().log.entries() if e.metadata.get("tool") == "save_fact"]
        assert [c.metadata["args"]["value"] for c in calls] == ["[purged]", "vim"]
        assert 'key="home_address"' in calls[0].content  # the call is still on record


def test_purge_leaves_what_a_person_wrote_and_unrelated_summary_lines(
    store: Store, home: Path
) -> None:
    from memstrata.lifecycle.compaction import compact_log

    mem = store.agent()
    mem.facts.set("vault", f"the vault passphrase is {PASSPHRASE}")
    mem.log.append("THOUGHT", f"Decision: the vault passphrase is {PASSPHRASE}")
    mem.log.append("THOUGHT", "Decision: ship the importer on Friday")
    compact_log(store, "finn", force=True)
    own = mem.log.append("THOUGHT", f"noted by hand: {PASSPHRASE}")
    purge_fact(store, "vault", reason="x")
    entries = mem.log.entries()
    assert entries[-1].id == own.id and PASSPHRASE in entries[-1].content  # not derived
    assert PASSPHRASE not in entries[0].content  # the summary quoted the fact's value
    assert "ship the importer on Friday" in entries[0].content


def test_an_old_export_does_not_bring_purged_content_back(home: Path, tmp_path: Path) -> None:
    from memstrata.lifecycle.compaction import compact_log
    from memstrata.operations.purge import purge_log_entry

    gone = {
        "file": "Aardvark-Gnu-Okapi",
        "fact": "Bittern-Coypu-Dingo",
        "log": "Caracal-Eland-Fossa",
        "msg": "Gerenuk-Hyrax-Ibex",
        "ses": "Jerboa-Kudu-Lemur",
        "led": "Margay-Numbat-Oryx",
    }
    with Store(home, agent="finn") as s:
        mem = s.agent()
        mem.files.write("notes/keys.md", f"the passphrase is {gone['file']}")
        mem.files.write("notes/kept.md", "nothing secret here")
        mem.facts.set("vault", gone["fact"])
        mem.facts.set("editor", "vim")
        leak = mem.log.append("THOUGHT", f"Decision: the passphrase is {gone['log']}")
        mem.log.append("THOUGHT", "Decision: ship on Friday")
        compact_log(s, "finn", force=True)  # its digest quotes the decision
        said = mem.sessions.append("s1", "user", f"it is {gone['msg']}")
        mem.sessions.append("s1", "user", "thanks")
        mem.sessions.append("s2", "user", f"whole chat: {gone['ses']}")
        entry = s.ledger.publish("decision", f"use {gone['led']}", tags=["x"])
    with Store(home) as admin:
        export_store(admin, tmp_path / "old.tar.gz")
    with Store(home, agent="finn") as s:
        purge_file(s, "notes/keys.md", reason="r")
        purge_fact(s, "vault", reason="r")
        purge_log_entry(s, leak.id, reason="r")
        purge_session(s, "s1", message_id=said.id, reason="r")
        purge_session(s, "s2", reason="r")
    with Store(home) as admin:
        purge_ledger_entry(admin, entry.id, reason="r")
    assert stored(home, *gone.values()) == []

    r = subprocess.run(
        [EXE, "--home", str(home), "--json", "import", "--force", str(tmp_path / "old.tar.gz")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    assert stored(home, *gone.values()) == []  # nothing came back, derived copies included
    report = json.loads(r.stdout)
    kept_out = {(p["path"], p["tombstone"]) for p in report["purged"]}
    assert ("agents/finn/memory/notes/keys.md", "file:finn:notes/keys.md") in kept_out
    assert ("agents/finn/facts.jsonl", "fact:finn:vault") in kept_out
    assert ("ledger.jsonl", f"ledger:{entry.id}") in kept_out
    assert ("agents/finn/sessions/s2.jsonl", "session:finn:s2") in kept_out
    assert "purged content kept out of agents/finn/memory/notes/keys.md" in r.stderr
    with Store(home, agent="finn") as s:
        mem = s.agent()
        assert mem.files.read("notes/kept.md") == "nothing secret here"
        assert mem.facts.get("editor").value == "vim"
        with pytest.raises(NotFound):
            mem.facts.get("vault")
        assert [m.content for m in mem.sessions.messages("s1")] == ["thanks"]
        assert [x.id for x in mem.sessions.list()] == ["s1"]
        assert len(tombstones(s)) == 6  # the older archive's (empty) list replaced nothing


def test_an_archive_brings_its_tombstones_and_they_hold_in_the_next_import(
    home: Path, tmp_path: Path
) -> None:
    """Only when the admin adopts them (issue 20 item 3: an archive's tombstones carry
    no authority; `test_archive_authority` shows the default)."""
    from memstrata.operations.transfer import import_archive

    a, b = tmp_path / "a", tmp_path / "b"
    with Store(a, agent="finn") as s:
        s.agent().facts.set("vault", "Bittern-Coypu-Dingo")
    with Store(a) as admin:
        export_store(admin, tmp_path / "before.tar.gz")
    with Store(b) as admin:
        import_archive(admin, tmp_path / "before.tar.gz")  # b: a copy from before the purge
    with Store(a, agent="finn") as s:
        purge_fact(s, "vault", reason="r")
    with Store(a) as admin:
        export_store(admin, tmp_path / "after.tar.gz")
    with Store(b) as admin:
        report = import_archive(admin, tmp_path / "after.tar.gz", force=True, adopt_tombstones=True)
        assert [t["id"] for t in tombstones(admin)] == ["fact:finn:vault"]
        # (on PostgreSQL a and b share one database: b knows the tombstone already)
        assert all(t.adopted and t.id == "fact:finn:vault" for t in report.tombstones)
        assert report.purged == ()  # the archive itself no longer holds the fact
        again = import_archive(admin, tmp_path / "before.tar.gz", force=True)
        assert ("agents/finn/facts.jsonl", "fact:finn:vault") in again.purged
    assert holders(b, "Bittern-Coypu-Dingo") == []
