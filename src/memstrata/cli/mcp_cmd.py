"""`memstrata mcp`: serve the store to agents over MCP (stdio by default, or --http)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser("mcp", help="run the MCP server (stdio, or streamable HTTP with --http)")
    p.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--token", default=os.environ.get("MEMSTRATA_MCP_TOKEN"),
                   help="bearer token, required when not bound to loopback ($MEMSTRATA_MCP_TOKEN)")
    p.add_argument("--allow-host", action="append", default=[], metavar="HOST",
                   help="also accept this Host header: name, name:port, name:* (repeatable; "
                        "config [http] allow_hosts)")
    p.add_argument("--allow-origin", action="append", default=[], metavar="ORIGIN",
                   help="also accept this browser Origin, e.g. http://localhost:5173 "
                        "(repeatable; config [http] allow_origins)")
    p.add_argument("--tools", default=os.environ.get("MEMSTRATA_MCP_TOOLS"),
                   help="comma-separated subset of tools to expose")
    p.add_argument("--list-tools", action="store_true", help="print the tools and exit")
    p.set_defaults(func=run_mcp)


def _report_upkeep(rows: list[Any]) -> None:
    done = [f"{r.agent}: {len(r.sessions_archived)} session(s), "
            f"{len(r.milestones_archived)} milestone(s) archived" for r in rows]
    problems = [f"{r.agent}: {p}" for r in rows for p in r.problems]
    sys.stderr.write(f"memstrata: upkeep done ({'; '.join(done) or 'no agents'})"
                     + (f"; problems: {'; '.join(problems)}" if problems else "") + "\n")
    sys.stderr.flush()


def run_mcp(args: argparse.Namespace) -> int:
    try:
        from memstrata.mcp.server import build_server, select_tools, serve_http
    except ImportError:  # pragma: no cover - depends on the install
        sys.stderr.write("memstrata: the MCP server needs the extra: pip install 'memstrata[mcp]'\n")
        return 1
    from memstrata.store import Store

    agent = args.agent or "agent"
    # A server stays up: watch the store folder so that other processes' writes and
    # hand edits are found without a restart.
    store = Store(args.home, agent=agent, room=args.room, role=args.role, watch=True)
    from memstrata.cli.common import warn_config

    warn_config(store)
    names = [t.strip() for t in args.tools.split(",") if t.strip()] if args.tools else None
    if args.list_tools:
        for spec in select_tools(store, names):
            flags = "read-only" if spec.read_only else ("destructive" if spec.destructive else "write")
            sys.stdout.write(f"{spec.name:<20} {flags:<12} {spec.description.splitlines()[0]}\n")
        return 0
    server = build_server(store, names)
    from memstrata.lifecycle.maintain import start_maintenance

    start_maintenance(store, _report_upkeep)  # seed 004 retention and archival, in the background
    if args.http:
        from memstrata.web.security import WILDCARDS, HttpPolicy, url_host

        policy = HttpPolicy.for_bind(
            args.host, args.port, args.token,
            allow_hosts=[*store.config.http_allow_hosts, *args.allow_host],
            allow_origins=[*store.config.http_allow_origins, *args.allow_origin])
        # A wildcard bind is reached locally through 127.0.0.1: print a URL that works.
        shown = "127.0.0.1" if args.host in WILDCARDS else url_host(args.host)
        url = f"http://{shown}:{args.port}/mcp"
        sys.stderr.write(
            f"memstrata MCP server on {url} (agent {agent}, room {args.room or '-'}, "
            f"store {store.home})\n" + connect_hints(url, policy.token)
            + ("from another machine: use this machine's address instead of 127.0.0.1\n"
               if args.host in WILDCARDS else "")
            + "stdio instead: memstrata --agent NAME mcp   (Ctrl-C to stop)\n"
        )
        sys.stderr.flush()
        serve_http(server, args.host, args.port, policy)
    else:
        server.run("stdio")
    return 0


def connect_hints(url: str, token: str | None) -> str:
    """How to connect a client, carrying the bearer header when a token is set, so the
    hint works exactly as printed."""
    import json
    import shlex

    config: dict[str, Any] = {"type": "http", "url": url}
    cmd = ["claude", "mcp", "add", "--transport", "http", "memstrata", url]
    if token:
        config["headers"] = {"Authorization": f"Bearer {token}"}
        cmd += ["--header", f"Authorization: Bearer {token}"]
    return (f"connect: {shlex.join(cmd)}\n"
            f"   or an MCP client config: {json.dumps({'mcpServers': {'memstrata': config}})}\n")
