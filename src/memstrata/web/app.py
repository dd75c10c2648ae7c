"""`memstrata serve`: one ASGI app on one port: MCP at `/mcp`, the JSON API under `/api`,
the web app at `/`.

From the outside in, every request passes:

1. `web.security.guard`: Host (DNS rebinding), Origin and CORS;
2. `authenticate`: who the request acts as (`web.identity`): a bearer token, a login
   session cookie, or the server's default principal when no token is configured;
   `/api` and `/mcp` answer 401 without one, pages redirect to `/login`; state-changing
   API calls without a bearer header must send JSON (or `X-CSRF-Token`), which a
   cross-site form cannot;
3. `web.bodies.cap_bodies`: a request body over its route's cap (`limits`) is a 413,
   at once for a declared length, at the cap for a chunked one;
4. `web.notices.report_notices`: what the secrets policy did on a write, as `warnings`
   in a JSON answer or a notice on the page a form leads to;
5. `dispatch`: `/mcp` to the MCP mount, everything else to FastAPI (API and pages),
   with security headers (a CSP allowing no inline script, no framing) on every page.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, MutableMapping
from importlib import resources
from typing import TYPE_CHECKING, Any

from memstrata.web.context import IDENTITY_KEY, ServeContext
from memstrata.web.identity import SESSION_COOKIE, Identities, Identity

if TYPE_CHECKING:
    from fastapi import FastAPI

    from memstrata.web.security import ASGIApp, HttpPolicy

PUBLIC = ("/login", "/static/", "/api/openapi.json", "/api/docs", "/favicon.ico")
UNSAFE = frozenset({"POST", "PUT", "PATCH", "DELETE"})
SECURITY_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'self'; img-src 'self' data:; style-src 'self'; "
        b"script-src 'self'; connect-src 'self'; frame-ancestors 'none'; "
        b"base-uri 'none'; form-action 'self'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),  # no-referrer makes Chromium send Origin: null
    (b"x-frame-options", b"DENY"),
]
log = logging.getLogger("memstrata.serve")


def build_app(ctx: ServeContext, policy: HttpPolicy) -> ASGIApp:
    from memstrata.web.bodies import cap_bodies
    from memstrata.web.mcp_mount import McpMount
    from memstrata.web.notices import report_notices
    from memstrata.web.security import guard

    mcp = McpMount(ctx)
    api = build_fastapi(ctx, mcp)
    app = cap_bodies(report_notices(dispatch(mcp, api)))
    return guard(authenticate(app, ctx.identities), policy)


def build_fastapi(ctx: ServeContext, mcp: Any) -> FastAPI:
    from fastapi import FastAPI
    from fastapi.staticfiles import StaticFiles

    from memstrata.web.api import build_router
    from memstrata.web.handlers import install_error_handlers
    from memstrata.web.pages import build_pages

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with mcp.running():
            yield

    app = FastAPI(
        title="memstrata",
        version=_version(),
        lifespan=lifespan,
        openapi_url="/api/openapi.json",
        docs_url=None,
        redoc_url=None,
        description="Persistent, layered memory for AI agents: the JSON API of "
        "`memstrata serve`. Authenticate with `Authorization: Bearer "
        "<token>` when the server has tokens. Errors are "
        '`{"error": {"code": ..., "message": ...}}`.',
    )
    app.state.memstrata = ctx
    install_error_handlers(app)
    app.include_router(build_router())
    app.include_router(build_pages())
    static = resources.files("memstrata.web") / "static"
    app.mount("/static", StaticFiles(directory=str(static)), name="static")
    app.add_api_route(
        "/favicon.ico", lambda: _favicon(str(static)), include_in_schema=False, methods=["GET"]
    )
    declare_security(app)
    return app


def _favicon(static: str) -> Any:
    from fastapi.responses import FileResponse

    return FileResponse(
        f"{static}/favicon.ico",
        media_type="image/x-icon",
        headers={"Cache-Control": "public, max-age=86400"},
    )


def declare_security(app: FastAPI) -> None:
    """The OpenAPI schema says how to authenticate: a bearer token (`[serve] tokens`, or
    the server's `--token`) on every operation; a server without tokens accepts calls
    without one (the loopback default), which the scheme's description says."""
    from fastapi.openapi.utils import get_openapi

    def schema() -> dict[str, Any]:
        if app.openapi_schema is None:
            spec = get_openapi(
                title=app.title,
                version=app.version,
                description=app.description,
                routes=app.routes,
            )
            spec.setdefault("components", {})["securitySchemes"] = {
                "bearerToken": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "A token of `[serve] tokens` in the store's config.toml "
                    "(or the server's `--token`); each acts as one agent. A server "
                    "started without tokens on loopback needs none.",
                }
            }
            spec["security"] = [{"bearerToken": []}]
            app.openapi_schema = spec
        return app.openapi_schema

    app.openapi = schema  # type: ignore[method-assign]


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("memstrata")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0"


def dispatch(mcp: ASGIApp, app: ASGIApp) -> ASGIApp:
    async def route(scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        path = scope.get("path", "")
        if scope["type"] == "http" and (path == "/mcp" or path.startswith("/mcp/")):
            await mcp(scope, receive, send)
            return
        if scope["type"] != "http":
            await app(scope, receive, send)
            return

        async def with_headers(message: MutableMapping[str, Any]) -> None:
            if message.get("type") == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *SECURITY_HEADERS]}
            await send(message)

        await app(scope, receive, with_headers)

    return route


def _cookie(headers: list[tuple[bytes, bytes]], name: str) -> str | None:
    from http.cookies import CookieError, SimpleCookie

    for k, v in headers:
        if k.lower() == b"cookie":
            jar: SimpleCookie = SimpleCookie()
            with contextlib.suppress(CookieError, UnicodeDecodeError):
                jar.load(v.decode("latin-1"))
                if name in jar:
                    return jar[name].value
    return None


def _header(headers: list[tuple[bytes, bytes]], name: bytes) -> bytes | None:
    found = [v for k, v in headers if k.lower() == name]
    return found[0] if len(found) == 1 else None


async def _json(
    send: Any, status: int, code: str, message: str, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    import json

    body = json.dumps({"error": {"code": code, "message": message}}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *(extra or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def authenticate(app: ASGIApp, identities: Identities) -> ASGIApp:
    async def check(scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        path: str = scope.get("path", "")
        headers = list(scope.get("headers") or [])
        auth = _header(headers, b"authorization")
        machine = path.startswith(("/api", "/mcp"))
        who: Identity | None
        if identities.open:
            who = identities.default
        else:
            who = identities.by_bearer(auth) if auth is not None else None
            if who is None and auth is None:
                who = identities.by_session(_cookie(headers, SESSION_COOKIE))
            if who is None and not path.startswith(PUBLIC):
                if machine:
                    await _json(
                        send,
                        401,
                        "unauthorized",
                        "missing or wrong bearer token",
                        [(b"www-authenticate", b'Bearer realm="memstrata"')],
                    )
                else:
                    from urllib.parse import quote

                    target = quote(path, safe="/")
                    await send(
                        {
                            "type": "http.response.start",
                            "status": 303,
                            "headers": [
                                (b"location", f"/login?next={target}".encode()),
                                (b"content-length", b"0"),
                            ],
                        }
                    )
                    await send({"type": "http.response.body", "body": b""})
                return
        if (
            path.startswith("/api")
            and scope.get("method") in UNSAFE
            and (who is None or who.via != "token")
        ):
            # No bearer header: the request may come from a browser that attached a cookie
            # (or from a page on the open loopback server). JSON or the CSRF header only.
            ctype = (_header(headers, b"content-type") or b"").split(b";")[0].strip().lower()
            csrf = _header(headers, b"x-csrf-token")
            has_body = scope.get("method") != "DELETE" or ctype
            if (
                has_body
                and ctype != b"application/json"
                and not identities.check_csrf(who, csrf.decode("latin-1") if csrf else None)
            ):
                await _json(
                    send,
                    415,
                    "unsupported_media_type",
                    "send the body as application/json (or the X-CSRF-Token header)",
                )
                return
        scope[IDENTITY_KEY] = who
        await app(scope, receive, send)

    return check
