"""A turn's conclusions answer what its prompt asked: relevance shared along a LOG turn.

A user's prompt and what the agent wrote while answering it are one exchange: the prompt
hook logs the prompt (USER_FEEDBACK, `event: user_intent`), the agent logs its notes,
errors and decisions, and the Stop hook logs the final response (`event:
final_response`). The prompt names the subject in the user's words; the records after it
often do not ("The stream went silent at 06:10 this morning." is answered by "Prometheus
... filled the 40 GB root disk" and "The root disk was full", which share no word and
little meaning with a later "What made the broadcast go silent on the 13th?"). A search
that finds the prompt has found the exchange, so its answer is a candidate too:

    turn(p)      = the LOG entries after prompt p in p's LOG file (or archive), up to and
                   including the final response that closed it; a next prompt ends it,
                   and so does an entry of another session (a session that ended with
                   no final response: the next one's records are not its answer)
    members      = the entries of turn(p) that carry content: not tool traces
                   (TOOL_USE), not another prompt; and, when the turn has ended, what
                   p's agent recorded outside the LOG while answering it: its ledger
                   records (`record_decision`) and facts (`save_fact`) written from p's
                   time to the entry that ended the turn
    score(m)     = max(score(m), SHARE x score(p) + TIE x own(m))   for p among the
                   pool's prompts that score at least PROMPT_FLOOR x the pool's best (at
                   most PROMPTS of them); own(m) is m's own score in the pool (0 when
                   it joins), so members lifted alike keep their own order rather than
                   newest first (mobile-fernway "how do hotfixes reach ppl w/o a store
                   review": the EAS Update decision was recorded in the ledger 15 s
                   after the prompt "how do we push hotfixes w/o waiting on store review")

A member not yet in the pool joins it with that score (its priors and exclusions then
apply as to any candidate). `explain` names the prompt (`turn_of`) and the share.
Only the LOG's own layers, the ledger and the facts take part, and only when the query
has no kind, tag or room filter; scope, superseded and since/until are the store's as everywhere.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from memstrata.search.filters import filters
from memstrata.search.priors import is_intent
from memstrata.search.query import Hit, Searchable, SearchQuery
from memstrata.search.toolcalls import LOG_LAYERS

TIE = 0.01  # members lifted alike keep the order of their own scores
SHARE = 0.6  # a member's score: this share of its prompt's, when that is more than its own
PROMPT_FLOOR = 0.5  # a prompt shares only when it scores at least this x the best of the pool
PROMPTS = 3  # prompts of one pool whose turns are read
SCAN = 80  # entries read after a prompt at most
MAX_WORDS = 30  # a longer prompt covers several subjects: its turn is not about one of them
_COLUMNS = (
    "d.uid, d.layer, d.owner, d.room, d.kind, d.tags, d.ts, d.title, d.body, d.source, d.line,"
    " d.superseded, d.meta"
)


def with_turns(
    store: Searchable, q: SearchQuery, pool: Sequence[Hit], dropped: Mapping[str, str]
) -> list[Hit]:
    """`pool` with the members of its best prompts' turns lifted to SHARE x the prompt's
    score (`turn_of` in their explain); members not in the pool join it."""
    if not pool or q.kind is not None or q.tags or q.rooms or q.in_room or q.exclude_room:
        return list(pool)
    asked = [h for h in pool if is_intent(h) and h.uid not in dropped]
    if not asked:  # no prompt in the pool (most): nothing to lift
        return list(pool)
    best = max(h.score for h in pool)
    prompts = sorted(
        (h for h in asked if h.score >= PROMPT_FLOOR * best and len(h.text.split()) <= MAX_WORDS),
        key=lambda h: -h.score,
    )[:PROMPTS]
    if not prompts:
        return list(pool)
    by_uid = {h.uid: h for h in pool}
    lifted: dict[str, Hit] = {}
    for p in prompts:
        share = SHARE * p.score
        for m in _members(store, q, p):
            have = lifted.get(m.uid) or by_uid.get(m.uid)
            if have is not None and have.score >= share:
                continue
            base = have if have is not None else m
            explain = dict(base.explain)
            explain.update(
                {"turn_of": p.uid, "turn_share": SHARE, "own_score": round(base.score, 6)}
            )
            own = by_uid[m.uid].score if m.uid in by_uid else 0.0
            lifted[m.uid] = base.but(score=share + TIE * own, explain=explain)
    if not lifted:
        return list(pool)
    out = [lifted.pop(h.uid, h) for h in pool]
    return out + list(lifted.values())


def _members(store: Searchable, q: SearchQuery, prompt: Hit) -> list[Hit]:
    """The content entries of `prompt`'s turn that `q` may see, in order."""
    layers = q.layers
    if layers and prompt.layer not in layers:
        return []
    where, params = filters(store, q)  # a turn is filtered as any search of `q` is
    where += ["d.layer = ?", "d.thread = ?", "d.pos > ?"]
    with store.db.read() as conn:
        at = conn.execute("SELECT thread, pos FROM docs WHERE uid = ?", (prompt.uid,)).fetchone()
        if at is None or at[0] is None or at[1] is None:
            return []
        rows = conn.execute(
            f"SELECT {_COLUMNS} FROM docs d WHERE {' AND '.join(where)} ORDER BY d.pos LIMIT ?",
            [*params, prompt.layer, at[0], at[1], SCAN],
        ).fetchall()
    out: list[Hit] = []
    end: Hit | None = None
    session = _inner(prompt).get("session")
    for r in rows:
        h = _hit(r)
        other = _inner(h).get("session")
        if is_intent(h) or (session and other and other != session):
            end = h  # the next prompt, or an entry of another session: the turn has ended
            break
        if h.kind != "TOOL_USE":
            out.append(h)
        if _event(h) == "final_response":
            end = h
            break
    if end is not None and prompt.owner:
        out += _recorded(store, q, prompt, end)
    return out


def _recorded(store: Searchable, q: SearchQuery, prompt: Hit, end: Hit) -> list[Hit]:
    """The ledger records (decisions, rules, ...) the prompt's agent published during its
    turn: after the prompt, before the entry that ended the turn (`record_decision` writes
    to the ledger, not the LOG)."""
    where, params = filters(store, q)
    where += [
        "((d.layer = 'ledger' AND json_extract(d.meta, '$.author_role') = ?)"
        " OR (d.layer = 'fact' AND d.owner = ?))",
        "d.ts >= ?",
        "d.ts <= ?" if _event(end) == "final_response" else "d.ts < ?",
    ]
    with store.db.read() as conn:
        rows = conn.execute(
            f"SELECT {_COLUMNS} FROM docs d WHERE {' AND '.join(where)} ORDER BY d.ts LIMIT ?",
            [*params, prompt.owner, prompt.owner, prompt.ts, end.ts, SCAN],
        ).fetchall()
    return [_hit(r) for r in rows]


def _inner(h: Hit) -> dict[str, Any]:
    inner = h.meta.get("metadata") if h.layer in LOG_LAYERS else None
    return inner if isinstance(inner, dict) else {}


def _event(h: Hit) -> str | None:
    event = _inner(h).get("event")
    return event if isinstance(event, str) else None


def _hit(r: Any) -> Hit:
    return Hit(
        uid=r[0],
        layer=r[1],
        score=0.0,
        title=r[7],
        text=r[8],
        snippet="",
        ts=r[6],
        source=r[9],
        owner=r[2],
        room=r[3],
        kind=r[4],
        tags=tuple(r[5].split()) if r[5] else (),
        line=r[10],
        superseded=bool(r[11]),
        meta=json.loads(r[12]) if r[12] else {},
        explain={"turn_member": True},
    )
