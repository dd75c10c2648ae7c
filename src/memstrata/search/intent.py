"""What a question asks for beyond its words: open work, blockers; and prompts that say nothing.

**Open work.** "What's still open before we can call this shipped?" and "Is anything stuck
waiting on something outside our control?" are answered by the task state (the tasks not
done, their status and blockers), whose words they do not share: a task reads "Hand the
model and the mel parameters to the app team", its status is a field. A question that asks
what is open, left, remaining, pending or outstanding (`OPEN_WORDS`), or what is blocked,
stuck or waiting (`BLOCKED_WORDS`), is asked of the task state:

    asked(q)     = "blocked" when q holds a BLOCKED word, else "open" when it holds an
                   OPEN word, else nothing (`asked_work`)
    work(q)      = the tasks q may see that are not done or cancelled; for "blocked",
                   those blocked or waiting on a task not done; best first: blocked
                   ones first for "blocked", then in progress, then by priority, newer
    score(t)     = max(score(t), share x best x (1 - STEP x i))   i = t's place in work(q)

`share` is `[recall] open_work` (0 turns it off), `best` the best score of the pool. A task
not yet in the pool joins it (at most `TASKS`); its priors apply as to any task (the
question's open-work words ask for the `task` signal: `priors.ASKED_WORDS`). `explain`
says why (`open_work`). Only when the query has no kind, tag or room filter and may read
the task layer; scope and since/until are the store's as everywhere (`search.filters`).

**Bare prompts.** A user's prompt with no content ("continue", "ok go on", "yes", "ignore
memory for this one") answers nothing: it is never a hit (`bare_prompt`, applied with the
exclusions of `search.worth`). A prompt is bare when every word of it is a stopword or a
word of going on (`GO_ON_WORDS`), or, for a prompt that asked to leave memory out (the
prompt hook's `ignore_memory`, or said so in a transcript), of that request
(`IGNORE_WORDS`). "Ignore memory, unrelated: how do I check GPU usage?" keeps its question.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from memstrata.search.filters import filters
from memstrata.search.priors import BLOCKED_WORK_WORDS, OPEN_WORK_WORDS, is_intent
from memstrata.search.query import Hit, Searchable, SearchQuery
from memstrata.search.text import STOPWORDS, tokenize
from memstrata.search.toolcalls import log_metadata
from memstrata.search.turns import _COLUMNS, _hit

TASKS = 5  # open tasks an open-work question may add to the pool
STEP = 0.02  # each next task of the work list scores this share less
OPEN_WORDS = frozenset(f"{OPEN_WORK_WORDS} todo todos".split())
BLOCKED_WORDS = frozenset(BLOCKED_WORK_WORDS.split())
NOT_OPEN = ("done", "cancelled")
_STATE_ONLY = frozenset({"open", "left"})  # also verbs: a state only next to these words
_BEFORE = "still is are was were be stay stays remain remains anything everything something"
_AFTER = "task tasks item items issue issues work question questions point points ticket tickets"
_CONTRACTED = "what that there it here who which nothing something anything"
_STATE_BEFORE = frozenset(f"{_BEFORE} what nothing much".split())
_IS_CONTRACTED = frozenset(_CONTRACTED.split())  # "what's" is "what is"; "Madrid's" is not
_STATE_AFTER = frozenset(
    f"{_AFTER} todo todos bug bugs thread threads loop loops end ends to".split()
)
# Going on, agreeing, thanking: a prompt of these words and stopwords says nothing.
_GO_ON = (
    "continue continuing resume proceed carry keep going go ahead next on ok okay k yes yeah "
    "yep yup sure please pls thanks thank ty fine alright right good great cool nice perfect "
    "sounds lgtm agreed agree correct exactly done let lets"
)
_IGNORE = (
    "ignore ignoring skip forget without use using memory memories notes context one time "
    "turn unrelated fresh new start"
)
GO_ON_WORDS = frozenset(_GO_ON.split())
IGNORE_WORDS = frozenset(_IGNORE.split())  # a request to leave memory out, for this turn
_IGNORE_SAID = re.compile(
    r"\b(?:ignore|skip|forget|without|don'?t use|do not use)\b.{0,20}\b(?:memory|memories|notes)\b",
    re.I,
)


def asked_work(text: str) -> str | None:
    """ "blocked" or "open" when a question asks about the work not done, else None.

    Example:
        >>> asked_work("What's still open before we can call this shipped?")
        'open'
        >>> asked_work("Is anything stuck waiting on something outside our control?")
        'blocked'
        >>> asked_work("Which database do we use?") is None
        True
        >>> asked_work("How does the outline open?") is None
        True
        >>> asked_work("What went wrong when we pulled Madrid's open data?") is None
        True
    """
    tokens = tokenize(text)
    if set(tokens) & BLOCKED_WORDS:
        return "blocked"
    for n, w in enumerate(tokens):
        if w in OPEN_WORDS and (w not in _STATE_ONLY or _as_state(tokens, n)):
            return "open"
    return None


def _as_state(tokens: list[str], n: int) -> bool:
    """ "open" and "left" say what is not done only as a state ("what's still open", "is
    anything left", "open tasks"), not as a verb ("how does the outline open?", "we
    left W&B")."""
    before = tokens[n - 1] if n else ""
    after = tokens[n + 1] if n + 1 < len(tokens) else ""
    if before == "s":  # "what's open", not "Madrid's open data"
        before = "is" if n > 1 and tokens[n - 2] in _IS_CONTRACTED else ""
    return before in _STATE_BEFORE or after in _STATE_AFTER


def bare_prompt(hit: Hit) -> str | None:
    """Why a user's prompt says nothing a question could be answered by, or None.

    Example:
        >>> h = Hit("log:1", "log", 1.0, "USER_FEEDBACK", "ok, go on", "", 0.0, "LOG.md",
        ...         kind="USER_FEEDBACK", meta={"entry_type": "USER_FEEDBACK",
        ...         "metadata": {"event": "user_intent"}})
        >>> bare_prompt(h)
        "a bare prompt ('ok, go on')"
    """
    prompt = is_intent(hit) or (hit.layer == "session" and hit.kind == "user")
    if not prompt:
        return None
    words = set(tokenize(hit.text))
    if len(words) > 12:
        return None
    said = words - STOPWORDS - GO_ON_WORDS
    ignoring = log_metadata(hit).get("ignore_memory") is True or bool(_IGNORE_SAID.search(hit.text))
    if ignoring:
        said -= IGNORE_WORDS
    if said:
        return None
    return f"a bare prompt ({' '.join(hit.text.split())[:40]!r})"


def with_open_work(
    store: Searchable,
    q: SearchQuery,
    pool: Sequence[Hit],
    dropped: Mapping[str, str],
    share: float,
) -> list[Hit]:
    """`pool` with the task state lifted for a question about open work (module doc)."""
    asked = asked_work(q.text) if share > 0 else None
    if asked is None or q.kind is not None or q.tags or q.rooms or q.in_room:
        return list(pool)
    if q.layers and "task" not in q.layers:
        return list(pool)
    # no other candidate (no word of the question is in memory): the task state alone
    best = max((h.score for h in pool if h.uid not in dropped), default=1.0)
    if best <= 0:
        return list(pool)
    work = _work(store, q, asked)
    if not work:
        return list(pool)
    by_uid = {h.uid: h for h in pool}
    lifted: dict[str, Hit] = {}
    for i, (task, why) in enumerate(work):
        score = share * best * (1.0 - STEP * i)
        have = by_uid.get(task.uid)
        if have is not None and have.score >= score:
            continue
        base = have if have is not None else task
        explain = {
            **base.explain,
            "open_work": {"asked": asked, "why": why, "share": share, "key": "recall.open_work"},
            "own_score": round(base.score, 6),
        }
        lifted[task.uid] = base.but(score=score, explain=explain)
    out = [lifted.pop(h.uid, h) for h in pool]
    return out + list(lifted.values())


def _work(store: Searchable, q: SearchQuery, asked: str) -> list[tuple[Hit, str]]:
    """The tasks not done that `q` may see, best first, each with why it is open work."""
    where, params = filters(store, q)
    where += ["d.layer = 'task'", f"d.kind NOT IN ({', '.join('?' for _ in NOT_OPEN)})"]
    with store.db.read() as conn:
        rows = conn.execute(
            f"SELECT {_COLUMNS} FROM docs d WHERE {' AND '.join(where)} ORDER BY d.ts DESC",
            [*params, *NOT_OPEN],
        ).fetchall()
        tasks = [_hit(r) for r in rows]
        done = _finished(conn, tasks)
    ranked: list[tuple[tuple[Any, ...], Hit, str]] = []
    for n, t in enumerate(tasks):
        status = t.kind or "pending"
        waiting = [b for b in _blocked_by(t) if b not in done]
        blocked = status == "blocked" or bool(waiting)
        if asked == "blocked" and not blocked:
            continue
        why = f"task {status}" + (f", waiting on {', '.join(waiting)}" if waiting else "")
        order = (
            0 if blocked or asked == "open" else 1,
            0 if status == "in_progress" else 1,
            _priority(t),
            n,  # newer first
        )
        ranked.append((order, t.but(explain={"task_status": status}), why))
    ranked.sort(key=lambda x: x[0])
    return [(t, why) for _o, t, why in ranked[:TASKS]]


def _blocked_by(task: Hit) -> list[str]:
    found = task.meta.get("blocked_by") or task.meta.get("blockers") or []
    return [str(b) for b in found] if isinstance(found, list) else []


def _priority(task: Hit) -> int:
    p = task.meta.get("priority")
    return p if isinstance(p, int) and not isinstance(p, bool) else 99


def _finished(conn: Any, tasks: Sequence[Hit]) -> set[str]:
    """The ids among the tasks' blockers that are done or cancelled (tasks of the same owner)."""
    wanted = {(t.owner, b) for t in tasks for b in _blocked_by(t)}
    if not wanted:
        return set()
    uids = [f"task:{owner}:{b}" for owner, b in wanted]
    rows = conn.execute(
        "SELECT d.title FROM json_each(?) c CROSS JOIN docs d ON d.uid = c.value "
        f"WHERE d.kind IN ({', '.join('?' for _ in NOT_OPEN)})",
        [json.dumps(uids), *NOT_OPEN],
    ).fetchall()
    return {str(r[0]) for r in rows}


__all__ = ["asked_work", "bare_prompt", "with_open_work"]
