"""The one search every surface uses, and which path it takes.

    mode lexical (or no text)   -> search.engine.lexical_search: FTS5 candidates, BM25 x decay
    mode hybrid / semantic      -> search.hybrid.hybrid_search: the lexical pool fused with
                                   the vector neighbours

Without a mode, `[search] provider` decides (seed 004 searchProvider). The lexical
engine sits below hybrid (hybrid reads its candidates and rows); this module sits
above both, so neither imports the other's caller.
"""

from __future__ import annotations

from dataclasses import replace

from memstrata.search.engine import lexical_search
from memstrata.search.hybrid import hybrid_search
from memstrata.search.query import Hit, Searchable, SearchQuery


def search(store: Searchable, q: SearchQuery) -> list[Hit]:
    """The one search every surface uses: lexical (`search.engine`), or hybrid / semantic
    (`search.hybrid`), as the query's mode or `[search] provider` says; every search is
    an audit event (`memory:search`)."""
    if q.mode is None:  # seed 004 searchProvider: "fts5" (lexical) or "hybrid"
        q = replace(q, mode="hybrid" if store.config.search_provider == "hybrid" else "lexical")
    if q.mode != "lexical" and q.text.strip():
        hits = hybrid_search(store, q, store.embedder())
    else:
        hits = lexical_search(store, q)
    store.events.emit("memory:search", {"query": q.text, "results": [h.uid for h in hits]})
    return hits
