"""Promotion between seed 001's layers, with its taxonomy and save exclusions.

    session scratch --promote_scratch--> task-episodic --promote_fact--> durable fact

A durable (repo-persistent) fact is short (1-2 sentences), cited, classified
as user / feedback / project / reference, and create-only. These never become
durable facts, and are refused with the reason (`Refused`):

* git history: commit hashes, branch names, merge/rebase records;
* ephemeral task state: clock times, "iteration 3 passed", "currently running";
* derivable code state: where code lives or what it contains ("defined in
  src/x.py", "app.py:120", "utils.py has 300 lines") - re-read the code instead.

`classify_fact` is a documented keyword rule, checked in this order:

1. feedback:  corrections and constraints ("never", "don't", "avoid", "must not",
   "instead of", "mistake", "wrong")
2. user:      preferences ("prefers", "likes", "the user", "I want", "my ")
3. reference: commands and configuration (a `code span`, a shell command such as
   npm/pytest/make/pip/cargo/docker/git, a --flag, KEY=value, port, env var)
4. project:   everything else (architecture, structure, conventions).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from memstrata.errors import AlreadyExists, NotFound, Refused
from memstrata.layers.durable import (  # noqa: F401  (names kept for callers)
    MAX_FACT_CHARS,
    MAX_SENTENCES,
    save_exclusion,
    sentences,
)
from memstrata.layers.episodes import slugify
from memstrata.lifecycle.likeness import (  # noqa: F401  (names kept for callers)
    near_duplicate,
    similarity,
    tokens,
)
from memstrata.model import Fact, check_name, iso, now_ts

if TYPE_CHECKING:
    from memstrata.store.view import Store

_FEEDBACK = re.compile(
    r"\b(never|don'?t|do not|avoid|must not|mustn'?t|should not|shouldn'?t|instead of|"
    r"mistakes?|wrong|incorrect|correction|stop (doing|using))\b",
    re.I,
)
_USER = re.compile(
    r"\b(prefers?|preferences?|likes?|dislikes?|the user|user wants|"
    r"i want|i like|i prefer|my)\b",
    re.I,
)
_REFERENCE = re.compile(
    r"`[^`]+`|\b(npm|npx|yarn|pnpm|pytest|make|pip|uv|cargo|go (test|build|run)|docker|"
    r"kubectl|git config|python -m|cd \S+ &&)\b|(^|\s)--[a-z][\w-]+|\b[A-Z][A-Z0-9_]{2,}=\S+|"
    r"\b(port|env(ironment)? var(iable)?|config(uration)? (value|key|file)|command)\b",
    re.I,
)

def classify_fact(text: str) -> str:
    """Taxonomy category for a fact by the keyword rule in the module docstring.

    Example:
        >>> classify_fact("The test command is `cd evals && npm test`.")
        'reference'
    """
    if _FEEDBACK.search(text):
        return "feedback"
    if _USER.search(text):
        return "user"
    if _REFERENCE.search(text):
        return "reference"
    return "project"


def promote_scratch(
    store: Store, agent: str, scratch_name: str, task_slug: str, dest: str = "notes.md"
) -> str:
    """Session -> task-episodic: append a scratch file to `episodes/<task_slug>/<dest>`
    under a provenance header. Returns the episode file's store-relative path."""
    check_name(task_slug, "task slug")
    mem = store.agent(agent)
    text = mem.scratch.read(scratch_name)
    if not text.strip():
        raise Refused(f"session/{scratch_name} is empty: nothing to promote")
    header = f"## Promoted from session/{scratch_name} ({iso(now_ts())})"
    return mem.episodes.append(task_slug, dest, f"{header}\n\n{text.strip()}\n")


def promote_fact(
    store: Store,
    agent: str,
    text: str,
    category: str | None,
    citations: Sequence[str],
    key: str | None = None,
) -> Fact:
    """Task-episodic -> repo-persistent: save one durable, cited, classified fact.

    Raises:
        Refused: a Checklist C check failed (`lifecycle.phases.checklist_c`: no
            citation, too long, a save exclusion, not standalone, or a near-duplicate
            of a durable fact already stored). AlreadyExists: `key` is taken.
        MalformedInput: bad types or an unknown category.
    """
    from memstrata.lifecycle.phases import checklist_c, require

    verdict = checklist_c(store, agent, text, citations, category)
    require(verdict)  # Checklist C: cited, classified, short, not excluded, standalone, new
    text, category = verdict.text, verdict.category or "project"
    cites = [c.strip() for c in citations]
    facts = store.agent(agent).facts
    if key is None:
        digest = hashlib.sha256(text.encode()).hexdigest()[:6]
        key = f"{category}/{slugify(text)[:48].strip('-')}-{digest}"
    try:
        facts.get(key)
    except NotFound:
        return facts.set(key, text, category, citations=cites)
    raise AlreadyExists(f"fact {key!r} already exists; durable facts are create-only")
