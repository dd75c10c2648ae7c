"""HTTP security for every memstrata HTTP surface (MCP over HTTP today, `memstrata serve` later).

One ASGI middleware, `guard(app, policy)`, answers each request in this order:

1. **Host** must be allowed (DNS-rebinding protection), else 421.
2. **Origin**, when a browser sends one, must be allowed, else 403. A CORS
   preflight (`OPTIONS`) from an allowed origin is answered here, and responses
   to allowed origins carry the CORS headers, so a browser-based client on
   another port works once its origin is allowed.
3. **Path**: a request path holding a control character once percent-decoded
   (`%0A`, `%00`, C1, U+2028) is a 400, before any route sees it: a route's
   `{name:path}` pattern ends in `$`, which matches before a final newline, so
   `PUT /api/agents/finn/facts/k%0A` would otherwise write fact `k`.
4. **Authorization**, when a token is set: `Bearer <token>`, scheme in any case,
   compared in constant time. A missing, malformed or non-ASCII header is a 401,
   never a 500.

Defaults (`HttpPolicy.for_bind`) are safe: the loopback names with the server's
port are accepted, and so is a specific bind address (`192.168.1.5`, `127.0.0.2`);
binding anything but loopback requires a token; and a wildcard bind (`0.0.0.0`, `::`)
with a token accepts any Host, because the token is then the authentication and a
rebinding page cannot know it. Origins default to this server's own `http://`
origins. `--allow-host` / `--allow-origin` (or `[http] allow_hosts` /
`allow_origins` in config.toml) add entries: `name`, `name:port` or `name:*` for
hosts, `scheme://name[:port]` or `scheme://name:*` for origins, `*` for any.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any

from memstrata.errors import MalformedInput
from memstrata.model import has_control
from memstrata.values import value_type

ASGIApp = Callable[[MutableMapping[str, Any], Any, Any], Awaitable[None]]

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
WILDCARDS = ("0.0.0.0", "::", "")
CORS_METHODS = "GET, POST, DELETE, OPTIONS"
CORS_EXPOSE = "mcp-session-id, mcp-protocol-version, www-authenticate"


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def url_host(host: str) -> str:
    """A host as it appears in a URL or a Host header (IPv6 in brackets)."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def split_host(value: str) -> tuple[str, str | None]:
    """`name[:port]` (IPv6 in brackets) -> (lower-case name, port or None)."""
    value = value.strip().lower()
    if value.startswith("["):
        name, _, rest = value[1:].partition("]")
        return name, rest[1:] if rest.startswith(":") else None
    if value.count(":") == 1:
        name, _, port = value.partition(":")
        return name, port
    return value, None


def check_token(token: str | None) -> str | None:
    """A bearer token must be printable ASCII without spaces (it travels in a header)."""
    if token is None or token == "":
        return None
    if not token.isascii() or not token.isprintable() or " " in token:
        raise MalformedInput("the bearer token must be printable ASCII without spaces")
    return token


def bearer_ok(header: bytes | None, token: str) -> bool:
    """True if `header` is `Bearer <token>` (scheme in any case); False for anything else."""
    if header is None or not header.isascii():
        return False
    scheme, _, credentials = header.decode("ascii").strip().partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(credentials.strip().encode("ascii"), token.encode("ascii"))


@value_type(frozen=True)
class HttpPolicy:
    """Which Host and Origin values are accepted, and the bearer token (if any)."""

    token: str | None
    hosts: tuple[str, ...]
    origins: tuple[str, ...]

    @classmethod
    def for_bind(
        cls,
        host: str,
        port: int,
        token: str | None,
        *,
        allow_hosts: Iterable[str] = (),
        allow_origins: Iterable[str] = (),
        app_auth: bool = False,
        token_hint: str = "--token or MEMSTRATA_MCP_TOKEN",
    ) -> HttpPolicy:
        """The safe default policy for a server bound to `host:port`, plus extra entries.

        `app_auth`: the app behind the guard authenticates every request itself
        (`memstrata serve` with `[serve] tokens`), which counts as a token here.
        `token_hint` names where a token comes from, in the refusal's message.
        """
        token = check_token(token)
        if not is_loopback(host) and token is None and not app_auth:
            raise MalformedInput(
                f"binding {host or '*'} exposes memory beyond this machine: set a token "
                f"({token_hint})"
            )
        own = [f"{url_host(h)}:{port}" for h in LOOPBACK_NAMES]
        if host not in WILDCARDS and host.strip("[]").lower() not in LOOPBACK_NAMES:
            own.append(f"{url_host(host)}:{port}")  # e.g. 192.168.1.5 or 127.0.0.2
        hosts = list(own)
        if host in WILDCARDS:
            hosts.append("*")  # a token is required here, and it is the authentication
        extra_hosts = [_check_host_entry(h) for h in allow_hosts]
        extra_origins = [_check_origin_entry(o) for o in allow_origins]
        if token is None and not app_auth and "*" in (*extra_hosts, *extra_origins):
            # Without a token, any Host invites DNS rebinding and any Origin lets every
            # web page in the user's browser read and write this memory.
            raise MalformedInput("allowing every Host or Origin ('*') needs a token (--token)")
        origins = [f"http://{h}" for h in own]
        return cls(token, tuple(hosts + extra_hosts), tuple(origins + extra_origins))

    def host_allowed(self, value: str | None) -> bool:
        if "*" in self.hosts:
            return True
        if not value:
            return False
        name, port = split_host(value)
        port = port or "80"  # a Host without a port names the scheme's default
        for entry in self.hosts:
            ename, eport = split_host(entry)
            if ename == name and (eport is None or eport == "*" or eport == port):
                return True
        return False

    def origin_allowed(self, value: str) -> bool:
        value = value.strip().lower().rstrip("/")
        for entry in self.origins:
            if entry == "*" or entry == value:
                return True
            if (
                entry.endswith(":*")
                and value.startswith(entry[:-1])
                and value[len(entry) - 1 :].isdigit()
            ):
                return True
        return False


def _check_host_entry(value: str) -> str:
    v = value.strip().lower()
    if not v or not v.isascii() or any(c in v for c in "/ @"):
        raise MalformedInput(f"allowed host {value!r}: use name, name:port, name:* or *")
    return v


def _check_origin_entry(value: str) -> str:
    v = value.strip().lower().rstrip("/")
    if v != "*" and (not v.isascii() or "://" not in v or " " in v or "/" in v.partition("://")[2]):
        raise MalformedInput(
            f"allowed origin {value!r}: use scheme://name[:port], scheme://name:* or *"
        )
    return v


def _headers(scope: MutableMapping[str, Any]) -> dict[bytes, list[bytes]]:
    out: dict[bytes, list[bytes]] = {}
    for k, v in scope.get("headers") or []:
        out.setdefault(bytes(k).lower(), []).append(bytes(v))
    return out


def _one(headers: dict[bytes, list[bytes]], name: bytes) -> bytes | None:
    values = headers.get(name)
    return values[0] if values and len(values) == 1 else None


def _utf8_path(raw: object) -> bool:
    """True unless the raw request path percent-decodes to bytes that are no UTF-8 (the
    server would hand the app U+FFFD in their place, and a file name made of it)."""
    if not isinstance(raw, bytes):
        return True
    from urllib.parse import unquote_to_bytes

    try:
        unquote_to_bytes(raw).decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


async def _reply(
    send: Any, status: int, code: str, message: str, extra: Iterable[tuple[bytes, bytes]] = ()
) -> None:
    """An error answer in the shape every memstrata HTTP surface uses."""
    body = json.dumps({"error": {"code": code, "message": message}}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *extra,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def guard(app: ASGIApp, policy: HttpPolicy) -> ASGIApp:
    """Wrap `app` so every HTTP request passes the Host, Origin and bearer checks."""

    async def guarded(scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") != "http":
            if scope.get("type") == "websocket":
                await send({"type": "websocket.close", "code": 1008})
                return
            await app(scope, receive, send)
            return
        headers = _headers(scope)
        host = _one(headers, b"host")
        if not policy.host_allowed(host.decode("latin-1") if host is not None else None):
            await _reply(
                send, 421, "host_not_allowed", "this Host is not allowed (see --allow-host)"
            )
            return
        raw_origin = headers.get(b"origin")
        origin: str | None = None
        if raw_origin is not None:
            origin = raw_origin[0].decode("latin-1") if len(raw_origin) == 1 else ""
            if not policy.origin_allowed(origin):
                await _reply(
                    send,
                    403,
                    "origin_not_allowed",
                    "this Origin is not allowed (see --allow-origin)",
                )
                return
        cors = _cors(origin)
        if not _utf8_path(scope.get("raw_path")):
            await _reply(
                send,
                400,
                "malformed_input",
                "the request path is not valid UTF-8 (a percent-encoded byte such as %FF "
                "that decodes to no text): names never are",
                cors,
            )
            return
        if has_control(str(scope.get("path", ""))):
            await _reply(
                send,
                400,
                "malformed_input",
                "the request path holds a control character "
                "(a newline, tab, NUL, ...): names never do",
                cors,
            )
            return
        if origin is not None and scope.get("method") == "OPTIONS":
            requested = _one(headers, b"access-control-request-headers") or b""
            await send(
                {
                    "type": "http.response.start",
                    "status": 204,
                    "headers": [
                        *cors,
                        (b"access-control-allow-methods", CORS_METHODS.encode()),
                        (b"access-control-allow-headers", requested),
                        (b"access-control-max-age", b"600"),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": b""})
            return
        if policy.token is not None and not bearer_ok(
            _one(headers, b"authorization"), policy.token
        ):
            await _reply(
                send,
                401,
                "unauthorized",
                "missing or wrong bearer token",
                [(b"www-authenticate", b'Bearer realm="memstrata"'), *cors],
            )
            return
        if not cors:
            await app(scope, receive, send)
            return

        async def send_with_cors(message: MutableMapping[str, Any]) -> None:
            if message.get("type") == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *cors]}
            await send(message)

        await app(scope, receive, send_with_cors)

    return guarded


def _cors(origin: str | None) -> list[tuple[bytes, bytes]]:
    if not origin:
        return []
    return [
        (b"access-control-allow-origin", origin.encode("latin-1")),
        (b"access-control-expose-headers", CORS_EXPOSE.encode()),
        (b"vary", b"Origin"),
    ]
