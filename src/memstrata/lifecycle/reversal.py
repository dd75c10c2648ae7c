"""A change of plan the user states: the one decision in force it replaces.

firmware-larkspur: the user says "Change of plan on the reporting interval: ... Send one
reading every 30 minutes from now on", the agent records nothing, and "Report interval:
one reading and one uplink every 15 minutes" stayed "in force" in every later context.
infra-saltmarsh (MCP only, the user's words reach memory through `session_append`): "change
of plan on the region. ... Build all the new stuff in eu-west-1, not London." left
"Region: eu-west-2 (London) for the new stack" in force.

`replaced_by(prompt, in_force)` is the rule, a pure function: the one record the prompt
replaces and the text of the new one, or None. It asks for two things, and is silent
otherwise (a wrong supersede hides a decision that still holds; a missed one leaves the
prompt in the activity, as before):

* a clear signal of a change: "change of plan", "new plan", "from now on", "going forward",
  "instead of", "rather than", "no longer", "switch/change/move (the) X to" (the verb: not
  "after the switch", not "... we have to"), "let's go
  with X, not Y", "actually, ..."; a plan with a bare "instead" ("let's do a supper
  instead", not "I rang the warden instead"); a drop ("they don't want X after all", "so
  not X after all", "let's drop the X", not "it did not break after all"); a question
  states nothing;
* a subject shared with exactly one decision or constraint in force. The subject is what
  the prompt names: "change of plan on the reporting interval" -> reporting interval;
  every word of it must be in the record (written loosely: "reporting" ~ "Report",
  "minutes" ~ "minute"), and when several records hold it, the one whose label
  ("Region: ...") holds it. "Switch the radio to ..." names one too, but reads as a task
  ("move the button to the header") unless a record's label is that subject ("Radio: ...").
  Without a named subject, the sentences with the signal and the one either side of each
  must share at least two words with the record, no other record as many, and one of them
  must be in a signal sentence (events-heronsgate: "... don't want the ceilidh after all,
  ... Let's do a community supper ... instead"). Two candidates: nothing. When a drop is
  followed by the new plan, the new record starts at the plan. A named subject that no
  record holds whole ("change of plan on the back doors" for "Rear opening: a four-panel
  aluminium bifold door", renovation-ashgrove) is read the same way, and the record found
  must hold a word of the subject;
* a wish for something else ("we'd rather have a three-panel slider", "I'd prefer the
  oak") is a weaker signal: alone, it replaces only a record whose label ("Kitchen
  worktops: ...") the wish or a sentence beside it names, so "we'd rather have the site
  meetings at nine" leaves "No site meetings on Wednesdays" (no label) in force.

The new record keeps the old one's label ("Report interval: ...") and the user's words from
the change on, without the request for the work around them ("Please change the purge job
today.": the decision is what holds, not the errand); `record_reversal` records it, of the old one's kind, superseding it
(history keeps the old one, readable by id), attributed to the user with the date. Only
the principal's own records are candidates (those it wrote and may supersede).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from memstrata.lifecycle.statements import sentences
from memstrata.model import USER_REF, iso, now_ts
from memstrata.reading.english import expand_contractions
from memstrata.reading.patterns import LazyPattern
from memstrata.values import value_type

if TYPE_CHECKING:
    from memstrata.model import LedgerEntry
    from memstrata.store.view import Store

MAX_CHARS = 400
KINDS = ("decision", "constraint")

# A decision dropped: "they don't want the ceilidh after all", "so not the X after all",
# "let's drop the X". Said of what happened ("the deploy did not break after all") it is
# no change: the verb must be a wish or a plan's, or "not" must open the clause.
_DROP_RE = (
    r"\b(?:do|does|did) not (?:want|need|like)\b[^.!?]*\bafter all\b|"
    r"\b(?:not|no longer) (?:doing|having|holding|running|using|going with|booking)\b"
    r"[^.!?]*\bafter all\b|(?:^|[,;:]\s*|\bso |\bthen )(?:not|no) [^.!?]*\bafter all\b|"
    r"(?:^|\blet us |\bwe (?:will|are|have|should) |\bplease )(?:drop|dropping|dropped|scrap|"
    r"scrapping|scrapped|ditch|ditching|ditched|cancel|cancelling|cancelled)\s+(?:the|our|that)\b"
)
_DROP = LazyPattern(_DROP_RE)
_SIGNAL = LazyPattern(
    r"\b(?:change of plans?|plan change|new plan|from now on|going forward|instead of|"
    r"rather than|no longer|"
    # a verb, not "the switch": "after the switch in case we have to roll back" is no change
    r"(?<!\bthe )(?<!\ba )(?<!\bthis )(?<!\bthat )(?:switch|switching|change|changing|move|"
    r"moving)\s+(?:(?!(?:have|has|had|need|needs|want|wants|going|got|ought|able|used)\s)"
    r"\S+\s+){0,4}?to\b|"
    r"let us (?:go with|use|switch to|move to)\b[^.!?]*,\s+not\s+\w)|^actually\b|"
    # "let's do a supper instead, ...": a plan said with a bare "instead" (not a report of
    # what happened: "I read the guide on a mirror instead" changes nothing)
    r"^(?:so,? |ok,? |then,? )?(?:let us|we (?:will|shall|should|can|are going to)|"
    r"(?:i|we) would (?:like|rather)|(?:use|go with|do|make it|have|book|get|try)\b)"
    r"[^.!?]*\binstead\b|" + _DROP_RE
)
# "We'd rather have a sliding door", "I'd prefer the oak": a wish for something else.
_WISH = LazyPattern(r"\b(?:i|we) would (?:rather|prefer)\b")
# "Change of plan on the reporting interval: ..." names its subject.
_NAMED = LazyPattern(
    r"\b(?:change of plans?|plan change|new plan)\s+(?:on|for|about|regarding|re|with|"
    r"concerning|as to)\s+(?:the |our |your |my |this )?([^:.,;!?\n]{2,60}?)\s*(?:[:.,;!\n]|$)",
    re.I,
)
# "switch the broker to Mosquitto", "change the interval from 15 to 30 minutes".
_TO = LazyPattern(
    r"\b(?:switch|change|move|set|bump|raise|lower)\s+(?:the |our )?"
    r"((?:[\w-]+\s+){0,2}?[\w-]+)\s+(?:from\s+[^.!?]{1,40}?\s+)?to\b",
    re.I,
)
# "Please ...", "Can you ...", "..., please.": asked of the agent, not decided.
_ASK = LazyPattern(r"^(?:please|(?:can|could|would|will) you|let us)\b|\bplease[.!]?$")
_WORD = LazyPattern(r"[^\W_][\w-]*")
_LABEL = LazyPattern(r"^([^:.!?]{2,50}):\s+\S")
_STOP = frozenset(
    re.split(
        r"\s+",
        """a an the and or but of on in at to for from with by as is are was were be been it its
    this that these those we you i our your my me us they them he she his her all any some
    one new now plan plans change changing changed switch move moving set on off not no
    instead rather than longer from going forward actually let us go use using will would
    should must can could do does did so then there here just only also too very more less
    stuff thing things every each please ok okay""",
    )
)


@value_type(frozen=True)
class Reversal:
    """The record a prompt replaces, and the text of the record now in force."""

    replaces: LedgerEntry
    text: str


def _norm(text: str) -> str:
    return expand_contractions(text.lower().replace("\u2019", "'"))


def _content(text: str) -> list[str]:
    words = (w.strip("-") for w in _WORD.findall(_norm(text)))
    return [w for w in words if len(w) >= 3 and w not in _STOP]


def _same(a: str, b: str) -> bool:
    """One word written loosely: "reporting" ~ "report", "minutes" ~ "minute"."""
    if a == b:
        return True
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n >= max(4, min(len(a), len(b)) - 1)


def _holds(words: Sequence[str], text: str) -> int:
    """How many of `words` `text` holds (loosely)."""
    own = _content(text)
    return sum(1 for w in dict.fromkeys(words) if any(_same(w, o) for o in own))


def _label(summary: str) -> str | None:
    m = _LABEL.match(summary)
    return m.group(1).strip() if m and len(m.group(1).split()) <= 6 else None


def _subject(prompt: str) -> tuple[list[str], int, bool] | None:
    """The subject's words the prompt names, where its new value starts, and whether it
    was named by "change of plan on ..." (else "switch X to": X must be a record's label)."""
    for pattern in (_NAMED, _TO):
        m = pattern.search(prompt)
        if m is not None:
            words = _content(m.group(1))
            if 1 <= len(words) <= 4:
                named = pattern is _NAMED
                return words, m.end() if named else m.start(), named
    return None


def _is_label(words: Sequence[str], summary: str) -> bool:
    """The record's label ("Radio: ...") is the subject, word for word (loosely)."""
    label = _label(summary)
    return label is not None and _holds(words, label) == len(set(words)) == len(
        set(_content(label))
    )


def _asks(sentence: str) -> bool:
    """A request for the day's work wrapped around the change ("Please change the purge job
    today."): it asks for an act, it states no decision, unless it says the change itself."""
    low = _norm(sentence.strip())
    return bool(_ASK.search(low)) and not _SIGNAL.search(low)


def _statement(prompt: str, start: int) -> str:
    """The user's words from `start` on (the prompt's own case), whole sentences, clipped;
    after the first, a sentence that only asks for the work is left out (`_asks`)."""
    rest = prompt[start:].strip()
    out = ""
    for s in sentences(rest):
        if out and _asks(s):
            continue
        if out and len(out) + len(s) + 1 > MAX_CHARS:
            break
        out = f"{out} {s}".strip()
    out = out[:MAX_CHARS].strip()
    return out[:1].upper() + out[1:]


def _around(
    said: Sequence[str], every: Sequence[str], records: Sequence[LedgerEntry]
) -> list[LedgerEntry]:
    """The records the signal sentences' subject names when the prompt names none: the
    words of the signal sentences and of the sentence either side of each ("They don't want
    the ceilidh after all. Let's do a supper instead.": the second names no subject). The
    best record shares at least two, no other as many, and one of them is in a signal
    sentence itself (a neighbour alone says nothing changed)."""
    words, own = _content(_beside(said, every)), _content(" ".join(said))
    scored = [(e, _holds(words, e.summary)) for e in records]
    best = max((n for _, n in scored), default=0)
    found = [e for e, n in scored if n == best] if best >= 2 else []
    return found if len(found) == 1 and _holds(own, found[0].summary) >= 1 else []


def _names_label(said: Sequence[str], every: Sequence[str], record: LedgerEntry) -> bool:
    """A word of `record`'s label ("Kitchen worktops") is in a wish or a sentence beside it."""
    label = _label(record.summary)
    if label is None:
        return False
    return _holds(_content(label), _beside(said, every)) >= 1


def _beside(said: Sequence[str], every: Sequence[str]) -> str:
    """The sentences `said` and the one either side of each, once each, in order."""
    near: list[str] = []
    for s in said:
        k = every.index(s) if s in every else -1
        near.extend(every[max(0, k - 1) : k + 2] if k >= 0 else [s])
    return " ".join(dict.fromkeys(near))


def replaced_by(prompt: str, in_force: Sequence[LedgerEntry]) -> Reversal | None:
    """The one record of `in_force` a user's prompt replaces, with the new record's text;
    None without a clear signal, a question, or unless exactly one record matches
    (module doc)."""
    text = prompt.strip()
    if not text or text.rstrip().endswith("?"):
        return None
    every = sentences(text)
    signal = [s for s in every if _SIGNAL.search(_norm(s)) and not s.endswith("?")]
    said = [s for s in every if (s in signal or _WISH.search(_norm(s))) and not s.endswith("?")]
    if not said:
        return None
    records = [e for e in in_force if e.kind in KINDS]
    named = _subject(text)
    if named is not None and not named[2]:  # "switch the radio to SF9": a task, unless
        words, start, _ = named  # a record is labelled with that very subject
        found = [e for e in records if _is_label(words, e.summary)]
    elif named is not None:
        words, start, _ = named
        found = [e for e in records if _holds(words, e.summary) == len(set(words))]
        if len(found) > 1:
            found = [e for e in found if _holds(words, _label(e.summary) or "") == len(set(words))]
        elif not found:  # "the back doors" for "Rear opening: ... bifold door": part of it
            found = [e for e in _around(said, every, records) if _holds(words, e.summary)]
    else:
        found = _around(said, every, records)
        if not signal:  # a wish alone: the record's label is named beside it
            found = [e for e in found if _names_label(said, every, e)]
        # "They don't want X after all. Let's do Y instead.": the new record starts where
        # the new plan does, a drop alone is the change itself
        start = text.find(next((s for s in said if not _DROP.search(_norm(s))), said[0]))
    if len(found) != 1:
        return None
    old = found[0]
    body = _statement(text, max(0, start))
    if not body:
        return None
    label = _label(old.summary)
    return Reversal(old, f"{label}: {body}" if label else body)


def record_reversal(
    store: Store, agent: str, prompt: str, session: str | None = None
) -> LedgerEntry | None:
    """Record the change of plan `prompt` states (`replaced_by`) as the decision now in
    force, superseding the one it replaces; None when it states none. The caller checks
    that writes are allowed (agent-controlled mode writes nothing)."""
    decisions = store.agent(agent).decisions
    who = store.principal.agent
    own = [
        e
        for e in decisions.in_force(KINDS)
        if who is not None and e.author_role == who and store.gate.may_supersede(e)
    ]
    found = replaced_by(prompt, own)
    if found is None or " ".join(found.text.split()) == " ".join(found.replaces.summary.split()):
        return None  # said before (the same prompt again): it is the record in force
    where = f" in session {session}" if session else ""
    detail = f"Changed by the user on {iso(now_ts())[:10]}{where}; it replaces {found.replaces.id}."
    ref = f"{USER_REF} {session}" if session else USER_REF
    return decisions.record(
        found.text, found.replaces.kind, replaces=found.replaces.id, detail=detail, ref=ref
    )
