"""The two eras of the MCP protocol, as memstrata's stdio server speaks them without the SDK.

* **Handshake era** (2024-11-05 to 2025-11-25): the client opens with `initialize`, then
  sends plain requests; results are bare.
* **2026-07-28** (stateless): no `initialize`. Every request carries its own envelope in
  `params._meta` (the protocol version, the client's capabilities, optionally its info);
  `server/discover` says which versions and capabilities the server has; every result
  carries `resultType`, the cacheable ones (`tools/list`, `resources/*`, `server/discover`)
  a `ttlMs` / `cacheScope` hint, and each names the server in `_meta`; change
  notifications arrive only on a `subscriptions/listen` stream; `ping` is gone.

A connection's era is decided once, by the client's first request, as the SDK's own
stdio loop does (`mcp.server.runner.serve_dual_era_loop`): a request carrying the 2026
envelope (and not `initialize`) opens a 2026 connection, anything else a handshake one.
A later request from the other era is refused: `initialize` on a 2026 connection gets
-32022 naming the versions served, an enveloped request on a handshake connection -32600.
Plain dicts only: this module must not import the SDK or pydantic (the stdio server's
fast start, `mcp.stdio`). The names below are the SDK's (`mcp_types`); a test holds them
equal.
"""

from __future__ import annotations

from typing import Any

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN_VERSIONS = ("2026-07-28",)
PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID_KEY = "io.modelcontextprotocol/subscriptionId"
UNSUPPORTED_PROTOCOL_VERSION = -32022
INVALID_REQUEST, INVALID_PARAMS = -32600, -32602
# Results that carry the caching hints at 2026-07-28 (`mcp_types.methods.CACHEABLE_METHODS`).
CACHEABLE = frozenset(
    {
        "prompts/list",
        "resources/list",
        "resources/read",
        "resources/templates/list",
        "server/discover",
        "tools/list",
    }
)
# The SDK's default hint: a result may be reused by this client only, and is stale at once.
CACHE_HINT = {"ttlMs": 0, "cacheScope": "private"}


class EnvelopeError(Exception):
    """A 2026 request whose envelope the server refuses: a JSON-RPC error to answer with."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.data = code, data


def has_envelope(params: Any) -> bool:
    """Whether a request claims the 2026 era: its `_meta` carries the protocol version
    (a bare `_meta` is not a claim; handshake-era requests put `progressToken` there)."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and PROTOCOL_VERSION_KEY in meta


def opens_modern(method: str, params: Any) -> bool:
    """Whether a connection's first request opens a 2026 connection."""
    return method != "initialize" and has_envelope(params)


def check_envelope(params: Any) -> str:
    """The protocol version of a 2026 request, or EnvelopeError (the SDK's ladder, in its
    order: the envelope's shape, then the version's type, then whether it is served)."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    if not isinstance(meta, dict):
        raise EnvelopeError(
            INVALID_PARAMS,
            f"params._meta must be an object carrying the required {PROTOCOL_VERSION_KEY!r} "
            f"and {CLIENT_CAPABILITIES_KEY!r} envelope keys",
        )
    missing = [k for k in (PROTOCOL_VERSION_KEY, CLIENT_CAPABILITIES_KEY) if k not in meta]
    if missing:
        raise EnvelopeError(
            INVALID_PARAMS,
            f"params._meta is missing the required envelope key(s): {', '.join(missing)}",
        )
    version = meta[PROTOCOL_VERSION_KEY]
    if not isinstance(version, str):
        raise EnvelopeError(INVALID_PARAMS, "the protocol-version envelope value must be a string")
    if version not in MODERN_VERSIONS:
        raise EnvelopeError(
            UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
            {"supported": list(MODERN_VERSIONS), "requested": version},
        )
    return version


def initialize_refused(params: Any) -> EnvelopeError:
    """`initialize` on a connection that opened in the 2026 era."""
    asked = params.get("protocolVersion") if isinstance(params, dict) else None
    data: dict[str, Any] = {"supported": list(MODERN_VERSIONS)}
    if isinstance(asked, str):
        data["requested"] = asked
    return EnvelopeError(
        UNSUPPORTED_PROTOCOL_VERSION,
        f"connection is serving the {MODERN_VERSIONS[-1]} protocol; the initialize handshake "
        "is not accepted",
        data,
    )


def envelope_refused() -> EnvelopeError:
    """A 2026-enveloped request on a connection that opened with the handshake."""
    return EnvelopeError(
        INVALID_REQUEST,
        "this connection serves the handshake protocol era; requests carrying the "
        f"{MODERN_VERSIONS[-1]} envelope are not accepted on it",
    )


def complete(method: str, result: dict[str, Any], server_info: dict[str, Any]) -> dict[str, Any]:
    """A handshake-era result as the 2026 revision shapes it: `resultType`, the caching
    hints of a cacheable method, and the server's name in `_meta`."""
    out = {**(CACHE_HINT if method in CACHEABLE else {}), **result, "resultType": "complete"}
    out["_meta"] = {**out.get("_meta", {}), SERVER_INFO_KEY: dict(server_info)}
    return out


def discover(instructions: str) -> dict[str, Any]:
    """The `server/discover` result. Capabilities are derived as the SDK derives them at
    2026-07-28: change notifications travel on `subscriptions/listen` streams, which this
    server serves, so `listChanged` and `subscribe` are true (its tool list and resources
    do not change while it runs: a stream is acknowledged and carries no event)."""
    return {
        "supportedVersions": list(MODERN_VERSIONS),
        "capabilities": {
            "tools": {"listChanged": True},
            "resources": {"subscribe": True, "listChanged": True},
        },
        "instructions": instructions,
    }


def listen_ack(subscription_id: Any, params: Any) -> dict[str, Any]:
    """The acknowledgement opening a `subscriptions/listen` stream: the subset of the
    asked notifications the server honours (every kind asked; flags not set are left out)."""
    asked = params.get("notifications") if isinstance(params, dict) else None
    if not isinstance(asked, dict):
        raise EnvelopeError(INVALID_PARAMS, "subscriptions/listen needs params.notifications")
    honored: dict[str, Any] = {
        k: True
        for k in ("toolsListChanged", "promptsListChanged", "resourcesListChanged")
        if asked.get(k) is True
    }
    uris = asked.get("resourceSubscriptions")
    if isinstance(uris, list) and uris:
        honored["resourceSubscriptions"] = [u for u in uris if isinstance(u, str)]
    return {
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {"_meta": {SUBSCRIPTION_ID_KEY: subscription_id}, "notifications": honored},
    }
