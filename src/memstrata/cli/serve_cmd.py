"""`memstrata serve`: one port, the embedded store: MCP at /mcp, the JSON API at /api, the
web app at /."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

TOKEN_HINT = "--token, MEMSTRATA_MCP_TOKEN, or [serve] tokens in config.toml"
TOKEN_PLACEHOLDER = "<token>"  # in the connect hints of a server with [serve] tokens only


def register(sub: Any) -> None:
    p = sub.add_parser("serve", help="serve MCP (/mcp), the JSON API (/api) and the web app (/)")
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to bind (default 127.0.0.1; anything else needs a token)",
    )
    p.add_argument("--port", type=int, default=8765, help="port (default 8765; 0 = any free one)")
    p.add_argument(
        "--token",
        default=os.environ.get("MEMSTRATA_MCP_TOKEN"),
        help="bearer token acting as --agent/--room ($MEMSTRATA_MCP_TOKEN); more "
        "tokens, one per agent, in [serve] tokens",
    )
    p.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="HOST",
        help="also accept this Host header (repeatable; config [http] allow_hosts)",
    )
    p.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="also accept this browser Origin (repeatable; config [http] allow_origins)",
    )
    p.add_argument(
        "--tools",
        default=os.environ.get("MEMSTRATA_MCP_TOOLS"),
        help="MCP tools to expose at /mcp: tool and group names, 'default' or "
        "'all', as `memstrata mcp --tools` ($MEMSTRATA_MCP_TOOLS)",
    )
    p.add_argument(
        "--verify-root",
        default=None,
        metavar="DIR",
        help="code folder `verify` checks memory claims against (default: here)",
    )
    p.set_defaults(func=run_serve)


def run_serve(args: argparse.Namespace) -> int:
    try:
        import fastapi  # noqa: F401
        import uvicorn

        from memstrata.web.app import build_app
    except ImportError:  # pragma: no cover - depends on the install
        sys.stderr.write("memstrata: serve needs the extra: pip install 'memstrata[serve]'\n")
        return 1
    from pathlib import Path

    from memstrata.cli.common import warn_config
    from memstrata.cli.mcp_cmd import connect_hints
    from memstrata.mcp.server import select_tools
    from memstrata.model import DEFAULT_AGENT
    from memstrata.store.view import Store
    from memstrata.web.context import ServeContext
    from memstrata.web.identity import Identities
    from memstrata.web.security import WILDCARDS, HttpPolicy, check_token, url_host

    store = Store(args.home, agent=args.agent, room=args.room, role=args.role)
    warn_config(store)
    token = check_token(args.token)
    tokens = store.config.serve_tokens
    identities = Identities(args.agent, args.room, token, tokens)
    tools = [t.strip() for t in args.tools.split(",") if t.strip()] if args.tools else None
    select_tools(store, tools)  # an unknown tool is a usage error now, not on every /mcp call
    ctx = ServeContext(
        store, identities, tools=tools, verify_root=Path(args.verify_root or os.getcwd()).resolve()
    )

    def policy_for(port: int) -> HttpPolicy:
        # With any token the app authenticates every request itself (`web.app.authenticate`:
        # `--token` and `[serve] tokens` alike, so /login and /static stay reachable and the
        # login form takes either); the guard in front checks Host and Origin only.
        return HttpPolicy.for_bind(
            args.host,
            port,
            None,
            app_auth=not identities.open,
            token_hint=TOKEN_HINT,
            allow_hosts=[*store.config.http_allow_hosts, *args.allow_host],
            allow_origins=[*store.config.http_allow_origins, *args.allow_origin],
        )

    policy_for(args.port)  # refuses an exposed bind without a token before binding anything
    sock = _bind(args.host, args.port)  # bound before the banner: port 0 prints the real port
    port = sock.getsockname()[1]
    policy = policy_for(port)
    config = uvicorn.Config(
        build_app(ctx, policy),
        host=args.host,
        port=port,
        log_level="warning",
        timeout_graceful_shutdown=2,
        lifespan="on",
    )
    server = uvicorn.Server(config)
    shown = "127.0.0.1" if args.host in WILDCARDS else url_host(args.host)
    base = f"http://{shown}:{port}"
    who = (f"agent {args.agent}" if args.agent else "the store owner (admin)") + (
        f", room {args.room}" if args.room else ""
    )
    auth = (
        "no token: loopback only"
        if identities.open
        else f"{len(identities.entries)} token(s); browsers log in at {base}/login"
    )
    # Said out loud: MCP tools act for an agent, and the hooks and `memstrata mcp` default to
    # the same one, so one user's memory is not split between two agents (issue 19).
    mcp_agent = args.agent or DEFAULT_AGENT
    mcp_who = f"MCP at {base}/mcp acts as agent '{mcp_agent}'" + (
        "" if identities.open else " (or as the agent of the token a client sends)"
    )
    same = (
        "the agent `memstrata hook` and `memstrata mcp` use by default"
        if mcp_agent == DEFAULT_AGENT
        else "give the hooks and `memstrata mcp` the same --agent"
    )
    sys.stderr.write(
        f"memstrata serve on {base} (store {store.home}; requests act as {who}; {auth})\n"
        f"  web app: {base}/   API: {base}/api (schema {base}/api/openapi.json, try it at "
        f"{base}/api/docs)   MCP: {base}/mcp\n"
        f"  {mcp_who}: {same}\n"
        + connect_hints(f"{base}/mcp", token or (None if identities.open else TOKEN_PLACEHOLDER))
        + (
            f"  ({TOKEN_PLACEHOLDER}: the token of a [serve] tokens entry)\n"
            if token is None and not identities.open
            else ""
        )
        + "  (Ctrl-C to stop)\n"
    )
    sys.stderr.flush()
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:  # uvicorn re-raises Ctrl-C after its graceful shutdown
        pass
    finally:
        store.close()
    return 0


def _bind(host: str, port: int) -> Any:
    """A listening TCP socket. Created with proto=IPPROTO_TCP on purpose: asyncio sets
    TCP_NODELAY only on sockets that say they are TCP, and without it every response on a
    kept-alive connection waited ~40 ms for a delayed ACK (uvicorn's own `bind_socket`
    leaves proto at 0)."""
    import socket

    from memstrata.cli.common import port_taken
    from memstrata.errors import MalformedInput

    try:
        family, kind, proto, _, addr = socket.getaddrinfo(
            host or None,
            port,
            type=socket.SOCK_STREAM,
            proto=socket.IPPROTO_TCP,
            flags=socket.AI_PASSIVE,
        )[0]
    except (socket.gaierror, OverflowError) as exc:
        raise MalformedInput(f"cannot listen on {host}:{port}: {exc}") from None
    sock = None
    try:
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(addr)
        sock.listen(2048)
    except OSError as exc:
        if sock is not None:
            sock.close()
        raise port_taken(host, port, exc) from None
    return sock
