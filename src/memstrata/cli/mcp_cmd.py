"""`memstrata mcp`: serve the store to agents over MCP (stdio by default, or --http).

stdio is the light server of `memstrata.mcp.stdio` (no SDK import, no index work
before the handshake: the first tool call catches the index up; scheduled upkeep
starts at server start in a background thread); --http is the
MCP SDK's streamable HTTP server behind `memstrata.web.security`. With --http
every startup failure (bad tool list, missing token, port in use) is reported
before the banner, so a banner means the server is listening.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser(
        "mcp",
        help="run the MCP server (stdio, or streamable HTTP with --http)",
        description="Serve one store to MCP clients, acting as --agent (default 'agent') in "
        "--room. stdio by default; --http serves streamable HTTP on --host:--port.",
        epilog="examples:\n"
        "  memstrata mcp                                 # stdio, for a client config\n"
        "  memstrata mcp --http --port 8765              # http://127.0.0.1:8765/mcp\n"
        "  memstrata mcp --list-tools                    # what an agent will see\n"
        "  memstrata mcp --tools default,tasks           # more tools, by group",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to bind with --http (default 127.0.0.1; any other needs --token)",
    )
    p.add_argument("--port", type=int, default=8765, help="port to bind with --http (default 8765)")
    p.add_argument(
        "--token",
        default=os.environ.get("MEMSTRATA_MCP_TOKEN"),
        help="bearer token, required when not bound to loopback ($MEMSTRATA_MCP_TOKEN)",
    )
    p.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="HOST",
        help="also accept this Host header: name, name:port, name:* (repeatable; "
        "config [http] allow_hosts)",
    )
    p.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="also accept this browser Origin, e.g. http://localhost:5173 "
        "(repeatable; config [http] allow_origins)",
    )
    p.add_argument(
        "--tools",
        default=os.environ.get("MEMSTRATA_MCP_TOOLS"),
        help="comma-separated tool and group names to expose: groups core, files, "
        "ledger, rooms, tasks, sessions, episodes, claude; 'default' (core, "
        "files, and ledger with --room) or 'all' ($MEMSTRATA_MCP_TOOLS; see "
        "--list-tools)",
    )
    p.add_argument(
        "--list-tools",
        action="store_true",
        help="print the tools --tools selects (with their group) and every group, and exit",
    )
    p.set_defaults(func=run_mcp)


def _report_upkeep(rows: list[Any]) -> None:
    done = [
        f"{r.agent}: {len(r.sessions_archived)} session(s), "
        f"{len(r.milestones_archived)} milestone(s) archived"
        for r in rows
    ]
    problems = [f"{r.agent}: {p}" for r in rows for p in r.problems]
    sys.stderr.write(
        f"memstrata: upkeep done ({'; '.join(done) or 'no agents'})"
        + (f"; problems: {'; '.join(problems)}" if problems else "")
        + "\n"
    )
    sys.stderr.flush()


def _names(args: argparse.Namespace) -> list[str] | None:
    return [t.strip() for t in args.tools.split(",") if t.strip()] if args.tools else None


def run_mcp(args: argparse.Namespace) -> int:
    from memstrata.cli.common import warn_config
    from memstrata.mcp.server import select_tools
    from memstrata.model import DEFAULT_AGENT
    from memstrata.store.view import Store

    agent = args.agent or DEFAULT_AGENT
    # No index work before the handshake: the first tool call starts watching the store
    # folder (other processes' writes, hand edits) and then catches the index up, so
    # nothing written in between is missed. HTTP watches from the start.
    store = Store(
        args.home, agent=agent, room=args.room, role=args.role, sync=False, watch=bool(args.http)
    )
    warn_config(store, named=bool(args.agent))
    names = _names(args)
    specs = select_tools(store, names)
    if args.list_tools:
        from memstrata.mcp.tools import GROUPS

        for spec in specs:
            flags = (
                "read-only" if spec.read_only else ("destructive" if spec.destructive else "write")
            )
            sys.stdout.write(
                f"{spec.name:<20} {spec.group:<9} {flags:<12} {spec.description.splitlines()[0]}\n"
            )
        sys.stdout.write(
            "\ngroups (--tools NAME,...; 'default', 'all'):\n"
            + "".join(f"  {name:<9} {what}\n" for name, what in GROUPS.items())
        )
        return 0
    if args.http:
        return _serve_http(args, store, names, agent)
    from memstrata import __version__
    from memstrata.lifecycle.maintain import start_maintenance
    from memstrata.mcp.resources import build_resources
    from memstrata.mcp.server import INSTRUCTIONS
    from memstrata.mcp.stdio import StdioServer
    from memstrata.mcp.tools import auto_log_target

    start_maintenance(store, _report_upkeep)  # scheduled upkeep at server start, in the background

    def first_call() -> None:
        store.watch()
        store.sync()

    StdioServer(
        store,
        specs,
        name="memstrata",
        version=__version__,
        instructions=INSTRUCTIONS,
        resources=build_resources(store),
        log_to=auto_log_target(store),
        on_first_call=first_call,
    ).serve()
    return 0


def _serve_http(args: argparse.Namespace, store: Any, names: list[str] | None, agent: str) -> int:
    import socket

    from memstrata.cli.common import command_name, port_taken

    try:
        from memstrata.mcp.server import build_server, http_app
    except ImportError:  # pragma: no cover - depends on the install
        sys.stderr.write(
            "memstrata: the HTTP server needs the extra: pip install 'memstrata[mcp]'\n"
        )
        return 1
    from memstrata.lifecycle.maintain import start_maintenance
    from memstrata.web.security import WILDCARDS, HttpPolicy, url_host

    policy = HttpPolicy.for_bind(
        args.host,
        args.port,
        args.token,
        allow_hosts=[*store.config.http_allow_hosts, *args.allow_host],
        allow_origins=[*store.config.http_allow_origins, *args.allow_origin],
    )
    store.sync()
    app = http_app(build_server(store, names), args.host, policy)
    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((args.host, args.port))
    except OSError as exc:
        sock.close()
        raise port_taken(args.host, args.port, exc) from None
    sock.listen(128)
    start_maintenance(store, _report_upkeep)  # retention and archival, in the background
    # A wildcard bind is reached locally through 127.0.0.1: print a URL that works.
    shown = "127.0.0.1" if args.host in WILDCARDS else url_host(args.host)
    url = f"http://{shown}:{args.port}/mcp"
    sys.stderr.write(
        f"memstrata MCP server on {url} (agent {agent}, room {args.room or '-'}, "
        f"store {store.home})\n"
        + connect_hints(url, policy.token)
        + (
            "from another machine: use this machine's address instead of 127.0.0.1\n"
            if args.host in WILDCARDS
            else ""
        )
        + f"stdio instead: {command_name()} --home {store.home} --agent {agent} mcp"
        "   (Ctrl-C to stop)\n"
    )
    sys.stderr.flush()
    import uvicorn

    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])
    return 0


def connect_hints(url: str, token: str | None) -> str:
    """How to connect a client, carrying the bearer header when a token is set, so the
    hint works exactly as printed (the config is `agentconfig.clients.http_entry`, the
    one place it is made)."""
    import shlex

    from memstrata.agentconfig.clients import client_config, http_entry

    cmd = ["claude", "mcp", "add", "--transport", "http", "memstrata", url]
    if token:
        cmd += ["--header", f"Authorization: Bearer {token}"]
    return (
        f"connect: {shlex.join(cmd)}\n"
        f"   or an MCP client config: {client_config(http_entry(url, token))}\n"
    )
