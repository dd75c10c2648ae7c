"""memstrata under the OpenAI Agents SDK: `MemstrataSession` and `memory_tools`.

Every run is a real `Runner.run` with the SDK's own scripted model
(`agents.testing.ScriptedModel`, no network, tracing off). The session is checked
against the SDK's `SQLiteSession` running the same script: what the runner stores and
what the model is handed on the next turn must be the same with either.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents", reason="pip install 'memstrata[openai-agents]'")

from agents import Agent, RunConfig, Runner, SQLiteSession
from agents.testing import ScriptedModel, assistant_message, function_call

from memstrata import Store
from memstrata.integrations.openai_agents import MemstrataSession, memory_tools

NO_TRACES = RunConfig(tracing_disabled=True)


def _script() -> ScriptedModel:
    return ScriptedModel(
        [
            [
                function_call(
                    "save_fact",
                    {"key": "editor", "value": "vim", "category": "preference"},
                    call_id="call-1",
                )
            ],
            [assistant_message("Saved: you use vim.", item_id="msg-1")],
            [assistant_message("You use vim.", item_id="msg-2")],
        ]
    )


async def _converse(session: Any, store: Store) -> ScriptedModel:
    model = _script()
    agent = Agent(name="assistant", model=model, tools=memory_tools(store))
    await Runner.run(agent, "Remember that I use vim.", session=session, run_config=NO_TRACES)
    await Runner.run(agent, "Which editor do I use?", session=session, run_config=NO_TRACES)
    return model


def test_a_run_keeps_exactly_the_items_the_sdks_own_session_keeps(home: Path) -> None:
    async def run() -> None:
        with Store(home, agent="assistant") as store:
            ours = MemstrataSession("chat-1", store)
            theirs = SQLiteSession("chat-1")
            model = await _converse(ours, store)
            with Store(home / "ref", agent="assistant") as elsewhere:
                reference = await _converse(theirs, elsewhere)
            got, want = await ours.get_items(), await theirs.get_items()
            assert got == want and len(got) == 6  # user, call, output, answer, user, answer
            assert [i.get("type") for i in got][1:3] == ["function_call", "function_call_output"]
            assert model.calls[-1].input == reference.calls[-1].input  # the model saw the same
            assert await ours.get_items(limit=2) == want[-2:]
        with Store(home, agent="assistant") as again:  # another process reads the same
            assert await MemstrataSession("chat-1", again).get_items() == want

    asyncio.run(run())


def test_the_transcript_is_a_seed_004_session_a_person_can_read(home: Path) -> None:
    with Store(home, agent="assistant") as store:
        asyncio.run(_converse(MemstrataSession("chat-1", store), store))
        info = {s.id: s for s in store.agent().sessions.list()}
        assert info["chat-1"].messages == 6
        fact = store.agent().facts.get("editor")
        assert (fact.value, fact.category) == ("vim", "preference")
        hits = store.search("vim editor", layers=("sessions",))
        assert hits and all(h.layer == "session" for h in hits)
    lines = [
        json.loads(x)
        for x in (home / "agents/assistant/sessions/chat-1.jsonl").read_text().splitlines()
    ]
    roles = [ln["role"] for ln in lines]
    assert roles == ["user", "tool_call", "tool_result", "assistant", "user", "assistant"]
    assert lines[0]["content"] == "Remember that I use vim."
    assert lines[1]["name"] == "save_fact" and json.loads(lines[1]["content"])["key"] == "editor"
    assert lines[2]["content"] == "saved editor = vim (preference)"
    assert lines[3]["content"] == "Saved: you use vim."
    assert all(ln["timestamp"] for ln in lines)


def test_pop_and_clear_supersede_and_never_erase(home: Path) -> None:
    async def run() -> None:
        with Store(home, agent="assistant") as store:
            ours, theirs = MemstrataSession("s", store), SQLiteSession("s")
            items: list[Any] = [
                {"role": "user", "content": "first"},
                {"role": "assistant", "content": "second"},
                {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"},
            ]
            for s in (ours, theirs):
                await s.add_items(items)
                assert await s.pop_item() == items[2]
                assert await s.get_items() == items[:2]
                await s.add_items([{"role": "user", "content": "third"}])
            assert await ours.get_items() == await theirs.get_items()
            for s in (ours, theirs):
                await s.clear_session()
                assert await s.get_items() == []
                assert await s.pop_item() is None
                await s.add_items([{"role": "user", "content": "after"}])
                assert await s.get_items() == [{"role": "user", "content": "after"}]
        text = (home / "agents/assistant/sessions/s.jsonl").read_text()
        for said in ("first", "second", "third", "after", '"name":"f"'):
            assert said in text  # withdrawn and cleared items stay in the file
        assert "withdrew" in text and "session cleared" in text

    asyncio.run(run())


def test_lines_written_by_others_are_handed_back(home: Path) -> None:
    """A transcript shared with a hook or the CLI: their lines reach the agent too."""
    with Store(home, agent="assistant") as store:
        store.agent().sessions.append("s", "user", "written by the CLI")
        store.agent().sessions.append("s", "tool_call", "", name="read", input={"path": "a"})
        got = asyncio.run(MemstrataSession("s", store).get_items())
    assert got == [
        {"role": "user", "content": "written by the CLI"},
        {"role": "system", "content": "[tool_call read] "},
    ]


def test_memory_tools_recall_and_record_decisions_in_a_run(home: Path) -> None:
    async def run() -> ScriptedModel:
        with Store(home, agent="assistant", room="room-1") as store:
            store.agent().facts.set("deploy_day", "deploys happen on Tuesdays", "general")
            model = ScriptedModel(
                [
                    [function_call("recall", {"query": "when do deploys happen"}, call_id="c1")],
                    [
                        function_call(
                            "record_decision",
                            {"summary": "Move deploys to Wednesday", "detail": "CI load"},
                            call_id="c2",
                        )
                    ],
                    [
                        function_call(
                            "save_fact",
                            {"key": "k", "value": "v", "category": "nope"},
                            call_id="c3",
                        )
                    ],
                    [assistant_message("Done.")],
                ]
            )
            agent = Agent(name="assistant", model=model, tools=memory_tools(store))
            await Runner.run(agent, "Plan the deploy day", run_config=NO_TRACES)
            entries = store.ledger.query(kind="decision", include_own_room=True)
            assert [(e.summary, e.detail, e.room_id) for e in entries] == [
                ("Move deploys to Wednesday", "CI load", "room-1")
            ]
            return model

    model = asyncio.run(run())
    outputs = [
        i["output"]
        for i in model.calls[-1].input
        if isinstance(i, dict) and i.get("type") == "function_call_output"
    ]
    assert "deploys happen on Tuesdays" in outputs[0]
    assert outputs[1].startswith("recorded decision mem-")
    assert outputs[2].startswith("malformed_input: unknown fact category 'nope'")


def test_a_compacted_transcript_hands_back_a_summary_then_the_recent_items(home: Path) -> None:
    """Seed 004 compaction rewrites the transcript: the older items become one summary
    (handed back as a system message), the most recent stay verbatim, items and all."""
    from memstrata.lifecycle.session_compaction import compact_session

    items: list[Any] = [{"role": "user", "content": f"message {n}"} for n in range(6)]
    items.append({"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"})
    with Store(home, agent="assistant") as store:
        session = MemstrataSession("long", store)
        asyncio.run(session.add_items(items))
        compact_session(store, "assistant", "long", keep_recent=2, summary="six messages, counted")
        got = asyncio.run(session.get_items())
    assert got[0] == {
        "role": "system",
        "content": "Summary of the earlier conversation:\nsix messages, counted",
    }
    assert got[1:] == items[-2:]
    assert list((home / "agents/assistant/archive/sessions").glob("long-*.jsonl"))
