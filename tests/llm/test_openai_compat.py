"""OpenAI-compatible clients against a real HTTP server on 127.0.0.1 (no mocks)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from memstrata.embed import make_embedder
from memstrata.embed.openai_compat import OpenAICompatEmbedder
from memstrata.errors import ProviderError
from memstrata.llm.base import ItemDraft
from memstrata.llm.openai_compat import ChatClient, LLMExtractor, LLMSummarizer

Reply = tuple[int, bytes]  # status, body


@dataclass
class FakeServer:
    base_url: str
    handlers: dict[str, Callable[[dict[str, Any]], Reply]] = field(default_factory=dict)
    requests: list[tuple[str, dict[str, str], dict[str, Any]]] = field(default_factory=list)
    delay: float = 0.0

    def count(self, path: str) -> int:
        return sum(1 for p, _, _ in self.requests if p == path)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    state = FakeServer(base_url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            body = json.loads(raw)
            state.requests.append((self.path, dict(self.headers), body))
            if state.delay:
                time.sleep(state.delay)
            handler = state.handlers.get(self.path)
            status, payload = handler(body) if handler else (404, b'{"error": "no route"}')
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout tests)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    state.base_url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    thread = threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    yield state
    httpd.shutdown()
    httpd.server_close()


def chat_reply(content: str, prompt: int = 11, completion: int = 7) -> Reply:
    return 200, json.dumps(
        {
            "id": "x",
            "object": "chat.completion",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
        }
    ).encode()


def test_chat_success_records_usage_and_sends_key(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-123")
    server.handlers["/v1/chat/completions"] = lambda body: chat_reply(f"echo {body['model']}")
    client = ChatClient(server.base_url, "tiny-model")
    assert client.complete([{"role": "user", "content": "hi"}]) == "echo tiny-model"
    client.complete([{"role": "user", "content": "again"}])
    assert (client.usage.calls, client.usage.prompt_tokens, client.usage.completion_tokens) == (
        2,
        22,
        14,
    )
    assert client.usage.total_tokens == 36
    path, headers, body = server.requests[0]
    assert path == "/v1/chat/completions"
    assert headers["Authorization"] == "Bearer sk-test-123"
    assert body["model"] == "tiny-model"
    assert body["messages"] == [{"role": "user", "content": "hi"}]
    other = ChatClient(server.base_url, "tiny-model")
    assert other.usage.calls == 0  # usage is per client


def test_no_key_sends_no_authorization(server: FakeServer) -> None:
    server.handlers["/v1/chat/completions"] = lambda body: chat_reply("ok")
    ChatClient(server.base_url, "m").complete([{"role": "user", "content": "hi"}])
    assert "Authorization" not in server.requests[0][1]


def test_slow_reply_times_out(server: FakeServer) -> None:
    server.handlers["/v1/chat/completions"] = lambda body: chat_reply("late")
    server.delay = 2.0
    client = ChatClient(server.base_url, "m", timeout=0.3, max_retries=0)
    t = time.monotonic()
    with pytest.raises(ProviderError, match="timed out"):
        client.complete([{"role": "user", "content": "hi"}])
    assert time.monotonic() - t < 1.5
    assert client.usage.calls == 0


def test_timeouts_are_retried_once_by_default(server: FakeServer) -> None:
    server.handlers["/v1/chat/completions"] = lambda body: chat_reply("late")
    server.delay = 1.5
    with pytest.raises(ProviderError, match=r"timed out.*2 attempt"):
        ChatClient(server.base_url, "m", timeout=0.2).complete([{"role": "user", "content": "x"}])
    deadline = time.monotonic() + 30  # the server may log the request late on a loaded machine
    while server.count("/v1/chat/completions") < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.count("/v1/chat/completions") == 2


def test_http_500_is_retried_then_raised(server: FakeServer) -> None:
    server.handlers["/v1/chat/completions"] = lambda body: (500, b'{"error": "boom"}')
    with pytest.raises(ProviderError, match="HTTP 500") as info:
        ChatClient(server.base_url, "m").complete([{"role": "user", "content": "x"}])
    assert "boom" in str(info.value)
    assert server.count("/v1/chat/completions") == 2


def test_http_500_then_success_recovers(server: FakeServer) -> None:
    replies = iter([(503, b"busy"), chat_reply("fine")])
    server.handlers["/v1/chat/completions"] = lambda body: next(replies)
    assert ChatClient(server.base_url, "m").complete([{"role": "user", "content": "x"}]) == "fine"


def test_http_400_is_not_retried(server: FakeServer) -> None:
    server.handlers["/v1/chat/completions"] = lambda body: (400, b'{"error": "bad model"}')
    with pytest.raises(ProviderError, match="HTTP 400"):
        ChatClient(server.base_url, "m").complete([{"role": "user", "content": "x"}])
    assert server.count("/v1/chat/completions") == 1


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"<html>gateway error</html>", "did not answer JSON"),
        (b"[1, 2, 3]", "not an object"),
        (b'{"id": "x", "usage": {"prompt_tokens": 3, "completion_tokens": 0}}', "no choices"),
        (b'{"choices": []}', "no choices"),
        (b'{"choices": [{"message": {"role": "assistant"}}]}', "no text content"),
    ],
)
def test_bad_bodies_raise(server: FakeServer, body: bytes, message: str) -> None:
    server.handlers["/v1/chat/completions"] = lambda _: (200, body)
    with pytest.raises(ProviderError, match=message):
        ChatClient(server.base_url, "m").complete([{"role": "user", "content": "x"}])
    assert server.count("/v1/chat/completions") == 1  # malformed replies are not retried


def test_unreachable_host_raises_quickly() -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once we leave: nothing listens there
    with pytest.raises(ProviderError, match=r"cannot reach|connection"):
        ChatClient(f"http://127.0.0.1:{port}/v1", "m", timeout=2, max_retries=0).complete(
            [{"role": "user", "content": "x"}]
        )


def test_llm_summarizer_trims_to_max_chars(server: FakeServer) -> None:
    long = "First line of the summary.\nSecond line that is much longer than the budget allows."
    server.handlers["/v1/chat/completions"] = lambda body: chat_reply(long)
    out = LLMSummarizer(ChatClient(server.base_url, "m")).summarize(["a", "b"], max_chars=40)
    assert out == "First line of the summary."
    system = server.requests[0][2]["messages"][0]["content"]
    assert "at most 40 characters" in system
    assert LLMSummarizer(ChatClient(server.base_url, "m")).summarize(["  "], max_chars=40) == ""


GOOD_ITEMS = [
    {
        "type": "decision",
        "title": "Use SQLite",
        "content": "We use SQLite for the index.",
        "line_number": 2,
        "confidence": 0.9,
    },
    {
        "type": "task",
        "title": "Write docs",
        "content": "Write the migration docs.",
        "line_number": 3,
        "confidence": 1,
    },
]
SOURCE = "# Notes\nWe use SQLite for the index.\nTODO write the migration docs.\n"


def test_llm_extractor_parses_items(server: FakeServer) -> None:
    server.handlers["/v1/chat/completions"] = lambda body: chat_reply(
        "```json\n" + json.dumps(GOOD_ITEMS) + "\n```"
    )
    client = ChatClient(server.base_url, "m")
    items = LLMExtractor(client).extract("notes.md", SOURCE)
    assert items == [
        ItemDraft("decision", "Use SQLite", "We use SQLite for the index.", 2, 0.9),
        ItemDraft("task", "Write docs", "Write the migration docs.", 3, 1.0),
    ]
    prompt = server.requests[0][2]["messages"][1]["content"]
    assert "notes.md" in prompt and "    2| We use SQLite for the index." in prompt
    assert client.usage.calls == 1
    server.handlers["/v1/chat/completions"] = lambda body: chat_reply(json.dumps({"items": []}))
    assert LLMExtractor(client).extract("notes.md", SOURCE) == []
    assert LLMExtractor(client).extract("empty.md", "\n \n") == []
    assert client.usage.calls == 2  # blank input never calls the model


def _with(**change: Any) -> list[dict[str, Any]]:
    return [GOOD_ITEMS[0], {**GOOD_ITEMS[1], **change}]


@pytest.mark.parametrize(
    "reply",
    [
        "not json at all",
        json.dumps({"type": "task"}),
        json.dumps(_with(type="fact")),
        json.dumps(_with(line_number=99)),
        json.dumps(_with(line_number=0)),
        json.dumps(_with(line_number="3")),
        json.dumps(_with(confidence=1.5)),
        json.dumps(_with(confidence=None)),
        json.dumps(_with(title="")),
        json.dumps(_with(title="two\nlines")),
        json.dumps(_with(content=5)),
        json.dumps(_with(extra="field")),
        json.dumps([GOOD_ITEMS[0], "a string"]),
        json.dumps([GOOD_ITEMS[0], {k: v for k, v in GOOD_ITEMS[1].items() if k != "confidence"}]),
    ],
)
def test_llm_extractor_rejects_malformed_items_whole(server: FakeServer, reply: str) -> None:
    server.handlers["/v1/chat/completions"] = lambda body: chat_reply(reply)
    with pytest.raises(ProviderError):
        LLMExtractor(ChatClient(server.base_url, "m")).extract("notes.md", SOURCE)


def embeddings_handler(dim: int = 3, shuffle: bool = False) -> Callable[[dict[str, Any]], Reply]:
    def handle(body: dict[str, Any]) -> Reply:
        data = [
            {
                "object": "embedding",
                "index": i,
                "embedding": [float(len(t)), float(i + 1)] + [0.0] * (dim - 2),
            }
            for i, t in enumerate(body["input"])
        ]
        if shuffle:
            data.reverse()
        return 200, json.dumps(
            {"data": data, "model": body["model"], "usage": {"prompt_tokens": 5, "total_tokens": 5}}
        ).encode()

    return handle


def test_embeddings_success_batches_normalises_and_orders(server: FakeServer) -> None:
    server.handlers["/v1/embeddings"] = embeddings_handler(dim=4, shuffle=True)
    e = OpenAICompatEmbedder(server.base_url, "embed-small", batch_size=2)
    vecs = e.embed(["aaa", "b", "cc", "", "dddd"])
    assert e.dim == 4 and e.model_id == "openai:embed-small"
    assert server.count("/v1/embeddings") == 3
    assert [b["input"] for p, _, b in server.requests] == [["aaa", "b"], ["cc", " "], ["dddd"]]
    for v in vecs:
        assert sum(x * x for x in v) == pytest.approx(1.0)
    assert vecs[0][:2] == pytest.approx([3 / 10**0.5, 1 / 10**0.5])  # [3, 1] normalised, in order
    assert vecs[1][:2] == pytest.approx([1 / 5**0.5, 2 / 5**0.5])
    assert (e.usage.calls, e.usage.prompt_tokens) == (3, 15)
    assert e.embed([]) == []


def test_embeddings_dim_probe_and_factory(server: FakeServer) -> None:
    server.handlers["/v1/embeddings"] = embeddings_handler(dim=5)
    e = make_embedder(f"openai:nomic@{server.base_url}")
    assert e.dim == 5
    assert server.count("/v1/embeddings") == 1
    assert len(e.embed(["x", "y"])) == 2


@pytest.mark.parametrize(
    ("status", "body", "message"),
    [
        (500, b"oops", "HTTP 500"),
        (200, b"not json", "did not answer JSON"),
        (200, b'{"data": [{"embedding": [1, 0]}]}', "returned 1 embeddings for 2"),
        (200, b'{"data": [{"embedding": [1, 0]}, {"embedding": "x"}]}', "item 1"),
        (200, b'{"data": [{"embedding": [1, 0]}, {"embedding": [1, 0, 0]}]}', "dim 3"),
        (200, b'{"object": "list"}', "returned no embeddings"),
    ],
)
def test_embeddings_errors(server: FakeServer, status: int, body: bytes, message: str) -> None:
    server.handlers["/v1/embeddings"] = lambda _: (status, body)
    with pytest.raises(ProviderError, match=message):
        OpenAICompatEmbedder(server.base_url, "m", max_retries=0).embed(["a", "b"])


def test_embeddings_timeout(server: FakeServer) -> None:
    server.handlers["/v1/embeddings"] = embeddings_handler()
    server.delay = 2.0
    with pytest.raises(ProviderError, match="timed out"):
        OpenAICompatEmbedder(server.base_url, "m", timeout=0.3, max_retries=0).embed(["a"])
