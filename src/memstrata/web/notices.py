"""What the secrets policy did, told to the HTTP caller: `report_notices`, an ASGI middleware.

Every state-changing request to the API or the web app runs inside
`policy.secrets.collect_notices`, so a write that stored something that looks like a
secret under `[secrets] policy = "warn"` is reported, as the CLI, the library and MCP
report it:

* a JSON object answer (the API) gains `"warnings": ["<what> looks like it contains a
  secret (openai-key); stored as given ...", ...]`;
* a redirect (a web form's 303 after its save) gains `stored_secret=<kinds>` in its
  `Location`, and the page it leads to shows the notice (`pages.render`). Only kinds
  travel in the URL, checked against `policy.secrets.KINDS`, so a link cannot put other
  words on the page.

Answers without a notice pass through untouched (nothing is buffered). `/mcp` is left
alone: MCP tool results carry their own warnings (`mcp.tools.run`).
"""

from __future__ import annotations

import json
from collections.abc import MutableMapping
from typing import Any
from urllib.parse import quote

from memstrata.policy.secrets import SecretNotice, collect_notices
from memstrata.web.security import ASGIApp

UNSAFE = frozenset({"POST", "PUT", "PATCH", "DELETE"})
QUERY_KEY = "stored_secret"


def report_notices(app: ASGIApp) -> ASGIApp:
    async def noticing(scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        path = str(scope.get("path", ""))
        if (
            scope.get("type") != "http"
            or scope.get("method") not in UNSAFE
            or path == "/mcp"
            or path.startswith("/mcp/")
        ):
            await app(scope, receive, send)
            return
        with collect_notices() as notices:
            held: MutableMapping[str, Any] | None = None
            body: list[bytes] = []

            async def relay(message: MutableMapping[str, Any]) -> None:
                nonlocal held
                if held is not None:  # a JSON answer being gathered
                    body.append(bytes(message.get("body", b"")))
                    if not message.get("more_body"):
                        await _send_json(send, held, b"".join(body), notices)
                    return
                if message.get("type") != "http.response.start" or not notices:
                    await send(message)
                    return
                headers = list(message.get("headers") or [])
                status = int(message.get("status", 200))
                if 300 <= status < 400:
                    await send({**message, "headers": _with_kinds(headers, notices)})
                elif _header(headers, b"content-type").startswith(b"application/json"):
                    held = message
                else:
                    await send(message)

            await app(scope, receive, relay)

    return noticing


def _header(headers: list[tuple[bytes, bytes]], name: bytes) -> bytes:
    return next((v for k, v in headers if k.lower() == name), b"")


def _kinds(notices: list[str]) -> list[str]:
    found: dict[str, None] = {}
    for n in notices:
        if isinstance(n, SecretNotice):
            found.update(dict.fromkeys(n.kinds))
    return list(found)


def _with_kinds(
    headers: list[tuple[bytes, bytes]], notices: list[str]
) -> list[tuple[bytes, bytes]]:
    kinds = _kinds(notices)
    if not kinds:
        return headers
    out = []
    for k, v in headers:
        if k.lower() == b"location":
            sep = b"&" if b"?" in v else b"?"
            v = v + sep + f"{QUERY_KEY}={quote(','.join(kinds))}".encode()
        out.append((k, v))
    return out


async def _send_json(
    send: Any, start: MutableMapping[str, Any], raw: bytes, notices: list[str]
) -> None:
    try:
        data = json.loads(raw)
    except ValueError:
        data = None
    if isinstance(data, dict):
        given = data.get("warnings")
        earlier: list[Any] = given if isinstance(given, list) else []
        data["warnings"] = [*earlier, *dict.fromkeys(str(n) for n in notices)]
        raw = json.dumps(data, ensure_ascii=False).encode()
    headers = [
        (k, str(len(raw)).encode() if k.lower() == b"content-length" else v)
        for k, v in start.get("headers") or []
    ]
    await send({**start, "headers": headers})
    await send({"type": "http.response.body", "body": raw})
