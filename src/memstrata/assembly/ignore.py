"""Does a user message ask the agent not to use its memory this turn?

When the user says "ignore memory" (or an equivalent: "don't use memory",
"fresh context"), the agent must not consult memory for that turn. People say it
in many ways, and "memory", "context", "notes" and "history" are also everyday
objects of the work ("memory leak", "context manager", "memory-related tests",
"the notes column"). So this reads the request by its grammar, not by a list of
sentences. A clause (split at punctuation) asks when it holds one of:

1. a DISREGARD cue followed, within a few words, with no conjunction and no other
   verb between ("avoid allocating memory" avoids allocating), by a MEMORY object:
   the assistant's own memory. Cues are verbs said to the assistant ("ignore",
   "skip", "turn off"; not "the agent should ignore ..."), prepositions ("no",
   "without", "not from"), or a negation addressed to the assistant with any verb
   but a writing one ("do not use|consult|bring up|let ... influence", "could you
   not look at", "I don't want ..."; not "don't write this to memory", "it does
   not use", "I do not remember");
2. a MEMORY object followed by "off" / "aside" / "not needed", or put "out" of
   the way ("leave your notes out of this", "keep memory out of it");
3. a restart request in the imperative: "fresh context", "clean slate", "fresh
   start", "start over", "begin from scratch", when the phrase is not itself a
   modifier or described behaviour ("a fresh context manager", "a clean slate
   migration", "starts with a fresh context each time", "start fresh on the CSS");
4. a counterfactual about the conversation or the assistant's knowledge: "treat
   this as a new conversation", "as if we had never talked", "pretend you know
   nothing about this repo".

A MEMORY object is "memory", a memory file (NOTES.md, MEMORY.md ...), or a
context/notes/history/facts noun owned by the assistant ("your notes", "our
previous chats", "saved context", "the context you have saved", "what we
discussed earlier"). It is the *topic* of the work, not the assistant's memory,
when it modifies a following noun (English compounds put the head last: "memory
leak", "memory-related test", "history table"; only closed-class words, adverbs and
a few memory heads like "files" or "lookups" may follow it), when a technical
noun modifies it ("GPU memory", "browser history", "React context"), when it is
the speaker's ("my memory", "I have no memory of"), a storage location ("held in
memory", "out of memory"), or quoted ("the 'ignore memory' flag" mentions, not
asks). "Don't forget", "don't ignore", "don't skip" negate the cue.

No LLM: a deterministic rule. Measured on labelled sets it was not written from
(`tests/assembly/test_ignore_memory.py`), which print their precision and recall.
"""

from __future__ import annotations

import re

from memstrata.reading.english import expand_contractions

WINDOW = 6  # words between a cue and the memory it applies to

# A quoted phrase is mentioned, not said ("add an 'ignore memory' flag").
_QUOTED = re.compile(r"(?<![\w'])'[^'\n]{1,80}'(?![\w'])|\"[^\"\n]{1,80}\"")

_MEM_FILES = r"(?:notes|memory|context|log|now|identity|agents)\.md"
_OWNER = r"(?:your|our|the agent's|your own)"
_HELD = (
    r"saved|stored|cached|remembered|recalled|persisted|persistent|prior|previous|past|"
    r"earlier|old|older|existing|accumulated|long[- ]term|background|learned|learnt"
)
_HELD_NOUNS = (
    r"context|notes?|history|knowledge|facts?|information|info|sessions?|preferences|"
    r"conversations?|chats?|discussions?|interactions?|exchanges?"
)
_KNOW = (
    r"saved|stored|remember|remembered|recall|recalled|know|knew|learned|learnt|noted|"
    r"recorded|collected|gathered|kept|wrote down|written down|memorised|memorized|"
    r"discussed|talked about|said|covered|decided|agreed on"
)
_MEMORY = re.compile(
    r"\b(?:memor(?:y|ies)|recollections?)\b|\b" + _MEM_FILES + r"(?![\w/])|"
    r"\b(?:" + _OWNER + r"|" + _HELD + r")(?: (?:" + _HELD + r"))* (?:" + _HELD_NOUNS + r")\b|"
    r"\b(?:conversation|chat|session) history\b|"
    r"\b(?:anything|everything|nothing|stuff|things|context|notes|knowledge|information|facts)"
    r" from (?:(?:our |your )?(?:previous|past|earlier|prior|last|other) (?:sessions?|chats?|"
    r"conversations?|runs?|tasks?)|before|earlier|last time|the past|previously)\b|"
    r"\b(?:anything|everything|whatever|all) (?:" + _HELD + r")\b"
    r"(?! (?:" + _HELD + r"|" + _HELD_NOUNS + r"|memory|memories)\b)|"
    r"\b(?:the|any|whatever|all the|those) (?:" + _HELD_NOUNS + r"|memory|memories|state)"
    r"(?: that)? you (?:have |had )?"
    r"(?:already )?[a-z]+(?: up| together| down)?\b|"
    r"\b(?:what|whatever|anything|everything|all|stuff|things|the (?:" + _HELD_NOUNS + r"))"
    r"(?: that)? (?:you|we) (?:have |had |already |might have |may have )?(?:" + _KNOW + r")\b"
)
# A technical noun before it makes a compound ("GPU memory"): a topic.
_MODIFIED = re.compile(
    r"\b(?:gpu|cpu|shared|heap|stack|virtual|physical|main|video|flash|process|container|"
    r"system|free|available|peak|total|ram|browser|git|commit|command|shell|undo|version|"
    r"revision|order|purchase|edit|search|call|transaction|audit|react|execution|security|"
    r"request|ssl|tls|canvas|graphics|build|app|application|async|thread|worker|runtime|"
    r"redux|vue|django|flask|spring|page|user|users|release|meeting|speaker|lecture|"
    r"patient|medical|changelog)[ -]$"
)
_STORAGE = re.compile(
    r"\b(?:out of|(?:held|kept|stored|cached|loaded|resident|lives?|fits?|"
    r"mapped|stays?|put|read|written|saved|keep|hold|store|cache|load|"
    r"fit|map|write|save|commit|committed)(?: \w+){0,2} (?:in|into|to))\s*$"
)
_SPEAKER = re.compile(
    r"\b(?:my|i|we) (?:have |had |got )?(?:no )?$|\b(?:my|our own) $|"
    r"\b(?:has|have|had|having|got) no $"
)  # "the user has no memory of"
# What may follow a memory noun that is not a modifier: closed-class words, a few
# memory heads (files, lookups ...), verbs of influence ("let your notes influence").
_NEXT_OK_WORDS = """
for in on at about of from to with without as into this that these those here there now
please and or but nor so then when while if unless because since before after until either
too anymore entirely completely whatsoever today yet right just again is are was were be been
being will would should can could may might must do does did not no any all the a an
time one it them me us you off aside out either's
files file folder folders directory dir store stores bank banks entries entry contents content
lookups lookup look-ups access retrieval recall reads reading loading layer layers items
influence affect bias color colour shape guide sway inform cloud change decide
earlier previously already yesterday recently ago together last far lately
stuff things thing bits side part business whatsoever
involved included enabled used loaded consulted considered applied attached
"""
_NEXT_OK = frozenset(_NEXT_OK_WORDS.split())
_CUE = re.compile(
    r"\b(?:ignor(?:e|es|ed|ing)|disregard(?:s|ed|ing)?|skip(?:s|ped|ping)?|"
    r"bypass(?:es|ed|ing)?|forget(?:s|ting)?(?: about)?|without|no|none of|nothing from|"
    r"not from|not on|not with|not in|instead of|rather than|set aside|put aside|"
    r"leav(?:e|es|ing) out|leave behind|drop|exclud(?:e|es|ed|ing)|avoid(?:s|ed|ing)?|stop|"
    r"turn off|switch off|disabl(?:e|es|ed|ing)|reset|clear|wipe|eras(?:e|ing)|discard|"
    r"throw away|throw out|never mind|minus|sans|no need for)\b"
)
_NEGATED_CUE = re.compile(
    r"\b(?:do|did|will|can|should|please|must) not (?:forget|ignore|skip|"
    r"drop|disregard|bypass|avoid|stop|clear|reset|erase|wipe)\b|"
    r"\bwithout (?:forgetting|ignoring|skipping|dropping)\b"
)
_BOUNDARY = re.compile(
    r"\b(?:and|then|but|so|because|while|when|if|unless|since|after|before|"
    r"where|until)\b"
)
# A negation addressed to the assistant ("do not ...", "could you not ...", "you should
# not ...", "never ..."), not a description ("it does not use", "I do not remember").
_NOT = re.compile(r"\b(?:not|never)\b")
_ADDRESSED = re.compile(
    r"(?:^|\b(?:you|we|please|and|just|so|then|now|kindly|also|or)\s+)"
    r"(?:(?:do|could|would|will|can|should|must|need|really|please|you|ever|kindly)\s+)*$"
)
_VERB_CUE = re.compile(
    r"^(?:ignor|disregard|skip|bypass|forget|set|put|leav|drop|exclud|avoid|"
    r"stop|turn|switch|disabl|reset|clear|wipe|eras|discard|throw|never)"
)
_IMPERATIVE = re.compile(
    r"(?:^|\b(?:you|we|please|and|then|just|so|now|also|or|to|kindly|first|simply)\s+)"
    r"(?:(?:could|would|can|will|should|must|do|please|just|also|really|simply|you|kindly|"
    r"first)\s+)*$"
)
_RELATIVE = re.compile(
    r"\b(?:answer|reply|response|review|explanation|summary|version|take|one|"
    r"approach) (?:that|which) $"
)
_SPEAKER_WANTS_NOT = re.compile(r"\b(?:i|we) (?:do|would) not (?:want|need|like)\b")
# Verbs that act on memory without reading it: "don't write this to memory" asks something
# else, and a verb between a cue and the memory takes the cue ("avoid allocating memory").
_WRITE_WORDS = """
write writing wrote save saving store storing log logging add adding put putting record
recording commit committing persist persisting append appending update updating change
changing edit editing modify modifying delete deleting remove removing lose losing overwrite
overwriting fill filling pollute polluting clutter bloat forget forgetting erase erasing
wipe wiping clear clearing reset corrupt corrupting leak leaking share sharing expose send
sending allocate allocating free freeing grow growing flush flushing dump dumping
"""
_WRITE = frozenset(_WRITE_WORDS.split())
_READ_ING_WORDS = """
using consulting looking reading checking relying loading pulling bringing drawing referring
touching accessing applying referencing factoring considering searching mixing carrying
reusing taking basing leaning opening going peeking including recalling remembering
"""
_READ_ING = frozenset(_READ_ING_WORDS.split())
_NOT_VERB_ING = frozenset(
    [
        "anything",
        "everything",
        "nothing",
        "something",
        "during",
        "morning",
        "evening",
        "ceiling",
        "building",
        "setting",
        "string",
    ]
)
_OUT = re.compile(
    r"\b(?:leave|keep|take|get|put|set)\b(?P<obj>.{0,40}?)\b(?:out|alone|aside)\b"
    r"(?P<rest>.*)$"
)
_DEICTIC_REST = re.compile(
    r"^\s*(?:of (?:it|this|that|the (?:answer|picture|reply|loop))"
    r"(?: one| time)?|for (?:now|this|the moment)|this time|please|"
    r"here|now)?\s*$"
)
_BARE = re.compile(
    r"^(?:no|without|ignore|skip|reset|clear|drop|disable|disregard|bypass|wipe|forget|"
    r"turn off|switch off) (?:(?:the|your|all|any) )?(?:notes|context|history|recall|memories|"
    r"memory)(?: for (?:this|the next|now)(?: \w+)?| this time| here| now| please| entirely|"
    r" completely| altogether)*$"
)
_AFTER = re.compile(
    r"^\s*[:=]?\s*(?:(?:is |are |stays |kept |left )?(?:off|aside|out)|"
    r"(?:turned|switched|shut|toggled) off|disabled|not needed|is not needed|"
    r"are not needed|not required)(?![\w-])"
)

_POLITE = (
    r"^(?:(?:please|pls|ok|okay|so|now|just|also|and|then|hey|hi|kindly|alright|"
    r"let us|can you|could you|would you|will you|we should|you should|i want you to|"
    r"i would like you to|i would like to|i want to|i want|i would like|i need|we need|"
    r"give me|use|with|from|in|on|take|starting|start with|begin with|answer|respond|"
    r"reply|go|work|do this|do it|think|try|look at this|look|this time|for this one|"
    r"for this|here)\s+)*"
)
_FRESH = re.compile(
    r"\b(?:(?:a|an|the|your)\s+)?(?:(?:brand[- ])?new|fresh|clean|blank|empty|wiped)\s+"
    r"(?:context|slate|start|session|chat|conversation|thread|memory)\b|"
    r"\b(?:wipe|clean|clear)\s+(?:the|your)\s+slate(?:\s+clean)?\b"
)
_RESTART = re.compile(
    r"\b(?:start|begin|restart|go|come at this|approach this|do this|do it)\s+"
    r"(?:fresh|afresh|over|again|anew|from scratch|from zero|from nothing|from square one)\b"
)
_PURPOSE_OK = re.compile(
    r"^\s*for\s+(?:this|that|now|me|us|the (?:next|following|rest)|"
    r"a (?:moment|bit|while|second)|one|once|today)\b"
)
_DESCRIBED = re.compile(
    r"^\s*(?:each|every|per|whenever|for each|for every|on each|on every|"
    r"in each|in every|on (?:the|a|an|our|my)|for (?:the|a|an|my|our|all|"
    r"each|every)|of (?:the|a|an))\b"
)
_FINITE = frozenset(
    [
        "is",
        "are",
        "was",
        "were",
        "will",
        "would",
        "should",
        "can",
        "could",
        "may",
        "might",
        "must",
        "gets",
        "has",
        "had",
        "starts",
        "begins",
        "opens",
        "needs",
        "takes",
    ]
)
_WORK_AFTER = re.compile(
    r"^\s*(?:with|using|in|on|at|by) (?!(?:no|a (?:clean|blank|fresh|new|"
    r"empty) (?:slate|context|mind)|zero|nothing|an empty|your memory)\b)"
)
_THIRD_PERSON = re.compile(
    r"\b(?:starts|begins|opens|gets|creates|uses|has|needs|takes|"
    r"receives|spawns|runs)\b(?: with| from| in| on)?\s*$"
)
_DEV_VERB = re.compile(
    r"^(?:write|create|implement|add|build|make|generate|refactor|fix|test|document|design|"
    r"migrate|deploy|configure|define|rename|code|initiali[sz]e|instantiate|construct|return|"
    r"pass|allocate|open|spawn|wrap|mock|render|set up|setup|provide|inject|ship|merge)\b"
)
_CF_LEAD = re.compile(
    r"^(?:(?:act|behave|respond|answer|reply|proceed|talk|work|continue|carry on|go on)\s+"
    r"(?:as if|as though|like)|pretend|imagine|assume|suppose)\s+(?:that\s+)?"
)
_CF_BODY = re.compile(
    r"^(?:(?:this is|this were|this was|it is|it were|we are|we were|we are in|we were in)\s+"
    r"(?:a|an|our)\s+(?:(?:very|whole|totally|completely|entirely|brand)[- ])?"
    r"(?:new|first|fresh|separate)\s+(?:conversation|chat|session|thread|interaction)\b|"
    r"you\s+(?:have |had )?forgotten\b|"
    r"you (?:are|were) (?:seeing|looking at|reading|hearing about|meeting) .{0,40}for the first time|"
    r"(?:this is|this were|it is|it were) the first time (?:we|you)\b|"
    r"(?:you|we)\s+(?:have |had )?never\s+(?:seen|met|talked|spoken|chatted|worked|heard|"
    r"discussed|been|looked at|read|touched)\b|"
    r"you\s+(?:know nothing|knew nothing|remember nothing|recall nothing|"
    r"(?:do|did|can) not (?:know|remember|recall)|have no (?:memory|memories|context|history|"
    r"knowledge|prior knowledge|notes|recollection))\b)"
)
_TREAT_AS_NEW = re.compile(
    r"^(?:treat|consider|handle|approach|take|regard|call)\s+(?:this|it|the following|"
    r"this \w+)\s+(?:as\s+)?"
    r"(?:a|an|the|our)\s+(?:brand[- ]new|new|first|fresh|standalone|isolated|separate|"
    r"independent|one-off)\s+(?:conversation|chat|session|thread|question|request|task|"
    r"interaction)\b"
)
_CLAUSES = re.compile(r"[,;!?\n()\[\]—–]+|\.(?=\s|$)|:\s|\s-\s|\bbut\b")


def _normalise(text: str) -> str:
    low = text.lower().replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"')
    low = low.replace("`", "").replace("w/o ", "without ")
    low = expand_contractions(low)
    unquoted = _QUOTED.sub(" ", low)
    if re.search(r"\w", unquoted):  # a message that is only a quotation is still said
        low = unquoted
    return " ".join(low.split())


def _next_word(clause: str, end: int) -> str | None:
    """The word right after `end` (None at the end of the clause); '-' joins compounds."""
    rest = clause[end:]
    if rest.startswith("-") and rest[1:2].isalpha():
        return "-"
    m = re.match(r"\s*([\w'.-]+)", rest)
    return m.group(1).rstrip(".") if m else None


def _is_topic(clause: str, start: int, end: int) -> bool:
    """The memory word names a thing of the work, not the assistant's memory."""
    before = clause[:start]
    if before.endswith("-") or _MODIFIED.search(before) or _STORAGE.search(before):
        return True
    if _SPEAKER.search(before):
        return True
    if re.search(r"\b(?:you|we)\b", clause[start:end]):
        return False  # "the context you have saved ...": ends in a verb, not a modifier
    nxt = _next_word(clause, end)
    if nxt is None:
        return False
    if nxt == "-":
        return True
    return not (nxt in _NEXT_OK or nxt.endswith("ly") or not nxt[:1].isalpha())


def _memory_spans(clause: str) -> list[tuple[int, int]]:
    return [m.span() for m in _MEMORY.finditer(clause) if not _is_topic(clause, *m.span())]


def _cue_applies(clause: str, cue_end: int, start: int) -> bool:
    """The cue ending at `cue_end` governs the memory object starting at `start`."""
    if start < cue_end:
        return False
    words = clause[cue_end:start].split()
    if len(words) > WINDOW or _BOUNDARY.search(clause[cue_end:start]):
        return False
    return not any(w in _WRITE or _participle(w) for w in words)


def _participle(word: str) -> bool:
    """A verb's -ing form other than a reading verb ("allocating"; not "bring", "anything")."""
    stem = word[:-3]
    return (
        word.endswith("ing")
        and word not in _READ_ING
        and word not in _NOT_VERB_ING
        and len(stem) >= 2
        and bool(re.search(r"[aeiouy]", stem))
    )


def _said_to_assistant(clause: str, cue: re.Match[str]) -> bool:
    """A verb cue is an instruction ("ignore memory", "can you skip your notes"), not a
    description of something else ("the agent should ignore memory entries"); a
    prepositional cue ("without", "no", "not from") attaches to any request."""
    word = cue.group(0)
    if not _VERB_CUE.match(word):
        return True
    before = re.sub(_POLITE, "", clause[: cue.start()])
    if _IMPERATIVE.search(before):
        return True
    return bool(re.search(r"(?:e|s)s$|s$", word.split()[0])) and bool(_RELATIVE.search(before))


def _negation_applies(clause: str, spans: list[tuple[int, int]]) -> bool:
    """'do not X your notes', 'you should not rely on stored facts', 'not on your notes'."""
    for neg in _NOT.finditer(clause):
        before = re.sub(_POLITE, "", clause[: neg.start()])
        if not (_ADDRESSED.search(before) or _SPEAKER_WANTS_NOT.search(clause[: neg.end() + 20])):
            continue
        for start, _ in spans:
            if _cue_applies(clause, neg.end(), start) and not any(
                w in _WRITE for w in clause[neg.end() : start].split()
            ):
                return True
    return False


def _fresh_request(clause: str) -> bool:
    """'fresh context', 'clean slate', 'start over' ... said as a request (rule 3)."""
    if _DEV_VERB.match(re.sub(_POLITE, "", clause)):
        return False
    for m in _FRESH.finditer(clause):
        nxt = _next_word(clause, m.end())
        if nxt is not None and (nxt == "-" or not (nxt in _NEXT_OK or nxt.endswith("ly"))):
            continue  # a modifier: "a clean slate migration", "a fresh context manager"
        if nxt in _FINITE:
            continue  # its subject: "a new session is created for each client"
        after = clause[m.end() :]
        if _DESCRIBED.match(after) and not _PURPOSE_OK.match(after):
            continue  # "... a fresh context each time", "fresh context for the new hire doc"
        if _THIRD_PERSON.search(clause[: m.start()]):
            continue  # "each worker starts with a fresh context": described, not asked
        return True
    for m in _RESTART.finditer(clause):
        lead = clause[: m.start()]
        if re.sub(_POLITE, "", lead).strip():
            continue  # "the function should start fresh": not addressed to the assistant
        after = clause[m.end() :]
        if (_DESCRIBED.match(after) or _WORK_AFTER.match(after)) and not _PURPOSE_OK.match(after):
            continue  # "start fresh on the CSS", "start over with a new branch"
        return True
    return False


def _counterfactual(clause: str) -> bool:
    """'treat this as a new conversation', 'pretend you know nothing' (rule 4), asked."""
    for m in re.finditer(r"\bas (?:if|though) (?:that )?", clause):
        if _CF_BODY.match(clause[m.end() :]) and clause[m.end() :].startswith("you"):
            return True  # "review this as if you had never seen the codebase"
    for bare in (clause, re.sub(_POLITE, "", clause)):
        if _TREAT_AS_NEW.match(bare):
            return True
        lead = _CF_LEAD.match(bare)
        if lead and _CF_BODY.match(bare[lead.end() :]):
            return True
    return False


def asks_to_ignore_memory(message: str) -> bool:
    """True when a user message asks not to use memory for this turn.

    Example:
        >>> asks_to_ignore_memory("no memory please")
        True
        >>> asks_to_ignore_memory("Treat this as a brand new conversation.")
        True
        >>> asks_to_ignore_memory("ignore memory-related test failures for now")
        False
    """
    text = _normalise(message or "")
    if not text:
        return False
    for m in _MEMORY.finditer(text):  # "memory: off", "memory turned off for this one"
        before = text[: m.start()]
        if _AFTER.match(text[m.end() :]) and not (before.endswith("-") or _MODIFIED.search(before)):
            return True
    for clause in _CLAUSES.split(text):
        clause = _NEGATED_CUE.sub(" ", clause).strip()
        if not clause:
            continue
        if _fresh_request(clause) or _counterfactual(clause):
            return True
        if _BARE.match(re.sub(_POLITE, "", clause)):
            return True  # "no notes", "new context, no history"
        for m in _OUT.finditer(clause):  # "leave your notes out of this", "keep memory out"
            obj = m.group("obj")
            if _memory_spans(obj) or (
                _BARE.match("no " + obj.strip().removeprefix("the "))
                and _DEICTIC_REST.match(m.group("rest"))
            ):
                return True
        spans = _memory_spans(clause)
        if not spans:
            continue
        for cue in _CUE.finditer(clause):
            if _said_to_assistant(clause, cue) and any(
                _cue_applies(clause, cue.end(), start) for start, _ in spans
            ):
                return True
        if _negation_applies(clause, spans):
            return True
    return False
