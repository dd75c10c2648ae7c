"""`memstrata search [TEXT] [--layer L]... [filters] [-k N] [--explain]`: one search over every layer.

`--layer` takes a layer name or one of the search scopes (`memory`, `items`,
`sessions`, `sources`), as `SearchQuery.layers` does.

Builds one `SearchQuery` from the options and prints the ranked hits. Without
--agent the search runs as admin over the whole store; with --agent it sees
only what that agent may read. Empty TEXT gives the newest matching memories.
"""

from __future__ import annotations

import argparse
from typing import Any

from memstrata.search.query import LAYERS, SCOPES


def register(sub: Any) -> None:
    p = sub.add_parser("search", help="ranked search over every memory layer")
    p.add_argument("text", nargs="?", default="", help="what to look for (empty: newest first)")
    p.add_argument(
        "--layer",
        action="append",
        default=[],
        choices=(*SCOPES, *LAYERS),
        metavar="LAYER",
        help=f"restrict to a layer or a search scope (repeatable): {', '.join((*SCOPES, *LAYERS))}",
    )
    p.add_argument("--kind", help="ledger kind, log type, fact category, task status, role...")
    p.add_argument("--tag", action="append", default=[], help="a tag (repeatable; any matches)")
    p.add_argument("--all-tags", action="store_true", help="require every --tag")
    p.add_argument("--owner", help="memories of this agent only")
    p.add_argument("--in-room", help="memories of this room only")
    p.add_argument("--exclude-room", help="leave out this room's memories")
    p.add_argument("--since", help="not older than this ISO 8601 time")
    p.add_argument("--until", help="not newer than this ISO 8601 time")
    p.add_argument(
        "--include-superseded", action="store_true", help="include superseded ledger entries"
    )
    p.add_argument("-k", type=int, default=10, help="results (1-50, default 10)")
    p.add_argument(
        "--mode",
        default="lexical",
        choices=("lexical", "hybrid", "semantic"),
        help="hybrid and semantic need [search] embedder in config.toml",
    )
    p.add_argument("--explain", action="store_true", help="show how each score was made")
    p.add_argument("--full", action="store_true", help="--json: include full text and metadata")
    p.set_defaults(func=run_search)


def build_query(args: argparse.Namespace) -> Any:
    from memstrata.search.query import SearchQuery

    return SearchQuery(
        text=args.text,
        layers=tuple(args.layer),
        kind=args.kind,
        tags=tuple(args.tag),
        tags_match="all" if args.all_tags else "any",
        agent=args.owner,
        in_room=args.in_room,
        exclude_room=args.exclude_room,
        since=args.since,
        until=args.until,
        include_superseded=args.include_superseded,
        k=args.k,
        mode=args.mode,
    )


def run_search(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from memstrata.cli.common import embed_via_daemon, open_store
    from memstrata.cli.main import emit

    query = build_query(args)
    with open_store(args, as_agent=False) as store:
        if query.mode != "lexical":
            embed_via_daemon(store)
        hits = store.search(query)
        rel = {h.uid: store.rel(Path(h.source)) for h in hits}
    from memstrata.model import iso

    data = []
    for h in hits:  # as MCP shows a hit: ISO time, the store-relative place, no nulls
        d = h.to_dict(full=args.full)
        d.update(
            ts=iso(h.ts),
            source=rel[h.uid],
            where=rel[h.uid] + (f":{h.line}" if h.line is not None else ""),
        )
        if not args.explain:
            d.pop("explain", None)
        data.append({k: v for k, v in d.items() if v is not None})
    blocks = []
    for n, h in enumerate(hits, 1):
        where = rel[h.uid] + (f":{h.line}" if h.line is not None else "")
        kind = f" {h.kind}" if h.kind else ""
        title = " ".join(h.title.split())[:80]
        if title.casefold() == (h.kind or "").casefold():
            title = ""  # a LOG entry's title is its type: "[log THOUGHT] THOUGHT" says it twice
        head = f"{n:>2}. {h.score:.3f} [{h.layer}{kind}]" + (f" {title}" if title else "")
        block = [head, f"    {' '.join(h.snippet.split())}", f"    {where}"]
        if args.explain:
            block.append(f"    explain: {json.dumps(h.explain, sort_keys=True)}")
        blocks.append("\n".join(block))
    emit(args, data, "\n".join(blocks) or "(no matches)")
    return 0
