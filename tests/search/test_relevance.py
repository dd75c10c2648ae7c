"""Search behaves as people expect: only matches, prefixes, identifier words, real scores."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from memstrata import MemoryManager, Store
from memstrata.search.expand import abbreviations, is_abbreviation
from memstrata.search.query import LAYERS

sys.path.insert(0, str(Path(__file__).parent))
import agent_questions


def test_only_memories_that_match_are_returned(store: Store) -> None:
    log = store.agent().log
    for i in range(12):  # "test" is in most memories: it says almost nothing
        log.append("TOOL_USE", f"ran the test suite, run {i}: all green")
    log.append("ERROR", "test_invoice_dates is flaky when the runner timezone is not UTC")
    hits = store.search("flaky test timezone")
    assert [h.snippet for h in hits] == [
        "test_invoice_dates is flaky when the runner timezone is not UTC"
    ]
    # When every query word is that common, the memories holding it are still found.
    assert len(store.search("test", k=50)) == 13


def test_a_word_is_found_by_its_prefix_when_nothing_holds_it_whole(store: Store) -> None:
    store.ledger.publish("decision", "Chose argon2id for password hashing", tags=["auth"])
    store.ledger.publish("decision", "Kubernetes on EKS", tags=["deploy"])
    assert [h.title for h in store.search("argon2")] == ["Chose argon2id for password hashing"]
    hit = store.search("kube")[0]
    assert hit.title == "Kubernetes on EKS" and hit.explain["prefix_of"] == ["kube"]
    store.ledger.publish("decision", "auth tokens expire after 1 hour")
    store.ledger.publish("decision", "The authority service signs tokens")
    # "auth" exists whole: its longer cousins are not dragged in
    assert {h.title for h in store.search("auth", layers=("ledger",))} == {
        "Chose argon2id for password hashing",
        "auth tokens expire after 1 hour",
    }


def test_fact_keys_are_searchable_by_their_words(store: Store) -> None:
    store.agent().facts.set("db_engine", "PostgreSQL 16", "config")
    store.agent().facts.set("user-tz", "Europe/Berlin", "personal")
    assert [h.title for h in store.search("engine")] == ["db_engine"]
    assert [h.title for h in store.search("db")] == ["db_engine"]
    assert [h.title for h in store.search("tz")] == ["user-tz"]


def test_a_question_finds_the_fact_whose_key_abbreviates_its_words(home: Path) -> None:
    with MemoryManager("finn", home) as m:
        m.save_fact("db_engine", "PostgreSQL 16", "config")
        m.save_fact("user_tz", "Europe/Berlin", "personal")
        m.append_log("TOOL_USE", "restored the nightly backup into a scratch database")
        m.append_log("THOUGHT", "the deploy window is Friday")
        hits = m.recall_memory("what database do we use?", n_results=3)
        assert "db_engine" in [h.title for h in hits]
        assert "db" in hits[[h.title for h in hits].index("db_engine")].explain["abbreviations"]
        assert m.recall_memory("which time zone is the user in?", n_results=1)[0].title == "user_tz"


def test_init_boilerplate_is_not_recalled_until_edited(home: Path) -> None:
    """`memstrata init`'s starter AGENT.md and CONTEXT.md hold no memory: "what database do
    we use?" found "List the tools and skills this agent may use". Once edited, they are
    indexed; an index made before this change drops the boilerplate (migration 008)."""
    from memstrata.cli.main import main

    assert main(["--home", str(home), "init", "finn"]) == 0
    with MemoryManager("finn", home) as m:
        m.save_fact("db_engine", "PostgreSQL 16", "config")
        hits = m.recall_memory("what database do we use?", n_results=5)
        assert [h.title for h in hits] == ["db_engine"]
        assert not m.recall_memory("capabilities skills tools rules")
    with Store(home, agent="finn") as s:
        identity = s.agent().identity
        identity.write(identity.read() + "- Runs the nightly backup drill.\n")
        assert [h.layer for h in s.search("backup drill")] == ["identity"]
        assert s.search("capabilities")  # the whole edited file is memory now
        with s.db.write() as conn:  # an index from before: the starter CONTEXT.md indexed
            conn.execute(
                "INSERT INTO docs (uid, layer, owner, ts, title, body, source) VALUES "
                "('md:agents/finn/memory/CONTEXT.md#0', 'context', 'finn', 0, "
                "'Persistent memory', 'Long-term notes loaded into every prompt', ?)",
                (str(s.agent().context.path),),
            )
            conn.execute("DELETE FROM meta WHERE key = 'migration:008_unindexed_starters'")
        assert s.search("long-term notes")
    with Store(home, agent="finn") as s:
        assert not s.search("long-term notes")


def test_abbreviations_come_from_identifiers_only(store: Store) -> None:
    store.agent().log.append("THOUGHT", "db is short, ok")  # free text: not an identifier
    store.agent().log.append("THOUGHT", "we need a database")
    hits = store.search("database")
    assert [h.snippet for h in hits] == ["we need a database"]


@pytest.mark.parametrize(
    ("short", "long", "expected"),
    [
        ("db", "database", True),
        ("tz", "timezone", True),
        ("pwd", "password", True),
        ("cfg", "config", True),
        ("env", "environment", True),
        ("bd", "database", False),
        ("db", "dba", False),
        ("data", "database", True),
        ("d2", "dd2x", False),
    ],
)
def test_is_abbreviation(short: str, long: str, expected: bool) -> None:
    assert is_abbreviation(short, long) is expected


def test_abbreviations_of_adjacent_words() -> None:
    assert abbreviations(["time", "zone"], {"tz", "usr", "db"}) == {"timezone": ["tz"]}
    assert abbreviations(["username"], {"tz", "usr", "db"}) == {"username": ["usr"]}


def test_words_typed_together_abbreviate_only_as_their_initials() -> None:
    """ "Where do the downtime notifications end up?" matched the fact key `dns` (d, n, s in
    order across the two words) and put every DNS record above the alerting decision
    (bench agent, ops-lighthouse). Adjacent words abbreviate as an initialism."""
    ids = {"dns", "tz"}
    assert abbreviations(["downtime", "notifications"], ids) == {}
    assert abbreviations(["domain", "name", "system"], ids) == {"domainnamesystem": ["dns"]}


def test_each_hit_says_which_query_words_it_holds(store: Store) -> None:
    store.ledger.publish("decision", "Chose argon2id for password hashing: argon2id resists GPUs")
    store.ledger.publish("decision", "Password rules: 14 characters")
    store.agent().facts.set("pwd_policy", "no rotation", "config")
    for i in range(3):
        store.agent().log.append("THOUGHT", f"unrelated note {i}")
    hits = {h.title: h.explain["matched"] for h in store.search("argon2 password hashing")}
    assert hits == {
        "Chose argon2id for password hashing: argon2id resists GPUs": [
            "argon2",
            "password",
            "hashing",
        ],
        "Password rules: 14 characters": ["password"],
        "pwd_policy": ["pwd"],
    }


def test_labelled_agent_questions(tmp_path: Path) -> None:
    """The labelled set (tests/search/agent_questions.py): before issue 12 recall@5 0.925,
    MRR 0.88; with prefixes, identifier abbreviations and only-matches 0.975 and 0.925
    (`python tests/search/agent_questions.py --sessions`)."""
    home = tmp_path / "labelled"
    uids = agent_questions.populate(home)
    # Two questions are answered by a session transcript, which seed 004 searches on request.
    result = agent_questions.evaluate(home, uids, layers=(*LAYERS, "sessions"))
    assert result["recall@5"] >= 0.975 and result["mrr"] >= 0.92, result


def test_identifier_words_follow_every_change_without_a_rescan(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memstrata.search.expand import IdentifierWords

    for i in range(200):
        store.ledger.publish("decision", f"entry {i}", tags=[f"tag{i}x", "release"])
    store.agent().facts.set("db_engine", "PostgreSQL 16", "config")
    assert "db" in store.search("database")[0].explain.get("abbreviations", [])
    remembered: list[str] = []
    real = IdentifierWords._remember

    def counting(self: IdentifierWords, uid: str, *args: str) -> None:
        remembered.append(uid)
        real(self, uid, *args)

    monkeypatch.setattr(IdentifierWords, "_remember", counting)
    store.ledger.publish("decision", "passwords rotate monthly", tags=["pwd"])
    hits = store.search("password")
    assert "pwd" in hits[0].explain.get("abbreviations", [])
    assert len(remembered) <= 3  # the new entry, not the 200 tagged ones again
    store.agent().facts.forget("db_engine")
    assert all("abbreviations" not in h.explain for h in store.search("database"))


def test_identifier_words_see_a_tags_only_update(tmp_path: Path) -> None:
    from memstrata.index.db import Database
    from memstrata.index.docs import Doc, upsert_docs
    from memstrata.search.expand import IdentifierWords

    db = Database(tmp_path / "index.db")
    doc = Doc(uid="u1", layer="task", ts=0.0, body="same body", source="s", tags=("cfg",))
    with db.write() as conn:
        upsert_docs(conn, [doc])
    ids = IdentifierWords()
    with db.read() as conn:
        assert ids.get(conn, "1", []) == {"cfg"}
    with db.write() as conn:  # same title and body, other tags: no text change
        upsert_docs(
            conn, [Doc(uid="u1", layer="task", ts=0.0, body="same body", source="s", tags=("env",))]
        )
    with db.read() as conn:
        assert ids.get(conn, "1", []) == {"env"}
    with db.write() as conn:
        conn.execute("DELETE FROM docs WHERE uid = 'u1'")
    with db.read() as conn:
        assert ids.get(conn, "1", []) == frozenset()
    db.close()
