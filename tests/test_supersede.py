"""Who may supersede a ledger entry, who is its author, and which role a caller gets
(issue 10 items 2 and 3): one rule in `scope.Gate`, the same over the API, the CLI and MCP,
and on both truths (local files and PostgreSQL; the ledger is read through `store.engine.truth`)."""

from __future__ import annotations

import json
import multiprocessing as mp
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memstrata import AlreadySuperseded, ScopeDenied, Store, SupersedeDenied
from memstrata.model import LedgerEntry

ROLES = '[roles]\nadmin = ["wilco"]\nskill = ["seo"]\n'


@pytest.fixture(autouse=True)
def _on_both_truths(backend: str) -> str:
    return backend


def _ledger_text(home: Path) -> str:
    """ledger.jsonl as the store's truth holds it (a file, or PostgreSQL rows)."""
    with Store(home, sync=False, watch=False) as s:
        return s.engine.truth.read_from("ledger.jsonl").decode()


@pytest.fixture
def ledger(home: Path) -> dict[str, LedgerEntry]:
    """An admin's convention, a room-a and a room-b decision, and a room-less note of bob's."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(ROLES)
    out = {}
    with Store(home, agent="wilco") as s:
        out["admin"] = s.ledger.publish("convention", "All endpoints use /api/v1")
    with Store(home, agent="alice", room="room-a") as s:
        out["room_a"] = s.ledger.publish("decision", "room-a chose bcrypt")
    with Store(home, agent="bob", room="room-b") as s:
        out["room_b"] = s.ledger.publish("decision", "room-b chose postgres")
    with Store(home, agent="bob") as s:
        out["bob_roomless"] = s.ledger.publish("warning", "bob: do not touch config.py")
    return out


def _live(home: Path) -> set[str]:
    with Store(home) as s:
        return {e.id for e in s.ledger.query()}


def test_a_room_cannot_erase_another_rooms_or_an_admins_entry(
    home: Path, ledger: dict[str, Any]
) -> None:
    with Store(home, agent="alice", room="room-a") as alice:
        for target in ("admin", "room_b", "bob_roomless"):
            with pytest.raises(SupersedeDenied):
                alice.ledger.publish("decision", "hijack", supersedes=ledger[target].id)
    assert _live(home) == {e.id for e in ledger.values()}
    assert "hijack" not in _ledger_text(home)


def test_the_entrys_own_room_and_admins_may_supersede(home: Path, ledger: dict[str, Any]) -> None:
    # another agent of room-a corrects room-a's decision
    with Store(home, agent="carol", room="room-a") as carol:
        new = carol.ledger.publish(
            "decision", "room-a switched to argon2", supersedes=ledger["room_a"].id
        )
    # bob corrects his own room-less note
    with Store(home, agent="bob") as bob:
        bob.ledger.publish(
            "warning", "bob: config.py is fine now", supersedes=ledger["bob_roomless"].id
        )
    with Store(home, agent="wilco") as admin:
        admin.ledger.publish("decision", "room-b moved to sqlite", supersedes=ledger["room_b"].id)
        admin.ledger.publish(
            "convention", "All endpoints use /api/v2", supersedes=ledger["admin"].id
        )
    live = _live(home)
    assert not live & {e.id for e in ledger.values()}
    assert new.id in live and len(live) == 4


def test_an_admins_entry_in_a_room_stays_the_admins(home: Path, ledger: dict[str, Any]) -> None:
    with Store(home, agent="wilco", room="room-a") as admin:
        ruling = admin.ledger.publish("convention", "room-a must use the shared auth module")
    with Store(home, agent="alice", room="room-a") as alice, pytest.raises(SupersedeDenied):
        alice.ledger.publish("convention", "never mind", supersedes=ruling.id)


def test_double_supersede_is_refused_and_names_the_head(home: Path, ledger: dict[str, Any]) -> None:
    with Store(home, agent="alice", room="room-a") as alice:
        first = alice.ledger.publish("decision", "argon2", supersedes=ledger["room_a"].id)
        with pytest.raises(AlreadySuperseded) as err:
            alice.ledger.publish("decision", "scrypt", supersedes=ledger["room_a"].id)
        assert err.value.head == first.id and first.id in str(err.value)
        second = alice.ledger.publish("decision", "scrypt", supersedes=first.id)  # the head: fine
        assert [e.id for e in alice.ledger.query(kind="decision", room="room-a")] == [second.id]
    with Store(home, agent="wilco") as admin, pytest.raises(AlreadySuperseded):
        admin.ledger.publish("decision", "admins too", supersedes=ledger["room_a"].id)


def _race(home: str, target: str, go: Any, out: Any) -> None:
    with Store(home, agent="alice", room="room-a") as s:
        go.wait()
        try:
            out.put(s.ledger.publish("decision", "racer", supersedes=target).id)
        except AlreadySuperseded:
            out.put("refused")


def test_concurrent_supersedes_leave_exactly_one_successor(
    home: Path, ledger: dict[str, Any]
) -> None:
    ctx = mp.get_context("spawn")
    go, out = ctx.Event(), ctx.Queue()
    procs = [
        ctx.Process(target=_race, args=(str(home), ledger["room_a"].id, go, out)) for _ in range(4)
    ]
    for p in procs:
        p.start()
    go.set()
    results = [out.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    assert results.count("refused") == 3
    lines = [json.loads(x) for x in _ledger_text(home).splitlines()]
    assert [x["id"] for x in lines if x["supersedes"] == ledger["room_a"].id] == [
        r for r in results if r != "refused"
    ]


def test_a_hand_edited_line_that_supersedes_itself_stays_visible(home: Path) -> None:
    line = {
        "id": "mem-0000abcd",
        "ts": "2026-01-01T00:00:00Z",
        "kind": "decision",
        "room_id": None,
        "author_role": "ann",
        "ref": None,
        "tags": [],
        "summary": "names itself",
        "detail": None,
        "supersedes": "mem-0000abcd",
    }
    with Store(home, sync=False, watch=False) as s:  # by hand, past the library
        s.engine.truth.rewrite("ledger.jsonl", (json.dumps(line) + "\n").encode())
    with Store(home) as s:
        assert [e.id for e in s.ledger.query()] == ["mem-0000abcd"]
        assert s.ledger.is_superseded("mem-0000abcd") is False
        assert [h.meta["id"] for h in s.search("names itself")] == ["mem-0000abcd"]
        s.reindex()
        assert [e.id for e in s.ledger.entries()] == ["mem-0000abcd"]


def test_author_role_is_the_actor_unless_an_admin_sets_it(
    home: Path, ledger: dict[str, Any]
) -> None:
    with Store(home, agent="alice", room="room-a") as alice:
        with pytest.raises(ScopeDenied):
            alice.ledger.publish("decision", "forged", author_role="wilco")
        assert alice.ledger.publish("decision", "mine", author_role="alice").author_role == "alice"
        assert alice.ledger.publish("decision", "default").author_role == "alice"
    with Store(home, agent="wilco") as admin:
        assert (
            admin.ledger.publish(
                "decision", "for the architect", author_role="architect"
            ).author_role
            == "architect"
        )
    assert "forged" not in _ledger_text(home)


def test_roles_come_from_config_and_can_only_be_lowered(home: Path, ledger: dict[str, Any]) -> None:
    with pytest.raises(ScopeDenied, match="cannot act as admin"):
        Store(home, agent="alice", role="admin")
    with pytest.raises(ScopeDenied):
        Store(home, agent="seo", role="project")
    with Store(home, agent="wilco", role="project") as lowered:
        assert lowered.principal.role == "project"
        with pytest.raises(ScopeDenied):
            lowered.agent("alice", create=True).facts.set("k", "v")
    with Store(home, agent="alice", role="skill") as skill, pytest.raises(ScopeDenied):
        skill.ledger.query()
    with Store(home) as anonymous:  # the person at the terminal owns the files
        assert anonymous.principal.role == "admin"


# -- the CLI ---------------------------------------------------------------------------


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memstrata.cli.main", "--home", str(home), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_cli_role_flag_cannot_escalate(home: Path, ledger: dict[str, Any]) -> None:
    before = _ledger_text(home)
    r = _cli(
        home,
        "--agent",
        "alice",
        "--room",
        "room-a",
        "--role",
        "admin",
        "ledger",
        "publish",
        "convention",
        "hijack",
        "--supersedes",
        ledger["admin"].id,
    )
    assert r.returncode == 2 and "cannot act as admin" in r.stderr, r.stderr
    r = _cli(
        home,
        "--agent",
        "alice",
        "--room",
        "room-a",
        "ledger",
        "publish",
        "convention",
        "hijack",
        "--supersedes",
        ledger["admin"].id,
    )
    assert r.returncode == 2 and "may not supersede" in r.stderr, r.stderr
    assert _ledger_text(home) == before
    r = _cli(
        home,
        "--agent",
        "wilco",
        "--role",
        "project",
        "--room",
        "room-b",
        "ledger",
        "publish",
        "decision",
        "lowered is fine",
        "--supersedes",
        ledger["room_b"].id,
    )
    assert r.returncode == 0, r.stderr


def test_cli_author_is_checked(home: Path, ledger: dict[str, Any]) -> None:
    r = _cli(
        home,
        "--agent",
        "alice",
        "--room",
        "room-a",
        "ledger",
        "publish",
        "decision",
        "forged",
        "--author",
        "wilco",
    )
    assert r.returncode == 2 and "may not publish as 'wilco'" in r.stderr
    assert "forged" not in _ledger_text(home)
    r = _cli(
        home, "--json", "ledger", "publish", "decision", "by the architect", "--author", "architect"
    )
    assert r.returncode == 0 and json.loads(r.stdout)["author_role"] == "architect"
    last = json.loads(_ledger_text(home).splitlines()[-1])
    assert last["author_role"] == "architect"


# -- MCP ---------------------------------------------------------------------------------


def test_mcp_project_agent_cannot_supersede_an_admins_or_another_rooms_entry(
    home: Path, ledger: dict[str, Any]
) -> None:
    pytest.importorskip("mcp")
    import anyio

    from mcp import Client
    from memstrata.mcp.server import build_server

    store = Store(home, agent="alice", room="room-a")

    async def main() -> dict[str, tuple[bool, str, Any]]:
        out = {}
        async with Client(build_server(store)) as c:
            for name, target in (
                ("admin", ledger["admin"].id),
                ("room_b", ledger["room_b"].id),
                ("own", ledger["room_a"].id),
                ("again", ledger["room_a"].id),
            ):
                r = await c.call_tool(
                    "memory_publish",
                    {"kind": "decision", "summary": f"via mcp {name}", "supersedes": target},
                )
                out[name] = (bool(r.is_error), r.content[0].text, r.structured_content)
        return out

    out = anyio.run(main)
    store.close()
    assert out["admin"][0] and "supersede_denied:" in out["admin"][1]
    assert out["room_b"][0] and "supersede_denied:" in out["room_b"][1]
    assert not out["own"][0] and out["own"][2]["entry"]["author_role"] == "alice"
    assert out["again"][0] and "already_superseded:" in out["again"][1]
    live = _live(home)
    assert ledger["admin"].id in live and ledger["room_b"].id in live
    assert ledger["room_a"].id not in live
