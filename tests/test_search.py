"""One search over every layer: filters, supersedes, decay, explain, bad input, rebuild."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from memstrata import MalformedInput, SearchQuery, Store, UnknownKind, UnknownLayer
from memstrata.search.query import LAYERS


@pytest.fixture
def ledger_store(home: Path) -> Store:
    s = Store(home, agent="architect", room="room-042")
    now = time.time()
    # Backdated entries in several rooms: only the store's owner (an admin) may write those.
    owner = s.acting_as(None).ledger
    owner.publish(
        "decision",
        "Chose bcrypt for password hashing",
        tags=["auth", "db"],
        room_id="room-038",
        ts=now - 3600,
        author_role="architect",
    )
    owner.publish(
        "code",
        "JWT validation helper for auth tokens",
        tags=["auth"],
        room_id="room-038",
        ts=now - 600 * 3600,
        author_role="architect",
    )
    owner.publish(
        "convention",
        "All API endpoints use the /api/v1 prefix",
        tags=["api"],
        room_id="room-042",
        ts=now - 600 * 3600,
        author_role="architect",
    )
    return s


def test_ledger_search_bm25_times_decay_with_explain(ledger_store: Store) -> None:
    hits = ledger_store.search("auth password JWT", layers=("ledger",))
    assert hits[0].title == "Chose bcrypt for password hashing"
    for h in hits:
        e = h.explain
        assert e["recency"] == pytest.approx(1 - e["recency_bound"] * (1 - e["decay"]), rel=1e-4)
        assert e["score"] == pytest.approx(e["relevance"] * e["recency"], rel=1e-4)
        assert e["bm25_relevance"] == -e["bm25"]
        assert e["half_life_hours"] in (336.0, 72.0)
    code = next(h for h in hits if h.kind == "code")
    assert code.explain["decay"] < 0.01  # 600 h old, 72 h half-life


def test_filters_and_filtered_views(ledger_store: Store) -> None:
    q = SearchQuery(text="api auth", layers=("ledger",), exclude_room="room-042")
    others = ledger_store.search(q)
    assert others and all(h.room != "room-042" for h in others)
    assert [h.kind for h in ledger_store.search(SearchQuery(text="auth", kind="code"))] == ["code"]
    tagged = ledger_store.search(SearchQuery(tags=("api",), layers=("ledger",)))
    assert [h.title for h in tagged] == ["All API endpoints use the /api/v1 prefix"]
    both = ledger_store.search(SearchQuery(tags=("auth", "db"), tags_match="all"))
    assert [h.title for h in both] == ["Chose bcrypt for password hashing"]
    newest = ledger_store.search(SearchQuery(layers=("ledger",), k=3))  # structured: newest first
    assert newest[0].title == "Chose bcrypt for password hashing"
    since = ledger_store.search(SearchQuery(layers=("ledger",), since=time.time() - 7200))
    assert len(since) == 1


def test_superseded_never_comes_back_unless_asked(ledger_store: Store) -> None:
    old = ledger_store.ledger.query(kind="decision")[0]
    with Store(ledger_store.home, agent="architect", room="room-038") as own_room:
        own_room.ledger.publish(
            "decision", "Switched from bcrypt to argon2 hashing", supersedes=old.id
        )
    titles = [h.title for h in ledger_store.search("bcrypt hashing")]
    assert "Chose bcrypt for password hashing" not in titles
    assert all(e.id != old.id for e in ledger_store.ledger.query())
    with_old = ledger_store.search(SearchQuery(text="bcrypt", include_superseded=True))
    assert any(h.superseded and h.meta["id"] == old.id for h in with_old)
    assert old.id in {e.id for e in ledger_store.ledger.entries(include_superseded=True)}


def test_search_spans_layers(store: Store) -> None:
    m = store.agent()
    m.now.update("Migrating the billing database")
    m.log.append("TOOL_USE", "ran the billing migration dry run")
    m.facts.set("billing_db", "postgres 15 on db-2")
    m.files.write("billing.md", "# Billing\nThe billing schema has 12 tables.\n")
    m.sessions.append("s1", "user", "when does the billing migration start?")
    m.tasks.add("Finish billing migration")
    layers = {h.layer for h in store.search("billing", k=50)}
    assert layers == {"now", "log", "fact", "file", "task"}  # transcripts: opt-in (seed 004)
    with_sessions = store.search(SearchQuery(text="billing", k=50, layers=(*LAYERS, "sessions")))
    assert {h.layer for h in with_sessions} == {"now", "log", "fact", "file", "session", "task"}
    only = store.search(SearchQuery(text="billing", layers=("fact", "task")))
    assert {h.layer for h in only} == {"fact", "task"}


@pytest.mark.parametrize(
    "text",
    [
        '"',
        "'",
        '"unbalanced',
        "a* OR NOT b",
        "NEAR(a b)",
        "col:val",
        "^start",
        "(((",
        "-x",
        "AND",
        "🙂 emoji",
        "a" * 10_000,
        "x\x00y",
    ],
)
def test_hostile_query_text_never_errors(ledger_store: Store, text: str) -> None:
    hits = ledger_store.search(text)
    assert isinstance(hits, list)


def test_empty_query_is_structured_and_stopwords_give_nothing(ledger_store: Store) -> None:
    assert len(ledger_store.search("   ", layers=("ledger",))) == 3
    assert ledger_store.search("?!? ...") == []


def test_bad_query_values(ledger_store: Store) -> None:
    with pytest.raises(UnknownLayer):
        SearchQuery(text="x", layers=("dreams",))
    for k in (0, 51, -1, True):
        with pytest.raises(MalformedInput):
            SearchQuery(text="x", k=k)
    with pytest.raises(UnknownKind):
        ledger_store.search(SearchQuery(text="x", layers=("ledger",), kind="gossip"))
    with pytest.raises(MalformedInput):
        SearchQuery(text="x", since="yesterday-ish")


def test_search_emits_event(ledger_store: Store) -> None:
    with ledger_store.events.capture() as seen:
        hits = ledger_store.search("bcrypt")
    [ev] = [e for e in seen if e.name == "memory:search"]
    assert ev.payload == {"query": "bcrypt", "results": [h.uid for h in hits]}


def test_deleting_the_index_gives_the_same_results(home: Path) -> None:
    s = Store(home, agent="finn", room="room-1")
    m = s.agent()
    for i in range(30):
        s.ledger.publish(
            "decision", f"decision {i} about caching layer {i % 7}", tags=[f"t{i % 3}"]
        )
        m.log.append("THOUGHT", f"considered cache eviction policy {i}")
    m.files.write("cache.md", "# Cache\nLRU with 5 minute TTL\n")
    queries = ["caching layer 3", "cache eviction", "LRU TTL", "decision"]
    fixed = time.time()
    before = [[h.uid for h in s.search(SearchQuery(text=q, now=fixed))] for q in queries]
    s.close()
    shutil.rmtree(home / "index")
    again = Store(home, agent="finn", room="room-1")
    after = [[h.uid for h in again.search(SearchQuery(text=q, now=fixed))] for q in queries]
    assert before == after and all(before)
    again.close()


def test_transcript_messages_are_found_by_their_neighbours_words(store: Store) -> None:
    sess = store.agent().sessions
    sess.append(
        "s1",
        "user",
        "What breed is your new puppy?",
        speaker="Ana",
        timestamp="2023-05-07T10:00:00Z",
    )
    sess.append(
        "s1",
        "assistant",
        "A golden retriever named Max!",
        speaker="Ben",
        timestamp="2023-05-07T10:01:00Z",
    )
    sess.append(
        "s2",
        "user",
        "unrelated chatter about tax forms",
        speaker="Ana",
        timestamp="2023-06-01T10:00:00Z",
    )
    hits = store.search(SearchQuery(text="puppy breed", layers=("session",), k=5))
    texts = [h.text for h in hits]
    assert "A golden retriever named Max!" in texts  # found through its neighbour's words
    assert "unrelated chatter about tax forms" not in texts
    # the earlier message learns its right-hand neighbour when it arrives later
    assert [
        h.text for h in store.search(SearchQuery(text="golden retriever", layers=("session",)))
    ][:2] == ["A golden retriever named Max!", "What breed is your new puppy?"]
    may = store.search(SearchQuery(text="7 May 2023", layers=("session",)))
    assert {h.text for h in may[:2]} == {
        "What breed is your new puppy?",
        "A golden retriever named Max!",
    }
    assert may[-1].text == "unrelated chatter about tax forms"  # only "2023" matches it
    named = store.search(SearchQuery(text="what did Ben say about the puppy", layers=("session",)))
    assert named[0].title == "Ben" and named[0].explain.get("author_named") == 0.3


def test_log_entries_are_found_by_their_neighbours_words_when_asked(home: Path) -> None:
    """`[log] neighbour_context = 2` gives LOG entries (and their archives) the neighbour
    context transcripts get: the tool call after an intent is found by the intent's
    words. Off by default: only entries holding a query word are returned."""

    def entries(s: Store) -> None:
        log = s.agent().log
        log.append("USER_FEEDBACK", "Research Python decorators")
        log.append("TOOL_USE", "web_search returned 5 results")
        for i in range(3):
            log.append("THOUGHT", f"unrelated note {i} about tax forms")

    def found(s: Store, text: str, layers: tuple[str, ...] = ("log",)) -> list[str]:
        return [h.text for h in s.search(SearchQuery(text=text, layers=layers))]

    with Store(home / "default", agent="finn") as s:
        entries(s)
        assert found(s, "decorators") == ["Research Python decorators"]
    (home / "on").mkdir(parents=True)
    (home / "on" / "config.toml").write_text("[log]\nneighbour_context = 2\n")
    with Store(home / "on", agent="finn") as s:
        entries(s)
        texts = found(s, "decorators")
        assert texts[:2] == ["Research Python decorators", "web_search returned 5 results"]
        assert "unrelated note 2 about tax forms" not in texts  # 4 entries away
        # the earlier entry learns its right-hand neighbour when it arrives later
        assert "Research Python decorators" in found(s, "web_search")
        from memstrata.lifecycle.compaction import compact_log

        assert compact_log(s, "finn", force=True).compacted
        assert found(s, "decorators", ("archive",))[:2] == [
            "Research Python decorators",
            "web_search returned 5 results",
        ]


def test_get_returns_one_memory_by_uid_through_the_scope_gate(home: Path) -> None:
    from memstrata import NotFound

    with Store(home, agent="finn") as finn:
        finn.agent().facts.set("db_engine", "PostgreSQL 16", "config")
        uid = finn.search("PostgreSQL")[0].uid
        got = finn.get(uid)
        assert (got.uid, got.title, got.text, got.layer) == (
            uid,
            "db_engine",
            "PostgreSQL 16",
            "fact",
        )
    with Store(home, agent="other") as other, pytest.raises(NotFound):
        other.get(uid)  # another project agent's fact: not visible, not told apart from absent
    with Store(home, agent="finn") as finn, pytest.raises(NotFound):
        finn.get("fact:finn:nope")
