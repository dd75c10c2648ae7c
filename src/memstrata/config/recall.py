"""The `[recall]` table of config.toml: what a hit is worth after relevance (`search.priors`).

One weight per record signal (a decision, a tool trace, a compaction digest...), and
`asked`, the factor for records of the signal a question asks about ("what did we
*decide*..."), and `replaced`, the factor for a decision that a newer decision among the
results says it replaces (stores older than `supersedes` links). Every key is optional;
`memstrata config` lists them as `recall.<key>`.

```toml
[recall]
tool = 0.2      # tool traces count for a fifth of their relevance
asked = 1.5
```

Defaults were chosen on the development scenarios of `memstrata bench agent` (never its
held-out one) with the LoCoMo dev split as a guard; docs/recall.md ("Priors") has the
table and the measurements.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# signal -> (default weight, what it is). A weight multiplies the hit's relevance; 0
# means "never a hit". Bookkeeping has no weight: it is never a hit (design note).
SIGNALS: dict[str, tuple[float, str]] = {
    "decision": (1.0, "decisions (kind decision, 'Decision:' lines, 'we decided', ...)"),
    "constraint": (1.0, "constraints, conventions and warnings"),
    "preference": (1.0, "preferences (fact category preference, 'the user prefers ...')"),
    "fact": (1.0, "facts, ledger interfaces, extracted claims"),
    "status": (0.7, "NOW.md, blockers, objectives and phases"),
    "task": (0.7, "tasks"),
    "note": (1.0, "sections of CONTEXT.md / MEMORY.md and other memory files"),
    "source": (1.0, "indexed project files (the sources scope)"),
    "error": (1.0, "ERROR entries"),
    "activity": (1.0, "free-text LOG entries (THOUGHT, SYSTEM, a TOOL_USE said in words)"),
    "message": (1.0, "transcript and channel messages"),
    "reply": (0.7, "the agent's final responses (a turn's summary of what other records hold)"),
    "intent": (0.5, "the user's prompts as the prompt hook logged them"),
    "digest": (0.5, "compaction digests and transcript summaries"),
    "tool": (0.35, "tool traces: hook TOOL_USE entries, tool_use / tool_result messages"),
}
DEFAULT_WEIGHTS: dict[str, float] = {name: w for name, (w, _) in SIGNALS.items()}
ASKED_KEY = "asked"
DEFAULT_ASKED = 1.5
# A decision a newer one in the same results says it replaces ("replace X with Y", "Y
# instead of X"), when no `supersedes` link hides it already (stores older than the link).
REPLACED_KEY = "replaced"
DEFAULT_REPLACED = 0.5
# How much a hit's share of the query's information counts (`search.coverage`): the
# factor is 1 - coverage x (1 - share), share = IDF-weighted query terms the hit holds.
# 0 turns it off; 1 would drop a hit that holds no query word (found by meaning alone).
COVERAGE_KEY = "coverage"
DEFAULT_COVERAGE = 0.0
# Near-ties on one subject (the same query terms held) go to the newer record when it is
# worth at least (1 - newer) of the older one; 0 turns it off.
NEWER_KEY = "newer"
DEFAULT_NEWER = 0.2
# A record that asks rather than states (most of its sentences are questions: a user's
# question, a list of interview questions) counts for this share, unless the query asks
# what to ask. 1 turns it off.
QUESTION_KEY = "question"
DEFAULT_QUESTION = 0.5
# A question about open work ("what's still open?", "is anything stuck?") is asked of the
# task state: the tasks not done score this share of the pool's best (`search.intent`);
# 0 turns it off.
OPEN_WORK_KEY = "open_work"
DEFAULT_OPEN_WORK = 1.0
FACTOR_KEYS = (ASKED_KEY, REPLACED_KEY, COVERAGE_KEY, NEWER_KEY, QUESTION_KEY, OPEN_WORK_KEY)
HELP = "recall priors: a weight per record signal, and `asked` (docs/recall.md)"


def defaults() -> dict[str, float]:
    """Every `[recall]` key at its default: the signal weights and `asked`."""
    return {
        **DEFAULT_WEIGHTS,
        ASKED_KEY: DEFAULT_ASKED,
        REPLACED_KEY: DEFAULT_REPLACED,
        COVERAGE_KEY: DEFAULT_COVERAGE,
        NEWER_KEY: DEFAULT_NEWER,
        QUESTION_KEY: DEFAULT_QUESTION,
        OPEN_WORK_KEY: DEFAULT_OPEN_WORK,
    }


def merged(
    parsed: Mapping[str, float],
    where: str,
    problems: list[str],
    origins: dict[str, str],
    origin: str,
) -> dict[str, float]:
    """A `[recall]` table's values over the defaults. An unknown key adds a line to
    `problems` (with a "did you mean") and is ignored; a known one records its origin."""
    out = defaults()
    for key, value in parsed.items():
        if key not in out:
            import difflib  # only to suggest a key (start-up)

            close = difflib.get_close_matches(key, list(out), n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            problems.append(f"{where} {key}: unknown signal{hint}; known: {', '.join(out)}")
            continue
        out[key] = value
        origins[f"recall.{key}"] = origin
    return out


def rows(weights: Mapping[str, float], origins: Mapping[str, str]) -> list[tuple[str, Any, str]]:
    """(name, value, origin) of every `[recall]` key, for `memstrata config`."""
    return [(f"recall.{k}", w, origins.get(f"recall.{k}", "default")) for k, w in weights.items()]
