"""What a line of work history is, for the context compaction policy: a decision, a
safety constraint, a blocker, a phase change, an objective, or narrative.

Most such lines carry no label ("Decision: ..."); people say them as speech acts,
and each kind has its own grammar, so the rules read that, not keywords:

    decision    agreement or commitment, said as done: "signed off on", "OK'd",
                "agreed to", "settled on", "we'll go with", "as agreed", "LGTM",
                "that's my call"; not pending or conditional ("until finance signs
                off", "waiting for approval", "requires approval")
    constraint  deontic modality: a prohibition or obligation ("do not", "never",
                "must not", "only ... after", "requires approval", "has to go
                through", "off-limits", "no more than"), a caution ("be careful",
                "heads up", "read-only"), or keeping away ("hands off", "stay away
                from", "leave X alone"); said as an instruction, not a description:
                "never" and "don't" count at the head of a clause or after you/we/a
                modal, never for perception verbs ("don't see any errors") or in
                "the function never returns None"; "must have", "must be the" are
                guesses, not rules; a manner asked for the work at hand ("the payload
                today. Keep it small") is a request, not a rule
    blocker     something outside the work holds it up: "blocked on", "waiting on
                the DBA", "can't run X until", "stuck", "on hold", "pending the
                review", "depends on", "X is down, so nothing can ..."; not a wait
                for a run to finish
    phase       a transition: "starting phase 3", "moving into the testing phase",
                "milestone 2 reached", "now on step 3 of 5"
    objective   "the goal is to ...", "Objective: ..."

A user's own words (USER_FEEDBACK, a transcript's user turns) weigh more: there an
imperative is a directive ("Only run the backfill after 22:00"), and consent ("yes,
go ahead", "sounds good, use X", "let's use X") is a decision. Questions are none
of these. When one line shows two kinds, a constraint beats a decision ("do not
delete X until finance signs off" is a rule), a blocker beats a decision ("legal
hasn't approved it yet"), an explicit prohibition beats a blocker.

Deterministic and cheap (a few regular expressions per line); measured on held-out
paraphrases in `tests/lifecycle/test_digest_policy.py`. A model may label the lines
these rules leave as narrative (`llm.base.LineClassifier`), never the other way.
"""

from __future__ import annotations

import re

from memstrata.reading.english import expand_contractions

KINDS = ("objective", "phase", "blocker", "decision", "constraint")

_LEAD = r"^\s*(?:(?:[-*+]|\d+[.)])\s+|>\s*)*(?:\*\*|__)?"
_SEP = r"\s*(?:\*\*|__)?\s*[:\-\u2013]\s*"
_LABELS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("objective", re.compile(_LEAD + r"(?:objective|goal|current task)" + _SEP + r"\S", re.I)),
    (
        "phase",
        re.compile(
            _LEAD + r"(?:phase|stage|milestone)\b(?:\s+\w+(?:\s+of\s+\w+)?)?" + _SEP + r"\S", re.I
        ),
    ),
    (
        "blocker",
        re.compile(
            _LEAD + r"(?:(?:blocker|blocked|blocking|on hold)" + _SEP + r"\S|blocked (?:on|by)\b)",
            re.I,
        ),
    ),
    (
        "decision",
        re.compile(_LEAD + r"(?:decision|decided|approved|agreed|resolution)" + _SEP + r"\S", re.I),
    ),
    (
        "decision",
        re.compile(
            _LEAD + r"(?:[\w'’]+ ){0,5}?(?:decision|choice|verdict|conclusion|"
            r"outcome|resolution|vote|poll|result|final)\b[^:.;]{0,40}:\s*\S",
            re.I,
        ),
    ),
    (
        "constraint",
        re.compile(
            _LEAD + r"(?:safety(?: constraint)?|constraint|warning|caution|important|security|rule|"
            r"heads up|careful|rate limit|policy|requirement)" + _SEP + r"\S",
            re.I,
        ),
    ),
)

_CLAUSES = re.compile(r"[.;!?\n()\[\]—–]+|,\s|:\s|\s-\s")
# Words that may open an instruction before its verb.
_OPENER = (
    r"^(?:(?:please|pls|ok|okay|so|also|and|but|then|just|again|first|btw|hey|"
    r"remember|note|whatever happens|in any case|going forward|from now on|for now|"
    r"as a rule|in general|seriously|and please|yes|no|sure)\s+)*"
)

# -- decision ---------------------------------------------------------------------------
_DECISION = re.compile(
    r"\b(?:signed off|sign-off (?:from|on|given)|approved|ok'?d|okayed|okay'?d|greenlit|"
    r"green-?lit|green-?lighted|gave (?:us |me )?the (?:go-?ahead|green light)|"
    r"(?:have|has|got) the (?:go-?ahead|green light)|agreed (?:to|on|that|with|upon)|"
    r"(?:we|they|i|team|user|everyone|all) agreed|as agreed|as decided|as approved|"
    r"decided (?:to|on|that|against|with|together|jointly|in)\b|(?:team|user|we|they|client|"
    r"lead|owner|pm|everyone|all) (?:has |have |had )?decided\b|"
    r"(?:the|our|final) decision (?:is|was) to|"
    r"(?:per|after|following) (?:the|our|my|your) (?:discussion|call|meeting|agreement|decision|"
    r"review|sync)\b|as discussed\b|"
    r"we (?:will|shall|are going to)(?: not)? (?:adopt|use|support|ship|keep|drop|deprecate|"
    r"migrate|move|switch|go)\b|"
    r"settled (?:on|the (?:debate|question|matter|discussion|issue))|opted (?:for|to)|"
    r"(?:was|were|is|has been|have been|been) (?:agreed|decided|approved|chosen|settled|"
    r"signed off|accepted|greenlit)|(?:i|we) (?:approve|accept|authori[sz]e|sign off on)\b|"
    r"we (?:adopt|pick|choose|keep|go|take|standardi[sz]e on)\b|"
    r"(?:user|team|client|customer|pm|lead|owner|they|we|he|she) accepted\b|"
    r"confirmed (?:on|in|during|at|by|with|over) (?:the |a )?(?:call|meeting|standup|review|"
    r"thread|chat|email|sync|slack)|\w+ it is$|(?:chose|chosen|picked)\b|went with|going with|"
    r"(?:will|shall|'ll) go with|go with|stick with|sticking with|final call|final answer|"
    r"consensus|accepted (?:the|our|my|this|that) (?:proposal|plan|suggestion|change|design|"
    r"approach|option|pr)|(?:user|team|owner|lead|reviewer|client|customer|they|he|she) "
    r"confirmed|confirmed by|lgtm|ship it|my call|your call|per the user|"
    r"(?:switching|switched|moving|moved) (?:\w+ ){0,3}(?:to|over to) \w+.{0,30}\b(?:as|per) "
    r"(?:agreed|decided|discussed|requested)|we (?:will|are going to) use|"
    r"(?:use|using) \S+ instead of)\b"
)
_USER_CONSENT = re.compile(
    r"^(?:yes|yep|yeah|sure|ok|okay|alright|all right|sounds good|looks good|fine|great|perfect|"
    r"agreed|approved|(?:option|approach|plan|variant|choice|number) [a-z0-9]+(?: please)?$|"
    r"the (?:first|second|third|last|former|latter)(?: one| option)?(?: please)?$|"
    r"go ahead|proceed|do it|let us (?:use|do|go|keep|try|switch|pick|take|stick)|"
    r"use|go with|i am (?:fine|ok|okay|happy|good) with|i (?:prefer|want) (?:we|you|to)|"
    r"that works|works for me)\b"
)
# Not done yet, or a condition: "until finance signs off", "waiting for approval".
_PENDING = re.compile(
    r"\b(?:until|unless|once|before|if|when|pending|without|awaiting|waiting (?:for|on)|"
    r"need|needs|needed|require|requires|required|not yet|yet to|has not|have not|had not|"
    r"did not|does not|do not|not been|nobody|no one|never)\b[^.;]{0,40}$"
)
_OPINION = re.compile(r"\bi (?:agree|think|guess|suppose)\b")
# The agent choosing how to look at something is not a decision about the work.
_PROCESS = re.compile(
    r"^\s*(?:to )?(?:first )?(?:read|look|check|try|inspect|investigate|debug|"
    r"examine|explore|search|print|dig|skim|grep|start with|begin with)\b"
)

# -- constraint ---------------------------------------------------------------------------
_STATE_VERBS = (
    r"see|think|know|understand|believe|remember|recall|get|like|notice|find|"
    r"expect|mind|care|worry|bother|seem|appear|have any|need to worry"
)
_PROHIBIT_HEAD = re.compile(
    _OPENER + r"(?:do not|never|not ever|under no circumstances?|under no conditions?|in no case|"
    r"at no point)\s+(?!(?:" + _STATE_VERBS + r")\b)(?!mind\b)(?!\w+(?:ed|en)\b)"
    r"(?!(?:seen|been|heard|had|met|got|done)\b)\w+"
)
_DEONTIC = re.compile(
    r"\b(?:must not|must never|mustn't|shall not|should never|should not|may not|may never|"
    r"can not be|is not to|are not to|are never to|is never to|must only|"
    r"(?:must|has to|have to|needs? to|shall) (?!be (?:the|a|an|because|why)\b)"
    r"(?:be|go|stay|run|use|get|pass|have|remain|come|happen|include|keep|wait|follow|"
    r"respect|match|always|first|never|only)\b|"
    r"(?:is|are) (?:not )?(?:allowed|permitted) to|(?:is|are) (?:forbidden|prohibited|"
    r"off-?limits|read-?only|not allowed|mandatory|required before)|off-?limits|forbidden|"
    r"prohibited|no exceptions|under no circumstances|no more than|at most \d|"
    r"(?:may|can|should|must) only|(?:is|are) (?:restricted|limited) to|reserved for|"
    r"(?:is|are) (?:only )?to be (?:\w+ed|\w+en|read|kept|run|set|done|made|left|put|sent|"
    r"built|shown)\b|"
    r"warn(?:ed|s)? (?:us |me |you |them |the team )?(?:not )?to|warned (?:that|against)|"
    r"(?:needs?|requires?) (?:\S+ ){0,3}(?:approval|sign-?off|review)\b|"
    r"(?:requires?|needs?|need) (?:an? )?(?:explicit |written |prior )?(?:approval|sign-?off|"
    r"review|permission|a backup|backups?)\b|without (?:approval|permission|asking|a backup|"
    r"sign-?off)|hands off|keep (?:your |our )?hands off|(?:stay|keep) (?:away from|out of|"
    r"clear of|off)|leave (?:\w+ ){1,4}alone|do not touch|be careful|careful (?:with|not|about|"
    r"when)|heads up|watch out|beware|be aware|caution|make sure|under no conditions?|"
    r"ensure (?:that )?|only (?:\w+ ){0,3}"
    r"(?:may|can|should|is allowed|are allowed|gets? to)|(?:must|should) (?:never|not|only|"
    r"always)|insists? (?:that|on)|(?:said|told (?:us|me)) (?:to|not to) )"
)
# An instruction at the head of a clause, whoever wrote it down.
_RULE_HEAD = re.compile(
    _OPENER + r"(?:always(?![\w-])|avoid \w+|stick to|make sure|ensure|"
    r"keep (?:\w+ ){1,4}(?:under|below|within|above|compatible|backwards|stable|private|secret|"
    r"off|out|away|small|short|intact|unchanged)\b|only (?!(?:the|a|an|one|two|three|\d+|"
    r"this|that|these|those|some|few|if|when|after|before)\b)\w+ (?:the|a|an|on|in|for|"
    r"from|to|with|against)\b)"
)
# How to do the work at hand, asked for it ("Battery voltage and the payload today. Keep it
# small, ..."): a manner ("keep it small", "make the reply short") in a line that names the
# present occasion is a request for that work, not a rule that holds beyond it.
_MANNER = re.compile(
    _OPENER + r"(?:keep|make) (?:\w+ ){1,3}(?:small|short|simple|brief|tight|minimal|lean|"
    r"concise|light|quick|focused|readable)\b"
)
_OCCASION = re.compile(
    r"\b(?:today|tonight|this (?:time|morning|afternoon|evening|session|one|round|run)|"
    r"for now|right now|for this (?:one|task|change|pr|run))\b"
)
# "no force pushes", "no reformatting": a rule without a verb, when someone gives it.
_VERBLESS_NO = re.compile(
    r"^no (?!(?:idea|worries|problem|thanks|rush|clue|need|way)\b)"
    r"(?:[\w-]+ ){0,3}[\w-]+$"
)
_INSTRUCTION_HEAD = re.compile(
    _OPENER + r"(?:always|only|avoid|stay|keep|leave|make sure|ensure|be careful|don't ever|"
    r"never|nothing (?:gets|may|should|can|is to|goes)|no (?:one|body)|no (?:\w+ ){1,3}"
    r"(?:before|after|without|until|on|from|to|in|during|outside|inside|against)|limit|cap)\b"
)
# Someone's directive reported: "the user was clear: no force pushes".
_REPORTED = re.compile(
    r"\b(?:user|team|lead|client|customer|they|he|she|owner|pm|manager|boss)"
    r"(?:'s)? (?:was|were|is|are) (?:clear|firm|explicit|adamant)\b|"
    r"\b(?:insists?|insisted|reminded (?:me|us)|told (?:me|us))\b"
)
# A guess backed by evidence: "the test must be flaky, it passed on rerun".
_EVIDENCE = re.compile(r"^(?:it|since|because|as|given|so)\b|\b(?:probably|i guess|i think)\b")
_EPISTEMIC = re.compile(
    r"\bmust (?:not )?have (?:been|gone|run|done|made|set|put|hit|lost|got|had|"
    r"seen|\w+ed|\w+en)\b|\bmust be (?:the|a|an|because|why|some|"
    r"something|it|\w+ing)\b|\bcan not be (?:the|a|an|it|that|right)\b|"
    r"\bnever mind\b"
)
_DESCRIBED_NEVER = re.compile(
    r"\b(?:it|this|that|the \w+|which|[a-z_]+\(\)) (?:never|does not|"
    r"did not|do not) "
)

# -- blocker ------------------------------------------------------------------------------
_BLOCKER = re.compile(
    r"\b(?:blocked(?!\w)|blockers? (?:is|are|was|were|for|:)|(?:is|are|was|a|the main|main|"
    r"only|big|real) blocker\b|blocking (?:us|the|this|progress|work)|blocks (?:the|us|progress|"
    r"this|work)|(?:can not|could not|unable to|not able to|no way to) (?:\w+ ){0,2}?"
    r"(?:run|proceed|continue|deploy|test|verify|reproduce|merge|ship|access|connect|push|"
    r"start|finish|complete|move|release|build|install|log in|reach|get|use)\b|"
    r"awaiting (?!(?:the )?(?:results?|output)\b)|"
    r"(?:no progress|not possible|impossible)\b.{0,60}\b(?:until|without|before)\b|"
    r"prevents? (?:us|me|the team|them|\w+) from|stalled|no (?:fix|workaround|eta|answer|"
    r"response) yet|"
    r"waiting (?:on|for) (?!(?:the |a |this |it )?(?:\w+ )?(?:run|build|tests?|job|command|"
    r"process|install|download|compile|suite)\b(?! to be)|(?:it|this|that) to (?:finish|"
    r"complete|end)\b)|stuck\b|on hold|hold off|held up|halted|paused (?:until|because|"
    r"pending)|pending (?:the|a|an|approval|review|sign-?off|security|legal|access|"
    r"confirmation)|depends on|dependent on|(?:need|needs|needed|require|requires) (?:\S+ ){1,10}?"
    r"before (?:we can|continuing|proceeding|we proceed|going on|moving on|i can)|"
    r"(?:still )?no (?:response|reply|answer|word|access) (?:from|to)|"
    r"(?:has|have) not (?:yet )?(?:cleared|approved|signed off|replied|responded|granted|"
    r"merged|answered|provided|sent|finished|completed|delivered|fixed|released|resolved)|(?:nothing|no \w+) (?:can|could) (?:\w+ )?(?:be )?"
    r"\w+ (?:until|right now|for now|while)|so nothing can|and nothing can|(?:access|"
    r"permission) denied|denies (?:our|my|the)|do not have access|out of (?:minutes|quota|"
    r"credits|disk|space|budget)|(?:token|key|credentials?|account|access|certificate|cert|"
    r"licen[cs]e|password|role|permission|quota|subscription)s? (?:was|were|got|has been|"
    r"have been|is|are) (?:revoked|expired|locked(?: out)?|suspended|disabled|deactivated)\b|\bso (?:every|all|each|any|no) "
    r"[^.;]{0,40}\b(?:fails?|errors?|breaks?)\b|(?:is|are) (?:down|unreachable|unavailable)\b)"
)
_TRANSIENT = re.compile(
    r"\bwaiting (?:for|on) (?:the |a )?(?:\w+ ){0,2}to (?:finish|complete|"
    r"end|load|run|build|start|compile|download|install|pass)\b|"
    r"\bwhich is expected\b"
)

# -- phase / objective ----------------------------------------------------------------------
_PHASE_NOUN = (
    r"(?:phase|stage|milestone|step|period|sprint|iteration)(?:\s+(?:\d+|[ivx]+|one|two|three|four|five)"
    r"(?:\s+of\s+\d+)?)?"
)
_PHASE = re.compile(
    r"\b(?:start(?:ing|s|ed)?|begin(?:ning|s)?|began|enter(?:ing|s|ed)?|moving (?:in)?to|"
    r"move (?:in)?to|moved (?:in)?to|now (?:in|on|at)|switching to|switch(?:ed)? to|"
    r"kick(?:ing|ed)? off|on to|onto|next up is|proceeding to)\s+(?:the\s+)?(?:\w+[- ]){0,2}"
    + _PHASE_NOUN
    + r"\b|"
    r"\b" + _PHASE_NOUN + r"(?:\s+\w+)?\s+(?:is |was )?(?:complete|completed|done|finished|"
    r"wrapped up|reached|closed|begins|starts|started|underway|in progress)\b|"
    r"\b(?:\w+ )?(?:phase|stage) (?:is |was )?(?:done|complete|over|finished)\b|"
    r"^(?:now )?moving from \w+ to \w+\.?$|"
    r"\b(?:done with|finished with|through with|wrapped up|completed|finished) (?:the )?"
    r"(?:\w+[- ]){0,2}(?:phase|stage|milestone)\b"
)
_OBJECTIVE = re.compile(
    r"^(?:the|our|my|current) (?:goal|objective|aim|task|mission) "
    r"(?:is|now is|here is|for now is) (?:to )?\w+"
)


def _normalise(text: str) -> str:
    low = " ".join(text.lower().replace("’", "'").split())
    low = expand_contractions(low)
    return low


def _clauses(low: str) -> list[str]:
    return [c.strip() for c in _CLAUSES.split(low) if c.strip()]


def _is_constraint(low: str, clauses: list[str], user: bool) -> tuple[bool, bool]:
    """(a constraint?, an explicit prohibition?)."""
    user = user or bool(_REPORTED.search(low))
    prohibition = any(_PROHIBIT_HEAD.match(c) and not _EPISTEMIC.search(c) for c in clauses)
    if prohibition:
        return True, True
    for i, c in enumerate(clauses):
        if _EPISTEMIC.search(c) or (
            _DESCRIBED_NEVER.search(c) and not re.search(r"\b(?:must|should|may|shall)\b", c)
        ):
            continue
        if re.search(r"\bmust be \w+$", c) and any(_EVIDENCE.search(x) for x in clauses[i + 1 :]):
            continue
        if _DEONTIC.search(c):
            return True, bool(
                re.search(
                    r"\b(?:must not|must never|may not|never|off-?limits|"
                    r"forbidden|prohibited|not allowed)\b",
                    c,
                )
            )
        if _MANNER.match(c) and _OCCASION.search(low):
            continue  # a request for today's work (above), not a rule
        if _RULE_HEAD.match(c) or (user and (_INSTRUCTION_HEAD.match(c) or _VERBLESS_NO.match(c))):
            return True, False
    return False, False


def _is_decision(low: str, clauses: list[str], user: bool) -> bool:
    for c in clauses:
        for m in _DECISION.finditer(c):
            if _PENDING.search(c[: m.start()]) or _OPINION.search(c):
                continue
            if re.match(r"\s*\(", c[m.end() :]):  # approve() is code
                continue
            if _PROCESS.match(c[m.end() :]):
                continue
            return True
    if user:
        return any(
            _USER_CONSENT.match(c) or _USER_CONSENT.match(re.sub(_OPENER, "", c))
            for c in clauses[:2]
        )
    return False


def prohibits(text: str, speaker: str | None = None) -> bool:
    """True when `text` states an explicit prohibition ("never", "do not", "must not"...):
    a line that also says a preference ("I prefer httpx, and never requests") is a rule.

    >>> prohibits("I prefer httpx, and never use requests.", "user")
    True
    >>> prohibits("I prefer httpx, and please keep type hints everywhere.", "user")
    False
    """
    low = _normalise(text)
    return _is_constraint(low, _clauses(low), speaker == "user")[1]


def classify_line(text: str, speaker: str | None = None) -> str | None:
    """The policy kind of one line ("decision", "constraint", "blocker", "phase",
    "objective") or None for narrative. `speaker="user"` for the user's own words.

    Example:
        >>> classify_line("The user signed off on using pgloader for the data copy.")
        'decision'
        >>> classify_line("Whatever happens, keep your hands off the production database.")
        'constraint'
        >>> classify_line("The function never returns None, it raises instead.") is None
        True
    """
    for kind, rule in _LABELS:
        if rule.search(text):
            return kind
    low = _normalise(text)
    if not low or low.endswith("?"):
        return None
    user = speaker == "user"
    clauses = _clauses(low)
    constraint, prohibition = _is_constraint(low, clauses, user)
    blocker = bool(_BLOCKER.search(low)) and not _TRANSIENT.search(low)
    if constraint and (prohibition or not blocker):
        return "constraint"
    if blocker:
        return "blocker"
    if _is_decision(low, clauses, user):
        return "decision"
    if _PHASE.search(low):
        return "phase"
    if _OBJECTIVE.match(low):
        return "objective"
    return None
