"""The one search every surface uses, and which path it takes.

    mode lexical (or no text)   -> search.engine.lexical_search: FTS5 candidates, BM25 x decay
    mode hybrid / semantic      -> search.hybrid.hybrid_search: the lexical pool fused with
                                   the vector neighbours

Without a mode, `[search] provider` decides (MemoryConfig searchProvider). The lexical
engine sits below hybrid (hybrid reads its candidates and rows); this module sits
above both, so neither imports the other's caller.
"""

from __future__ import annotations

from memstrata.search.engine import lexical_search
from memstrata.search.hybrid import hybrid_search
from memstrata.search.query import Hit, Searchable, SearchQuery
from memstrata.values import replace


def search(store: Searchable, q: SearchQuery) -> list[Hit]:
    """The one search every surface uses: lexical, or hybrid / semantic (`search.hybrid`).

    Without a mode, `[search] provider` decides: "auto" (the default) is hybrid when
    semantic recall is on (`Semantic.active`) and its embedder available, over the
    vectors built so far (a search never waits for them: `Engine.build_vectors_later`),
    else lexical. A mode asked for by name catches the vectors up first.
    """
    catch_up = q.mode is not None
    if q.mode is None:  # MemoryConfig searchProvider: "fts5" (lexical) or "hybrid"
        provider = store.config.search_provider
        semantic = provider == "hybrid" or (
            provider == "auto"
            and q.text.strip()
            and store.semantic.active()
            and store.semantic_embedder() is not None
        )
        q = replace(q, mode="hybrid" if semantic else "lexical")
    if q.mode != "lexical" and q.text.strip():
        embedder = store.embedder()
        if not catch_up:
            store.build_vectors_later()
        with store.db.fresh():  # the index caught up once for the search's reads
            hits = hybrid_search(store, q, embedder, catch_up=catch_up)
    else:
        with store.db.fresh():
            hits = lexical_search(store, q)
    store.events.emit("memory:search", {"query": q.text, "results": [h.uid for h in hits]})
    return hits
