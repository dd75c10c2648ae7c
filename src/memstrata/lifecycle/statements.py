"""What a prompt or a final response clearly states: a decision, a constraint, a preference,
or the user's goal. Deterministic rules, no model, tuned for precision.

The hooks record a stated decision as a first-class record (`layers.decisions`) and
take the user's goal for NOW.md; a wrong record is worse than a missed one (the agent
can always call `record_decision`), so only explicit statements count:

    decision    "Decision: ...", "we decided ...", "decided: ...", "we chose / settled on /
                opted for / went with ...", "we'll go with ..."; from the user also
                "let's go with / use / switch to ...", "we'll use ...", "use X instead of Y"
    constraint  "Constraint: / Rule: / Policy: ..."; from the user also a sentence that
                opens with "never", "always", "from now on", "going forward",
                "under no circumstances", "must never", or a clause of it that opens
                with "from now on" / "going forward" ("..., so from now on we ...")
    preference  from the user only: "I prefer ...", "my preference is ...", "I'd rather ...",
                "I like X better"

Questions state nothing. Openers ("OK,", "also", "remember that") are dropped from the
recorded text. What a decision (or a "from now on" rule) replaces is read from
"instead of X", "rather than X", "switch from X", "replace X with", "no longer X",
"..., not X" (`Statement.replaces`).

`goal_of(prompt)` is the user's goal: the prompt's first sentences that ask for work, by
an imperative verb ("Add ...", "Fix ...") or a request ("can you ...", "we need to ...",
"let's ..."), and are not a statement above; None when the prompt sets no new goal (a
continuation, a question, a report such as "the host said no").
"""

from __future__ import annotations

import re

from memstrata.reading.english import expand_contractions
from memstrata.reading.patterns import LazyPattern
from memstrata.values import value_type

GOAL_CHARS = 200

_SENTENCES = LazyPattern(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])|\n+")
_OPENERS = LazyPattern(
    r"^(?:(?:ok|okay|so|also|and|alright|all right|right|great|good|fine|yes|yeah|yep|sure|"
    r"well|btw|by the way|then|now|please|oh|hey|one more thing|just so you know|"
    r"(?:please )?(?:remember|note|keep in mind|for the record)(?: that)?)\b[\s,;:!.\-]*)+",
    re.I,
)
_ANY = (
    r"^(?:the )?(?:final |our )?decision(?: is| was)?\s*[:\-\u2013]\s*\S",
    r"^decided\s*[:\-\u2013]\s*\S",
    r"^(?:we|i|the team|team|everyone|they)\s+(?:have |has |had )?(?:finally |just |now |all )?"
    r"decided\b",
    r"^(?:we|i)\s+(?:chose|picked|settled on|opted for|went with|are going with|am going with)\b",
    r"^we\s+(?:will|shall|are going to)\s+(?:go with|stick with)\b",
)
_USER = (
    r"^let us\s+(?:go with|use|switch to|stick with|keep|adopt|pick|choose|move to)\b",
    r"^(?:we|i)\s+(?:will|shall|are going to)\s+(?:use|switch to|adopt|keep|move to)\b",
    r"^(?:go with|use|switch to|stick with|move to)\s+.+\b(?:instead of|rather than)\b",
)
_DECISION_ANY = LazyPattern("|".join(_ANY))
_DECISION_USER = LazyPattern("|".join(_USER))
_CONSTRAINT_ANY = LazyPattern(
    r"^(?:safety )?(?:constraint|rule|policy|requirement|hard rule)\s*[:\-\u2013]\s*\S"
)
_CONSTRAINT_USER = LazyPattern(
    r"^(?:never|always|from now on|going forward|in (?:the )?future|under no circumstances|"
    r"(?:we|you) must (?:never|always)|must (?:never|always)|do not ever)\b(?! mind\b)"
)
# "The rare species matter most, so from now on we judge by macro-F1": a rule stated in a
# clause of its own after a comma, a semicolon or "so / and / but", not only up front.
_CONSTRAINT_CLAUSE = LazyPattern(
    r"(?:[,;:]\s*|\s)(?:(?:so|and|but|then)\s+)?(?:from now on|going forward)\b"
    r"(?=,?\s+(?:we|you|i|all|every|each|the|our|only|always|never|please)\b)"
)
_FROM_NOW = LazyPattern(r"\b(?:from now on|going forward)\b")
_PREFERENCE_USER = LazyPattern(
    r"^(?:i|we)\s+(?:really |always |generally |strongly |much )?prefer\b|^my preference is\b|"
    r"^i would (?:rather|prefer)\b|^i (?:really )?like \S+(?: \S+){0,3} better\b"
)
_REPLACES = LazyPattern(
    r"\b(?:instead of|rather than|no longer(?: use| using)?|"
    r"(?:switch|switching|switched|move|moving|moved|migrate|migrating|migrated|change|"
    r"changing|changed|go|going) (?:away )?from|replac(?:e|es|ed|ing)|drop(?:s|ped|ping)?)"
    r"\s+(?:the |a |an |using |our )?([\w.+#-]{2,})"
    r"|,\s+not\s+(?:the |a |an |our )?(?!(?:just|only|yet|now|always|ever|even|really|"
    r"sure|that|this|all|every|one|once|twice|so|too|much|more|less|before|after|because|"
    r"if|when|to|in|on|at|by|for|with|as|here|there|it|them|me|us|you|we|anymore)\b)"
    r"([\w.+#-]{2,})"
)
_CONTINUE = LazyPattern(
    r"^(?:please )?(?:continue|go on|keep going|carry on|proceed|resume|next|go ahead|do it|"
    r"yes|yep|yeah|ok|okay|sure|sounds good|looks good|lgtm|thanks|thank you|great|perfect|"
    r"fine|done|cool|nice|go|ship it|that works|works for me|agreed|right)\b[\s\w,.!']{0,24}$"
)
_REQUEST = LazyPattern(
    r"^(?:(?:can|could|would|will) you|please|how about|let us|help me|"
    r"(?:i|we) (?:need|want|would like|have) (?:you )?to|i want you to|your task is|"
    r"the (?:goal|task|next step) is|next,? )\b"
)
# Verbs a goal opens with ("Add pagination", "Fix the flaky test"): a prompt sentence that
# opens otherwise ("I haven't had time", "The host says no") reports, it sets no goal.
_VERBS = frozenset(
    [
        "add",
        "adapt",
        "adjust",
        "allow",
        "analyse",
        "analyze",
        "apply",
        "audit",
        "automate",
        "backfill",
        "benchmark",
        "build",
        "bump",
        "cache",
        "calculate",
        "change",
        "check",
        "clean",
        "clear",
        "compare",
        "compute",
        "configure",
        "convert",
        "create",
        "debug",
        "define",
        "delete",
        "deploy",
        "design",
        "document",
        "draft",
        "drop",
        "edit",
        "email",
        "enable",
        "ensure",
        "estimate",
        "evaluate",
        "explain",
        "export",
        "extend",
        "extract",
        "figure",
        "find",
        "finish",
        "fix",
        "format",
        "generate",
        "get",
        "handle",
        "harden",
        "implement",
        "import",
        "improve",
        "include",
        "increase",
        "install",
        "integrate",
        "introduce",
        "investigate",
        "keep",
        "limit",
        "list",
        "load",
        "log",
        "look",
        "lower",
        "make",
        "map",
        "measure",
        "merge",
        "migrate",
        "monitor",
        "move",
        "name",
        "normalise",
        "normalize",
        "open",
        "optimise",
        "optimize",
        "paginate",
        "parse",
        "patch",
        "pin",
        "plan",
        "polish",
        "port",
        "prepare",
        "prevent",
        "profile",
        "prototype",
        "publish",
        "put",
        "raise",
        "read",
        "rebase",
        "record",
        "reduce",
        "refactor",
        "register",
        "reload",
        "remove",
        "rename",
        "render",
        "reorganise",
        "reorganize",
        "repair",
        "replace",
        "report",
        "reproduce",
        "research",
        "reset",
        "resolve",
        "restore",
        "restructure",
        "retry",
        "return",
        "revert",
        "review",
        "rewrite",
        "roll",
        "run",
        "save",
        "scaffold",
        "schedule",
        "search",
        "secure",
        "send",
        "separate",
        "set",
        "setup",
        "ship",
        "show",
        "simplify",
        "sort",
        "speed",
        "split",
        "start",
        "stop",
        "store",
        "summarise",
        "summarize",
        "support",
        "switch",
        "sync",
        "test",
        "throttle",
        "tidy",
        "translate",
        "trim",
        "try",
        "tune",
        "turn",
        "undo",
        "unify",
        "update",
        "upgrade",
        "upload",
        "use",
        "validate",
        "verify",
        "wire",
        "wrap",
        "write",
    ]
)
_WORD = LazyPattern(r"[^\W_]+")


@value_type(frozen=True)
class Statement:
    kind: str  # "decision" | "constraint" | "preference"
    text: str  # the sentence as said, openers dropped
    replaces: tuple[str, ...] = ()  # words naming what it replaces ("WeasyPrint")


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCES.split(text.strip()) if s and s.strip()]


def _norm(text: str) -> str:
    return expand_contractions(text.lower().replace("\u2019", "'").replace("\u2018", "'"))


def _open(sentence: str) -> str:
    """The sentence without its openers ("OK, also, remember that ...")."""
    return _OPENERS.sub("", sentence.strip()).strip()


def kind_of(sentence: str, speaker: str) -> str | None:
    """The kind a sentence states ("decision", "constraint", "preference"), or None."""
    body = _open(sentence)
    low = _norm(body)
    if not low or low.endswith("?") or len(_WORD.findall(low)) < 3:
        return None
    user = speaker == "user"
    if _CONSTRAINT_ANY.search(low) or (
        user and (_CONSTRAINT_USER.search(low) or _CONSTRAINT_CLAUSE.search(low))
    ):
        return "constraint"
    if _DECISION_ANY.search(low) or (user and _DECISION_USER.search(low)):
        return "decision"
    if user and _PREFERENCE_USER.search(low):
        return "preference"
    return None


_LABEL = LazyPattern(
    r"^(?:the )?(?:final )?(?:decision|decided|constraint|rule|policy|requirement|preference)"
    r"\s*[:\-\u2013]\s*",
    re.I,
)


def statements(text: str, speaker: str) -> list[Statement]:
    """The decisions, constraints and preferences `text` clearly states, in order.

    Example:
        >>> statements("OK, we decided: 15-minute access tokens. Thanks!", "user")
        [Statement(kind='decision', text='We decided: 15-minute access tokens.', replaces=())]
    """
    out: list[Statement] = []
    for sentence in sentences(text):
        kind = kind_of(sentence, speaker)
        if kind is None:
            continue
        body = _open(sentence)
        found = (m.group(1) or m.group(2) for m in _REPLACES.finditer(_norm(body)))
        named = (w.rstrip(".") for w in found)  # "instead of pandas." names "pandas"
        words = tuple(dict.fromkeys(named))
        said = _LABEL.sub("", body).strip() or body  # "Decision: X" is recorded as "X"
        replaces = words if kind == "decision" or _FROM_NOW.search(_norm(body)) else ()
        out.append(Statement(kind, said[:1].upper() + said[1:], replaces))
    return out


def is_continuation(prompt: str) -> bool:
    """True for a prompt that only says to go on ("continue", "ok, go ahead", "yes")."""
    return bool(_CONTINUE.match(_norm(_open(prompt)) or _norm(prompt.strip())))


def _is_goal(text: str) -> bool:
    low = _norm(text)
    if not low or _CONTINUE.match(low):
        return False
    if low.endswith("?") and not _REQUEST.match(low):
        return False  # a question is asked, not a goal set
    words = _WORD.findall(low)
    return len(words) >= 2 and (
        words[0] in _VERBS or bool(_REQUEST.match(low)) or bool(_AGAIN.match(low))
    )


# Work asked for by pointing back: "do the same for staging", "same as before but ...".
_AGAIN = LazyPattern(
    r"^(?:do|repeat|redo)\s+(?:it|that|this|them|so|the same)\b|"
    r"^(?:the )?same (?:as|again|thing|for|but|with|here)\b"
)
# Words that point back to something said before ("Look into it", "Set something up").
_POINTING = frozenset(
    ["it", "that", "this", "them", "those", "these", "something", "same", "so", "there"]
)
REFERENT_CHARS = 100


def refers_back(goal: str) -> bool:
    """True for a goal that names its object only by pointing back: a pointing word among
    its first four words ("Look into it.", "Let's do that with WeasyPrint", "Set something
    up."), or three words or fewer ("Can you look?", "Prepare questions.")."""
    words = _WORD.findall(_norm(_open(goal)))
    return len(words) <= 3 or any(w in _POINTING for w in words[:4])


def with_referent(referent: str, goal: str) -> str:
    """ "<what was said before>: <goal>", the referent clipped at a word, so that the goal
    line says what "it" or "that" was."""
    said = " ".join(_open(referent).split()).rstrip(" .!?;:,")
    if len(said) > REFERENT_CHARS:
        said = said[: REFERENT_CHARS - 1].rsplit(" ", 1)[0].rstrip(" .!?;:,") + "…"
    if not said:
        return goal
    lead = goal[:1].lower() if goal[1:2].islower() else goal[:1]
    return f"{said[:1].upper()}{said[1:]}: {lead}{goal[1:]}"


def goal_of(prompt: str, before: str | None = None) -> str | None:
    """The user's goal in `prompt` (its first one or two goal sentences), or None. A goal
    that only points back ("Look into it.", `refers_back`) carries what it points to: the
    sentence before it, or, when it opens the prompt, `before` (the previous prompt's
    goal, NOW's objective), as "<referent>: <goal>".

    Example:
        >>> goal_of("Start the PDF export. Also, remember that I prefer dark mode.")
        'Start the PDF export.'
        >>> goal_of("The renewal has failed for weeks. Can you look?")
        'The renewal has failed for weeks: can you look?'
    """
    if not prompt.strip() or is_continuation(prompt):
        return None
    kept: list[str] = []
    said = sentences(prompt)
    last = -2  # the index of the last sentence kept
    for i, sentence in enumerate(said):
        if kind_of(sentence, "user") is not None:
            continue
        body = _open(sentence)
        _, sep, rest = body.partition(": ")
        for part in (body, rest) if sep else (body,):  # "While we wait: fix the page"
            if _is_goal(part):
                goal = part[:1].upper() + part[1:]
                if refers_back(goal) and last != i - 1:
                    referent = said[i - 1] if i > 0 else before
                    goal = with_referent(referent, goal) if referent else goal
                kept.append(goal)
                last = i
                break
        if len(kept) == 2:
            break
    if not kept:
        return None
    flat = " ".join(" ".join(kept).split())
    return flat if len(flat) <= GOAL_CHARS else flat[: GOAL_CHARS - 1].rsplit(" ", 1)[0] + "…"
