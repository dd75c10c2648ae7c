"""What a durable (repo-persistent) fact must be, whatever writes it.

The `/memories/repo/` rules, checked on every write of a durable fact
category (`Facts.set`, a `repo/` memory file) and by promotion (which adds the
rest of Checklist C, `lifecycle.promotion.checklist_c`): cited, short (1-2
sentences, at most 400 characters), and no save exclusion:

* git history: commit hashes, branch names, merge/rebase records;
* ephemeral task state: clock times, "iteration 3 passed", "currently running";
* derivable code state: where code lives or what it contains ("defined in
  src/x.py", "app.py:120", "utils.py has 300 lines") - re-read the code instead.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memstrata.reading.patterns import LazyPattern

MAX_FACT_CHARS = 400
MAX_SENTENCES = 2
_SENTENCE = LazyPattern(r"(?<=[.!?])\s+(?=[A-Z0-9`\"'(])")
_CITE_LINE = LazyPattern(r"^\s*[-*]?\s*(?:citations?|sources?|cited?)\s*:\s*(.*\S)\s*$", re.I)

_GIT = [
    (LazyPattern(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b"), "a commit hash"),
    (
        LazyPattern(
            r"\b(committed|merged|rebased|cherry-picked|reverted)\b|\bmerge (commit|of)\b|"
            r"\b(PR|pull request) #?\d+\b",
            re.I,
        ),
        "a commit / merge record",
    ),
    (
        LazyPattern(
            r"\b(on|the|to|from|in) branch\b|\bbranch (named |called )?[\w./-]+/[\w./-]+|"
            r"\b(feature|bugfix|hotfix|release)/[\w.-]+",
            re.I,
        ),
        "a branch name",
    ),
]
_EPHEMERAL = [
    (LazyPattern(r"\b\d{1,2}:\d{2}(:\d{2})?\b"), "a clock time of a single turn"),
    (LazyPattern(r"\b(iteration|attempt|run|step) #?\d+\b", re.I), "a per-iteration result"),
    (
        LazyPattern(
            r"\b(currently|right now|just now|at the moment|in progress|this (turn|session)|"
            r"is (still )?running|today|yesterday|so far)\b",
            re.I,
        ),
        "ephemeral task state",
    ),
]
_DERIVABLE = [
    (LazyPattern(r"[\w./-]+\.\w{1,5}:\d+\b"), "a file:line location"),
    (
        LazyPattern(
            r"\b(is|are) (defined|declared|implemented|located) (in|at)\b|\blives in\b", re.I
        ),
        "where code is defined",
    ),
    (
        LazyPattern(
            r"\b(has|have|contains?) \d+ (lines?|functions?|classes|methods?|files?|tests?)\b", re.I
        ),
        "a count of code that can be re-read",
    ),
]


def sentences(text: str) -> int:
    return len([s for s in _SENTENCE.split(text.strip()) if s.strip()])


def save_exclusion(text: str) -> str | None:
    """Why `text` must not be saved as a durable fact, or None."""
    for group, label in (
        (_GIT, "git history"),
        (_EPHEMERAL, "ephemeral task state"),
        (_DERIVABLE, "derivable code state"),
    ):
        for pattern, what in group:
            m = pattern.search(text)
            if m:
                return f"{label}: {what} ({m.group(0)!r})"
    return None


def durable_fact_problem(text: str, citations: Sequence[str]) -> str | None:
    """Why `text` cannot be a repo-persistent fact whatever path writes it, or None.

    The rules for `/memories/repo/`, checked on every write of a durable
    category (`Facts.set`, MCP `save_fact`, `memstrata facts set`, a `repo/` memory
    file): cited, short (1-2 sentences, at most 400 characters), not a save exclusion.
    Checklist C (`lifecycle.promotion.checklist_c`, run by promotion) adds "standalone" and "new".
    """
    flat = " ".join(text.split())
    if not [c for c in citations if isinstance(c, str) and c.strip()]:
        return (
            "a repo-persistent fact needs at least one citation (the file, doc or task it "
            "came from)"
        )
    if len(flat) > MAX_FACT_CHARS or sentences(flat) > MAX_SENTENCES:
        return (
            f"a repo-persistent fact is 1-{MAX_SENTENCES} sentences and at most "
            f"{MAX_FACT_CHARS} characters: split it or keep it in task notes"
        )
    reason = save_exclusion(flat)
    if reason is not None:
        return f"not saved as a repo-persistent fact (a save exclusion), it is {reason}"
    return None


def split_repo_file(content: str) -> tuple[str, list[str]]:
    """A `repo/` memory file as (fact text, citations): a `Citations: a, b` (or
    `Source: a`) line gives the citations; Markdown headings are titles, not the fact.

    Example:
        >>> split_repo_file("# Tests\nThe test command is `make test`.\nSource: Makefile\n")
        ('The test command is `make test`.', ['Makefile'])
    """
    text, cites = [], []
    for line in content.splitlines():
        m = _CITE_LINE.match(line)
        if m:
            cites += [c.strip() for c in m.group(1).split(",") if c.strip()]
        elif line.strip() and not line.lstrip().startswith("#"):
            text.append(line.strip())
    return " ".join(text), cites


def repo_file_problem(content: str) -> str | None:
    """Why `content` cannot be a `repo/` memory file (`/memories/repo/`), or None."""
    text, cites = split_repo_file(content)
    if not text:
        return "a repo/ file holds one durable fact, 1-2 sentences: it is empty"
    problem = durable_fact_problem(text, cites)
    if problem is not None and not cites:
        return problem + "; in a repo/ file, add a line `Citations: <file or doc>, ...`"
    return problem
