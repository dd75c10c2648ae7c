"""A user's earlier question is not an answer: it ranks below the records that state one.

The prompt being asked never answers itself (`priors.excluded_by`); the user's earlier
prompts stay searchable, at the `intent` weight, and a record that asks weighs `question`
(`priors._asks`). Still, a question the user asked minutes before holds the words of the
next one and little else: renovation-ashgrove q-forecast ("Where are we against the money,
last time you added it all up?") ranked "How much money do we have for the whole job
now?", asked earlier that evening, 3rd (relevance 1.0, the pool's best, x 0.5 x 0.5),
above the reply that gave the forecast; three more of the user's questions followed. A
prompt that only asks states nothing a later question could want, and its turn's answer
is already found through it (`search.turns` lends the prompt's relevance to what the
agent wrote while answering). So:

    asks_only(p) = p is a user's prompt (an intent the prompt hook or AgentLoop logged),
                   or NOW.md's "Task complete: <prompt>" that restates one at the turn's
                   end (`AgentLoop`; renovation-ashgrove q-forecast ranked such a NOW,
                   the earlier question again, as an `intent`), and every sentence of
                   the prompt is a question: "How much ... now?"; not "The sheet went
                   strange after we cut the loft. What was wrong with it?", which says
                   what happened
    score(p)     = score(p) x question       (`recall.question`, once more than the
                                              priors' factor for a record that asks)

Demoted, never hidden: with the defaults a prompt that only asks is worth an eighth of its
relevance (intent 0.5 x question 0.5 x 0.5). On the fourteen dev scenarios of `bench
agent` no answer-bearing record is such a prompt (docs/bench-agent.md, plan19m). Applied
to the pool after the question rules (which read the prompts' own scores) and before the
priors; `explain`: `only_asks` (the factor). Pure function over `Hit` values.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memstrata.search.priors import is_intent
from memstrata.search.query import Hit
from memstrata.search.toolcalls import loop_prompt

_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def asked_text(hit: Hit) -> str | None:
    """What the user asked, when `hit` is the user's prompt or NOW.md's "Task complete:
    <prompt>" that restates it (`toolcalls.loop_prompt`); None for any other record."""
    return hit.text if is_intent(hit) else loop_prompt(hit)


def asks_only(hit: Hit) -> bool:
    """A user's prompt every sentence of which is a question.

    Example:
        >>> meta = {"entry_type": "USER_FEEDBACK", "event": "user_intent"}
        >>> p = Hit("log:a:1", "log", 1.0, "USER_FEEDBACK", "How much is left now?", "", 0.0,
        ...         "LOG.md", kind="USER_FEEDBACK", meta={"metadata": meta})
        >>> asks_only(p), asks_only(p.but(text="The sheet broke. Why?"))
        (True, False)
    """
    asked = asked_text(hit)
    if asked is None or "?" not in asked:
        return False
    said = [s for line in asked.splitlines() for s in _SENTENCE.split(line.strip()) if s]
    return bool(said) and all(s.rstrip().endswith("?") for s in said)


def with_questions_below(pool: Sequence[Hit], factor: float) -> list[Hit]:
    """`pool` with each user's prompt that only asks (`asks_only`) scored `factor` of its
    relevance (`only_asks` in its explain); the pool as it is when `factor` is 1."""
    if factor >= 1.0:
        return list(pool)
    out = []
    for h in pool:
        if asks_only(h):
            explain = {**h.explain, "only_asks": factor, "own_score": round(h.score, 6)}
            h = h.but(score=h.score * factor, explain=explain)
        out.append(h)
    return out


__all__ = ["asked_text", "asks_only", "with_questions_below"]
