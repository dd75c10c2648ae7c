"""One search over every layer: SQL candidate generation, then pure re-ranking.

    phrases    = the query's words bar those framing it (`search.frames`), a prefix for
                 a word nothing holds whole, their identifier abbreviations (`search.expand`)
    candidates = FTS5 MATCH (OR of the phrases) AND scope filter AND query filters,
                 best `fetch` by bm25 (column weights: title, body, tags, context);
                 a candidate whose BM25 relevance is ~0 (it holds only words most
                 memories hold) is dropped when others match the rarer words
    score      = relevance(bm25) x decay(age_hours, half_life(layer, kind)), relevance
                 relative to the best candidate (1.0); `matched` on each hit tells
                 which query words it holds, which compares across queries

Scope comes from `Gate.sql_filter`, added to every statement here: there is no
read path that skips it. Superseded entries are filtered in SQL unless the query
asks for them. Structured queries (no text) return newest first.
"""

from __future__ import annotations

import bisect
import contextlib
import json
import re
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from memstrata.errors import NotFound
from memstrata.search import scoring, shortforms
from memstrata.search.coverage import QueryTerm, holders, idf
from memstrata.search.expand import IdentifierWords, Phrase, plan
from memstrata.search.filters import filters as _filters
from memstrata.search.frames import topic_terms
from memstrata.search.layermask import LayerMask, Ranges, within
from memstrata.search.query import OPT_IN_LAYERS, Hit, Searchable, SearchQuery
from memstrata.search.reach import within_reach
from memstrata.search.rescore import scoring_extra
from memstrata.search.rowmemo import RowMemo, RowMemos, own_meta
from memstrata.search.terms import TermStat, essential_terms, stems
from memstrata.search.text import mentioned, tokenize
from memstrata.search.worth import exclusions, rank_pool
from memstrata.values import field, value_type

COLUMN_WEIGHTS = (2.0, 1.0, 1.5, 0.5)  # title, body, tags, context
# Transcript-like layers: messages with an author (title) and thread neighbours.
TRANSCRIPT_LAYERS = frozenset({"session", "channel"})
# A query that names a message's author (all of the name's words) lifts that
# author's messages by this much (relevance is normalised to the best hit = 1).
# The name itself is a weak BM25 term in the author's own conversations.
SPEAKER_BONUS = 0.3
MIN_FETCH = 100
# FTS5 clamps the IDF of a word held by more than half of the memories to 1e-6, so
# a memory matching only such words scores ~1e-6. When other memories match the
# query's rarer words, such a memory is no match (it used to fill the list as
# 0.000s); when every query word is that common, those memories are all there is.
MIN_RELEVANCE = 1e-3
SNIPPET_CHARS = 200
# In a large store (pruned MATCH), abbreviations of the query words get this fraction
# of the postings budget once a query word matched (`_essential`).
ABBREVIATION_SHARE = 10

_COLUMNS = (
    "d.id, d.uid, d.layer, d.owner, d.room, d.kind, d.tags, d.ts, d.title, d.body, d.source,"
    " d.line, d.superseded, d.meta, d.thread, d.pos"
)


def lexical_search(store: Searchable, q: SearchQuery, *, fetch: int | None = None) -> list[Hit]:
    where, params = _filters(store, q)
    if not q.text.strip():
        return _structured(store, q, where, params)
    terms = topic_terms(q.text)  # without the words that frame it (`search.frames`)
    if not terms:
        return []  # only punctuation or symbols: nothing to match on
    return _ranked(store, q, terms, where, params, fetch)


def _structured(
    store: Searchable, q: SearchQuery, where: list[str], params: list[Any]
) -> list[Hit]:
    sql = f"SELECT {_COLUMNS} FROM docs d WHERE {' AND '.join(where)} ORDER BY d.ts DESC, d.id DESC LIMIT ?"
    with store.db.read() as conn:
        rows = conn.execute(sql, [*params, q.k]).fetchall()
    return [_hit(r, 0.0, {"order": "newest first"}, []) for r in rows]


def _plan(
    store: Searchable, words: list[str]
) -> tuple[list[Phrase], dict[str, Any], list[tuple[str, list[str], int]], int, list[QueryTerm]]:
    """The phrases to match (`expand.plan`), pruned to the essential (rarest) ones
    within the postings budget.

    Returns the kept phrases, explain info, the dropped phrases as (word, stems, df)
    for re-scoring, the collection size, and the query's terms with their IDF as
    `worth.query_terms_of` reads them (the same counts, read once).
    """
    with store.db.read() as conn:
        total = int(conn.execute("SELECT coalesce(max(id), 0) FROM docs").fetchone()[0])
        by_word = stems(words)
        large = total > store.config.postings_budget
        dfs: dict[str, int] = {}
        for w in words:
            # Small collections: exact counts (a cached 0 would hide a new word).
            got = [store.df_cache.df(conn, t, total) if large else _df(conn, t) for t in by_word[w]]
            dfs[w] = min(got) if got else 0
        qterms = [QueryTerm(w, tuple(by_word[w]), idf(dfs[w], total)) for w in words if dfs[w]]
        scope_sql, params = store.gate.sql_filter("d")
        ids = store.df_cache.per_scope(
            ("identifier words", scope_sql, tuple(params)), IdentifierWords
        ).get(conn, scope_sql, params)
        term_df = (lambda t: store.df_cache.df(conn, t, total)) if large else None
        phrases = plan(words, by_word, dfs, conn, ids, term_df)
    info: dict[str, Any] = {}
    prefixed = [p.word for p in phrases if p.why == "prefix"]
    abbrev = [p.word for p in phrases if p.why == "abbreviation"]
    if prefixed:
        info["prefix_of"] = prefixed
    if abbrev:
        info["abbreviations"] = abbrev
    if not large or len(phrases) < 2:
        return phrases, info, [], total, qterms
    by_match = {p.match: p for p in phrases}
    kept, dropped = _essential(phrases, store.config.postings_budget)
    if dropped:
        info["common_terms_rescored"] = [by_match[d.word].word for d in dropped]
    extra = [(by_match[d.word].word, list(by_match[d.word].stems), d.df) for d in dropped]
    return [by_match[k.word] for k in kept], info, extra, total, qterms


def _essential(phrases: list[Phrase], budget: int) -> tuple[list[TermStat], list[TermStat]]:
    """The phrases FTS5 ranks (kept) and those re-scored on the candidates (dropped).

    The query's own words (and prefixes) come first, rarest first within the postings
    budget (`terms.essential_terms`). Abbreviations are guesses: they share a tenth of
    the budget (`ABBREVIATION_SHARE`) when a query word matched, or all of it when none
    did. Before, all phrases shared one budget: at 100k entries with many short tag words
    a query grew ten abbreviations that crowded its own words out of the MATCH and
    multiplied the postings FTS5 scores by ten (5,000 rather than 500).
    """
    said = [TermStat(p.match, p.df) for p in phrases if p.why != "abbreviation"]
    guessed = [TermStat(p.match, p.df) for p in phrases if p.why == "abbreviation"]
    kept, dropped = essential_terms(said, budget)
    share = budget // ABBREVIATION_SHARE if kept else budget
    more, less = essential_terms(guessed, share, keep_rarest=not kept)
    return _rarest_first(kept + more), _rarest_first(dropped + less)


def _rarest_first(stats: list[TermStat]) -> list[TermStat]:
    return sorted(stats, key=lambda t: (t.df, t.word))


def _df(conn: Any, term: str) -> int:
    row = conn.execute("SELECT doc FROM docs_vocab WHERE term = ?", (term,)).fetchone()
    return int(row[0]) if row else 0


@value_type
class LexicalPool:
    """The lexical candidates of a query, before scoring: what both paths start from.

    `rows` are docs rows with FTS5's bm25 last; `raw` their BM25 relevance (pruned
    common terms re-scored, `scoring_extra`), `named` the authors the query names,
    `words` the (word, stems) pairs searched, `info` what explain says about them.
    """

    rows: list[Any]
    raw: list[float]
    named: set[str]
    words: list[tuple[str, tuple[str, ...]]]
    info: dict[str, Any]
    gone: dict[str, str]  # candidates never shown (`search.worth.exclusions`)
    # uid -> the row as a Hit (score 0, no snippet: `_ranked` makes those of the hits shown)
    hits: dict[str, Hit] = field(default_factory=dict)
    terms: list[QueryTerm] | None = None  # the query's terms and IDF (`worth.query_terms_of`)
    forms: list[shortforms.Form] = field(default_factory=list)  # names <-> initials searched

    def lexical(self) -> dict[str, float]:
        """uid -> BM25 relevance / best + author bonus (the lexical relevance)."""
        top = max(self.raw, default=0.0) or 1.0
        floor = MIN_RELEVANCE if top >= MIN_RELEVANCE else 0.0
        out: dict[str, float] = {}
        for r, rel in zip(self.rows, self.raw, strict=True):
            if rel < floor:
                continue  # holds only words most memories hold, while others match better
            out[r[1]] = rel / top + self.bonus(r)
        return out

    def bonus(self, r: Any) -> float:
        return SPEAKER_BONUS if (r[2] in TRANSCRIPT_LAYERS and r[8] in self.named) else 0.0

    def matched(self, r: Any) -> list[str]:
        """The query words (`words`) a row holds, a word or one starting with its stems."""
        tokens = sorted(set(tokenize(f"{r[8]} {r[9]} {r[6]}")))
        return [w for w, st in self.words if _count_prefixed(tokens, list(st))]


def lexical_pool(
    store: Searchable,
    q: SearchQuery,
    terms: list[str],
    where: list[str],
    params: list[Any],
    wanted: int | None = None,
) -> LexicalPool | None:
    """The best `fetch` lexical candidates (FTS5 MATCH, scope and filters); None if no
    query term occurs in any document."""
    kept, prune_info, extra, total, qterms = _plan(store, terms)
    forms = _short_forms(store, q.text, kept, total, prune_info)
    kept += [f.phrase for f in forms]
    if not any(p.df for p in kept):
        return None
    pruned = " OR ".join(p.match for p in kept)
    fetch = max(MIN_FETCH, q.k * 5, wanted or 0)
    allowed = _layers_read(store, q)
    with store.db.read() as conn:
        memos = store.df_cache.per_scope(("rows",), RowMemos)
        with _snapshot(conn) as ours:  # rows and hits of earlier searches (`search.rowmemo`)
            memo = memos.get(conn, where, params) if ours else RowMemo()
            mask = store.df_cache.per_scope(("layer mask",), LayerMask) if allowed else None
            keep, ranges = None, None
            if mask is not None and allowed is not None:
                ranges = mask.ranges(conn, allowed)  # a few runs of row ids: FTS5 skips the rest
                keep = mask.keep(conn, allowed) if ranges is None else None
            rows = _best_matches(conn, pruned, where, params, fetch, q.k, keep, memo.rows, ranges)
        cands = memo.hits_of(rows, _candidate)  # under the connection's lock, as its rows
    gone = exclusions(store, q, cands)
    rows = [r for r in rows if r[1] not in gone]  # never hits: not the best's yardstick
    bonus = scoring_extra(rows, extra, total) if extra else [0.0] * len(rows)
    if forms:  # a record with "W&B" holds "Weights & Biases" (`search.shortforms`)
        bonus = [a + b for a, b in zip(bonus, shortforms.credit(rows, forms, total), strict=True)]
    raw = [scoring.bm25_relevance(r[-1]) + add for r, add in zip(rows, bonus, strict=True)]
    authors = {r[8] for r in rows if r[2] in TRANSCRIPT_LAYERS and r[8]}
    named = mentioned(q.text, authors) if authors else set()
    words = [(p.word, tuple(p.stems)) for p in kept] + [(w, tuple(st)) for w, st, _ in extra]
    hits = {h.uid: h for h in cands if h.uid not in gone}
    return LexicalPool(rows, raw, named, words, prune_info, gone, hits, qterms, forms)


def _short_forms(
    store: Searchable, text: str, kept: list[Phrase], total: int, info: dict[str, Any]
) -> list[shortforms.Form]:
    """The query's names as initials and its initials as the names the store spells out
    (`search.shortforms`), as more OR branches; `info` (explain) lists them."""
    scope_sql, params = store.gate.sql_filter("d")
    with store.db.read() as conn:
        found = shortforms.forms(conn, text, scope_sql, params, total, {p.match for p in kept})
    if found:
        info["short_forms"] = [f"{f.phrase.match} ({f.phrase.why})" for f in found]
    return found


def _layers_read(store: Searchable, q: SearchQuery) -> Callable[[str], bool] | None:
    """Which layers the query's filters let through (None: all of them)."""
    if q.layers:
        return frozenset(q.layers).__contains__
    if not store.config.search_sessions_by_default:
        return lambda layer: layer not in OPT_IN_LAYERS
    return None


@contextmanager
def _snapshot(conn: Any) -> Iterator[bool]:
    """One read transaction (unless one is open: then False): the layer codes read from
    the change feed describe every row stage 1 sees (`search.layermask`)."""
    if conn.in_transaction:
        yield False
        return
    conn.execute("BEGIN")
    try:
        yield True
    finally:
        conn.execute("COMMIT")


def _ranked(
    store: Searchable,
    q: SearchQuery,
    terms: list[str],
    where: list[str],
    params: list[Any],
    wanted: int | None = None,
) -> list[Hit]:
    pool = lexical_pool(store, q, terms, where, params, wanted)
    if pool is None:  # no term occurs in any document: what the question asks for beyond them
        return [] if wanted is not None else _beyond_words(store, q, terms)
    now = q.now if q.now is not None else time.time()
    lexical = pool.lexical()
    raw = dict(zip((r[1] for r in pool.rows), pool.raw, strict=True))
    bound = store.config.recency_bound
    half_lives: dict[tuple[str, str | None], float | None] = {}  # per (layer, kind)
    scored = []
    for r in pool.rows:
        relevance = lexical.get(r[1])
        if relevance is None:
            continue
        kind_of = (r[2], r[5])
        if kind_of not in half_lives:
            half_lives[kind_of] = store.config.half_life(r[2], r[5])
        half_life = half_lives[kind_of]
        age_h = (now - r[7]) / 3600.0
        dec = scoring.decay(age_h, half_life)
        rec = scoring.recency(dec, bound)
        scored.append((relevance * rec, r, (raw[r[1]], relevance, age_h, half_life, dec, rec)))
    scored.sort(key=lambda x: (-x[0], -x[1][7]))
    rows = {r[1]: (r, parts) for _s, r, parts in scored}
    if wanted is not None:
        hits = [
            pool.hits[r[1]].but(score=s, explain=_explain(r, s, parts, pool, bound))
            for s, r, parts in scored[:wanted]
        ]
    else:
        # The top k by worth (`search.worth`) of the candidates that can reach its places
        # (`search.reach`); only the hits shown get an explain (costs more than ranking).
        cands = [(pool.hits[r[1]], s) for s, r, _parts in scored]
        pooled, whole, rep = within_reach(store, q, cands, pool.terms, pool.gone)
        hits = rank_pool(store, q, pooled, pool.gone, terms=pool.terms, whole=whole, repeating=rep)
        for h in hits:
            if h.uid not in rows:  # joined the pool with its prompt's turn (`search.turns`)
                continue
            r, parts = rows[h.uid]
            lexical_why = _explain(r, float(h.explain["before_prior"]), parts, pool, bound)
            given = {**lexical_why, **h.explain}  # the prior's score (worth) overrides
            h.explain.clear()
            h.explain.update(given)
    for h, held in zip(hits, map(holders(pool.words), hits), strict=True):
        h.explain["matched"] = held  # the query words it holds (`coverage.holders`)
    return [own_meta(h, make_snippet(h.text or h.title, terms)) for h in hits]


def _beyond_words(store: Searchable, q: SearchQuery, terms: list[str]) -> list[Hit]:
    """The hits of a query none of whose words memory holds: only what `rank_pool` adds
    for what it asks (the task state for "is anything stuck?", `search.intent`)."""
    hits = rank_pool(store, q, [], {})
    return [h.but(snippet=make_snippet(h.text or h.title, terms)) for h in hits]


def _explain(
    r: Any,
    score: float,
    parts: tuple[float, float, float, float | None, float, float],
    pool: LexicalPool,
    bound: float,
) -> dict[str, Any]:
    bm25_relevance, relevance, age_h, half_life, dec, rec = parts
    return {
        "bm25": round(r[-1], 6),
        "bm25_relevance": round(bm25_relevance, 6),
        "relevance": round(relevance, 6),
        "age_hours": round(max(age_h, 0.0), 3),
        "half_life_hours": half_life,
        "decay": round(dec, 6),
        "recency_bound": bound,
        "recency": round(rec, 6),
        "score": round(score, 6),
        "formula": "(bm25 / best bm25 + author bonus) x recency, "
        "recency = 1 - recency_bound x (1 - exp(-ln2 / half_life x age_hours))",
        **({"author_named": SPEAKER_BONUS} if pool.bonus(r) else {}),
        **pool.info,
    }


def _count_prefixed(words: list[str], stems: list[str]) -> int:
    """How many of the sorted `words` start with one of `stems`."""
    if len(stems) == 1:
        s = stems[0]
        return bisect.bisect_left(words, s + "\U0010ffff") - bisect.bisect_left(words, s)
    return sum(1 for w in words if w.startswith(tuple(stems)))


def _best_matches(
    conn: Any,
    match: str,
    where: list[str],
    params: list[Any],
    fetch: int,
    k: int,
    keep: Callable[[int], int] | None = None,
    read: dict[int, Any] | None = None,
    ranges: Ranges | None = None,
) -> list[Any]:
    """The docs rows (bm25 last, best first) of the best `fetch` FTS5 matches that pass
    scope and filters (fewer when fewer pass, at least `k` when that many do): the pool.

    Stage 1 ranks inside FTS5 only; stage 2 reads the docs rows of the best and applies
    scope and filters. Stage 1 looks at the best `fetch * 4` matches first; when filters
    leave fewer than `fetch` (transcripts are left out by default, and they are most of
    a store), it looks eight times deeper, up to three times (`_Ranked` reads on rather
    than asking again), and stops once `k` pass at a depth of 1,600 or more.
    Stage 1 reads one match more than it looks at, which tells whether there are more.
    `keep` (a row id -> whether its layer is read: `search.layermask`) drops the matches
    of other layers inside stage 1, before FTS5 scores them; `ranges` (the same row ids
    as a few runs: `LayerMask.ranges`) does it as row id bounds FTS5 applies itself.
    The pool is the best `fetch` that pass however deep stage 1 looked (it used to grow
    with the depth, to 800 candidates whose priors were most of a search's time).
    `read`: the rows an earlier search read under these filters (`search.rowmemo`).
    """
    weights = ", ".join(str(x) for x in COLUMN_WEIGHTS)
    kept, bounds = "", tuple[int, ...]()  # the layer test stage 1 adds, its row id bounds
    if ranges is not None:
        kept, bounds = within(ranges)
    elif keep is not None:
        with contextlib.suppress(sqlite3.OperationalError):  # statements still open: no filter
            conn.create_function("memstrata_layer_read", 1, keep)
            kept = " AND memstrata_layer_read(rowid)"
    stage1 = (
        f"SELECT rowid, bm25(docs_fts, {weights}) AS rank FROM docs_fts "
        f"WHERE docs_fts MATCH ?{kept} ORDER BY rank LIMIT ?"
    )
    stage2 = (
        # json_each + CROSS JOIN: each id looked up by the primary key (an `IN` next to
        # the scope filter made SQLite scan the scope's index instead)
        f"SELECT {_COLUMNS} FROM json_each(?) c CROSS JOIN docs d ON d.id = c.value "
        f"WHERE {' AND '.join(where)}"
    )
    depth = fetch * 4
    ranked = _Ranked(conn, stage1, (match, *bounds), STAGE1_FIRST * (depth + 1))
    read = {} if read is None else read
    rows: list[Any] = []
    try:
        for _ in range(4):
            rows = _passing(conn, stage2, params, ranked.upto(depth), fetch, read)
            if len(rows) >= fetch or (len(rows) >= k and depth >= 16 * MIN_FETCH):
                break
            if len(ranked.first(depth + 1)) <= depth:
                break  # stage 1 already saw every match
            depth *= 8
    finally:
        ranked.close()
    return rows


# Stage 1's first statement is asked for this many times the matches a first look reads
# (`fetch * 4`, and one more), times `_Ranked.WIDEN` at most: reading rows costs only those
# read (`_Ranked.upto`), but its LIMIT sizes SQLite's sorter.
STAGE1_FIRST = 8
_ALL = 1 << 40  # every match that is left


class _Ranked:
    """Stage 1's matches (rowid, bm25), best first, read only as far as asked.

    FTS5 scores every match whatever the LIMIT, so widening by asking again paid that
    again (most of a default search's cost when transcripts fill the store). One
    statement is asked for `WIDEN` times what is read first and read on when stage 1
    widens; it is asked again only past that. The first n of a longer LIMIT are the
    first n of a shorter one (SQLite's sorter keeps ties in the order FTS5 gave them).
    """

    WIDEN = 8

    def __init__(self, conn: Any, sql: str, args: tuple[Any, ...], limit: int = 0) -> None:
        self.conn, self.sql, self.args = conn, sql, args  # the MATCH and any row id bounds
        self.rows: list[Any] = []
        self.limit = 0
        self.asked = limit  # the first statement's LIMIT (at least WIDEN x the first n)
        self.cursor: Any = None
        self.ended = False  # every match read

    def upto(self, depth: int) -> Callable[[int], list[Any]]:
        """The best n matches, for any n, but never more than `depth` (`_passing` reads
        them a chunk at a time: rows past what it reads are never fetched)."""
        return lambda n: self.first(min(n, depth))

    def first(self, n: int) -> list[Any]:
        """The best `n` matches (all of them when fewer match)."""
        if len(self.rows) < n and not self.ended:
            if n > self.limit:
                self.close()
                self.limit = max(n * self.WIDEN, self.asked)
                self.asked = 0
                self.cursor = self.conn.execute(self.sql, (*self.args, self.limit))
                self.rows = []
            self.rows += self.cursor.fetchmany(n - len(self.rows))
            self.ended = len(self.rows) < n  # n <= limit: the statement had no more
        return self.rows[:n]

    def close(self) -> None:
        if self.cursor is not None:
            self.cursor.close()
            self.cursor = None


def _passing(
    conn: Any,
    stage2: str,
    params: list[Any],
    best: Callable[[int], list[Any]],
    fetch: int,
    read: dict[int, Any] | None = None,
) -> list[Any]:
    """The first `fetch` rows of `best` (rowid, bm25; best first) that pass stage 2
    (all of them if fewer pass), in that order, bm25 appended. The best `fetch` are
    read first (when none is filtered out, that is all), then as many more as the
    pass rate says are needed, until `fetch` passed or none are left. Which rows are
    read first changes the cost, never the result. `read` (rowid -> row, or None when
    it did not pass) keeps what an earlier call read: a widened stage 1 reads only the
    matches it had not seen."""
    read = {} if read is None else read
    out: list[Any] = []
    start, size = 0, fetch
    while len(out) < fetch:
        chunk = best(start + size)[start:]
        if not chunk:
            break
        ids = [rid for rid, _r in chunk if rid not in read]
        if ids:
            read.update((row[0], row) for row in conn.execute(stage2, [json.dumps(ids), *params]))
            read.update((rid, None) for rid in ids if rid not in read)
        out += [(*row, r) for rid, r in chunk if (row := read[rid]) is not None]
        start += size
        # the next read: what is still missing at the pass rate seen so far, and a half more
        size = (fetch - len(out)) * start * 3 // (2 * len(out)) + 8 if out else _ALL
    return out[:fetch]


# A row's `meta` JSON parsed once per distinct text: a hybrid search made a Hit of each of its
# ~200 candidates 2-3 times (lexical, dense, ranking); parsing was 1/10 of its CPU at 10k.
_META_KEPT = 4096
_metas: dict[str, Any] = {}


def _meta(text: str | None) -> Any:
    """`json.loads(text)` ({} for none), remembered; each caller gets its own dict."""
    if not text:
        return {}
    got = _metas.get(text)
    if got is None:
        got = json.loads(text)
        if len(_metas) >= _META_KEPT:
            _metas.clear()
        _metas[text] = got
    return dict(got) if isinstance(got, dict) else got


def _candidate(r: Any) -> Hit:
    return _hit(r, 0.0, {}, [], snippet=False)


def _hit(
    r: Any, score: float, explain: dict[str, Any], terms: list[str], *, snippet: bool = True
) -> Hit:
    meta = _meta(r[13])
    hit = object.__new__(Hit)  # what `Hit(...)` makes, without a frozen __init__'s 16 setattrs
    hit.__dict__.update(
        uid=r[1],
        layer=r[2],
        score=score,
        title=r[8],
        text=r[9],
        snippet=make_snippet(r[9] or r[8], terms) if snippet else "",
        ts=r[7],
        source=r[10],
        owner=r[3],
        room=r[4],
        kind=r[5],
        tags=tuple(r[6].split()) if r[6] else (),
        line=r[11],
        superseded=bool(r[12]),
        meta=meta,
        explain=explain,
    )
    return hit


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


def fetch(store: Searchable, uid: str) -> Hit:
    """One memory by uid, full text and metadata, through the scope filter.

    NotFound if no memory has that uid or the principal may not read it (the two
    are not told apart, so a uid reveals nothing about memory out of scope).
    """
    where, params = store.gate.sql_filter("d")
    with store.db.read() as conn:
        row = conn.execute(
            f"SELECT {_COLUMNS} FROM docs d WHERE d.uid = ? AND {where}", [uid, *params]
        ).fetchone()
    if row is None:
        raise NotFound(f"no memory with uid {uid!r} (or not visible to you)")
    return _hit(row, 0.0, {}, [])
