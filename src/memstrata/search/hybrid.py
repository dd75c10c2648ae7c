"""Hybrid and semantic search: lexical candidates + exact vector search, fused.

    lexical = the lexical search, widened to `fetch` candidates (BM25 x decay)
    dense   = exact cosine over every stored vector of the embedder's model,
              best `fetch`, then the same scope and filters in SQL
    final   = fusion x decay(age, half-life), fusion = `scoring.weighted_fusion`
              (w_vec x minmax(cos) + w_text x minmax(bm25)) or `scoring.rrf`
    worth   = final x prior(record) over the whole pool, then the top k (`search.worth`)

Vectors are kept beside the index (table `vectors`: uid, model id, dim, content
hash); documents added or changed since the last search are embedded first,
and text that did not change is never embedded again. Lexical-only stays the default.
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from memstrata.search import scoring
from memstrata.search.engine import _COLUMNS, _filters, _hit, lexical_search
from memstrata.search.query import MAX_K, Hit, Searchable, SearchQuery
from memstrata.search.worth import exclusions, rank_pool

if TYPE_CHECKING:
    from memstrata.embed.base import Embedder

FETCH = 100


def sync_vectors(store: Searchable, embedder: Embedder) -> int:
    """Embed the documents whose text changed since the last sync (see `VectorIndex.catch_up`)."""
    return store.vectors(embedder).catch_up()


def hybrid_search(
    store: Searchable, q: SearchQuery, embedder: Embedder, *, query_vector: list[float] | None = None
) -> list[Hit]:
    sync_vectors(store, embedder)
    fetch = max(FETCH, q.k * 5)
    gone: dict[str, str] = {}  # candidates never shown (`search.worth.exclusions`)
    lexical = (
        lexical_search(store, replace(q, k=MAX_K, mode="lexical"), fetch=fetch, dropped=gone)
        if q.mode == "hybrid"
        else []
    )
    qv = query_vector if query_vector is not None else embedder.embed([q.text])[0]
    nearest = store.vectors(embedder).search(qv, fetch)
    where, params = _filters(store, q)
    by_uid: dict[str, Any] = {}
    if nearest:
        # json_each + CROSS JOIN makes SQLite look each uid up by its unique index;
        # `uid IN (...)` next to the scope filter made it scan the scope indexes instead.
        with store.db.read() as conn:
            for r in conn.execute(
                f"SELECT {_COLUMNS} FROM json_each(?) c CROSS JOIN docs d ON d.uid = c.value "
                f"WHERE {' AND '.join(where)}",
                [json.dumps([u for u, _ in nearest]), *params],
            ):
                by_uid[r[1]] = r
    dense = {u: _hit(r, 0.0, {}, []) for u, r in by_uid.items()}
    gone.update(exclusions(store, q, [h for u, h in dense.items() if u not in gone]))
    cos = {u: s for u, s in nearest if u in by_uid and u not in gone}
    # the author bonus is added after fusion, on the fused scale, not stretched by it
    bonus = {h.uid: float(h.explain.get("author_named", 0.0)) for h in lexical}
    text = {h.uid: h.explain.get("relevance", h.score) - bonus[h.uid] for h in lexical}
    cfg = store.config
    if cfg.fusion == "rrf":
        fused = scoring.rrf([[h.uid for h in lexical], sorted(cos, key=lambda u: -cos[u])])
    else:
        fused = scoring.weighted_fusion(
            text, cos, w_text=cfg.text_weight, w_vec=cfg.vector_weight, text_norm="max"
        )
        fused = {u: f + bonus.get(u, 0.0) for u, f in fused.items()}
    lex_hits = {h.uid: h for h in lexical}
    now = q.now if q.now is not None else time.time()
    scored: list[tuple[float, float, str, float]] = []
    for uid, f in fused.items():
        base = lex_hits.get(uid)
        row = by_uid.get(uid)
        if base is not None:
            layer, kind, ts = base.layer, base.kind, base.ts
        elif row is not None:
            layer, kind, ts = row[2], row[5], row[7]
        else:
            continue
        dec = scoring.decay((now - ts) / 3600.0, cfg.half_life(layer, kind))
        scored.append((f * dec, ts, uid, dec))
    scored.sort(key=lambda x: (-x[0], -x[1]))
    pool: list[Hit] = []
    for final, _ts, uid, dec in scored:
        explain = {
            "fusion": cfg.fusion,
            "fused": round(fused[uid], 6),
            "cosine": round(cos.get(uid, 0.0), 6),
            "bm25_relevance": round(text.get(uid, 0.0), 6),
            "decay": round(dec, 6),
            "w_text": cfg.text_weight,
            "w_vec": cfg.vector_weight,
            "score": round(final, 6),
            "formula": "(w_vec x norm(cos) + w_text x norm(bm25)) x decay",
        }
        base = lex_hits.get(uid)
        hit = base if base is not None else dense[uid]
        pool.append(replace(hit, score=final, explain=explain))
    return rank_pool(store, q, pool, gone)  # the top k by worth = score x prior (`search.priors`)
