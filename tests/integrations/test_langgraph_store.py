"""memstrata as LangGraph's store (`memstrata.integrations.langgraph.MemstrataStore`).

LangGraph ships no conformance suite for `BaseStore` (langgraph 1.2 and
langgraph-checkpoint 4.3 hold no tests; `langgraph-checkpoint-conformance` checks
checkpointers only), so the contract tests below run against LangGraph's own
`InMemoryStore` too: every behaviour asserted here is the reference's.
Then what is memstrata's own (files, ranking, rooms, scope, TTL), and a real
`StateGraph` that writes and recalls memory through the store, driven by a scripted
chat model.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import pytest

pytest.importorskip("langgraph.store.base", reason="pip install 'memstrata[langgraph]'")

from langchain_core.language_models.fake_chat_models import (
    FakeMessagesListChatModel,
)
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
)
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import InjectedStore, ToolNode
from langgraph.runtime import Runtime
from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchOp,
)
from langgraph.store.memory import InMemoryStore
from pydantic import Field

from memstrata import ScopeDenied, Store
from memstrata.integrations.langgraph import MemstrataStore


@pytest.fixture(params=["reference", "memstrata"])
def lg(request: pytest.FixtureRequest, home: Path) -> Iterator[BaseStore]:
    if request.param == "reference":
        yield InMemoryStore()
        return
    with Store(home, agent="assistant") as store:
        yield MemstrataStore(store)


# -- the contract, held by LangGraph's InMemoryStore and by MemstrataStore ---------------
def test_put_get_update_delete(lg: BaseStore) -> None:
    ns = ("test", "documents")
    lg.put(ns, "doc1", {"title": "Test", "content": "Hello", "n": [1, {"a": None}]})
    item = lg.get(ns, "doc1")
    assert isinstance(item, Item)
    assert (item.namespace, item.key) == (ns, "doc1")
    assert item.value == {"title": "Test", "content": "Hello", "n": [1, {"a": None}]}
    assert item.created_at.tzinfo is not None
    lg.put(ns, "doc1", {"title": "Updated"})
    again = lg.get(ns, "doc1")
    assert again is not None and again.value == {"title": "Updated"}
    assert again.updated_at >= item.updated_at
    assert lg.get(("test", "other"), "doc1") is None
    lg.delete(ns, "doc1")
    assert lg.get(ns, "doc1") is None
    lg.delete(ns, "never-there")  # deleting nothing is no error


def test_keys_and_labels_of_any_text_round_trip(lg: BaseStore) -> None:
    keys = ["a/b", ".hidden", "..", "x.json", "%41", " spaced ", "ünïcode", "a\\b", "*"]
    for key in keys:
        lg.put(("odd", "l/a b", "%2E"), key, {"key": key})
    found = {i.key: i.value["key"] for i in lg.search(("odd",), limit=50)}
    assert found == {k: k for k in keys}
    assert lg.list_namespaces(prefix=("odd",)) == [("odd", "l/a b", "%2E")]


def test_batch_runs_every_kind_of_operation_in_order(lg: BaseStore) -> None:
    lg.put(("test", "foo"), "key1", {"data": "value1"})
    lg.put(("test", "bar"), "key2", {"data": "value2"})
    results = lg.batch(
        [
            GetOp(("test", "foo"), "key1"),
            PutOp(("test", "baz"), "key3", {"data": "value3"}),
            SearchOp(("test",), filter={"data": "value1"}),
            ListNamespacesOp(),
            GetOp(("test",), "missing"),
        ]
    )
    assert isinstance(results[0], Item) and results[0].value == {"data": "value1"}
    assert results[1] is None
    assert isinstance(results[2], list) and [i.key for i in results[2]] == ["key1"]
    assert isinstance(results[3], list) and {("test", "foo"), ("test", "bar")} <= set(results[3])
    assert results[4] is None
    third = lg.get(("test", "baz"), "key3")
    assert third is not None and third.value == {"data": "value3"}


def test_search_filters_and_pages(lg: BaseStore) -> None:
    rows = [
        (("test", "docs"), "doc1", {"author": "Alice", "score": 4.5, "meta": {"lang": "en"}}),
        (("test", "docs"), "doc2", {"author": "Bob", "score": 3.0, "meta": {"lang": "fr"}}),
        (("test", "images"), "img1", {"author": "Alice", "score": 5.0, "tags": ["a", "b"]}),
        (("prod", "docs"), "doc3", {"author": "Alice", "score": 1.0}),
    ]
    for ns, key, value in rows:
        lg.put(ns, key, value)

    def keys(**kw: Any) -> set[str]:
        return {i.key for i in lg.search(("test",), **kw)}

    assert keys() == {"doc1", "doc2", "img1"}
    assert {i.key for i in lg.search(("test", "docs"))} == {"doc1", "doc2"}
    assert keys(filter={"author": "Alice"}) == {"doc1", "img1"}
    assert keys(filter={"score": {"$gt": 4.0}}) == {"doc1", "img1"}
    assert keys(filter={"score": {"$gte": 3.0, "$lt": 5.0}}) == {"doc1", "doc2"}
    assert keys(filter={"author": {"$ne": "Alice"}}) == {"doc2"}
    assert keys(filter={"meta": {"lang": "fr"}}) == {"doc2"}
    assert keys(filter={"tags": ["a", "b"]}) == {"img1"}
    assert keys(filter={"tags": ["a"]}) == set()
    assert len(lg.search(("test",), limit=2)) == 2
    assert len(lg.search(("test",), offset=2)) == 1
    paged = lg.search(("test",), limit=2) + lg.search(("test",), limit=2, offset=2)
    assert {i.key for i in paged} == {"doc1", "doc2", "img1"}
    assert {i.key for i in lg.search(())} == {"doc1", "doc2", "doc3", "img1"}
    assert all(i.score is None for i in lg.search(("test",)))


def test_list_namespaces_matches_prefixes_suffixes_wildcards_and_depth(lg: BaseStore) -> None:
    spaces = [
        ("test", "documents", "public"),
        ("test", "documents", "private"),
        ("test", "images", "public"),
        ("prod", "documents", "public"),
    ]
    for ns in spaces:
        lg.put(ns, "dummy", {"content": "dummy"})
    assert lg.list_namespaces() == sorted(spaces)
    assert lg.list_namespaces(prefix=("test",)) == sorted(spaces[:3])
    assert lg.list_namespaces(suffix=("public",)) == sorted([spaces[0], spaces[2], spaces[3]])
    assert lg.list_namespaces(prefix=("*", "documents")) == sorted(
        [spaces[0], spaces[1], spaces[3]]
    )
    assert lg.list_namespaces(prefix=("test",), suffix=("public",)) == sorted(
        [spaces[0], spaces[2]]
    )
    assert lg.list_namespaces(max_depth=2) == [
        ("prod", "documents"),
        ("test", "documents"),
        ("test", "images"),
    ]
    assert lg.list_namespaces(limit=2) == sorted(spaces)[:2]
    assert lg.list_namespaces(limit=2, offset=2) == sorted(spaces)[2:]
    ops = [ListNamespacesOp((MatchCondition("suffix", ("*", "public")),))]
    assert lg.batch(ops)[0] == sorted([spaces[0], spaces[2], spaces[3]])


def test_async_forms(lg: BaseStore) -> None:
    async def run() -> None:
        await lg.aput(("a", "b"), "k", {"v": 1})
        item = await lg.aget(("a", "b"), "k")
        assert item is not None and item.value == {"v": 1}
        assert [i.key for i in await lg.asearch(("a",))] == ["k"]
        assert await lg.alist_namespaces() == [("a", "b")]
        got = await lg.abatch([GetOp(("a", "b"), "k"), PutOp(("a", "b"), "k2", {"v": 2})])
        assert isinstance(got[0], Item) and got[1] is None
        await lg.adelete(("a", "b"), "k")
        assert await lg.aget(("a", "b"), "k") is None
        assert [i.key for i in await lg.asearch(("a",))] == ["k2"]

    asyncio.run(run())


def test_invalid_namespaces_are_refused(lg: BaseStore) -> None:
    for ns in [(), ("langgraph", "x"), ("a.b",), ("a", "")]:
        with pytest.raises(InvalidNamespaceError):
            lg.put(ns, "k", {"v": 1})
    with pytest.raises(InvalidNamespaceError):
        lg.get(("a.b",), "k")


# -- memstrata's own: real files, its ranking, rooms and scope, TTL -----------------------
@pytest.fixture
def mem(home: Path) -> Iterator[MemstrataStore]:
    with Store(home, agent="assistant", room="room-1") as store:
        yield MemstrataStore(store)


def _cli(home: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTRATA_")}
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parents[2] / "src"), *sys.path])
    r = subprocess.run(
        [sys.executable, "-m", "memstrata", "--home", str(home), *args],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return r.stdout


def test_items_are_memory_files_the_cli_lists_searches_and_archives(
    mem: MemstrataStore, home: Path
) -> None:
    mem.put(("memories", "user-1"), "food", {"text": "likes margherita pizza"})
    path = home / "agents/assistant/memory/langgraph/memories/user-1/food.json"
    doc = json.loads(path.read_text())
    assert doc["value"] == {"text": "likes margherita pizza"}
    assert doc["namespace"] == ["memories", "user-1"] and doc["key"] == "food"
    listed = _cli(home, "--agent", "assistant", "files", "list", "langgraph")
    assert "langgraph/memories/user-1/food.json" in listed
    found = _cli(home, "--agent", "assistant", "search", "margherita")
    assert "agents/assistant/memory/langgraph/memories/user-1/food.json" in found
    mem.delete(("memories", "user-1"), "food")
    assert not path.exists()
    archived = list((home / "agents/assistant/archive/deleted").rglob("food.json"))
    assert len(archived) == 1 and json.loads(archived[0].read_text())["value"] == doc["value"]


def test_query_search_ranks_with_memstrata_and_fills_with_the_rest(mem: MemstrataStore) -> None:
    ns = ("memories", "user-1")
    mem.put(ns, "pets", {"text": "has a dog called Rex"})
    mem.put(ns, "food", {"text": "likes pizza, hates olives"})
    mem.put(ns, "work", {"text": "works at the harbour office"})
    mem.put(("memories", "user-2"), "pets", {"text": "has a cat, no dog"})
    hits = mem.search(ns, query="what is the dog called?", limit=2)
    assert [h.key for h in hits][:1] == ["pets"] and hits[0].score is not None
    assert hits[0].score == mem.store.search("what is the dog called?", layers=("file",))[0].score
    assert len(hits) == 2 and hits[1].score is None  # filled, newest first, no score
    assert all(h.namespace == ns for h in hits)  # user-2's dog stays out
    assert [h.key for h in mem.search(ns, query="olives pizza", filter={"text": "nope"})] == []
    both = mem.search(("memories",), query="dog", limit=2)
    assert {(h.namespace[1], h.key) for h in both} == {("user-1", "pets"), ("user-2", "pets")}
    assert all(h.score is not None for h in both)


def test_rooms_are_shared_namespaces_under_memstrata_scope(home: Path) -> None:
    with Store(home, agent="ada", room="room-1") as a, Store(home, agent="bob") as b:
        ada, bob = MemstrataStore(a), MemstrataStore(b)
        ada.put(("rooms", "room-1", "decisions"), "db", {"text": "we chose PostgreSQL"})
        ada.put(("private",), "note", {"text": "ada's own note"})
        shared = home / "rooms/room-1/artifacts/langgraph/decisions/db.json"
        assert json.loads(shared.read_text())["value"] == {"text": "we chose PostgreSQL"}
        got = bob.get(("rooms", "room-1", "decisions"), "db")  # every agent reads a room
        assert got is not None and got.value == {"text": "we chose PostgreSQL"}
        assert [i.key for i in bob.search((), query="PostgreSQL")] == ["db"]
        assert ("rooms", "room-1", "decisions") in bob.list_namespaces()
        with pytest.raises(ScopeDenied):  # only the room's agents write it
            bob.put(("rooms", "room-1", "decisions"), "db", {"text": "MySQL"})
        with pytest.raises(ScopeDenied):  # nor archive it
            bob.delete(("rooms", "room-1", "decisions"), "db")
        with pytest.raises(ScopeDenied):  # another project agent's memory stays private
            MemstrataStore(b, agent="ada").get(("private",), "note")
        assert bob.get(("private",), "note") is None  # bob's own namespace is his
        ada.delete(("rooms", "room-1", "decisions"), "db")
        assert not shared.exists()
        assert list((home / "rooms/room-1/archive/deleted").rglob("db.json"))
        assert bob.get(("rooms", "room-1", "decisions"), "db") is None


def test_ttl_expiry_hides_refreshes_and_sweeps_to_the_archive(
    mem: MemstrataStore, home: Path
) -> None:
    ns = ("scratch",)
    mem.put(ns, "short", {"v": 1}, ttl=5)
    mem.put(ns, "kept", {"v": 2})
    path = home / "agents/assistant/memory/langgraph/scratch/short.json"
    first = json.loads(path.read_text())
    assert first["ttl_minutes"] == 5 and first["expires_at"]
    assert mem.get(ns, "short", refresh_ttl=False) is not None
    assert json.loads(path.read_text())["expires_at"] == first["expires_at"]
    assert mem.get(ns, "short") is not None  # a read refreshes the expiry
    assert json.loads(path.read_text())["expires_at"] >= first["expires_at"]
    doc = json.loads(path.read_text())
    doc["expires_at"] = "2000-01-01T00:00:00Z"  # as if five minutes went by unread
    path.write_text(json.dumps(doc))
    assert mem.get(ns, "short") is None
    assert [i.key for i in mem.search(ns)] == ["kept"]
    assert mem.sweep_ttl() == 1
    assert not path.exists() and list((home / "agents/assistant/archive").rglob("short.json"))
    assert mem.list_namespaces() == [ns]
    with Store(home, agent="assistant") as store:  # a default TTL for every put
        MemstrataStore(store, ttl={"default_ttl": 1.5}).put(ns, "d", {"v": 3})
    assert json.loads((path.parent / "d.json").read_text())["ttl_minutes"] == 1.5


def test_ops_given_to_batch_are_validated_too(mem: MemstrataStore) -> None:
    """`validate_op_namespace`, as LangGraph asks of stores that turn labels into paths:
    a label cannot address another namespace, nor a shared one without its room."""
    for op in [SearchOp(("x.y",)), PutOp(("a", "b.c"), "k", {}), GetOp(("",), "k")]:
        with pytest.raises(InvalidNamespaceError):
            mem.batch([op])
    for ns in [("rooms",), ("rooms", "not a room name")]:
        with pytest.raises(InvalidNamespaceError):
            mem.put(ns, "k", {"v": 1})


def test_a_hand_written_file_is_an_item(mem: MemstrataStore, home: Path) -> None:
    folder = home / "agents/assistant/memory/langgraph/notes"
    folder.mkdir(parents=True)
    (folder / "by-hand.json").write_text('{"value": {"text": "written in an editor"}}')
    (folder / "broken.json").write_text("{not json")
    item = mem.get(("notes",), "by-hand")
    assert item is not None and item.value == {"text": "written in an editor"}
    assert mem.get(("notes",), "broken") is None
    assert [i.key for i in mem.search(("notes",))] == ["by-hand"]


# -- a real StateGraph: a scripted model saves a memory in one thread, recalls it in another --
def test_a_state_graph_writes_and_recalls_memory_through_the_store(home: Path) -> None:
    class ScriptedChatModel(FakeMessagesListChatModel):
        prompts: list[list[BaseMessage]] = Field(default_factory=list)

        def _generate(self, messages: list[BaseMessage], *a: Any, **kw: Any) -> Any:
            self.prompts.append(list(messages))
            return super()._generate(messages, *a, **kw)

    @tool
    def remember(fact: str, store: Annotated[BaseStore, InjectedStore()]) -> str:
        """Save a fact about the user."""
        store.put(("memories", "user-1"), fact[:20].replace(" ", "-"), {"text": fact})
        return "saved"

    model = ScriptedChatModel(
        responses=[
            AIMessage(
                "",
                tool_calls=[
                    {"name": "remember", "args": {"fact": "my dog is Rex"}, "id": "call-1"}
                ],
            ),
            AIMessage("Noted, Rex it is."),
            AIMessage("Your dog is called Rex."),
        ]
    )

    def agent(state: MessagesState, runtime: Runtime[None]) -> dict[str, list[BaseMessage]]:
        assert runtime.store is not None
        question = str(state["messages"][-1].content)
        found = runtime.store.search(("memories", "user-1"), query=question, limit=3)
        memories = "\n".join(f"- {i.value['text']}" for i in found)
        prompt = [SystemMessage(f"What you remember:\n{memories}"), *state["messages"]]
        return {"messages": [model.invoke(prompt)]}

    def route(state: MessagesState) -> str:
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else END

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([remember]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", route, ["tools", END])
    builder.add_edge("tools", "agent")

    with Store(home, agent="assistant") as s:
        graph = builder.compile(store=MemstrataStore(s))
        graph.invoke({"messages": [HumanMessage("Remember: my dog is Rex")]})
    saved = home / "agents/assistant/memory/langgraph/memories/user-1/my-dog-is-Rex.json"
    assert json.loads(saved.read_text())["value"] == {"text": "my dog is Rex"}

    with Store(home, agent="assistant") as s:  # a new process's view: a fresh store
        graph = builder.compile(store=MemstrataStore(s))
        out = graph.invoke({"messages": [HumanMessage("What is my dog called?")]})
    assert out["messages"][-1].content == "Your dog is called Rex."
    last_prompt = model.prompts[-1]
    assert isinstance(last_prompt[0], SystemMessage) and "- my dog is Rex" in last_prompt[0].content
