"""Which candidates of a scored lexical pool the priors never need to see: those that
cannot reach the places `worth.rank_pool` asks for, known before they are copied,
passed through the question rules and weighed (`engine._ranked`).

The engine's pool is the best 100 stage-1 matches that pass the filters; a recall shows
k of them. Every candidate is read, checked for exclusions (the first hit's explain
lists every excluded one) and scored (relevance is normalised to the best); what comes
after, per candidate, is most of the rest of a recall: a copy with its score, the
question rules (`with_turns` ... `with_people`), the duplicate and flushed-copy checks,
and the priors' weighing (`priors.apply_priors`). Here a candidate's worth is known
first, from what `features.remember` keeps of its record (signal, whether it asks), so
that only the candidates `search.prune` would keep reach that far:

    worth(c)   = score(c) x factor(c)        (`factor`: the weight of c's signal, then
                                              `asked` and `question` as `apply_priors`)
    P          = places + the candidates whose signal is tool or error (collapse's room);
                 places = the places `rank_pool` asks for: k when no two candidates say
                 the same (`duplicates.repeats`), else k x `worth.DUPLICATE_ROOM`
    theta      = the P-th highest worth among the candidates that are not decisions
    held back  = every candidate that is not a decision, a tool or error record or
                 bookkeeping, with worth < min((1 - newer) x theta, the lowest worth of a
                 tool or error record); and a decision below that cut that is inert:
                 `recall.replaced` is 1, or it is below 1 and the decision says it
                 replaces nothing and no other decision of the pool has its ts

Why the hits are the same, every field: `prune.contenders` of the whole pool drops every
candidate held back (its theta, over every candidate and with `recall.replaced` on the
decisions, is at least this one; its cut at least this one's), and over the rest finds
the same theta (every candidate worth theta or more is kept) and the same cut, so the
priors weigh exactly the same contenders in the same order. A held-back candidate adds
nothing to the first hit's `dropped` (it passed `worth.exclusions`, which tests the same
rules with more prompts, and no weight is 0) nor to `recall.replaced` (a decision's worth
there is at most the one here, `recall.replaced` only lowering it; one held back replaces
no other, and the others keep their order oldest first: perf21f) nor to collapse (tool
calls are kept). The question rules read the whole pool
(a prompt's turn, the best score), so nothing is held back unless none of them acts
(`worth.rules_idle`). Duplicates: a pool that repeats nothing repeats nothing once
held back, and `rank_pool` ranks its k places either way; one that repeats is held back
for k x `DUPLICATE_ROOM` places, which is all collapse reads, and `rank_pool` ranks the
whole pool (`whole`) as before when collapse runs short.

Nothing is held back when coverage weighs, a weight or factor is 0 or less, a score is
negative or not a number, `recall.newer` is 1 or more, or the pool holds P or fewer.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from memstrata.search.duplicates import repeats
from memstrata.search.features import remember
from memstrata.search.priors import (
    BOOKKEEPING,
    MD_LAYERS,
    QUESTION_CUES,
    PriorSettings,
    asked_signals,
    rank_facts,
)
from memstrata.search.prune import CLUE_SIGNALS
from memstrata.search.query import Hit, Searchable, SearchQuery, rescored
from memstrata.search.replaces import replaced_terms
from memstrata.search.text import tokenize
from memstrata.search.worth import DUPLICATE_ROOM, rules_idle


def within_reach(
    store: Searchable,
    q: SearchQuery,
    cands: Sequence[tuple[Hit, float]],
    terms: Sequence[object] | None,
    dropped: Mapping[str, str],
) -> tuple[list[Hit], Callable[[], list[Hit]] | None, bool | None]:
    """The scored candidates (hit, score; best first) as `rank_pool`'s pool: copies with
    their scores of those that can reach its places (`held_back`); the whole pool's
    copies, made when asked (None when all can reach); whether the whole pool repeats a
    line (`duplicates.repeats`; None when not known: a flushed copy is marked later)."""
    cfg = PriorSettings.from_config(store.config.recall_weights)
    near = 1.0 - cfg.newer if terms and cfg.newer > 0 else 1.0
    hits = [h for h, _s in cands]
    repeating = _repeating(hits) if store.config.duplicates else False
    held = held_back(
        hits,
        [s for _h, s in cands],
        q.text,
        cfg,
        places=q.k if repeating is False else q.k * DUPLICATE_ROOM,
        near=near,
        idle=lambda: rules_idle(q, hits, dropped, store),
    )
    pooled = [rescored(h, s, {}) for n, (h, s) in enumerate(cands) if n not in held]
    if not held:
        return pooled, None, repeating
    return pooled, lambda: [rescored(h, s, {}) for h, s in cands], repeating


def _repeating(hits: Sequence[Hit]) -> bool | None:
    """`repeats(hits)`, what `rank_pool` asks of the pool to rank k places, not k x
    `DUPLICATE_ROOM`; None when a flushed copy's text is marked before it is asked
    (`worth.flushed_copies`): its marked text could repeat another's."""
    if any(h.layer in MD_LAYERS and "memory flush)" in h.title for h in hits):
        return None
    return repeats(hits)


def held_back(
    pool: Sequence[Hit],
    scores: Sequence[float],
    query: str,
    cfg: PriorSettings,
    *,
    places: int,
    near: float,
    idle: Callable[[], bool],
) -> set[int]:
    """The positions in `pool` (the candidates, `scores` their scores) that cannot reach
    the first `places` places (module doc); empty when that cannot be known. `near`:
    1 - `recall.newer` when the near-tie pass runs, else 1; `idle`: whether no question
    rule acts on this pool (asked last: it reads the pool)."""
    if near <= 0.0 or cfg.coverage > 0 or not _positive(cfg):
        return set()
    factor = _factors(query, cfg)
    factors: dict[tuple[str, str | None, bool], float] = {}  # per signal, states and asks
    worth: list[float] = []
    keep: list[bool] = []
    clues: list[float] = []
    weighed: list[float] = []  # the worths of the candidates that are not decisions
    inert: list[int] = []  # the decisions that replace nothing (`_inert`)
    stamps: Counter[float] = Counter()  # the decisions' ts
    for hit, score in zip(pool, scores, strict=True):
        if not score >= 0.0:  # negative or NaN: the order of the bounds is not known
            return set()
        _meta, bookkeeping, signal, asks = remember(hit, "rank", rank_facts)
        of = (signal.name, signal.states, asks)
        f = factors.get(of)
        if f is None:
            f = factors[of] = factor(*of)
        value = score * f
        if signal.name in CLUE_SIGNALS:
            clues.append(value)
        if signal.name == "decision":
            stamps[hit.ts] += 1
            if cfg.replaced == 1.0 or not remember(hit, "replaces", replaced_terms):
                inert.append(len(worth))
        else:
            weighed.append(value)
        worth.append(value)
        keep.append(
            signal.name in CLUE_SIGNALS
            or signal.name == "decision"
            or signal.name == BOOKKEEPING
            or bookkeeping is not None
        )
    top = places + len(clues)
    if len(weighed) <= top:
        return set()
    cut = near * heapq.nlargest(top, weighed)[-1]
    if clues:
        cut = min(cut, min(clues))
    out = {n for n, (v, k) in enumerate(zip(worth, keep, strict=True)) if not k and v < cut}
    more = [n for n in inert if worth[n] < cut and _inert(pool[n], stamps, cfg.replaced)]
    if len(pool) - len(out) - len(more) > top:  # else the priors would weigh all that is left
        out.update(more)
    if not out or len(pool) - len(out) <= top or not idle():
        return set()
    return out


def _inert(decision: Hit, stamps: Counter[float], replaced: float) -> bool:
    """Whether holding `decision` back changes no other decision's `recall.replaced`:
    no decision is demoted (`replaced` 1), or it replaces nothing and no other decision
    of the pool has its ts (`priors.replaced_decisions` reads the decisions oldest first,
    one ts's in file order: taking one out of a run of ties could reorder the others)."""
    return replaced == 1.0 or (replaced < 1.0 and stamps[decision.ts] == 1)


def _positive(cfg: PriorSettings) -> bool:
    factors = (cfg.asked, cfg.question, cfg.replaced)
    return all(f > 0 for f in factors) and all(float(w) > 0 for w in cfg.weights.values())


def _factors(query: str, cfg: PriorSettings) -> Callable[[str, str | None, bool], float]:
    """A candidate's prior factor before `recall.replaced` and coverage, from its signal,
    what it states and whether it asks: `priors.apply_priors`'s rules, in its order."""
    asked = asked_signals(query)
    asks_questions = bool(set(tokenize(query)) & QUESTION_CUES)
    ask_factor = cfg.asked != 1.0
    question = cfg.question != 1.0 and not asks_questions
    weights = cfg.weights

    def factor(name: str, states: str | None, asks: bool) -> float:
        f = float(weights.get(name, 1.0))
        if ask_factor and (name in asked or states in asked):
            f *= cfg.asked
        if question and asks:
            f *= cfg.question
        elif asks and asks_questions and ask_factor:
            f *= cfg.asked
        return f

    return factor
