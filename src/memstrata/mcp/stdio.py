"""`memstrata mcp` over stdio: a small MCP server that answers its first request fast.

An agent starts its MCP servers at every session start and waits for them, so
time to the first `tools/list` matters. Importing the MCP SDK costs about 1.1 s
of CPU on the reference machine (most of it building the SDK's protocol models),
more than the whole budget; pydantic alone costs 0.25 s. This module speaks the
stdio transport itself: newline-delimited JSON-RPC 2.0 on stdin/stdout, in both eras
of the protocol (`mcp.revisions`): the initialize handshake (revisions 2024-11-05 to
2025-11-25, plus `ping`) and the stateless 2026-07-28 (`server/discover`, the
per-request envelope, `subscriptions/listen`); in both, `tools/list`, `tools/call`,
`resources/list`, `resources/read` and `resources/templates/list`. Everything else is
"method not found". The client's first request decides the era, as in the SDK's own
stdio server. The tools, their schemas and the call path are the same objects the
SDK's HTTP server uses (`mcp.tools.ToolSpec`, `mcp.tools.run`); tests hold the two
listings equal at both revisions.

One message is one line of at most `limits.MCP_LINE_CHARS` characters (64 Mi): a
longer line is read past in chunks and answered with -32600, and a message nested
too deeply to parse with -32700; either way the server goes on serving.

Nothing is read from the store before the handshake: the store is opened
without catching its index up, and the first tool call or resource read does
that once.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any

from memstrata import limits
from memstrata.errors import MemstrataError
from memstrata.mcp import revisions

if TYPE_CHECKING:
    from memstrata.mcp.resources import Resource
    from memstrata.mcp.tools import ToolSpec
    from memstrata.store.view import Store

PROTOCOL_VERSIONS = revisions.HANDSHAKE_VERSIONS
DRAIN_CHARS = 1024 * 1024  # an over-long line is read past this much at a time
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
RESOURCE_NOT_FOUND = -32002


class _RpcError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


class StdioServer:
    """One store, one principal, one client on stdin/stdout."""

    def __init__(
        self,
        store: Store,
        tools: list[ToolSpec],
        *,
        name: str,
        version: str,
        instructions: str,
        resources: list[Resource],
        log_to: Store | None = None,
        on_first_call: Callable[[], None] | None = None,
    ) -> None:
        self.store = store
        self.log_to = log_to
        self.on_first_call = on_first_call if on_first_call is not None else store.sync
        self.tools = {t.name: t for t in tools}
        self.name, self.version, self.instructions = name, version, instructions
        self.resources = {r.uri: r for r in resources}
        self._synced = False
        self._modern: bool | None = None  # the era, decided by the first request
        self._listening: set[Any] = set()  # open `subscriptions/listen` streams, by request id

    # -- the loop ----------------------------------------------------------------
    def serve(
        self,
        stdin: IO[str] | None = None,
        stdout: IO[str] | None = None,
        *,
        max_line: int = limits.MCP_LINE_CHARS,
    ) -> None:
        src = stdin if stdin is not None else sys.stdin
        out = stdout if stdout is not None else sys.stdout
        while line := src.readline(max_line + 1):
            if len(line) > max_line and not line.endswith("\n"):
                while (rest := src.readline(DRAIN_CHARS)) and not rest.endswith("\n"):
                    pass  # the rest of the over-long line, never held whole
                reply: str | None = _dump(
                    _error(
                        None,
                        INVALID_REQUEST,
                        (
                            f"message longer than {max_line} characters (the stdio line limit); "
                            "nothing was done"
                        ),
                    )
                )
            elif not line.strip():
                continue
            else:
                reply = self.handle_line(line)
            if reply is not None:
                out.write(reply + "\n")
                out.flush()

    def handle_line(self, line: str) -> str | None:
        try:
            msg = json.loads(line)
        except json.JSONDecodeError as exc:
            return _dump(_error(None, PARSE_ERROR, f"not JSON: {exc.msg}"))
        except RecursionError:
            return _dump(
                _error(
                    None,
                    PARSE_ERROR,
                    "JSON nested too deeply to parse (arguments "
                    f"may nest {limits.JSON_DEPTH} levels); nothing was done",
                )
            )
        try:
            if isinstance(msg, list):  # a JSON-RPC batch (2025-03-26)
                replies = [r for r in (self.handle(m) for m in msg) if r is not None]
                return _dump(replies) if replies else None
            reply = self.handle(msg)
            return _dump(reply) if reply is not None else None
        except RecursionError:  # a value nested too deeply for some later step
            mid = msg.get("id") if isinstance(msg, dict) else None
            return _dump(
                _error(
                    mid if isinstance(mid, str | int) else None,
                    INVALID_REQUEST,
                    "request nested too deeply; nothing was done",
                )
            )

    def handle(self, msg: Any) -> dict[str, Any] | None:
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0" or "method" not in msg:
            if (
                isinstance(msg, dict)
                and "method" not in msg
                and ("result" in msg or "error" in msg)
            ):
                return None  # a response to a request we never sent: ignore
            return _error(
                msg.get("id") if isinstance(msg, dict) else None,
                INVALID_REQUEST,
                "not a JSON-RPC 2.0 request",
            )
        method, mid = msg["method"], msg.get("id")
        if "id" not in msg:  # a notification (initialized, cancelled, ...): no answer
            if method == "notifications/cancelled" and isinstance(msg.get("params"), dict):
                self._listening.discard(msg["params"].get("requestId"))  # a stream ends
            return None
        params = msg.get("params") or {}
        if self._modern is None:  # the first request decides the connection's era
            self._modern = revisions.opens_modern(method, params)
        if self._modern:
            return self._handle_modern(mid, method, params)
        if revisions.has_envelope(params) and method != "initialize":
            return _refused(mid, revisions.envelope_refused())
        handler = self._methods().get(method)
        if handler is None:
            return _error(mid, METHOD_NOT_FOUND, f"Method not found: {method}")
        if not isinstance(params, dict):
            return _error(mid, INVALID_PARAMS, "params must be an object")
        try:
            return {"jsonrpc": "2.0", "id": mid, "result": handler(params)}
        except _RpcError as exc:
            return _error(mid, exc.code, str(exc))

    def _handle_modern(self, mid: Any, method: str, params: Any) -> dict[str, Any]:
        """A request on a 2026-07-28 connection: the envelope checked on every request
        (there is no session to remember it), the result shaped for the revision."""
        try:
            if method == "initialize":
                raise revisions.initialize_refused(params)
            revisions.check_envelope(params)
            if method == "subscriptions/listen":  # the answer is a stream: its ack, no result
                ack = revisions.listen_ack(mid, params)
                self._listening.add(mid)
                return ack
        except revisions.EnvelopeError as exc:
            return _refused(mid, exc)
        handler = self._modern_methods().get(method)
        if handler is None:
            return _error(mid, METHOD_NOT_FOUND, f"Method not found: {method}")
        try:
            result = handler(params)
        except _RpcError as exc:
            return _error(mid, exc.code, str(exc))
        info = {"name": self.name, "version": self.version}
        return {"jsonrpc": "2.0", "id": mid, "result": revisions.complete(method, result, info)}

    def _methods(self) -> dict[str, Callable[[dict[str, Any]], dict[str, Any]]]:
        return {
            "initialize": self._initialize,
            "ping": lambda p: {},
            "tools/list": lambda p: {"tools": [t.listing() for t in self.tools.values()]},
            "tools/call": self._call,
            "resources/list": lambda p: {
                "resources": [r.listing() for r in self.resources.values()]
            },
            "resources/templates/list": lambda p: {"resourceTemplates": []},
            "resources/read": self._read,
        }

    def _modern_methods(self) -> dict[str, Callable[[dict[str, Any]], dict[str, Any]]]:
        """2026-07-28: the handshake and `ping` are gone, `server/discover` is new
        (`subscriptions/listen` is answered in `_handle_modern`)."""
        methods = self._methods()
        del methods["initialize"], methods["ping"]
        methods["server/discover"] = lambda p: revisions.discover(self.instructions)
        return methods

    # -- methods -----------------------------------------------------------------
    def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        asked = params.get("protocolVersion")
        version = asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[-1]
        return {
            "protocolVersion": version,
            "capabilities": {
                "tools": {"listChanged": False},
                "resources": {"subscribe": False, "listChanged": False},
            },
            "serverInfo": {"name": self.name, "version": self.version},
            "instructions": self.instructions,
        }

    def _catch_up(self) -> None:
        """Once, at the first tool call or resource read: catch the index up (and, as
        `memstrata mcp` asks, start the store's upkeep)."""
        if not self._synced:
            self._synced = True
            self.on_first_call()

    def _call(self, params: dict[str, Any]) -> dict[str, Any]:
        from memstrata.mcp.tools import run

        name = params.get("name")
        spec = self.tools.get(name) if isinstance(name, str) else None
        if spec is None:
            raise _RpcError(
                INVALID_PARAMS, f"Unknown tool: {name!r}; tools: {', '.join(self.tools)}"
            )
        args = params.get("arguments")
        if args is not None and not isinstance(args, dict):
            return _tool_error("malformed_input: arguments must be a JSON object")
        try:
            self._catch_up()
            reply = run(spec, args, log_to=self.log_to)
        except MemstrataError as exc:
            return _tool_error(f"{exc.code}: {exc}")
        result: dict[str, Any] = {
            "content": [{"type": "text", "text": reply.text}],
            "isError": reply.is_error,
        }
        if reply.data is not None and not reply.is_error:
            result["structuredContent"] = reply.data
        return result

    def _read(self, params: dict[str, Any]) -> dict[str, Any]:
        uri = params.get("uri")
        res = self.resources.get(uri) if isinstance(uri, str) else None
        if res is None:
            raise _RpcError(RESOURCE_NOT_FOUND, f"Resource not found: {uri!r}")
        try:
            self._catch_up()
            text = res.read()
        except MemstrataError as exc:
            raise _RpcError(INVALID_PARAMS, f"{exc.code}: {exc}") from exc
        return {"contents": [{"uri": uri, "mimeType": res.mime_type, "text": text}]}


def _refused(mid: Any, exc: revisions.EnvelopeError) -> dict[str, Any]:
    reply = _error(mid, exc.code, str(exc))
    if exc.data is not None:
        reply["error"]["data"] = exc.data
    return reply


def _tool_error(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": True}


def _error(mid: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": mid, "error": {"code": code, "message": message}}


def _dump(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
