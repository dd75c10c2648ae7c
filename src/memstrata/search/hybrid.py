"""Hybrid and semantic search: lexical and dense candidates, one fusion with no weights.

    candidates = lexical pool (FTS5 BM25, `engine.lexical_pool`, best `fetch`)
                 U dense pool (best `fetch` by dense score, then scope and filters in SQL)
    lexical(d) = bm25(d) / best bm25 + author bonus      (0 outside the lexical pool)
    dense(d)   = max over d's units and windows of cos(q, .)  (`index.vector_matrix`)
                 (a candidate no query word reaches is kept if z_dense >= 1)
    maxsim(d)  = max over d's units of mean over the query's word pieces of the best
                 cos with one of the unit's pieces (token vectors, `index.tokens`)
    fused(d)   = z_lexical(d) + z_dense(d) + z_maxsim(d)
                 z = (x - mean) / sd over the candidates
    relevance  = (fused - min) / (max - min)   over the candidates, best = 1
    score      = relevance x recency,  recency = 1 - bound x (1 - decay(age, half-life))
                 then a newer statement within `update_band` of an older one that says
                 nearly the same moves just above it (`search.updates`)

With `[search] feedback` > 0 the query vector is moved toward the best hits of a first
pass (Rocchio, `search.feedback`; explain names them: `feedback_seeds`), and a second
pass scores the dense side anew over what the first read (`_Read`: no second FTS5 search).
The query moves only when every seed is a one-unit record, and the first pass's best
`PINNED` hits keep their places above the second pass's ranking (`feedback.acts`, `pinned`).

MaxSim reads the query's content pieces only (`search.pieces`: no stopword or
punctuation pieces).

The z-scores put BM25 (unbounded, heavy-tailed) and cosine (crowded around 0.3) on
one scale without a weight to tune: each says how far a candidate stands out from
the other candidates on that feature. Semantic mode ranks by the dense score alone.
MaxSim is computed for the candidates only (one NumPy product over their stored
pieces); a candidate without token vectors (embedded before they were kept, or by an
embedder that gives none) counts as the candidates' average there.

Vectors are built in the background after writes (`VectorIndex.build`). A search in
the default mode uses the vectors built so far: a record not embedded yet, or changed
since, has no dense score (it counts as the candidates' average there) and is still
found by its words. A search that asks for `hybrid` or `semantic` by name first
catches the vectors up, on the read path.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from memstrata.search import changes, scoring, shortforms, updates
from memstrata.search.changes import later_change
from memstrata.search.engine import _COLUMNS, _hit, lexical_pool, make_snippet
from memstrata.search.feedback import PINNED, SEEDS, acts, feedback_vector, pinned
from memstrata.search.filters import filters as _filters
from memstrata.search.frames import topic_terms
from memstrata.search.maxsim import maxsim as token_maxsim
from memstrata.search.newer import written_before
from memstrata.search.pieces import content_pieces
from memstrata.search.query import LAYERS, MAX_K, OPT_IN_LAYERS, Hit, Searchable, SearchQuery
from memstrata.search.text import query_terms
from memstrata.search.updates import newer_first
from memstrata.search.worth import exclusions, rank_pool
from memstrata.values import replace

if TYPE_CHECKING:
    from collections.abc import Callable

    from memstrata.embed.base import Embedder
    from memstrata.index.vector_matrix import Dense

FETCH = 100
MIN_DENSE_Z = 1.0  # a candidate no query word reaches must stand out this much on meaning
# ... and, to be shown, be near the query at all (all-MiniLM-L6-v2: unrelated texts sit
# near 0). Not a fusion filter: it leaves the pool's z-scores as they are.
MIN_DENSE_COS = 0.1
WIDEN = 4  # times the dense pool is widened when filters leave too few
RANKED = "\x00ranked"  # a hit's explain until `_explained`: the uid its fusion explain is of


def sync_vectors(store: Searchable, embedder: Embedder) -> int:
    """Catch the vectors up with every change (`VectorIndex.build`); texts embedded."""
    return store.vectors(embedder).build(wait=True)


def hybrid_search(
    store: Searchable,
    q: SearchQuery,
    embedder: Embedder,
    *,
    query_vector: list[float] | None = None,
    catch_up: bool = True,
) -> list[Hit]:
    """Hybrid (`q.mode == "hybrid"`) or semantic search; `catch_up` embeds what
    changed before searching (else only what the background build has done)."""
    vi = store.vectors(embedder)
    if catch_up:
        vi.build(wait=True)
    read = _Read(store, q, vi)
    if query_vector is None:
        pool = read.pool
        spelled = shortforms.spelled_both_ways(q.text, pool.forms) if pool is not None else q.text
        query_vector = vi.embed_query(spelled)
    qv = vi.query_vector(query_vector)
    seeds: list[str] = []
    if q.mode == "hybrid" and qv is not None and store.config.feedback > 0:
        qv, seeds = _feedback(store, q, vi, read, qv)
    if seeds:  # the first pass's best stay first (`feedback.pinned`)
        hits = _search(store, replace(q, k=min(q.k + PINNED, MAX_K)), vi, read, qv, seeds)
        return pinned(read.first[:PINNED], hits, q.k)
    return _search(store, q, vi, read, qv, seeds)


class _Read:
    """What a search reads once, whatever its query vector: the filters, the lexical
    pool (FTS5, its rows and Hits), the candidates' rows, the exclusions, the matrix,
    and each candidate's MaxSim (it reads the question's words, not its vector).
    Feedback's second pass (`_feedback`) reuses it: only the dense side is scored anew."""

    __slots__ = (
        "fetch",
        "first",
        "gone",
        "lexical",
        "lexical_uids",
        "made",
        "matrix",
        "maxsim",
        "maxsim_read",
        "params",
        "pieces",
        "pool",
        "qt",
        "rows",
        "screened",
        "where",
    )

    def __init__(self, store: Searchable, q: SearchQuery, vi: Any) -> None:
        self.fetch = max(FETCH, q.k * 5)
        self.where, self.params = _filters(store, q)
        terms = topic_terms(q.text) if q.mode == "hybrid" else []  # `search.frames`
        pool = lexical_pool(store, q, terms, self.where, self.params, self.fetch) if terms else None
        self.pool = pool
        self.rows: dict[str, Any] = {r[1]: r for r in pool.rows} if pool is not None else {}
        # candidates never shown (`search.worth.exclusions`): out of the pool before fusion
        self.gone: dict[str, str] = dict(pool.gone) if pool is not None else {}
        # the candidates' Hits made so far (their features remembered): `_rank` copies them
        self.made: dict[str, Hit] = dict(pool.hits) if pool is not None else {}
        self.lexical = pool.lexical() if pool is not None else {}
        self.lexical_uids = pool_uids(pool)
        self.matrix = vi.matrix()
        self.screened: set[str] = set()  # dense-only candidates `exclusions` has read
        self.maxsim: dict[str, float] = {}  # uid -> maxsim of the candidates read so far
        self.maxsim_read: set[str] = set()  # ... those with token vectors or not
        self.pieces: list[str] = []  # the query words MaxSim reads
        self.qt: Any = None  # the query's token vectors, once read (`_maxsim`)
        self.first: list[str] = []  # feedback's first pass: its best uids


def _search(
    store: Searchable,
    q: SearchQuery,
    vi: Any,
    read: _Read,
    qv: Any,
    seeds: list[str],
    *,
    shown: bool = True,
) -> list[Hit]:
    """The search for the unit query vector `qv` (None: none) over what `read` holds,
    which it extends (the dense pool's rows, exclusions, MaxSim). `shown` False: the
    ranked hits without explain or snippet (feedback's first pass reads their uids)."""
    matrix, rows, gone, made, lexical = read.matrix, read.rows, read.gone, read.made, read.lexical
    pool = read.pool
    dense: dict[str, Dense] = {}
    if qv is not None and len(matrix):
        scores = matrix.score(qv, allowed=matrix.mask(layers=_layers(store, q)))
        for d in _dense_pool(store, matrix, scores, read.fetch, read.where, read.params, rows):
            dense[d.uid] = d
        known = [u for u in rows if u not in dense]
        dense.update(matrix.pick(scores, known))
    dense_only = [
        _hit(rows[u], 0.0, {}, [], snippet=False)
        for u in dense
        if u not in gone and u in rows and u not in read.lexical_uids and u not in read.screened
    ]
    read.screened.update(h.uid for h in dense_only)
    gone.update(exclusions(store, q, dense_only))
    made.update((h.uid, h) for h in dense_only)
    cands = [u for u in rows if (u in lexical or u in dense) and u not in gone]
    if q.mode == "hybrid":
        cands = _reached(cands, lexical, dense)
    if not cands:  # only what the question asks for beyond its words (`search.intent`)
        said = query_terms(q.text)
        return [
            replace(h, snippet=make_snippet(h.text or h.title, said))
            for h in rank_pool(store, q, [], gone)
        ]
    maxsim: dict[str, float] = {}
    asked: list[str] = []
    if q.mode == "semantic":
        relevance = {u: dense[u].score for u in cands if u in dense}
        z: dict[str, dict[str, float]] = {}
        fused = relevance
    else:
        if store.config.maxsim:
            content = store.config.maxsim_pieces == "content"
            maxsim, asked = _maxsim(
                vi, q.text, [u for u in cands if u in matrix.index], content, read
            )
        relevance, fused, z = _fuse(store, cands, lexical, dense, maxsim)
    hits, why = _rank(
        store, q, cands, rows, relevance, fused, z, lexical, dense, pool, vi, maxsim, made
    )
    if q.mode == "hybrid":  # a word-less candidate far from the query is never shown
        hits = [h for h in hits if h.uid in lexical or dense[h.uid].score >= MIN_DENSE_COS]
    hits = rank_pool(store, q, hits, gone)  # the top k by worth = score x prior
    if not shown:
        return hits
    for h in hits:
        _explained(h, why)
        if pool is not None and h.uid in lexical:
            h.explain["matched"] = pool.matched(rows[h.uid])
        if asked and h.explain.get("maxsim") is not None:
            h.explain["maxsim_pieces"] = asked
        if seeds:
            h.explain["feedback"] = store.config.feedback
            h.explain["feedback_seeds"] = seeds
    said = query_terms(q.text)  # snippets for the hits shown only
    return [
        replace(h, snippet=make_snippet(h.text or h.title, said), meta=dict(h.meta)) for h in hits
    ]


def _maxsim(
    vi: Any, text: str, uids: list[str], content: bool, read: _Read
) -> tuple[dict[str, float], list[str]]:
    """maxsim(q, d) of the candidates `uids` that have token vectors (`index.tokens`),
    over the query's content pieces (`search.pieces`), and the words of the pieces read;
    only records of the loaded matrix are asked, so a changed record's are never used.
    A candidate `read` has read already is not read again (feedback's second pass)."""
    if not vi.tokens or not uids:
        return {}, []
    import numpy as np

    if read.qt is None:  # once a search: both passes read the same words
        qt = vi.query_tokens(text)
        if qt is not None and len(qt):
            keep, read.pieces = (
                content_pieces(vi.embedder, text, len(qt)) if content else (None, [])
            )
            if keep is not None:
                qt = qt[keep]
        read.qt = qt if qt is not None and len(qt) else ()
        if not len(read.qt):
            read.pieces = []
    if not len(read.qt):
        return {}, []
    fresh = [u for u in uids if u not in read.maxsim_read]
    if fresh:
        read.maxsim.update(token_maxsim(np, read.qt, vi.token_sets(fresh)))
        read.maxsim_read.update(fresh)
    return {u: read.maxsim[u] for u in uids if u in read.maxsim}, read.pieces


def _feedback(
    store: Searchable, q: SearchQuery, vi: Any, read: _Read, qv: Any
) -> tuple[Any, list[str]]:
    """The query vector moved toward the best hits of a first search (`search.feedback`),
    and those hits' uids; `qv` and [] when none of them is embedded. The first search
    fills `read`, so the second reruns neither the lexical search nor MaxSim of a
    candidate it has read: it scores the dense side with the moved vector, over the first
    search's candidates and the moved vector's own dense pool."""
    import numpy as np

    first = _search(store, replace(q, k=SEEDS), vi, read, qv, [], shown=False)
    read.first = [h.uid for h in first]
    matrix = read.matrix
    seeds = [h.uid for h in first if h.uid in matrix.index]
    if not acts([int(matrix.counts[matrix.index[u]]) for u in seeds]):
        return qv, []  # a long seed: the question is left as it is
    rows = matrix.vectors[[matrix.index[u] for u in seeds]]
    return vi.query_vector(feedback_vector(np, qv, rows, store.config.feedback)), seeds


def pool_uids(pool: Any) -> set[str]:
    return {r[1] for r in pool.rows} if pool is not None else set()


def _reached(cands: list[str], lexical: dict[str, float], dense: dict[str, Dense]) -> list[str]:
    """The candidates a query word reaches, and those no word reaches that stand out on
    meaning: a dense score at least one sd above the candidates' mean (z >= MIN_DENSE_Z).
    Without it a small store answered every query with all it holds, the unrelated last."""
    z = scoring.zscores({u: dense[u].score for u in cands if u in dense})
    return [u for u in cands if u in lexical or z.get(u, 0.0) >= MIN_DENSE_Z]


def _layers(store: Searchable, q: SearchQuery) -> tuple[str, ...]:
    if q.layers:
        return q.layers
    if store.config.search_sessions_by_default:
        return LAYERS
    return tuple(x for x in LAYERS if x not in OPT_IN_LAYERS)


def _dense_pool(
    store: Searchable,
    matrix: Any,
    scores: tuple[Any, Any, Any],
    fetch: int,
    where: list[str],
    params: list[Any],
    rows: dict[str, Any],
) -> list[Dense]:
    """The best `fetch` records by dense score that pass scope and filters (SQL);
    their rows are added to `rows`."""
    want = fetch
    picked: list[Dense] = []
    for _ in range(WIDEN):
        top = matrix.best(scores, want)
        fresh = [d.uid for d in top if d.uid not in rows]
        if fresh:
            # json_each + CROSS JOIN makes SQLite look each uid up by its unique index;
            # `uid IN (...)` next to the scope filter made it scan the scope indexes instead.
            with store.db.read() as conn:
                for r in conn.execute(
                    f"SELECT {_COLUMNS} FROM json_each(?) c CROSS JOIN docs d ON d.uid = c.value "
                    f"WHERE {' AND '.join(where)}",
                    [json.dumps(fresh), *params],
                ):
                    rows[r[1]] = r
        picked = [d for d in top if d.uid in rows]
        if len(picked) >= fetch or len(top) < want:
            break
        want *= 4
    return picked[:fetch]


def _fuse(
    store: Searchable,
    cands: list[str],
    lexical: dict[str, float],
    dense: dict[str, Dense],
    maxsim: dict[str, float],
) -> tuple[dict[str, float], dict[str, float], dict[str, dict[str, float]]]:
    pooled = set(cands)  # once: in the comprehension's test it was made for every uid
    features = {
        "lexical": {u: lexical.get(u, 0.0) for u in cands},
        "dense": {u: dense[u].score for u in dense if u in pooled},
    }
    if maxsim:
        features["maxsim"] = maxsim
    cfg = store.config
    z: dict[str, dict[str, float]] = {}
    if cfg.fusion == "rrf":
        fused = scoring.rrf(
            [sorted(features[f], key=lambda u, f=f: -features[f][u]) for f in features]  # type: ignore[misc]
        )
    elif cfg.fusion == "weighted":
        fused = scoring.weighted_fusion(
            features["lexical"],
            features["dense"],
            w_text=cfg.text_weight,
            w_vec=cfg.vector_weight,
            text_norm="max",
        )
    else:
        z = {f: scoring.zscores(v) for f, v in features.items()}
        fused = scoring.zsum(features, cands)
    return scoring.above_floor(fused), fused, z


def _rank(
    store: Searchable,
    q: SearchQuery,
    cands: list[str],
    rows: dict[str, Any],
    relevance: dict[str, float],
    fused: dict[str, float],
    z: dict[str, dict[str, float]],
    lexical: dict[str, float],
    dense: dict[str, Dense],
    pool: Any,
    vi: Any,
    maxsim: dict[str, float],
    made: dict[str, Hit],
) -> tuple[list[Hit], Callable[[str], dict[str, Any]]]:
    """The candidates as Hits ranked by score, and `why(uid)`: a candidate's fusion explain.
    Each Hit's explain holds only `RANKED: uid` until `_explained` puts the fusion's
    in front of what later stages added: the pool's priors rank ~200 candidates and show
    k, and building every candidate's explain cost about a sixth of a search. A candidate
    in `made` (the lexical pool's and the dense-only exclusions' Hits) is copied, not made
    again: the same fields, its features remembered (`search.features`)."""
    terms = query_terms(q.text)
    cfg = store.config
    now = q.now if q.now is not None else time.time()
    scored: list[tuple[float, float, str, float, float]] = []
    for u in cands:
        if u not in relevance:
            continue
        r = rows[u]
        dec = scoring.decay((now - r[7]) / 3600.0, cfg.half_life(r[2], r[5]))
        rec = scoring.recency(dec, cfg.recency_bound)
        scored.append((relevance[u] * rec, r[7], u, dec, rec))
    scored.sort(key=lambda x: (-x[0], -x[1]))
    band = cfg.update_band if q.mode == "hybrid" else 0.0
    turns = {x[2] for x in scored[: updates.DEPTH] if rows[x[2]][2] in updates.LAYERS}
    moved = _newer_versions(vi, dense, scored, band, turns, rows) if band > 0 and turns else {}
    if moved:
        scored = [(moved[s[2]][0], *s[1:]) if s[2] in moved else s for s in scored]
        scored.sort(key=lambda x: (-x[0], -x[1]))
    change = _later_change(q, vi, scored, rows) if q.mode == "hybrid" else None
    if change is not None:  # a later change above the statement it changes (`search.changes`)
        scored = [(change[1], *s[1:]) if s[2] == change[0] else s for s in scored]
        scored.sort(key=lambda x: (-x[0], -x[1]))
    pending = vi.pending_records()
    parts = {s[2]: s for s in scored}

    def why(uid: str) -> dict[str, Any]:
        final, ts, _uid, dec, rec = parts[uid]
        r = rows[uid]
        d = dense.get(uid)
        explain: dict[str, Any] = {"fusion": cfg.fusion if q.mode == "hybrid" else "semantic"}
        if q.mode == "hybrid":
            explain["lexical"] = round(lexical.get(uid, 0.0), 6)
            if uid in lexical:
                explain["bm25"] = round(r[-1], 6) if len(r) > 16 else None
        explain["dense"] = round(d.score, 6) if d is not None else None
        if d is not None:
            explain["dense_from"] = _from(d)
        if q.mode == "hybrid":
            explain["maxsim"] = round(maxsim[uid], 6) if uid in maxsim else None
        for f, zs in z.items():
            explain[f"z_{f}"] = round(zs[uid], 6) if uid in zs else 0.0
        explain.update(
            {
                "fused": round(fused[uid], 6),
                "relevance": round(relevance[uid], 6),
                "age_hours": round(max((now - ts) / 3600.0, 0.0), 3),
                "half_life_hours": cfg.half_life(r[2], r[5]),
                "decay": round(dec, 6),
                "recency_bound": cfg.recency_bound,
                "recency": round(rec, 6),
                "score": round(final, 6),
                "candidates": len(cands),
                "formula": _formula(cfg.fusion if q.mode == "hybrid" else "semantic"),
            }
        )
        if change is not None and uid == change[0]:
            explain["changes"] = change[2]
        if uid in moved:
            explain["newer_than"] = moved[uid][1]
            explain["same_as"] = round(moved[uid][2], 4)
            explain["update_band"] = band
        if pending:
            explain["vectors_pending"] = pending
        if pool is not None and uid in lexical and pool.bonus(r):
            explain["author_named"] = pool.bonus(r)
        return explain

    # the whole pool: priors rank it (`rank_pool`)
    out = [
        made[s[2]].but(score=s[0], explain={RANKED: s[2]})
        if s[2] in made
        else _hit(rows[s[2]], s[0], {RANKED: s[2]}, terms, snippet=False)
        for s in scored
    ]
    return out, why


def _explained(h: Hit, why: Callable[[str], dict[str, Any]]) -> None:
    """Put the fusion's explain (`_rank`) of the candidate `h` was made from in front of
    what later stages added (their value wins on a key both set): the dict the old
    every-candidate explain gave, key order included. A hit made afresh has no RANKED."""
    uid = h.explain.pop(RANKED, None)
    if uid is None:
        return
    given = why(uid)
    given.update(h.explain)
    h.explain.clear()
    h.explain.update(given)


def _newer_versions(
    vi: Any,
    dense: dict[str, Dense],
    scored: list[tuple[float, float, str, float, float]],
    band: float,
    turns: set[str],
    rows: dict[str, Any],
) -> dict[str, tuple[float, str, float]]:
    """An updated statement above its earlier version on a near-tie (`search.updates`):
    uid -> (new score, the uid it moved above, their cosine). At one ts, the one later in
    its transcript is the newer (`search.newer`)."""
    import numpy as np

    matrix = vi.matrix()

    def vector(uid: str) -> Any:
        d = dense.get(uid)
        i = matrix.index.get(uid)
        if d is None or i is None or uid not in turns:
            return None
        if d.source == "unit" and matrix.counts[i] > 1:
            lo = int(matrix.starts[i])
            for r in range(lo, lo + int(matrix.counts[i])):
                if int(matrix.unit_no[r]) == d.detail:
                    return matrix.units[r]
        return matrix.vectors[i]

    def earlier(a: str, b: str) -> bool:
        ra, rb = rows[a], rows[b]
        return written_before((ra[2], a, ra[10], ra[11]), (rb[2], b, rb[10], rb[11]))

    return newer_first(np, [(x[0], x[1], x[2]) for x in scored], vector, band, earlier=earlier)


def _later_change(
    q: SearchQuery, vi: Any, scored: list[tuple[float, float, str, float, float]], rows: Any
) -> tuple[str, float, str] | None:
    """`changes.later_change` over the top of `scored`: (b, its new score, a) or None."""
    matrix = vi.matrix()
    top = []
    for s in scored[: changes.DEPTH]:
        r, i = rows[s[2]], matrix.index.get(s[2])
        units = int(matrix.counts[i]) if i is not None else 0
        top.append((s[0], s[1], s[2], r[2], r[9] or "", units))

    def earlier(a: str, b: str) -> bool:
        ra, rb = rows[a], rows[b]
        return written_before((ra[2], a, ra[10], ra[11]), (rb[2], b, rb[10], rb[11]))

    return later_change(q.text, top, earlier)


def _from(d: Dense) -> str:
    if d.source == "window":
        return f"window of +-{d.detail} messages"
    return "whole record" if d.units == 1 else f"chunk {d.detail + 1} of {d.units}"


def _formula(fusion: str) -> str:
    tail = "score = relevance x recency, recency = 1 - recency_bound x (1 - decay)"
    if fusion == "semantic":
        return f"relevance = dense = max cos(query, unit or window); {tail}"
    if fusion == "zsum":
        return (
            "relevance = (fused - min) / (max - min) over the candidates, "
            "fused = z(lexical) + z(dense) + z(maxsim), z = (x - mean) / sd over the candidates "
            "(a feature a candidate lacks counts 0), lexical = bm25 / best bm25 + author bonus, "
            "dense = max cos(query, unit or window), maxsim = max over units of mean over "
            "the query's content pieces of max cos(query piece, unit piece); "
            f"{tail}; a newer hit within update_band of an older one that says nearly the "
            "same moves above it"
        )
    if fusion == "weighted":
        return f"relevance = minmax(w_text x lexical / max + w_vec x minmax(dense)); {tail}"
    return f"relevance = minmax(sum 1 / (60 + rank) over the lexical and dense rankings); {tail}"
