"""Request body caps for every memstrata HTTP surface: one ASGI middleware, `cap_bodies`.

Each route has a cap (`limits.HTTP_BODY_BYTES`; the routes of `ROUTE_CAPS` more), and a
body over it is answered 413 `entry_too_large` before the route holds more than the cap:

* a declared `Content-Length` over the cap is answered at once, without reading a byte
  (a client announcing 100 GB is not waited on);
* a body without one (chunked), or longer than it said, is counted as its chunks
  arrive; the chunk that passes the cap raises `BodyTooLarge` inside the app's
  `receive`, so the route stops reading. FastAPI answers it like any HTTP error (JSON
  under /api, a page elsewhere); for any other app (the MCP transport) this middleware
  answers with the same JSON body.

The rest of a refused body is never read: uvicorn closes a connection whose response
ended before its request's body did. So a 300 MB upload costs the server at most the
cap, whatever the route would have done with it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, MutableMapping
from typing import Any

from starlette.exceptions import HTTPException

from memstrata import limits
from memstrata.web.security import ASGIApp

ROUTE_CAPS: tuple[tuple[re.Pattern[str], int], ...] = (
    (
        re.compile(r"/api/agents/[^/]+/sessions/[^/]+/messages/?"),
        limits.HTTP_TRANSCRIPT_BODY_BYTES,
    ),
)


class BodyTooLarge(HTTPException):
    """The request body passed its route's cap (raised from `receive`)."""

    def __init__(self, cap: int) -> None:
        super().__init__(413, too_large_message(cap))


def too_large_message(cap: int) -> str:
    return (
        f"the request body is larger than this route accepts ({cap} bytes); "
        "nothing was done (send less, or split it)"
    )


def cap_for(path: str) -> int:
    """The most bytes a request body to `path` may hold."""
    for pattern, cap in ROUTE_CAPS:
        if pattern.fullmatch(path):
            return cap
    return limits.HTTP_BODY_BYTES


def declared_length(headers: list[tuple[bytes, bytes]]) -> int | None:
    """The Content-Length a request declares (None: none, or not a single number)."""
    values = [v for k, v in headers if k.lower() == b"content-length"]
    if len(values) != 1 or not values[0].strip().isdigit():
        return None
    return int(values[0])


def cap_bodies(app: ASGIApp, caps: Callable[[str], int] = cap_for) -> ASGIApp:
    """Wrap `app` so no request body passes `caps(path)` bytes (see the module docstring)."""

    async def capped(scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") != "http":
            await app(scope, receive, send)
            return
        cap = caps(str(scope.get("path", "")))
        declared = declared_length(list(scope.get("headers") or []))
        if declared is not None and declared > cap:
            await _too_large(send, cap)
            return
        seen = 0
        started = False

        async def counted() -> Any:
            nonlocal seen
            message = await receive()
            if message.get("type") == "http.request":
                seen += len(message.get("body", b""))
                if seen > cap:
                    raise BodyTooLarge(cap)
            return message

        async def tracked(message: MutableMapping[str, Any]) -> None:
            nonlocal started
            if message.get("type") == "http.response.start":
                started = True
            await send(message)

        try:
            await app(scope, counted, tracked)
        except Exception as exc:
            if not _too_large_error(exc):
                raise
            if not started:
                await _too_large(send, cap)

    return capped


def _too_large_error(exc: BaseException) -> bool:
    """A BodyTooLarge, or a task group's error made only of them (the MCP transport reads
    bodies in task groups)."""
    if isinstance(exc, BaseExceptionGroup):
        _, rest = exc.split(BodyTooLarge)
        return rest is None
    return isinstance(exc, BodyTooLarge)


async def _too_large(send: Any, cap: int) -> None:
    body = json.dumps(
        {"error": {"code": "entry_too_large", "message": too_large_message(cap)}}
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
