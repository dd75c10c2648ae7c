"""`/mcp` inside `memstrata serve`: the SDK's streamable HTTP transport, one MCP server per
principal, the same tools as `memstrata mcp`.

An MCP server's tools are bound to the store they were built with, so each principal
(the identity a request authenticated as) gets its own server over
`store.acting_as(...)`, built on its first request; its session manager runs in a
task of the app's lifespan until the server stops. Tools act for an agent: a request
acting as the store's owner (no agent) uses `memstrata mcp`'s default agent, "agent".
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, MutableMapping
from typing import TYPE_CHECKING, Any

import anyio

from memstrata.model import DEFAULT_AGENT  # what `memstrata mcp` and the CLI act as too
from memstrata.web.context import IDENTITY_KEY, ServeContext
from memstrata.web.identity import Identity

if TYPE_CHECKING:
    from anyio.abc import TaskGroup
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager


class McpMount:
    def __init__(self, ctx: ServeContext) -> None:
        self.ctx = ctx
        self._managers: dict[tuple[str | None, str | None], StreamableHTTPSessionManager] = {}
        self._lock = anyio.Lock()
        self._tg: TaskGroup | None = None

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with anyio.create_task_group() as tg:
            self._tg = tg
            try:
                yield
            finally:
                self._tg = None
                tg.cancel_scope.cancel()

    async def _manager(self, who: Identity) -> StreamableHTTPSessionManager:
        if who.agent is None:  # MCP tools act for an agent: the same default as `memstrata mcp`
            who = Identity(DEFAULT_AGENT, who.room, who.via, who.session)
        key = (who.agent, who.room)
        async with self._lock:
            got = self._managers.get(key)
            if got is not None:
                return got
            if self._tg is None:
                raise RuntimeError("the MCP endpoint is not running (no lifespan)")
            from mcp.server.transport_security import TransportSecuritySettings

            from memstrata.mcp.server import build_server
            from memstrata.web.bodies import cap_for

            store = self.ctx.store_for(who)
            server = await anyio.to_thread.run_sync(build_server, store, self.ctx.tools)
            # `web.security.guard` in front of the whole app checks Host and Origin, and
            # `web.bodies.cap_bodies` the body size (the SDK's own cap is set to the same).
            server.streamable_http_app(
                transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
                max_request_body_size=cap_for("/mcp"),
            )
            manager = server.session_manager
            started = anyio.Event()

            async def run() -> None:
                async with manager.run():
                    started.set()
                    await anyio.sleep_forever()

            self._tg.start_soon(run)
            await started.wait()
            self._managers[key] = manager
            return manager

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        who = scope.get(IDENTITY_KEY)
        assert isinstance(who, Identity)  # the auth middleware lets no one through without one
        manager = await self._manager(who)
        await manager.handle_request(scope, receive, send)
