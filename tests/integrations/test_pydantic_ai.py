"""memstrata under Pydantic AI: `MemstrataConversationStore` and `memory_toolset`.

Real `Agent.run`s with Pydantic AI's `FunctionModel` playing a script (no network).
The store's behaviour (save, load, windows, branch, fork, list, delete, conflicts) is
checked against Pydantic AI's own `InMemoryConversationStore` fed the same messages.
"""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_ai", reason="pip install 'memstrata[pydantic-ai]'")

from pydantic_ai import Agent
from pydantic_ai.conversation import Conversation
from pydantic_ai.conversation_store import (
    ConversationConflict,
    ConversationStore,
    InMemoryConversationStore,
)
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from memstrata import Store
from memstrata.integrations.pydantic_ai import MemstrataConversationStore, memory_toolset


class Script:
    """A model that answers from a list, and keeps every history it was sent."""

    def __init__(self, replies: list[ModelResponse]) -> None:
        self.replies = replies
        self.seen: list[list[ModelMessage]] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.seen.append(list(messages))
        return self.replies.pop(0)


def _agent(store: Store, replies: list[ModelResponse]) -> tuple[Agent[None, str], Script]:
    script = Script(replies)
    return Agent(FunctionModel(script), toolsets=[memory_toolset(store)]), script


def test_runs_continue_from_the_transcript(home: Path) -> None:
    async def run() -> None:
        with Store(home, agent="assistant") as store:
            conversations = MemstrataConversationStore(store)
            agent, _ = _agent(
                store,
                [
                    ModelResponse([ToolCallPart("save_fact", {"key": "editor", "value": "vim"})]),
                    ModelResponse([TextPart("Saved: you use vim.")]),
                ],
            )
            conversation = await conversations.load("chat-1") or Conversation(
                conversation_id="chat-1"
            )
            first = await agent.run("Remember that I use vim.", conversation=conversation)
            await conversations.save(first)
            assert store.agent().facts.get("editor").value == "vim"
        with Store(home, agent="assistant") as store:  # a new process
            conversations = MemstrataConversationStore(store)
            loaded = await conversations.load("chat-1")
            assert loaded is not None and loaded.messages == first.all_messages()
            assert loaded.usage == first.usage
            agent, script = _agent(store, [ModelResponse([TextPart("You use vim.")])])
            second = await agent.run("Which editor do I use?", conversation=loaded)
            await conversations.save(second)
            assert script.seen[0][: len(first.all_messages())] == first.all_messages()
            again = await conversations.load("chat-1")
            assert again is not None and again.messages == second.all_messages()

    asyncio.run(run())
    lines = [
        json.loads(x)
        for x in (home / "agents/assistant/sessions/chat-1.jsonl").read_text().splitlines()
    ]
    said = [(ln["role"], ln["content"]) for ln in lines]
    assert said == [
        ("user", "Remember that I use vim."),
        ("tool_call", 'save_fact({"key":"editor","value":"vim"})'),
        ("tool_result", "saved editor = vim (general)"),
        ("assistant", "Saved: you use vim."),
        ("user", "Which editor do I use?"),
        ("assistant", "You use vim."),
    ]


async def _messages(home: Path) -> list[ModelMessage]:
    with Store(home / "scratch", agent="a") as store:
        agent, _ = _agent(
            store,
            [
                ModelResponse([ToolCallPart("recall", {"query": "deploys"})]),
                ModelResponse([TextPart("one")]),
                ModelResponse([TextPart("two")]),
            ],
        )
        r1 = await agent.run("first")
        r2 = await agent.run("second", message_history=r1.all_messages())
        return r2.all_messages()


async def _exercise(store: ConversationStore, messages: list[ModelMessage]) -> list[Any]:
    """The same calls on any ConversationStore; what came back, to compare."""
    out: list[Any] = []
    conv = Conversation(conversation_id="c1", messages=copy.deepcopy(messages[:4]))
    await store.save(conv, scope="user-1")
    conv.messages = copy.deepcopy(messages)
    await store.save(conv)
    loaded = await store.load("c1")
    assert loaded is not None
    out.append(loaded.messages)
    out.append((await store.load("c1", limit=2)).messages)  # type: ignore[union-attr]
    with pytest.raises(ConversationConflict):  # a stale copy cannot overwrite
        await store.save(Conversation(conversation_id="c1", messages=messages[:1]))
    branched = await store.branch("c1", at=2, expected_revision=loaded.revision)
    branched.messages.append(copy.deepcopy(messages[-1]))
    await store.save(branched)
    out.append((await store.load("c1")).messages)  # type: ignore[union-attr]
    fork = await store.fork("c1", at=1, new_conversation_id="c2", scope="user-2")
    fork.messages.append(copy.deepcopy(messages[-1]))
    await store.save(fork)
    out.append((await store.load("c2")).messages)  # type: ignore[union-attr]
    out.append([r.conversation_id for r in await store.list_conversations()])
    out.append([r.conversation_id for r in await store.list_conversations(scope="user-2")])
    current = await store.load("c1")
    await store.delete("c1")  # type: ignore[call-arg]
    out.append(await store.load("c1"))
    out.append((await store.load("c2")).messages)  # type: ignore[union-attr]  # fork survives
    assert current is not None
    return out


def test_every_operation_matches_pydantic_ais_in_memory_store(home: Path) -> None:
    async def run() -> None:
        messages = await _messages(home)
        want = await _exercise(InMemoryConversationStore(), messages)
        with Store(home, agent="assistant") as store:
            got = await _exercise(MemstrataConversationStore(store), messages)
        assert got == want

    asyncio.run(run())
    text = (home / "agents/assistant/sessions/c1.jsonl").read_text()
    assert "conversation deleted" in text and '"first"' in text  # kept for the record


def test_record_decision_and_recall_in_a_run(home: Path) -> None:
    async def run() -> list[ModelMessage]:
        with Store(home, agent="assistant", room="room-1") as store:
            store.agent().facts.set("deploy_day", "deploys happen on Tuesdays")
            agent, script = _agent(
                store,
                [
                    ModelResponse([ToolCallPart("recall", {"query": "when do deploys happen"})]),
                    ModelResponse([ToolCallPart("record_decision", {"summary": "Deploy Weds"})]),
                    ModelResponse([TextPart("Done.")]),
                ],
            )
            await agent.run("Plan the deploy day")
            entries = store.ledger.query(kind="decision", include_own_room=True)
            assert [(e.summary, e.room_id) for e in entries] == [("Deploy Weds", "room-1")]
            return script.seen[-1]

    seen = asyncio.run(run())
    returned = [p.content for m in seen for p in m.parts if p.part_kind == "tool-return"]
    assert "deploys happen on Tuesdays" in returned[0]
    assert returned[1].startswith("recorded decision mem-")
