"""A local OpenAI-compatible stub server for the lifecycle tests (no network)."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class StubLLM:
    """A /v1/chat/completions server on 127.0.0.1; `mode` says how it answers."""

    def __init__(self) -> None:
        self.mode = "ok"
        self.reply = "stub summary"
        self.sleep = 0.0
        self.requests: list[dict[str, Any]] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                stub.requests.append(json.loads(body))
                if stub.mode == "sleep":
                    time.sleep(stub.sleep)
                if stub.mode == "garbage":
                    data = b"<html>not json</html>"
                elif stub.mode == "no_choices":
                    data = json.dumps({"usage": {"prompt_tokens": 3}}).encode()
                else:
                    data = json.dumps(
                        {
                            "choices": [{"message": {"role": "assistant", "content": stub.reply}}],
                            "usage": {"prompt_tokens": 11, "completion_tokens": 7},
                        }
                    ).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
