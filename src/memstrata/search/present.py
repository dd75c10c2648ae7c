"""A hit as a person reads it: a title that says something, where it lives, why it ranked.

    title_of(hit)            'Use argon2id for new password hashes' (not 'USER_FEEDBACK':
                             the kind is the hit's badge, never its title)
    place_of(hit)            Place("log", agent="finn", key="log:finn:log-1a2b3c4d"): the
                             record in its context, for an adapter to turn into a link
    explain_in_words(hit)    ['Matches "redis", "decide".', 'Written 3 min ago; ...']

A place names where a record lives, not a URL (adapters make those):

    log       a LOG entry (or an archived one): the agent's timeline at the entry (key: uid)
    session   a transcript message: the session (key: session id) at the message (`pos`)
    hot       NOW / CONTEXT / identity (key: now, context, identity) at `line`
    file      a memory file (key: its path in the agent's memory folder) at `line`
    fact      a fact (key: its key); task: a task (key: its id); ledger: an entry (key: id)
    item      an extracted item (key: its id; `path`: its cited source file)
    memory    anything else (project sources, episodes, room channels): the record itself,
              by uid, with its source and line

Pure functions over `Hit` values: no store, no SQL.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

from memstrata.search.query import Hit
from memstrata.values import value_type

TITLE_CHARS = 120
_FILE_LAYERS = frozenset({"file", "scratch"})
_HOT = {"now": "now", "context": "context", "identity": "identity"}
_LOG_LAYERS = frozenset({"log", "archive"})


@value_type(frozen=True)
class Place:
    """Where a record lives: a kind of place, its owner and key, a line or position in it."""

    kind: str
    key: str
    agent: str | None = None
    line: int | None = None
    pos: int | None = None
    path: str | None = None  # an item's cited source file


def _one_line(text: str, limit: int = TITLE_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rsplit(" ", 1)[0] + "…"


def _first_line(text: str) -> str:
    return next((x.strip() for x in text.splitlines() if x.strip()), "")


def title_of(hit: Hit) -> str:
    """What the hit says, in a line: a LOG entry's or message's first line (a final
    response without its "Final response:" label), a task's description, a fact as
    `key: value`, a Markdown chunk's file and heading, else its own title."""
    text = hit.text or hit.snippet
    if hit.layer == "fact":
        return _one_line(f"{hit.title}: {text}")
    if hit.layer == "task":
        desc = hit.meta.get("description") if isinstance(hit.meta, dict) else None
        return _one_line(str(desc or _first_line(text) or hit.title))
    if hit.layer in _HOT or hit.layer in _FILE_LAYERS or hit.layer == "episode":
        name = PurePosixPath(hit.source).name
        heading = hit.title.strip()
        return _one_line(f"{name} · {heading}" if heading and heading != name else name)
    own = hit.title.strip()
    generic = {hit.layer.lower(), (hit.kind or "").lower(), ""}
    if own.lower() not in generic and hit.layer not in _LOG_LAYERS and hit.layer != "session":
        return _one_line(own)
    line = _first_line(text).removeprefix("Final response:").strip()
    return _one_line(line or own or hit.layer)


def _agent_of(hit: Hit) -> str | None:
    if hit.owner:
        return hit.owner
    parts = PurePosixPath(hit.source).parts
    return parts[parts.index("agents") + 1] if "agents" in parts[:-1] else None


def _memory_path(source: str, agent: str) -> str | None:
    """A source's path inside the agent's memory folder, or None when it is not in it."""
    marker = f"agents/{agent}/memory/"
    at = source.find(marker)
    return source[at + len(marker) :] if at >= 0 else None


def place_of(hit: Hit) -> Place:
    """Where `hit` lives (see module doc)."""
    agent = _agent_of(hit)
    meta: dict[str, Any] = hit.meta if isinstance(hit.meta, dict) else {}
    if hit.layer in _LOG_LAYERS and agent and "entry_type" in meta:
        return Place("log", hit.uid, agent)
    if hit.layer == "session" and agent:
        sid = PurePosixPath(hit.source).stem
        pos = hit.uid.rsplit(":", 1)[-1]
        return Place("session", sid, agent, pos=int(pos) if pos.isdigit() else None)
    if hit.layer in _HOT and agent:
        return Place("hot", _HOT[hit.layer], agent, line=hit.line)
    if hit.layer in _FILE_LAYERS and agent:
        path = _memory_path(hit.source, agent)
        if path:
            return Place("file", path, agent, line=hit.line)
    if hit.layer == "fact" and agent:
        return Place("fact", hit.title, agent)
    if hit.layer == "task" and agent:
        return Place("task", str(meta.get("id") or hit.uid.rsplit(":", 1)[-1]), agent)
    if hit.layer == "ledger":
        return Place("ledger", str(meta.get("id") or hit.uid.removeprefix("ledger:")))
    if hit.layer == "item":
        cited = meta.get("sourceFile")
        return Place(
            "item",
            hit.uid.removeprefix("item:"),
            line=hit.line,
            path=cited if isinstance(cited, str) else None,
        )
    return Place("memory", hit.uid, agent, line=hit.line)


# -- explain ------------------------------------------------------------------------------
def _pct(x: float) -> str:
    return f"{100 * x:.0f}%" if x >= 0.01 else f"{100 * x:.2f}%"


def _age(hours: float) -> str:
    if hours < 1 / 60:
        return "just now"
    for unit, size in (("year", 8766.0), ("day", 24.0), ("hour", 1.0)):
        if hours >= size:
            n = hours / size
            return f"{n:.0f} {unit}{'' if round(n) == 1 else 's'} ago"
    return f"{hours * 60:.0f} min ago"


def _span(hours: float) -> str:
    days = hours / 24
    return f"{days:g} days" if days >= 1 and days == int(days) else f"{hours:g} hours"


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def explain_in_words(explain: dict[str, Any]) -> list[str]:
    """The factors of a hit's score as sentences a person reads, in the order they apply:
    what matched, how well, how old it is and what that costs, what kind of record it is
    and its weight, what was folded into it, and the product."""
    out: list[str] = []
    matched = explain.get("matched")
    if isinstance(matched, list) and matched:
        out.append("Matches " + ", ".join(f"“{w}”" for w in matched[:8]) + ".")
    relevance = _number(explain.get("relevance"))
    fusion = explain.get("fusion")
    if fusion:  # a hybrid (or semantic) search: `search.hybrid`
        dense = _number(explain.get("dense"))
        meaning = (
            f"similarity in meaning {dense:.2f}"
            + (f" ({explain['dense_from']})" if explain.get("dense_from") else "")
            if dense is not None
            else "no similarity in meaning found (no vector for it yet, or too far)"
        )
        if fusion == "semantic":
            out.append(f"Meaning only: {meaning}.")
        else:
            words = _number(explain.get("lexical"))
            pieces = _number(explain.get("maxsim"))
            detail = f", word-by-word meaning {pieces:.2f}" if pieces is not None else ""
            read = explain.get("maxsim_pieces")
            if detail and isinstance(read, list) and read:
                detail += " of " + ", ".join(f"“{w}”" for w in read[:8])
            out.append(
                f"Meaning and words combined ({fusion}): {meaning}{detail}, word match "
                f"{words or 0:.2f}" + (f", together {relevance:.2f}" if relevance else "") + "."
            )
    elif relevance is not None:
        bonus = _number(explain.get("author_named"))
        said = f"Word match: {_pct(min(relevance, 1.0))} of the best match in this search"
        if bonus:
            said += f", plus {bonus:g} because the question names who said it"
        out.append(said + f" (BM25 {_number(explain.get('bm25_relevance')) or 0:.2f}).")
    age = _number(explain.get("age_hours"))
    half = _number(explain.get("half_life_hours"))
    decay = _number(explain.get("decay"))
    if half is None and "half_life_hours" in explain:
        out.append((f"Written {_age(age)}; " if age is not None else "") + "it does not fade.")
    elif decay is not None:
        when = f"Written {_age(age)}; " if age is not None else ""
        life = f"with a half-life of {_span(half)} " if half is not None else ""
        out.append(f"{when}{life}it keeps {_pct(decay)} of its weight.")
    prior = explain.get("prior")
    if isinstance(prior, dict):
        out.append(_prior_words(prior))
    collapsed = explain.get("collapsed")
    if isinstance(collapsed, list) and collapsed:
        n = len(collapsed)
        out.append(f"{n} other record{'s' if n > 1 else ''} of the same tool call folded into it.")
    score = _number(explain.get("score"))
    if score is not None:
        out.append(f"Score {score:.3f}.")
    dropped = explain.get("dropped")
    if isinstance(dropped, dict) and dropped:
        told = "; ".join(f"{why} ({len(uids)})" for why, uids in dropped.items())
        out.append(f"Left out of this search: {told}.")
    return out


def _prior_words(prior: dict[str, Any]) -> str:
    signal = str(prior.get("signal") or "record")
    why = str(prior.get("why") or "")
    weight = _number(prior.get("weight"))
    said = f"Counted as {_article(signal)} {signal}" + (f" ({why})" if why else "")
    if weight is not None:
        key = prior.get("key")
        said += f", weight ×{weight:g}" + (f" ({key})" if key else "")
    asked = _number(prior.get("asked"))
    if asked is not None:
        said += f"; the question asks about {signal}s: ×{asked:g}"
    replaced = _number(prior.get("replaced"))
    if replaced is not None:
        said += f"; replaced by a later record: ×{replaced:g}"
    return said + "."


def _article(word: str) -> str:
    return "an" if re.match(r"[aeiou]", word) else "a"
