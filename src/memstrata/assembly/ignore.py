"""Does a user message ask the agent not to use its memory this turn? (seed 001)

Seed 001: when the user says "ignore memory" (or an equivalent: "don't use memory",
"fresh context"), the agent must not consult memory for that turn. People say it
in many ways ("no memory please", "leave your notes out of this", "don't rely on
past sessions"), so this reads the request by its parts instead of matching a
list of sentences:

    a clause holds a DISREGARD cue followed, within a few words, by a MEMORY object
    ("ignore" / "no" / "without" / "don't use|consult|rely on|look at" ...  +
     "memory" / "your notes" / "past sessions" / "what you remember" ...),
    or a MEMORY object followed by "off" / "aside" / "not needed",
    or one of the fixed requests: "fresh context", "clean slate", "blank slate",
    "pretend you don't remember".

Clauses are split at punctuation, so "No, the memory tool is fine" is two clauses
and asks nothing. What is not a request: the speaker's own memory ("I have no
memory of writing this"), memory as a computing term ("no memory leak", "out of
memory", "in-memory cache"), and asking to *save* ("don't write this to memory":
a different request), or "don't forget".

No LLM: a deterministic rule, tested on paraphrases it was not written from
(`tests/seeds/test_seed_001.py`).
"""

from __future__ import annotations

import re

WINDOW = 6  # words between a cue and the memory it applies to

_CONTRACTIONS = (
    (re.compile(r"\b(do|does|did|could|would|should|is|are|was|were|have|has)n[’']?t\b"), r"\1 not"),
    (re.compile(r"\bdon[’']?t\b|\bdont\b"), "do not"),
    (re.compile(r"\bwon[’']?t\b"), "will not"),
    (re.compile(r"\bcan[’']?t\b|\bcannot\b"), "can not"),
    (re.compile(r"\bi[’']m\b"), "i am"),
    (re.compile(r"\byou[’']ve\b"), "you have"),
    (re.compile(r"\bi[’']ve\b"), "i have"),
)

# Memory as a computing term, the speaker's own memory, and places one saves to.
_NOT_MEMORY = re.compile(
    r"\bmemor(y|ies)[ -](leaks?|usage|use|footprint|alloc\w*|limits?|pressure|errors?|"
    r"corruption|safe\w*|profil\w*|consumption|management|bandwidth|banks?|cards?|"
    r"address\w*|layout|model|barriers?|mapped|maps?|pools?|overhead|tool|module|"
    r"server|mcp|file|files|api|layer|bug|bugs|issue|test|tests|system)\b|"
    r"\b(out of|in|into|to) memory\b|\bin-memory\b|"
    r"\b(i|we) (have|had|got) no memor(y|ies)\b|\bmy memor(y|ies)\b|\bour memor(y|ies)\b")

_MEMORY = re.compile(
    r"\bmemor(y|ies)\b|\bnotes(\.md)?\b|\bnotes\.md\b|\b(saved|stored|cached) "
    r"(facts?|notes?|context|knowledge|information|info|stuff|things)\b|"
    r"\b(previous|past|prior|earlier|old|older|stored|saved|persistent|long[- ]term|"
    r"remembered) (context|sessions?|conversations?|chats?|knowledge|notes?|facts?|runs?)\b|"
    r"\bwhat you (remember|recall|know|have (stored|saved|learned|noted)|stored|saved|learned)\b|"
    r"\b(everything|anything|all) (you (remember|recall|know|have stored|have saved|stored|saved))\b|"
    r"\bremembered\b|\byour (context|knowledge base|history|recollection)\b|"
    r"\banything (saved|stored)\b")

_CUE = re.compile(
    r"\b(ignore|ignoring|disregard|disregarding|skip|skipping|bypass|forget about|forget|"
    r"without|no|nothing from|not from|set aside|put aside|leave out|drop|"
    r"(do|did|does|could|would|will|can|should|please) not (use|using|look at|read|check|"
    r"consult|rely on|load|pull in|pull|bring in|bring up|touch|access|apply|draw on|refer to|"
    r"go to|open|need)|not (use|using|consult|rely on|looking at|drawing on)|"
    r"never mind)\b")
_LEAVE_OUT = re.compile(r"\bleave\b(?P<obj>.{0,40}?)\bout\b")
_AFTER_CUE = re.compile(r"^\s*(off|aside|not needed|is not needed|are not needed|disabled)\b")
_FIXED = re.compile(
    r"\b(fresh|clean|blank|empty) (context|slate)\b|\bpretend (you|that you) (do not|can not|"
    r"did not) (remember|know|recall)\b|\bstart (fresh|over) without\b")
_NEGATED_CUE = re.compile(r"\b(do|did|will|can|should|please) not (forget|ignore|skip|drop)\b|"
                          r"\bwithout (forgetting|ignoring|skipping)\b")
_CLAUSES = re.compile(r"[.,;:!?\n()\[\]]+|\s-\s|\bbut\b")


def _normalise(text: str) -> str:
    low = text.lower().replace("’", "'")
    for pattern, repl in _CONTRACTIONS:
        low = pattern.sub(repl, low)
    return " ".join(low.split())


def _memory_spans(clause: str) -> list[tuple[int, int]]:
    blocked = [m.span() for m in _NOT_MEMORY.finditer(clause)]
    return [m.span() for m in _MEMORY.finditer(clause)
            if not any(b0 <= m.start() < b1 for b0, b1 in blocked)]


def _words_between(clause: str, start: int, end: int) -> int:
    return len(clause[start:end].split())


def asks_to_ignore_memory(message: str) -> bool:
    """True when a user message asks not to use memory for this turn (seed 001).

    Example:
        >>> asks_to_ignore_memory("no memory please")
        True
        >>> asks_to_ignore_memory("I have no memory of writing this")
        False
    """
    text = _normalise(message or "")
    if not text:
        return False
    if _FIXED.search(text):
        return True
    for clause in _CLAUSES.split(text):
        clause = _NEGATED_CUE.sub(" ", clause)
        spans = _memory_spans(clause)
        if not spans:
            continue
        for cue in _CUE.finditer(clause):
            for start, _ in spans:
                if start >= cue.end() and _words_between(clause, cue.end(), start) <= WINDOW:
                    return True
        for m in _LEAVE_OUT.finditer(clause):
            if any(m.start("obj") <= s < m.end("obj") for s, _ in spans):
                return True
        for _, end in spans:
            if _AFTER_CUE.match(clause[end:]):
                return True
    return False
