"""What the framework adapters store is what a person sees in the web app.

One real `memstrata serve` (loopback, no token: the owner's view, as the guides say)
over a store the three adapters wrote to; the pages the guides point at must show it.
"""

from __future__ import annotations

import asyncio
import html
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("langgraph.store.base")
pytest.importorskip("agents")
pytest.importorskip("pydantic_ai")

import httpx
from pydantic_ai.conversation import Conversation
from pydantic_ai.messages import ModelRequest

from memstrata import Store
from memstrata.integrations.langgraph import MemstrataStore
from memstrata.integrations.openai_agents import MemstrataSession
from memstrata.integrations.pydantic_ai import MemstrataConversationStore
from web.conftest import start_server, stop_server


def test_the_pages_the_guides_name_show_what_the_adapters_stored(home: Path) -> None:
    with Store(home, agent="assistant") as store:
        MemstrataStore(store).put(("memories", "user-1"), "food", {"text": "likes margherita"})
        sdk = MemstrataSession("chat-1", store)
        call = {
            "type": "function_call",
            "call_id": "c1",
            "name": "get_weather",
            "arguments": '{"city": "Paris"}',
        }
        asyncio.run(sdk.add_items([{"role": "user", "content": "Weather in Paris?"}, call]))
        asyncio.run(
            MemstrataConversationStore(store).save(
                Conversation(
                    conversation_id="chat-2", messages=[ModelRequest.user_text_prompt("I use vim.")]
                )
            )
        )
    served = start_server(home)
    try:
        with httpx.Client(base_url=served.base, timeout=30.0) as web:

            def page(url: str) -> str:
                r = web.get(url)
                assert r.status_code == 200, (url, r.status_code)
                return html.unescape(r.text)

            assert "food.json" in page("/a/assistant/files?path=langgraph/memories/user-1")
            item = page("/a/assistant/file?path=langgraph/memories/user-1/food.json")
            assert '"text": "likes margherita"' in item
            chat = page("/a/assistant/sessions/chat-1")
            assert "Weather in Paris?" in chat and "get_weather" in chat
            assert "I use vim." in page("/a/assistant/sessions/chat-2")
            assert "food.json" in page("/search?q=margherita")
    finally:
        stop_server(served)
