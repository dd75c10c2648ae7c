"""memstrata for teams (issue 14): several hosts, one PostgreSQL truth, writers killed.

* Two "hosts" (processes with separate home folders, hence separate indexes) publish to
  one ledger and append LOG entries at once, their writers SIGKILLed at random, for at
  least 50 rounds: every acknowledged write is present exactly once, and both hosts'
  searches agree after catch-up. The same with LOG compaction on (fewer rounds by
  default, `MEMSTRATA_PG_COMPACTING_ROUNDS`): no compaction fails, nothing is lost.
  Both are marked `slow`: `MEMSTRATA_SLOW=1 pytest -m slow` runs them as soaks (200 and
  80 rounds; `MEMSTRATA_PG_ROUNDS` / `MEMSTRATA_PG_COMPACTING_ROUNDS` set any number).
* A long-running store on one host sees another host's write (LISTEN/NOTIFY); a host
  reopening reads what changed since its index's feed position, not every source.
* PostgreSQL stopped with `pg_ctl stop -m immediate` in the middle of writes and started
  again: no acknowledged write lost, the writer recovers by itself (its retry counter
  shows it retried), no duplicate.
* PostgreSQL unreachable: a clear error for writes, searches served from the local
  index with a notice.
"""

from __future__ import annotations

import contextlib
import os
import random
import selectors
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from memstrata import Store
from memstrata.errors import BackendUnavailable
from pgserver import PgServer, unavailable_reason

HOST = str(Path(__file__).with_name("pg_host.py"))
# 50 rounds in every run (issue 14 asks for at least 50); the soak, `MEMSTRATA_SLOW=1`, 200.
SLOW = bool(os.environ.get("MEMSTRATA_SLOW"))
ROUNDS = int(os.environ.get("MEMSTRATA_PG_ROUNDS", "200" if SLOW else "50"))
COMPACTING_ROUNDS = int(os.environ.get("MEMSTRATA_PG_COMPACTING_ROUNDS", "80" if SLOW else "20"))
# LOG compaction off: a killed compaction's documented duplicate (archive written, LOG
# not yet spliced) would blur "present exactly once"; the compacting variant allows it.
NO_COMPACTION = "[log]\ncompact_entries = 100000\ncompact_bytes = 100000000\n"
COMPACTION = "[log]\ncompact_entries = 4\n"  # a compaction every few writes, mid-appends


class Host:
    """A pg_host.py process and the lines it (and its writers) printed."""

    def __init__(
        self, name: str, home: Path, url: str, extra: str = "", log: str = NO_COMPACTION
    ) -> None:
        home.mkdir(parents=True)
        (home / "config.toml").write_text(
            f'{log}[backend]\nurl = "{url}"\n{extra}', encoding="utf-8"
        )
        self.name, self.home = name, home
        env = {**os.environ, "MEMSTRATA_HOME": str(home)}
        self.proc = subprocess.Popen(
            [sys.executable, HOST, str(home), name],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            bufsize=0,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin, self.fd = self.proc.stdin, self.proc.stdout.fileno()
        self.buf = b""
        assert self.expect("ready") == []

    def send(self, cmd: str) -> None:
        self.stdin.write(f"{cmd}\n".encode())

    def lines(self, timeout: float) -> Iterator[str]:
        """Complete lines as they arrive (waiting at most `timeout` for each)."""
        sel = selectors.DefaultSelector()
        sel.register(self.fd, selectors.EVENT_READ)
        try:
            while True:
                while b"\n" in self.buf:
                    line, self.buf = self.buf.split(b"\n", 1)
                    yield line.decode()
                if not sel.select(timeout):
                    raise TimeoutError(f"host {self.name}: nothing for {timeout}s")
                chunk = os.read(self.fd, 65536)
                if not chunk:
                    raise EOFError(f"host {self.name} exited")
                self.buf += chunk
        finally:
            sel.close()

    def expect(self, prefix: str, timeout: float = 60.0) -> list[str]:
        """The ack lines before the first line starting with `prefix` (which is dropped)."""
        acks: list[str] = []
        for line in self.lines(timeout):
            if line.startswith(prefix):
                self.last = line
                return acks
            acks.append(line)
        raise AssertionError("unreachable")

    def close(self) -> None:
        self.send("quit")
        self.proc.wait(10)


def _count(acks: list[str], kind: str) -> Counter[str]:
    return Counter(a.split()[2] for a in acks if a.startswith(f"ack {kind} "))


def _kill_rounds(
    hosts: list[Host], rounds: int, rng: random.Random, compacted_every: int = 0
) -> list[str]:
    """`rounds` rounds: a writer on each host, killed after 1-4 acknowledgements (and,
    every `compacted_every` rounds, only once a compaction of its LOG has finished)."""
    acked: list[str] = []
    pids: dict[str, int] = {}  # the round's writers not killed yet
    try:
        for r in range(rounds):
            for h in hosts:
                h.send(f"spawn {r}")
                acked += h.expect("pid ")
                pids[h.name] = int(h.last.split()[1])
            for h in sorted(hosts, key=lambda _: rng.random()):
                want, seen = rng.randint(1, 4), 0
                compaction = bool(compacted_every) and r % compacted_every == 0
                for n, line in enumerate(h.lines(60)):  # wait for acks, never a fixed sleep
                    acked.append(line)
                    seen += line.startswith("ack ")
                    compaction = compaction and not line.startswith("compacted ")
                    if seen >= want and not compaction:
                        break
                    assert n < 5000, f"host {h.name}: no compaction finished in round {r}"
                os.kill(pids.pop(h.name), signal.SIGKILL)
            for h in hosts:  # what a writer printed before it died is before "synced"
                h.send("sync")
                acked += h.expect("synced")
    finally:
        # A failed round (or a timeout) leaves its writers running: they would go on
        # writing into the database the next test empties and uses.
        for pid in pids.values():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for h in hosts:
            h.close()
    return acked


@pytest.mark.slow
@pytest.mark.timeout(2400 if SLOW else 600)  # rounds of process kills: minutes when loaded
def test_two_hosts_write_while_their_writers_are_killed(pg_url: str, tmp_path: Path) -> None:
    rng = random.Random(1414)
    hosts = [Host(n, tmp_path / n, pg_url) for n in ("a", "b")]
    acked = _kill_rounds(hosts, ROUNDS, rng)
    ledger_acks, log_acks = _count(acked, "ledger"), _count(acked, "log")
    assert len(ledger_acks) >= ROUNDS and len(log_acks) >= ROUNDS
    stores = [Store(h.home, role="admin", watch=False) for h in hosts]
    try:
        a, b = stores
        ledger = Counter(e.id for e in a.ledger.entries(include_superseded=True))
        assert all(ledger[i] == 1 for i in ledger_acks), "an acknowledged entry is missing"
        assert max(ledger.values()) == 1, "a retried write was stored twice"
        logs: Counter[str] = Counter()
        for h in hosts:
            logs.update(e.id for e in a.agent(f"w-{h.name}").log.entries())
        assert all(logs[i] == 1 for i in log_acks) and max(logs.values()) == 1
        for r in rng.sample(range(ROUNDS), 5):
            query = f"round {r} payload"
            mine, theirs = a.search(query, k=50), b.search(query, k=50)
            assert mine and [h.uid for h in mine] == [h.uid for h in theirs]
            # the same BM25 x decay; decay moves on between the two searches, by ~1e-8
            assert all(abs(x.score - y.score) < 1e-6 for x, y in zip(mine, theirs, strict=True))
        counts = [s.db.conn.execute("SELECT count(*) FROM docs").fetchone()[0] for s in stores]
        assert counts[0] == counts[1]
    finally:
        for s in stores:
            s.close()


def _log_places(store: Store, agent: str) -> tuple[Counter[str], dict[str, Counter[str]], set[str]]:
    """An agent's LOG entry ids: in LOG.md, in each archive, and the archives a
    compaction summary names (the others are orphans of a killed compaction)."""
    from memstrata.layers.log import parse_log

    def ids(rel: str) -> tuple[Counter[str], set[str]]:
        parsed = parse_log(store.engine.truth.read_from(rel), 0, rel, owner=agent, final=True)
        metas = [d.meta or {} for d in parsed.docs]
        named = {
            str((m.get("metadata") or {}).get("archive"))
            for m in metas
            if (m.get("metadata") or {}).get("compacted")
        }
        return Counter(m["id"] for m in metas if m.get("entry_type") != "SYSTEM"), named

    live, named = ids(f"agents/{agent}/memory/LOG.md")
    archives: dict[str, Counter[str]] = {}
    for e in store.engine.truth.list(f"agents/{agent}/archive", recursive=False):
        if not e.is_dir and e.path.rsplit("/", 1)[-1].startswith("LOG-"):
            archives[e.path], more = ids(e.path)
            named |= more
    return live, archives, named


@pytest.mark.slow
@pytest.mark.timeout(2400 if SLOW else 600)
def test_two_hosts_compacting_their_logs_while_writers_are_killed(
    pg_url: str, tmp_path: Path
) -> None:
    """The same kill rounds with LOG compaction on (every few entries, in the writer's
    background while it appends; every fourth round a writer is killed only after one
    finished, the others mostly mid-compaction): no compaction fails (appends wait for
    the LOG's lock on PostgreSQL too), nothing acknowledged is lost, and an entry is
    stored twice only in the archive of a compaction killed before its splice."""
    rng = random.Random(1515)
    hosts = [Host(n, tmp_path / n, pg_url, log=COMPACTION) for n in ("a", "b")]
    acked = _kill_rounds(hosts, COMPACTING_ROUNDS, rng, compacted_every=4)
    assert [a for a in acked if a.startswith("bgerror")] == []
    ledger_acks, log_acks = _count(acked, "ledger"), _count(acked, "log")
    assert len(log_acks) >= COMPACTING_ROUNDS * 2
    kept: Counter[str] = Counter()  # LOG.md and the archives a compaction summary names
    orphaned: Counter[str] = Counter()
    compactions = 0
    with Store(hosts[0].home, role="admin", watch=False) as s:
        ledger = Counter(e.id for e in s.ledger.entries(include_superseded=True))
        for h in hosts:
            live, archives, named = _log_places(s, f"w-{h.name}")
            kept.update(live)
            for path, found in archives.items():
                (kept if path in named else orphaned).update(found)
                compactions += path in named
    assert all(ledger[i] == 1 for i in ledger_acks) and max(ledger.values()) == 1
    assert compactions >= 2 * COMPACTING_ROUNDS // 4  # one per host every fourth round at least
    assert all(kept[i] == 1 for i in log_acks), "an acknowledged LOG entry is lost or doubled"
    assert max(kept.values()) == 1
    assert set(orphaned) <= set(kept)  # a killed compaction's copy, never the only one


def test_a_long_running_store_sees_another_hosts_write(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMSTRATA_DATABASE_URL", pg_url)
    with (
        Store(tmp_path / "b", agent="bob", watch=True) as reader,
        Store(tmp_path / "a", agent="alice", watch=False) as writer,
    ):
        assert reader.search("albatross") == []
        writer.ledger.publish("warning", "the albatross endpoint is flaky")
        deadline = time.monotonic() + 60  # the notification's path, not a time promise
        while not reader.search("albatross"):
            assert time.monotonic() < deadline, "host b never saw host a's write"
            time.sleep(0.01)


@pytest.fixture
def own_server() -> Iterator[PgServer]:
    """A server of this test's own (it is stopped and restarted), fsync on."""
    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(reason)
    server = PgServer.start_new(fsync=True)
    yield server
    server.destroy()


def test_postgres_restart_mid_writes_loses_and_duplicates_nothing(
    own_server: PgServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = own_server.create_database()
    host = Host("a", tmp_path / "a", url, "retry_seconds = 60\n")
    acked: list[str] = []
    try:
        host.send("spawn 0")
        acked += host.expect("pid ")
        pid = int(host.last.split()[1])
        lines = host.lines(60)
        acked += [next(lines) for _ in range(20)]  # writes are flowing
        own_server.stop("immediate")  # the server dies mid-write
        acked += [line for line in host.buf.decode().splitlines()]
        host.buf = b""
        own_server.start()
        before = len(acked)
        for line in host.lines(90):  # the writer recovers by itself
            acked.append(line)
            if len(acked) >= before + 20:
                break
        os.kill(pid, signal.SIGKILL)
        host.send("sync")
        acked += host.expect("synced")
    finally:
        host.close()
    monkeypatch.setenv("MEMSTRATA_DATABASE_URL", url)
    with Store(tmp_path / "check", role="admin", watch=False) as s:
        ledger = Counter(e.id for e in s.ledger.entries(include_superseded=True))
        log = Counter(e.id for e in s.agent("w-a").log.entries())
    assert all(ledger[i] == 1 for i in _count(acked, "ledger"))
    assert all(log[i] == 1 for i in _count(acked, "log"))
    assert max(ledger.values()) == 1 and max(log.values()) == 1
    # The writer did go through the outage: its operations failed and were retried.
    assert (
        max(int(a.split()[4]) for a in acked if a.startswith("ack ") and len(a.split()) == 5) >= 1
    )


def test_unreachable_postgres_is_a_clear_error_and_search_is_served_stale(
    own_server: PgServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMSTRATA_DATABASE_URL", own_server.create_database())
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text("[backend]\nretry_seconds = 0.5\n", encoding="utf-8")
    with Store(home, agent="finn", watch=False) as s:
        s.ledger.publish("decision", "the heron service uses gRPC")
    own_server.stop("immediate")
    with Store(home, agent="finn", watch=False) as s:
        assert any("unreachable" in n for n in s.notices), s.notices
        assert [h.layer for h in s.search("heron")] == ["ledger"]  # from the local index
        with pytest.raises(BackendUnavailable, match="unreachable"):
            s.ledger.publish("decision", "a write while the server is down")
    own_server.start()


def _looked_at(store: Store) -> int:
    """How many times this host's store read or listed sources of the truth."""
    stats = store.engine.truth.stats  # type: ignore[attr-defined]
    return int(sum(stats[k] for k in ("stat", "list", "read", "read_from")))


def test_a_reopening_host_reads_what_changed_not_the_whole_store(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A host's index keeps the change feed position it caught up to: opening again
    reads the sources written since (by sequence number), not every source."""
    import psycopg

    monkeypatch.setenv("MEMSTRATA_DATABASE_URL", pg_url)
    sources = 80
    with Store(tmp_path / "a", agent="alice", watch=False) as a:
        files = a.agent().files
        for i in range(sources):
            files.write(f"notes/{'old/' if i < 3 else ''}n{i}.md", f"# note {i}\n\nbody {i}\n")

    def reopen() -> tuple[int, list[str]]:
        with Store(tmp_path / "b", role="admin", watch=False) as b:
            found = sorted(
                f"{h.layer}:{f'{h.title} {h.text}'.split()[-1]}" for h in b.search("kiwi", k=50)
            )
            return _looked_at(b), found

    joined, _ = reopen()  # a new index: every source is looked at
    assert joined >= sources
    idle, _ = reopen()
    assert idle <= 3, "nothing changed, yet the reopening host looked at sources"
    with Store(tmp_path / "a", agent="alice", watch=False) as a:  # the other host writes
        for i in range(10):
            a.ledger.publish("decision", f"kiwi decision {i}")  # one source, ten writes
        a.agent().log.append("THOUGHT", "kiwi thought")
        a.agent().files.write("notes/n10.md", "# note 10\n\nkiwi rewritten\n")
        a.agent().files.delete("notes/old")  # a folder of three moves to the archive
    looked, found = reopen()
    # Nine sources changed (ledger, LOG.md, a note, three notes moved away and where they
    # went): a few looks each (stat, read), against a few per source of the whole store.
    assert looked <= idle + 5 * 9 and looked < joined / 4, (looked, joined)
    assert found == sorted(
        [*(f"ledger:{i}" for i in range(10)), "log:thought", "file:rewritten"]
    ), found
    with Store(tmp_path / "b", role="admin", watch=False) as b:
        old = {h.layer for h in b.search("body 0", k=50) if "note 0" in f"{h.title} {h.text}"}
        assert old == {"archive"}, "the moved folder's files are still indexed where they were"
    with psycopg.connect(pg_url, autocommit=True) as conn:  # the feed was pruned past it
        conn.execute("UPDATE memstrata_feed SET pruned_through = 1000000")
    looked, again = reopen()
    assert looked >= sources - 3 and again == found  # every source looked at again
    assert reopen()[0] <= 3  # and the position taken then serves the next open


def test_a_stale_index_catches_up_by_feed_once_not_on_every_read(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMSTRATA_DATABASE_URL", pg_url)
    with Store(tmp_path / "a", agent="alice", watch=False) as s:
        s.ledger.publish("decision", "the okapi service is read-only")
        s.engine._stale = True  # as after an index write that failed (a full disk)
        before = s.engine.truth.stats["feed"]  # type: ignore[attr-defined]
        for _ in range(3):
            assert [h.layer for h in s.search("okapi")] == ["ledger"]
        assert s.engine.truth.stats["feed"] - before == 1  # type: ignore[attr-defined]
