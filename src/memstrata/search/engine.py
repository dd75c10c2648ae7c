"""One search over every layer: SQL candidate generation, then pure re-ranking.

    candidates = FTS5 MATCH (quoted terms) AND scope filter AND query filters,
                 best `fetch` by bm25 (column weights: title, body, tags, context)
    score      = relevance(bm25) x decay(age_hours, half_life(layer, kind))

Scope comes from `Gate.sql_filter`, added to every statement here: there is no
read path that skips it. Superseded entries are filtered in SQL unless the query
asks for them. Structured queries (no text) return newest first.
"""

from __future__ import annotations

import json
import math
import re
import time
from typing import TYPE_CHECKING, Any

from memstrata.errors import UnknownKind
from memstrata.search.query import Hit, SearchQuery

if TYPE_CHECKING:
    from memstrata.store import Store

COLUMN_WEIGHTS = (2.0, 1.0, 1.5, 0.5)  # title, body, tags, context
MIN_FETCH = 100
SNIPPET_CHARS = 200

_COLUMNS = (
    "d.id, d.uid, d.layer, d.owner, d.room, d.kind, d.tags, d.ts, d.title, d.body, d.source,"
    " d.line, d.superseded, d.meta, d.thread, d.pos"
)


def _filters(store: Store, q: SearchQuery) -> tuple[list[str], list[Any]]:
    scope_sql, params = store.gate.sql_filter("d")
    where = [scope_sql]
    if not q.include_superseded:
        where.append("d.superseded = 0")
    if q.layers:
        where.append(f"d.layer IN ({','.join('?' for _ in q.layers)})")
        params.extend(q.layers)
    if q.kind is not None:
        if "ledger" in (q.layers or ("ledger",)) and q.layers == ("ledger",) and q.kind not in store.config.half_lives:
            raise UnknownKind(f"unknown kind {q.kind!r}; known kinds: {', '.join(store.config.kinds)}")
        where.append("d.kind = ?")
        params.append(q.kind)
    if q.agent is not None:
        store.gate.check("read", "file", q.agent)
        where.append("d.owner = ?")
        params.append(q.agent)
    if q.room is not None:
        where.append("d.room = ?")
        params.append(q.room)
    if q.exclude_room is not None:
        where.append("(d.room IS NULL OR d.room != ?)")
        params.append(q.exclude_room)
    if q.since is not None:
        where.append("d.ts >= ?")
        params.append(q.since)
    if q.until is not None:
        where.append("d.ts <= ?")
        params.append(q.until)
    if q.tags:
        joiner = " OR " if q.tags_match == "any" else " AND "
        where.append("(" + joiner.join("(' ' || d.tags || ' ') LIKE ?" for _ in q.tags) + ")")
        params.extend(f"% {t} %" for t in q.tags)
    return where, params


_TOKEN = re.compile(r"[^\W_]+")


def match_expression(text: str, max_terms: int = 64) -> str | None:  # interim
    terms = list(dict.fromkeys(t.lower() for t in _TOKEN.findall(text)))[:max_terms]
    return " OR ".join(f'"{t}"' for t in terms) or None


def search(store: Store, q: SearchQuery) -> list[Hit]:
    where, params = _filters(store, q)
    expr = match_expression(q.text) if q.text.strip() else None
    if q.text.strip() and expr is None:
        hits: list[Hit] = []  # only stopwords/punctuation: nothing to match on
    elif expr is None:
        hits = _structured(store, q, where, params)
    else:
        hits = _ranked(store, q, expr, where, params)
    store.events.emit("memory:search", {"query": q.text, "results": [h.uid for h in hits]})
    return hits


def _structured(store: Store, q: SearchQuery, where: list[str], params: list[Any]) -> list[Hit]:
    sql = f"SELECT {_COLUMNS} FROM docs d WHERE {' AND '.join(where)} ORDER BY d.ts DESC, d.id DESC LIMIT ?"
    with store.db.read() as conn:
        rows = conn.execute(sql, [*params, q.k]).fetchall()
    return [_hit(r, 0.0, {"order": "newest first"}, []) for r in rows]


def _ranked(
    store: Store, q: SearchQuery, expr: str, where: list[str], params: list[Any]
) -> list[Hit]:
    fetch = max(MIN_FETCH, q.k * 5)
    w = ", ".join(str(x) for x in COLUMN_WEIGHTS)
    sql = (
        f"SELECT {_COLUMNS}, bm25(docs_fts, {w}) AS rank FROM docs_fts "
        f"JOIN docs d ON d.id = docs_fts.rowid WHERE docs_fts MATCH ? AND {' AND '.join(where)} "
        "ORDER BY rank LIMIT ?"
    )
    with store.db.read() as conn:
        rows = conn.execute(sql, [expr, *params, fetch]).fetchall()
    now = q.now if q.now is not None else time.time()
    terms = [t.strip('"') for t in expr.split(" OR ")]
    scored = []
    for r in rows:
        relevance = -float(r[-1])
        half_life = store.config.half_life(r[2], r[5])
        age_h = (now - r[7]) / 3600.0
        dec = math.exp(-math.log(2) / half_life * max(age_h, 0.0)) if half_life else 1.0
        score = relevance * dec
        explain = {"bm25": round(r[-1], 6), "relevance": round(relevance, 6),
                   "age_hours": round(max(age_h, 0.0), 3), "half_life_hours": half_life,
                   "decay": round(dec, 6), "score": round(score, 6),
                   "formula": "relevance x exp(-ln2 / half_life x age_hours)"}
        scored.append((score, r, explain))
    scored.sort(key=lambda x: (-x[0], -x[1][7]))
    return [_hit(r, s, e, terms) for s, r, e in scored[: q.k]]


def _hit(r: Any, score: float, explain: dict[str, Any], terms: list[str]) -> Hit:
    meta = json.loads(r[13]) if r[13] else {}
    return Hit(
        uid=r[1], layer=r[2], score=score, title=r[8], text=r[9],
        snippet=make_snippet(r[9] or r[8], terms), ts=r[7], source=r[10], owner=r[3],
        room=r[4], kind=r[5], tags=tuple(r[6].split()) if r[6] else (), line=r[11],
        superseded=bool(r[12]), meta=meta, explain=explain,
    )


def make_snippet(text: str, terms: list[str], width: int = SNIPPET_CHARS) -> str:
    """A window of `text` around the first query term, on word boundaries."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    start = 0
    low = flat.lower()
    for t in terms:
        m = re.search(r"\b" + re.escape(t.lower()), low)
        if m:
            start = max(0, m.start() - width // 4)
            break
    piece = flat[start : start + width]
    if start > 0:
        piece = "…" + piece.split(" ", 1)[-1]
    if start + width < len(flat):
        piece = piece.rsplit(" ", 1)[0] + "…"
    return piece
