"""A question that asks why a choice was made is answered by a record that states a reason.

"Why did we take the newsletter off Resend?" is answered by the decision recorded with
its why ("11,800 subscribers would exceed Resend's 50,000 emails a month"). Records on
the subject that state no reason outrank it on words and meaning: the CONTEXT.md line
that says how things are now ("Weekly issue: Amazon SES; Resend only for magic links"),
a fact holding the value the question names ("gpg_key: Ruth's release key ..." for "why
aren't we using my gpg key?"). What such a question asks for is a reason, so the records
that give one are weighed up:

    asks(q)      = q asks "why", "how come" or "what was the reason", and not about a
                   failure: no word of one ("crash", "broke", "failed": the `error`
                   signal of `priors.asked_signals`) and no "could" / "can't" ("Why
                   couldn't we download the files at first?" asks what stood in the
                   way: a failure's cause, which `search.failures` finds)
    states(r)    = r gives a reason: a ledger record with a rationale (its `detail`, the
                   `why` of `record_decision`; not the detail a user's change of plan
                   carries, "Changed by the user on <date>; it replaces <id>", which
                   `lifecycle.reversal` writes: bookkeeping, renovation-ashgrove
                   q-worktop-why ranked such a record 3rd), a "Why: ..." of a decision
                   logged as text,
                   or a causal link in its text ("because", "due to", "caused by",
                   "which is why", "so that")
    score(r)     = score(r) x REASON        when asks(q) and states(r)

Turns of a conversation (transcripts, channels) are left alone, as `search.people` leaves
them: "because" and "so that" are how people talk, not a recorded rationale. On LoCoMo dev
(chat turns only) the weight lifted any turn with a "because" above the turn that answers
("Why did Gina combine her clothing business with dance?": a turn on another subject with
"because" went to first place above the answer): r@5 / r@20 fell (docs/benchmarks-recall.md,
section 18).

Measured on the nine dev scenarios of `bench agent` by replay: without the failure
condition, two "why couldn't we ... at first?" questions lost their ERROR / THOUGHT answer
to decisions with a rationale on a neighbouring subject (pipeline q-key 3 -> 5, research
q-paywall 1 -> 2). REASON 1.25, 1.5 and 2.0 all gained, none lost; 1.5 is the factor of
`recall.asked` and `search.durations`.

Applied to the pool before the priors, as `search.durations` is, so their exact pruning
(`search.prune`) reads the weighed score as any other. `explain`: `reason` (the factor)
and `reason_said` (where the reason was read).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memstrata.model import USER_REF
from memstrata.search.priors import DIALOGUE_LAYERS, asked_signals
from memstrata.search.query import Hit, weighed

REASON = 1.5  # a record stating a reason, for a question that asks why a choice was made
_ASKS = re.compile(r"\b(?:why|how\s+come)\b|\bwhat\s+(?:was|is|were|are)\s+the\s+reasons?\b", re.I)
# "why couldn't we ...", "why can't it ...": what stood in the way, a failure's cause
_ABILITY = re.compile(r"\b(?:could|couldn't|can't|cannot|can|unable|wouldn't|won't)\b", re.I)
_WHY_LABEL = re.compile(r"\bWhy:\s+\S")
_CAUSAL = re.compile(
    r"\b(?:because|due\s+to|caused\s+by|which\s+is\s+why|that(?:'s|\s+is)\s+why|so\s+that)\b",
    re.I,
)


def asks_reason(query: str) -> bool:
    """True when `query` asks why a choice was made ("Why did we drop X?", "why aren't we
    on Y any more?"), not why something failed or could not be done ("Why did the test
    crash?", "Why couldn't we download the files?": a failure's cause, `search.failures`)."""
    if not _ASKS.search(query) or _ABILITY.search(query):
        return False
    return "error" not in asked_signals(query)


def reason_of(hit: Hit) -> str | None:
    """Where `hit` states a reason ("rationale", "Why:", or the causal words), or None."""
    detail = hit.meta.get("detail") if hit.layer == "ledger" else None
    if isinstance(detail, str) and detail.strip() and not _bookkept(hit):
        return "rationale"
    if _WHY_LABEL.search(hit.text):
        return "Why:"
    m = _CAUSAL.search(hit.text)
    return m.group(0).lower() if m else None


def _bookkept(hit: Hit) -> bool:
    """A record the user's change of plan wrote (`lifecycle.reversal`): its detail says
    when the user changed it and what it replaced, not why."""
    ref = hit.meta.get("ref")
    return isinstance(ref, str) and ref.startswith(USER_REF)


def with_reasons(query: str, pool: Sequence[Hit], factor: float = REASON) -> list[Hit]:
    """`pool` with the records that state a reason weighed by `factor` when `query` asks
    why (`reason` and `reason_said` in their explain); a conversation's turns as they are."""
    if factor == 1.0 or not pool or not asks_reason(query):
        return list(pool)
    return weighed(
        pool, factor, "reason", lambda h: None if h.layer in DIALOGUE_LAYERS else reason_of(h)
    )
