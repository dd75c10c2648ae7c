"""The priors' inputs from the store, and their one call site (`rank_pool`).

    candidates - exclusions -> relevance (engine / hybrid) -> rank_pool: worth, collapse -> top k

Both the lexical and the hybrid path take `exclusions` out of their candidates before they
normalise relevance, and hand their whole scored pool (more than k candidates) to
`rank_pool` right before the cut to k, so every read surface (CLI, MCP, HTTP, web, the
Python API) ranks alike. The ranking itself is `search.priors` (pure);
this module reads what it needs from the store: the `[recall]` weights, and the prompt
being asked.

The prompt being asked: the UserPromptSubmit hook logs each prompt as an intent
(USER_FEEDBACK, `event: user_intent`) and the Stop hook logs the turn's final response
(`event: final_response`). An agent's newest LOG entry of either kind, when it is an
intent, is the prompt the agent is answering now: it never answers itself, whatever
words the agent searches with. Intents of finished turns stay searchable (at the
`intent` weight), except one with the query's own words.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from memstrata.index import overview
from memstrata.model import RECORD_KINDS, LedgerEntry
from memstrata.search.copies import Flushed, Said, flushed_state
from memstrata.search.coverage import QueryTerm, idf
from memstrata.search.duplicates import collapse_duplicates, repeats
from memstrata.search.durations import asks_duration, with_durations
from memstrata.search.failures import asks_about_failure, with_failures
from memstrata.search.features import remember
from memstrata.search.fixes import asks_fix, with_fixes
from memstrata.search.frames import topic_terms
from memstrata.search.intent import asked_work, bare_prompt, with_open_work
from memstrata.search.people import asks_who, with_people
from memstrata.search.pointers import points_to, with_pointed
from memstrata.search.priors import (
    LEDGER_SIGNALS,
    MD_LAYERS,
    PriorSettings,
    apply_priors,
    excluded_by,
    is_intent,
    rank_facts,
    words_of,
)
from memstrata.search.query import Hit, Searchable, SearchQuery
from memstrata.search.questions import asks_only, with_questions_below
from memstrata.search.reasons import asks_reason, with_reasons
from memstrata.search.resolutions import with_resolutions
from memstrata.search.restated import restating, with_restated
from memstrata.search.terms import stems
from memstrata.search.turns import with_turns

DUPLICATE_ROOM = 3  # hits ranked per hit shown, before duplicates are collapsed


def exclusions(store: Searchable, q: SearchQuery, candidates: Sequence[Hit]) -> dict[str, str]:
    """The candidates that are never a hit for `q` (uid -> why): bookkeeping, the question
    being asked, superseded records (`priors.excluded`).

    The paths take them out of the pool before relevance is normalised: a record that is
    never shown must not be the yardstick of the others (the prompt just logged holds every
    word of the question and would otherwise make every real answer look weak, or drop it
    under the floor of `engine.MIN_RELEVANCE`).
    """
    prompts = open_prompts(store, candidates)
    out = excluded_from(candidates, q.text, prompts, include_superseded=q.include_superseded)
    for h in candidates:
        # `bare_prompt` reads only prompts (kind USER_FEEDBACK or a transcript's user)
        if (h.kind == "USER_FEEDBACK" or h.kind == "user") and h.uid not in out:
            why = bare_prompt(h)  # "continue", "ok go on": never a hit (`search.intent`)
            if why is not None:
                out[h.uid] = why
    if not q.include_superseded:
        for uid, state in flushed_copies(store, candidates).items():
            if state.all_replaced and uid not in out:
                out[uid] = f"a flushed copy of what {', '.join(state.replaced_by)} replaced"
    return out


def excluded_from(
    hits: Iterable[Hit], query: str, open_prompts: Iterable[str] = (), *, include_superseded: bool
) -> dict[str, str]:
    """`priors.excluded` of each of `hits` (uid -> why, the excluded ones), the query read once."""
    said, prompts, out = words_of(query), set(open_prompts), {}
    for hit in hits:
        meta, bookkeeping, _signal, _asks = remember(hit, "rank", rank_facts)
        why = excluded_by(hit, meta, bookkeeping, said, prompts, include_superseded)
        if why is not None:
            out[hit.uid] = why
    return out


def rank_pool(
    store: Searchable,
    q: SearchQuery,
    pool: Sequence[Hit],
    dropped: Mapping[str, str] | None = None,
    *,
    terms: Sequence[QueryTerm] | None = None,
    whole: Callable[[], Sequence[Hit]] | None = None,
    repeating: bool | None = None,
) -> list[Hit]:
    """The top `q.k` of the pool by worth, after exclusions and collapse
    (`priors.apply_priors`), a hit repeating a better one's title and text shown once
    (`search.duplicates`, `[search] duplicates`). `dropped`: what `exclusions` already
    took out of the pool (shown in the first hit's explain); None: find them here.
    `terms`: `query_terms_of(store, q.text)` when the caller already read them.
    `whole`: the whole pool, when `pool` is the part of it that can reach the first
    `q.k x DUPLICATE_ROOM` places (`search.reach`): ranked when collapse runs short.
    `repeating`: whether the whole pool repeats a line (`repeats`), when the caller knows."""
    settings = PriorSettings.from_config(store.config.recall_weights)
    if dropped is None:
        dropped = exclusions(store, q, pool)
    pool = with_turns(store, q, pool, dropped)  # a turn's conclusions share its prompt's score
    pool = with_failures(store, q, pool, dropped)  # a failed call's ERROR shares its score
    pool = with_open_work(store, q, pool, dropped, settings.open_work)  # "what's still open?"
    pool = with_durations(q.text, pool)  # "how long ...?": the records that state a duration
    pool = with_reasons(q.text, pool)  # "why ...?": the records that state a reason
    pool = with_resolutions(store, q, pool, dropped)  # "how did we get past it?": after its error
    pool = with_fixes(q.text, pool)  # "what fixed it?": the records that say they fixed it
    pool = with_people(q.text, pool)  # "who ...?": the records that name a person
    pool = with_pointed(store, q, pool, dropped)  # "... is in the rds_class fact": the fact
    pool = with_restated(store, q, pool, dropped)  # a fact updated since a record stated it
    pool = with_questions_below(pool, settings.question)  # a user's earlier question
    if not pool:
        return []
    kept = _kept(store, pool, dropped)
    if not (settings.coverage or settings.newer):
        terms = ()
    elif terms is None:
        terms = query_terms_of(store, q.text)

    def ranked(limit: int | None) -> list[Hit]:
        return apply_priors(
            kept,
            q.text,
            settings,
            include_superseded=q.include_superseded,
            limit=limit,
            dropped=dropped,
            terms=terms,
        )

    if not store.config.duplicates or not (repeats(kept) if repeating is None else repeating):
        # No two candidates say the same (most pools): collapse would take nothing out of
        # `ranked(room)` and name nothing, and its first k are `ranked(k)`'s, every field
        # (`search.prune`), which weighs fewer contenders.
        return scores_in_rank_order(ranked(q.k))
    room = q.k * DUPLICATE_ROOM  # ranked before the duplicates are taken out
    hits = ranked(room)
    shown = collapse_duplicates(hits, q.k)
    if len(shown) < q.k and len(hits) >= room:  # ran short: the whole pool
        if whole is not None:  # the rules are idle on it (`search.reach`)
            kept = _kept(store, whole(), dropped)
        shown = collapse_duplicates(ranked(None), q.k)
    return scores_in_rank_order(shown)


def _kept(store: Searchable, pool: Sequence[Hit], dropped: Mapping[str, str]) -> list[Hit]:
    """The pool without what was dropped, flushed copies marked (`flushed_copies`)."""
    kept = [h for h in pool if h.uid not in dropped]
    marked = flushed_copies(store, kept)
    if marked:
        kept = [_marked(h, marked[h.uid]) if h.uid in marked else h for h in kept]
    return kept


def rules_idle(
    q: SearchQuery,
    pool: Sequence[Hit],
    dropped: Mapping[str, str],
    store: Searchable | None = None,
) -> bool:
    """Whether none of `rank_pool`'s question rules acts on `pool` (each returns it as it
    is): no prompt whose turn could be read, and a query that asks none of the things
    the others answer. False whenever one of them might act; without the `store`, whenever
    `with_restated` (which reads the store's updated facts) might."""
    if any(h.kind == "USER_FEEDBACK" and is_intent(h) and h.uid not in dropped for h in pool):
        return False  # `with_turns` reads the turns of the pool's best prompts
    if any(h.layer == "now" and asks_only(h) and h.uid not in dropped for h in pool):
        return False  # `with_questions_below`: NOW.md restating a prompt that only asks
    if points_to(q, pool, dropped):
        return False  # `with_pointed` lifts the facts the pool's best records name
    text = q.text
    if (
        asks_about_failure(text)
        or asked_work(text) is not None
        or asks_duration(text)
        or asks_reason(text)
        or asks_fix(text)
        or asks_who(text)
    ):
        return False
    # last, as it reads the store: `with_restated` lifts a fact updated since a good
    # record stated it
    return store is not None and not restating(store, q, pool, dropped)


def scores_in_rank_order(hits: list[Hit]) -> list[Hit]:
    """A hit ranked above another shows at least its score. `recall.newer` moves a newer
    record above older near-ties without changing its worth, so a list read 0.81 at rank 1
    and 0.99 at rank 2; the moved hit now shows the score of the best one it passed (at
    most `newer` more than its worth), its worth kept in explain (`worth`)."""
    for n in range(len(hits) - 2, -1, -1):
        below = hits[n + 1].score
        if hits[n].score < below:
            h = hits[n]
            explain = {**h.explain, "worth": round(h.score, 6), "score": round(below, 6)}
            explain["shown_as"] = "the score of the hit it was ranked above (recall.newer)"
            hits[n] = h.but(score=below, explain=explain)
    return hits


def query_terms_of(store: Searchable, text: str) -> list[QueryTerm]:
    """The query's content words with their FTS5 stems and IDF over the whole index
    (`search.coverage`); a word no document holds is left out (nothing can cover it)."""
    words = topic_terms(text)  # without the words that frame it (`search.frames`)
    if not words:
        return []
    by_word = stems(words)
    out: list[QueryTerm] = []
    with store.db.read() as conn:
        total = int(conn.execute("SELECT coalesce(max(id), 0) FROM docs").fetchone()[0])
        large = total > store.config.postings_budget  # as the engine counts (cached)
        for w in words:
            dfs = [store.df_cache.df(conn, t, total) if large else _df(conn, t) for t in by_word[w]]
            if dfs and min(dfs) > 0:
                out.append(QueryTerm(w, tuple(by_word[w]), idf(min(dfs), total)))
    return out


def _df(conn: Any, term: str) -> int:
    row = conn.execute("SELECT doc FROM docs_vocab WHERE term = ?", (term,)).fetchone()
    return int(row[0]) if row else 0


def open_prompts(store: Searchable, pool: Sequence[Hit]) -> set[str]:
    """The uids of the intents in `pool` that are their agent's prompt being answered now."""
    owners = sorted(
        {h.owner for h in pool if h.kind == "USER_FEEDBACK" and h.owner and is_intent(h)}
    )
    if not owners:
        return set()
    scope_sql, params = store.gate.sql_filter("d")
    event = "json_extract(d.meta, '$.metadata.event')"
    sql = (
        f"SELECT d.uid, {event} FROM docs d WHERE d.owner = ? AND d.layer = 'log' "
        f"AND d.kind IN ('USER_FEEDBACK', 'SYSTEM') AND {event} IN ('user_intent', "
        f"'final_response') AND {scope_sql} ORDER BY d.ts DESC, d.id DESC LIMIT 1"
    )
    found: set[str] = set()
    with store.db.read() as conn:
        for owner in owners:
            row = conn.execute(sql, [owner, *params]).fetchone()
            if row is not None and row[1] == "user_intent":
                found.add(str(row[0]))
    return found


def flushed_copies(store: Searchable, hits: Sequence[Hit]) -> dict[str, Flushed]:
    """The "(memory flush)" sections among `hits` that hold an item a newer record
    replaced (`search.copies.flushed_state`): uid -> the section as recall shows it. A
    copy never outlives the record it copies, in recall as in the context (issue 19)."""
    sections = [h for h in hits if h.layer in MD_LAYERS and "memory flush)" in h.title]
    if not sections:
        return {}
    records = decision_records(store)
    out: dict[str, Flushed] = {}
    for h in sections:
        state = flushed_state(h.title, h.text, records)
        if state is not None and state.replaced_by:
            out[h.uid] = state
    return out


def decision_records(store: Searchable) -> list[Said]:
    """Every decision, constraint and preference (and the ledger's rules: conventions,
    warnings) the principal reads, in force or replaced, as `search.copies` reads them
    (what `layers.decisions`'s history gives `lifecycle.flushed`, from the index)."""
    rules = [k for k, signal in LEDGER_SIGNALS.items() if signal == "constraint"]
    kinds = [k for k in (*RECORD_KINDS, *rules) if k in set(store.config.kinds) | set(RECORD_KINDS)]
    found = overview.ledger_records(
        store.db, store.gate, kinds, store.gate.principal.room, live=False
    )
    entries = [LedgerEntry.from_dict(r) for r in found]
    after = {e.supersedes: e.id for e in entries if e.supersedes}
    return [
        Said(e.id, f"{e.summary} {e.detail or ''}".strip(), after.get(e.id), e.ts) for e in entries
    ]


_ITEM_HEAD = re.compile(r"^- (Decision|Constraint|Preference) \(replaced by ([^)]+)\): (.{1,40})")


def _marked(hit: Hit, state: Flushed) -> Hit:
    """`hit` with its text (and snippet) showing the replaced items as replaced."""
    snippet = hit.snippet
    for line in state.text.split("\n"):
        m = _ITEM_HEAD.match(line)
        if m is not None and snippet:
            label, by, start = m.groups()
            snippet = snippet.replace(
                f"- {label}: {start}", f"- {label} (replaced by {by}): {start}"
            )
    explain = {**hit.explain, "flushed_replaced_by": list(state.replaced_by)}
    return hit.but(text=state.text, snippet=snippet, explain=explain)
