"""What a hit is worth after relevance: record signals, their weights, exclusions, collapse.

    worth(hit) = score(hit) x prior(hit)          score: relevance x decay (engine, hybrid)
    prior(hit) = weight[signal(hit)] x (asked if the question asks about signal(hit), else 1)

    dropped    bookkeeping (tag `bookkeeping`, capture notices, session-id lines); the
               question being asked (an intent or user message with the query's words,
               or the open prompt: the newest intent that no final response followed);
               a superseded record the query did not ask for; a signal of weight 0
    collapsed  the records of one tool call (LOG TOOL_USE, transcript tool_use and
               tool_result, the ERROR of a failed call) by `tool_use_id`, by the message
               id a tool_call shares with its tool_result, else (stores older than the id)
               by session, tool name, first argument and time; the highest worth stays
    order      worth descending; ties: newer first (`search.newer.is_older`), then uid

A record's signal comes from its layer and kind, then its tags and metadata, then (for
records that carry none, as old stores do) the shape of its text: a hook's TOOL_USE line
`Read(file_path="a.py") -> ok, 12 chars`, a capture notice, "Decision: ..." (the speech-act
rules of `reading.classify`). Weights are configuration (`[recall]`, `recallconfig`);
`explain` on each hit names the signal, why, its weight and the config key, and the first
hit lists what was dropped. Pure functions over `Hit` values: no SQL, no store, no model.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from memstrata.config.recall import (
    ASKED_KEY,
    COVERAGE_KEY,
    DEFAULT_ASKED,
    DEFAULT_COVERAGE,
    DEFAULT_NEWER,
    DEFAULT_OPEN_WORK,
    DEFAULT_QUESTION,
    DEFAULT_REPLACED,
    DEFAULT_WEIGHTS,
    FACTOR_KEYS,
    NEWER_KEY,
    OPEN_WORK_KEY,
    QUESTION_KEY,
    REPLACED_KEY,
)
from memstrata.search.coverage import QueryTerm, coverage_of
from memstrata.search.features import remember
from memstrata.search.newer import file_order, is_older, newer_first, oldest_first
from memstrata.search.prune import contenders, demote_replaced
from memstrata.search.query import Hit, rescored
from memstrata.search.replaces import replaced_terms, said_of
from memstrata.search.text import query_terms, tokenize
from memstrata.search.toolcalls import (
    LOG_LAYERS,
    TOOL_ROLES,
    TRACE,
    TRANSCRIPT_TOOL,
    clues_of,
    first_line,
    group_calls,
    log_metadata,
    loop_mark,
    loop_prompt,
)
from memstrata.values import field, value_type

BOOKKEEPING = "bookkeeping"
DIALOGUE_LAYERS = frozenset({"session", "channel"})  # turns of a conversation
# Near-ties on one subject (`recall.newer`): the records that state how things are now
# move above older ones of their signal, or above an account of the past (what was said,
# done or planned at one moment: a reply, a digest, a prompt, a log line, a transcript
# turn, a trace, a task's wording), which a newer statement updates. An account never
# moves by being newer: a later turn does not replace an earlier one's news.
STATES = frozenset({"decision", "constraint", "preference", "fact", "note", "status", "source"})
ACCOUNTS = frozenset({"reply", "digest", "intent", "activity", "message", "tool", "task"})
MD_LAYERS = frozenset({"context", "identity", "file", "scratch", "episode", "artifact", "archive"})
EXPLICIT_KINDS = frozenset({"decision", "constraint", "preference"})
LEDGER_SIGNALS = {"convention": "constraint", "warning": "constraint", "interface": "fact"}
ITEM_SIGNALS = {"task": "task", "note": "note"}
LAYER_SIGNALS = {  # layers whose records all have one signal: layer -> (signal, why)
    "now": ("status", "NOW.md"),
    "source": ("source", "project file"),
    "compaction": ("digest", "LOG compaction record"),
    "channel": ("message", "room channel message"),
    "gate": ("activity", "gate event"),
}
CLASSIFIED = {  # `reading.classify` kinds -> signal
    "decision": "decision",
    "constraint": "constraint",
    "blocker": "status",
    "objective": "status",
    "phase": "status",
}
# What is not done yet, and what holds it up: a question with these words asks about the
# task state (`search.intent` lifts the open tasks; the `task` signal is asked for).
OPEN_WORK_WORDS = (
    "open left remaining remain remains pending outstanding unfinished undone unresolved"
)
BLOCKED_WORK_WORDS = "blocked blocker blockers blocking stuck waiting"
# Words that say which kind of record a question is after (query tokens, case-folded).
_ASKED = {
    "decision": "decide decided decides deciding decision decisions chose choose chosen choice "
    "settled agreed",
    "constraint": "constraint constraints rule rules allowed forbidden prohibited convention "
    "conventions",
    "preference": "prefer prefers preferred preference preferences favourite favorite",
    "status": "status blocked blocker blockers blocking progress stuck stopped stopping holding "
    "waiting prevented preventing",
    "task": f"task tasks todo todos {OPEN_WORK_WORDS} {BLOCKED_WORK_WORDS}",
    # what went wrong, said as an event: "error" alone also asks about error formats
    "error": "fail fails failed failing failure failures crash crashed crashes bug bugs broke "
    "broken wrong",
}
ASKED_WORDS: dict[str, frozenset[str]] = {k: frozenset(v.split()) for k, v in _ASKED.items()}
_CAPTURE = re.compile(r"^[\w-]+ hook: captured \d+ new message\(s\) of session \S+")
_SESSION_LINE = re.compile(r"^(?:session(?:[ _-]?id)?)\s*[:=]?\s*(?=[\w-]*\d)[\w-]{8,}\.?$", re.I)
_DIGEST = re.compile(r"^(?:LOG compacted: |Session \S+ compacted: )")
_FINAL = re.compile(r"^Final response:\s*")
_PREFERENCE = re.compile(
    r"^\W*preference\s*[:\-]|\b(?:i|the user|user)\s+(?:always\s+)?prefers?\b", re.I
)
_WORDS = re.compile(r"[^\W_]+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
QUESTION_CUES = frozenset(["ask", "asked", "asking", "asks", "question", "questions"])
_LABEL_WORDS = frozenset({"decision", "decided", "decide", "we", "use", "uses", "using"})
_HEADINGS = (
    ("digest", re.compile(r"\bmemory flush\b|\bcompacted\b|\bsummary of\b", re.I)),
    ("decision", re.compile(r"\bdecisions?\b|\bdecided\b", re.I)),
    ("constraint", re.compile(r"\b(?:constraints?|rules?|conventions?|warnings?)\b", re.I)),
    ("preference", re.compile(r"\bpreferences?\b", re.I)),
    ("task", re.compile(r"\b(?:tasks?|todos?|to-dos?)\b", re.I)),
)


@value_type(frozen=True)
class Signal:
    """What kind of record a hit is, and the clue that said so."""

    name: str
    why: str
    states: str | None = None  # what an account says it is (a prompt stating a decision)


@value_type(frozen=True)
class PriorSettings:
    """The `[recall]` weights: signal -> weight, and `asked`."""

    weights: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    asked: float = DEFAULT_ASKED
    replaced: float = DEFAULT_REPLACED
    coverage: float = DEFAULT_COVERAGE
    newer: float = DEFAULT_NEWER
    question: float = DEFAULT_QUESTION
    open_work: float = DEFAULT_OPEN_WORK

    @classmethod
    def from_config(cls, table: Mapping[str, float]) -> PriorSettings:
        weights = {k: v for k, v in table.items() if k not in FACTOR_KEYS}
        return cls(
            {**DEFAULT_WEIGHTS, **weights},
            table.get(ASKED_KEY, DEFAULT_ASKED),
            table.get(REPLACED_KEY, DEFAULT_REPLACED),
            table.get(COVERAGE_KEY, DEFAULT_COVERAGE),
            table.get(NEWER_KEY, DEFAULT_NEWER),
            table.get(QUESTION_KEY, DEFAULT_QUESTION),
            table.get(OPEN_WORK_KEY, DEFAULT_OPEN_WORK),
        )


class _Seen(NamedTuple):
    """One hit and what the rules read of it, read once (a tuple: made per hit and
    query, where a frozen dataclass's construction cost more than the rules)."""

    hit: Hit
    meta: Mapping[str, Any]  # a LOG entry's own metadata; {} for other records
    head: str  # the first line of its text
    tags: frozenset[str]


def _see(hit: Hit) -> _Seen:
    return _Seen(hit, *remember(hit, "seen", _seen))


def _seen(hit: Hit) -> tuple[Mapping[str, Any], str, frozenset[str]]:
    meta = log_metadata(hit)
    tags = {t.lower() for t in hit.tags}
    extra = meta.get("tags")
    if isinstance(extra, str):
        extra = extra.split()
    if isinstance(extra, list):
        tags.update(str(t).lower() for t in extra)
    return meta, first_line(hit.text), frozenset(tags)


@functools.lru_cache(maxsize=4096)  # the same entries come back query after query
def _speech_act(head: str, speaker: str | None) -> str | None:
    """decision / constraint / status / preference from a text's first line, or None."""
    from memstrata.reading.classify import classify_line

    head = _FINAL.sub("", head)
    if not head:
        return None
    kind = classify_line(head, speaker)
    return CLASSIFIED.get(kind or "") or ("preference" if _PREFERENCE.search(head) else None)


def bookkeeping_reason(hit: Hit) -> str | None:
    """Why `hit` is hook bookkeeping (never a hit), or None."""
    return _bookkeeping(_see(hit))


def _bookkeeping(r: _Seen) -> str | None:
    if BOOKKEEPING in r.tags or r.meta.get("kind") == BOOKKEEPING:
        return "tagged bookkeeping"
    if r.hit.layer not in LOG_LAYERS:
        return None
    if "captured" in r.meta and r.meta.get("event") in ("stop", "pre-compact", "session-end"):
        return f"capture notice of the {r.meta['event']} hook"
    if _CAPTURE.match(r.head):
        return "capture notice (text shape)"
    if _SESSION_LINE.match(r.head) and len(r.hit.text.strip()) == len(r.head):
        return "a session id line"
    return None


def is_intent(hit: Hit) -> bool:
    """A user's prompt as the prompt hook (or AgentLoop) logged it."""
    return hit.kind == "USER_FEEDBACK" and log_metadata(hit).get("event") == "user_intent"


def _log_signal(r: _Seen) -> Signal:
    meta, head, kind = r.meta, r.head, r.hit.kind or ""
    forced = meta.get("kind")
    if forced in EXPLICIT_KINDS:
        return Signal(str(forced), f"metadata kind {forced}")
    if kind == "TOOL_USE" and ("tool" in meta or TRACE.match(head)):
        return Signal("tool", "TOOL_USE trace" + (" (metadata.tool)" if "tool" in meta else ""))
    if kind == "USER_FEEDBACK" and meta.get("event") == "user_intent":
        act = _speech_act(head, "user")  # "For the record: I prefer httpx" is not a question
        if act in ("decision", "constraint", "preference"):  # what was said, not its record
            return Signal("intent", f"the user's prompt states a {act}", act)
        return Signal("intent", "USER_FEEDBACK logged as the user's intent")
    if meta.get("compacted") or meta.get("archive_id") or meta.get("flush") or _DIGEST.match(head):
        return Signal("digest", "compaction digest")
    if kind == "ERROR":
        return Signal("error", "ERROR entry")
    act = _speech_act(head, "user" if kind == "USER_FEEDBACK" else None)
    if act is not None:
        return Signal(act, f"{kind or 'LOG'} text reads as a {act}")
    if meta.get("event") == "final_response" or _FINAL.match(head):
        return Signal("reply", "final response")
    return Signal("activity", f"{kind or 'LOG'} entry")


def _session_signal(r: _Seen) -> Signal:
    role = r.hit.kind or ""
    if role in TOOL_ROLES:
        return Signal("tool", f"transcript {role}")
    if role == "summary":
        return Signal("digest", "transcript summary")
    if TRANSCRIPT_TOOL.match(r.head):  # Claude Code's blocks as the hooks capture them
        return Signal("tool", "transcript tool_use / tool_result text")
    return Signal("message", f"transcript {role or 'message'}")


def _md_signal(hit: Hit) -> Signal:
    for name, pattern in _HEADINGS:
        if pattern.search(hit.title or ""):
            return Signal(name, f"section '{hit.title}'")
    return Signal("note", f"{hit.layer} section")


def signal_of(hit: Hit) -> Signal:
    """The signal of one record: layer and kind first, then tags and metadata, then text shape.

    Example:
        >>> signal_of(Hit("fact:f:db", "fact", 1.0, "db_engine", "PostgreSQL 16", "", 0.0,
        ...               "facts.jsonl", kind="config")).name
        'fact'
    """
    return _signal(_see(hit))


def _signal(r: _Seen) -> Signal:
    hit = r.hit
    kind, layer = hit.kind or "", hit.layer
    if (marked := loop_mark(hit, r.meta)) is not None:
        return Signal(*marked)
    if kind in EXPLICIT_KINDS and layer not in LOG_LAYERS and layer != "session":
        return Signal(kind, f"{layer} kind {kind}")
    for name in ("decision", "constraint", "preference"):
        if name in r.tags:
            return Signal(name, f"tag {name}")
    if layer == "ledger":
        return Signal(LEDGER_SIGNALS.get(kind, "note"), f"ledger kind {kind}")
    if layer == "fact":
        return Signal("fact", f"fact ({kind or 'general'})")
    if layer == "item":
        return Signal(ITEM_SIGNALS.get(kind, "fact"), f"extracted item ({kind})")
    if layer in LAYER_SIGNALS:
        return Signal(*LAYER_SIGNALS[layer])
    if layer == "task":
        return Signal("task", f"task ({kind})")
    if layer == "session":
        return _session_signal(r)
    if layer in LOG_LAYERS and hit.meta.get("entry_type") is not None:
        return _log_signal(r)
    if layer in MD_LAYERS:
        return _md_signal(hit)
    return Signal("note", f"{layer} record")


def is_question(hit: Hit) -> bool:
    """True when a record asks rather than states: at least half of its sentences are
    questions ("Does a single ride make money once licences are paid?"). A question does
    not answer a question, unless the query asks what to ask (`QUESTION_CUES`).

    Example:
        >>> is_question(Hit("n:1", "file", 1.0, "Questions", "1. Does it pay? 2. Who pays?",
        ...                 "", 0.0, "q.md"))
        True
    """
    if "?" not in hit.text:
        return False  # no sentence ends with one (most records: the split costs more)
    said = [
        x
        for line in hit.text.splitlines()
        if line.strip() and not line.lstrip().startswith("#")  # a heading names, it says not
        for x in _SENTENCE.split(_LIST_MARK.sub("", line))
        if x.strip()
    ]
    asks = sum(1 for x in said if x.rstrip().endswith("?"))
    return asks > 0 and asks * 2 >= len(said)


def _asks(hit: Hit) -> bool:
    """A stored record that asks (`is_question`). A turn of a conversation is left alone:
    its question carries the dialogue's facts as much as any turn ("How is Max, your new
    puppy?"); LoCoMo dev lexical r@10 0.779 -> 0.770 when question turns weighed 0.5."""
    return hit.layer not in DIALOGUE_LAYERS and is_question(hit)


def asked_signals(query: str) -> frozenset[str]:
    """The signals a question asks about, by its words ("what did we decide" -> decision)."""
    words = set(tokenize(query))
    return frozenset(name for name, cue in ASKED_WORDS.items() if words & cue)


def same_words(query: str, text: str) -> bool:
    """True when `text` says exactly the query's words (case, spacing, punctuation aside)."""
    q = words_of(query)
    return bool(q) and q == words_of(text)


def words_of(text: str) -> str:
    """The words of `text`, case-folded, one space apart (what `same_words` compares)."""
    return " ".join(_WORDS.findall(text.casefold()))


def replaced_decisions(decisions: Sequence[Hit]) -> dict[str, tuple[str, str]]:
    """Decisions a newer decision among `decisions` says it replaces: uid -> (newer uid, term).

    The newer one names what it replaces ("replace X with Y", "Y instead of X", "switched
    from X", "no longer use X", "drop X"); an older decision is replaced when it mentions X
    and shares another content word with the newer one (so "drop Python 3.8" does not
    replace "Python 3.11 for the API"). A decision that itself replaces X is not replaced
    by a later mention of X.
    """
    out: dict[str, tuple[str, str]] = {}
    ordered = oldest_first(decisions)  # `search.newer`: at one ts, in file order
    words: dict[str, set[str]] = {}  # content words, read only where a replacement is said

    def content(h: Hit) -> set[str]:
        if h.uid not in words:
            words[h.uid] = _content_words(said_of(h))
        return words[h.uid]

    for n, newer in enumerate(ordered):
        for term in remember(newer, "replaces", replaced_terms):
            for older in ordered[:n]:
                if older.uid in out or term not in said_of(older).lower():
                    continue
                if term not in content(older) or not is_older(older, newer):
                    continue
                shared = (content(older) & content(newer)) - {term}
                replaces_too = term in remember(older, "replaces", replaced_terms)
                if shared and not replaces_too:
                    out[older.uid] = (newer.uid, term)
    return out


def _content_words(text: str) -> set[str]:
    """Words that name something: no stopwords, numbers, short words or decision labels."""
    return {w for w in query_terms(text) if len(w) > 2 and not w.isdigit()} - _LABEL_WORDS


# -- the pool ---------------------------------------------------------------------------------


class _Worth:
    """A candidate being weighed: its hit, signal, prior factor and explain, the query
    terms it holds (one per candidate of every query: a plain class, not a dataclass)."""

    __slots__ = ("factor", "held", "hit", "prior", "signal")

    def __init__(
        self,
        hit: Hit,
        signal: Signal,
        factor: float,
        prior: dict[str, Any],
        held: list[str] | None = None,
    ) -> None:
        self.hit, self.signal, self.factor, self.prior = hit, signal, factor, prior
        self.held: list[str] = [] if held is None else held

    @property
    def worth(self) -> float:
        return self.hit.score * self.factor


def apply_priors(
    pool: Sequence[Hit],
    query: str,
    settings: PriorSettings | None = None,
    *,
    open_prompts: Iterable[str] = (),
    include_superseded: bool = False,
    limit: int | None = None,
    dropped: Mapping[str, str] | None = None,
    terms: Sequence[QueryTerm] = (),
) -> list[Hit]:
    """The scored pool as hits worth showing, best first: all of them, or the first `limit`.

    Each kept hit's score becomes its worth; its explain gains `before_prior` (the score
    relevance gave it), `prior` (signal, why, weight and config key; `asked` and
    `replaced` when they apply; `value`, the product) and, when it stands for other
    records of its tool call, `collapsed`. The first hit's explain lists what was
    `dropped`, by reason, with those the caller took out before (`dropped`: uid -> why).
    With a `limit`, only the candidates that can reach its places get their held terms
    and the near-tie pass (`search.prune`: the same hits, every field).

    Example:
        >>> fact = Hit("fact:f:db", "fact", 0.8, "db_engine", "PostgreSQL 16", "", 0.0, "f")
        >>> trace = Hit("log:f:1", "log", 1.0, "TOOL_USE", 'Read(file_path="db.py") -> ok, 9 chars',
        ...             "", 0.0, "LOG.md", kind="TOOL_USE", meta={"entry_type": "TOOL_USE"})
        >>> [h.uid for h in apply_priors([trace, fact], "database engine")]
        ['fact:f:db', 'log:f:1']
    """
    cfg = settings or PriorSettings()
    asked = asked_signals(query)
    asks_questions = bool(set(tokenize(query)) & QUESTION_CUES)
    current = set(open_prompts)
    gone_before = dict(dropped or {})
    dropped_by: dict[str, list[str]] = {}
    for uid, why in gone_before.items():
        dropped_by.setdefault(why, []).append(uid)
    kept: list[_Worth] = []
    said = words_of(query)
    weights, ask_factor = cfg.weights, cfg.asked != 1.0
    question = cfg.question != 1.0 and not asks_questions
    cover = coverage_of(terms)
    weighed = bool(terms) and cfg.coverage > 0
    coverage_key = f"recall.{COVERAGE_KEY}"
    keys: dict[str, str] = {}  # signal -> its config key
    for hit in pool:
        meta, bookkeeping, signal, asks = remember(hit, "rank", rank_facts)
        reason = excluded_by(hit, meta, bookkeeping, said, current, include_superseded)
        if reason is not None:
            signal = Signal(BOOKKEEPING, reason)
        weight = float(weights.get(signal.name, 1.0))
        if reason is None and weight <= 0:
            reason = f"weight 0 (recall.{signal.name})"
        if reason is not None:
            dropped_by.setdefault(reason, []).append(hit.uid)
            continue
        key = keys.get(signal.name)
        if key is None:
            key = keys[signal.name] = f"recall.{signal.name}"
        prior = {"signal": signal.name, "why": signal.why, "weight": weight, "key": key}
        item = _Worth(hit, signal, weight, prior)
        if ask_factor and (signal.name in asked or signal.states in asked):
            item.factor *= cfg.asked
            prior.update(asked=cfg.asked, asked_key=f"recall.{ASKED_KEY}")
        if question and asks:
            item.factor *= cfg.question
            prior.update(question=cfg.question, question_key=f"recall.{QUESTION_KEY}")
        elif asks and asks_questions and ask_factor:  # "what do we ask X?": the questions
            item.factor *= cfg.asked
            prior.update(asked=cfg.asked, asked_key=f"recall.{ASKED_KEY}", asked_for="questions")
        if weighed:  # worth needs the held terms (else only the contenders get them)
            share, item.held = cover(hit)
            prior["terms_held"] = item.held
            covered = 1.0 - cfg.coverage * (1.0 - share)
            item.factor *= covered
            prior["coverage"] = round(share, 4)
            prior["coverage_factor"] = round(covered, 4)
            prior["coverage_key"] = coverage_key
        kept.append(item)
    decisions = [w.hit for w in kept if w.signal.name == "decision"]
    replaced = replaced_decisions(decisions) if cfg.replaced != 1.0 else {}
    near = 1.0 - cfg.newer if terms and cfg.newer > 0 else 1.0
    kept = contenders(kept, _worth_of(replaced, cfg.replaced), limit, near)
    if terms and not weighed:
        for item in kept:
            item.held = item.prior["terms_held"] = cover(item.hit)[1]
    demote_replaced(kept, cfg.replaced, replaced)
    kept.sort(key=lambda w: (-w.worth, -w.hit.ts, w.hit.uid))
    file_order(kept, [(w.worth, w.hit.ts) for w in kept], lambda w: w.hit, newest_first=True)
    if terms and cfg.newer > 0:
        newer_first(kept, cfg.newer, STATES, ACCOUNTS)
    gone, collapsed = _collapse(kept)
    out: list[Hit] = []
    for n, w in enumerate(kept):
        if n in gone:
            continue
        if limit is not None and len(out) >= limit:
            break
        w.prior["value"] = round(w.factor, 6)
        explain = {
            **w.hit.explain,
            "before_prior": round(w.hit.score, 6),
            "prior": w.prior,
            "score": round(w.worth, 6),
        }
        if n in collapsed:
            explain["collapsed"] = collapsed[n]
        out.append(rescored(w.hit, w.worth, explain))
    if out and (dropped_by or gone):
        out[0].explain["dropped"] = {
            why: uids[:5] + ([f"+{len(uids) - 5} more"] if len(uids) > 5 else [])
            for why, uids in dropped_by.items()
        }
        out[0].explain["collapsed_in_pool"] = len(gone)
    return out


def _worth_of(replaced: Mapping[str, object], factor: float) -> Callable[[_Worth], float]:
    """A candidate's worth once `recall.replaced` applies (`prune.demote_replaced`)."""
    return lambda w: w.hit.score * (w.factor * factor if w.hit.uid in replaced else w.factor)


def _collapse(kept: list[_Worth]) -> tuple[set[int], dict[int, list[dict[str, str]]]]:
    """Positions (in worth order) of the records another record of their tool call stands
    for, and, for each record kept, the ones it stands for."""
    clues = [c for n, w in enumerate(kept) if (c := clues_of(n, w.hit, w.signal.name))]
    gone: set[int] = set()
    collapsed: dict[int, list[dict[str, str]]] = {}
    for best, *rest in group_calls(clues):
        gone.update(rest)
        collapsed[best] = [{"uid": kept[n].hit.uid, "why": "same tool call"} for n in rest]
    return gone, collapsed


def excluded(
    hit: Hit, query: str, open_prompts: Iterable[str] = (), *, include_superseded: bool = False
) -> str | None:
    """Why `hit` is never shown for `query`, or None: superseded (unless asked for),
    bookkeeping, the open prompt (`open_prompts`), the question's own words."""
    return _excluded(_see(hit), words_of(query), set(open_prompts), include_superseded)


def _excluded(r: _Seen, said: str, open_prompts: set[str], include_superseded: bool) -> str | None:
    """Why a record is never shown for a query whose words are `said`, or None."""
    reason = remember(r.hit, "bookkeeping", bookkeeping_reason)
    return excluded_by(r.hit, r.meta, reason, said, open_prompts, include_superseded)


def excluded_by(
    hit: Hit,
    meta: Mapping[str, Any],
    bookkeeping: str | None,
    said: str,
    open_prompts: set[str],
    include_superseded: bool,
) -> str | None:
    """`_excluded`, given the record's LOG metadata and `bookkeeping_reason`."""
    if hit.superseded and not include_superseded:
        return "superseded"
    if bookkeeping is not None:
        return f"bookkeeping: {bookkeeping}"
    if hit.uid in open_prompts:
        return "the prompt being asked (the newest intent, no final response yet)"
    by_user = hit.kind == "user" and hit.layer == "session"
    by_user |= hit.kind == "USER_FEEDBACK" and meta.get("event") == "user_intent"
    asked = hit.text if by_user else loop_prompt(hit)  # NOW.md: "Task complete: <prompt>"
    if asked is not None and said and words_of(asked) == said:
        return "the question being asked (same words)"
    return None


def rank_facts(hit: Hit) -> tuple[Mapping[str, Any], str | None, Signal, bool]:
    """What the priors read of a record, read once (`features.remember`): its LOG metadata,
    why it is bookkeeping (or None), its signal, whether it asks (`_asks`)."""
    seen = _Seen(hit, *_seen(hit))
    reason = _bookkeeping(seen)
    signal = Signal(BOOKKEEPING, "") if reason is not None else _signal(seen)
    return seen.meta, reason, signal, _asks(hit)
