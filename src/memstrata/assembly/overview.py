"""Where are my agents? Each agent's memory told by meaning, for the web app's home page.

    view = overview(store)
    for a in view.agents:
        a.now.objective, a.now.next_steps        # NOW.md as the agent left it
        a.tasks, a.open_tasks                    # open tasks by status, the first few
        a.in_force                               # decisions and constraints in force
        a.last_session                           # when, its goal(s), outcome, calls
        a.health, a.withheld                     # index freshness, problems, size, secrets
    for r in view.rooms:
        r.name, r.entries                        # each room's latest ledger entries

The same meaning-first view as the session-start context (`assembly.standing`, issue 19):
NOW as the agent left it, open tasks with status, decisions and constraints in force
(never a replaced one), the last session told by its goal and outcome, with calls
counted, never a raw trace. Memory health is `doctor.agent_health` (the index's word: no
listing, no parse; the health page compares the files) and
the secrets withheld from what agents see in NOW, CONTEXT, identity and facts. Scope:
only the agents and rooms the principal may read; each read is a layer's own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, TypeVar

from memstrata.assembly.health import agent_health
from memstrata.assembly.ledger_pages import ledger_page
from memstrata.assembly.standing import recent_entries
from memstrata.errors import MemstrataError, ScopeDenied
from memstrata.layers.decisions import RULE_KINDS
from memstrata.layers.hot import NowState
from memstrata.lifecycle.activity import Session, one_line, sessions
from memstrata.model import iso
from memstrata.policy.secrets import fact_findings, find_secrets
from memstrata.values import field, value_type

if TYPE_CHECKING:
    from memstrata.assembly.health import Health
    from memstrata.layers.agent import AgentMemory
    from memstrata.model import LedgerEntry, Task
    from memstrata.store.view import Store

T = TypeVar("T")
OPEN = ("in_progress", "blocked", "pending")
SHOW_TASKS = 5
SHOW_RECORDS = 6
SHOW_ROOMS = 12
ROOM_ENTRIES = 3
RECENT_ENTRIES = 200  # LOG entries read for the last session


@value_type(frozen=True)
class LastSession:
    """The agent's latest session, by meaning: when, what for, how it ended."""

    id: str | None
    start: str
    end: str
    title: str
    goals: tuple[str, ...] = ()
    outcome: str = ""
    calls: str = ""  # '4 reads, 1 edit, 2 test runs (1 failed)'
    messages: int = 0


@value_type(frozen=True)
class AgentView:
    name: str
    now: NowState | None
    tasks: dict[str, int]  # open status -> count
    open_tasks: tuple[Task, ...]
    in_force: tuple[LedgerEntry, ...]  # constraints (rules) first, then decisions
    in_force_counts: dict[str, int]
    last_session: LastSession | None
    health: Health | None
    withheld: dict[str, int] = field(default_factory=dict)  # where -> secrets withheld
    problems: tuple[str, ...] = ()  # what a layer could not read cleanly


@value_type(frozen=True)
class RoomView:
    name: str
    entries: tuple[LedgerEntry, ...]  # newest first


@value_type(frozen=True)
class Overview:
    agents: tuple[AgentView, ...]
    rooms: tuple[RoomView, ...]
    docs: int


def overview(store: Store, agents: Iterable[str] | None = None) -> Overview:
    """Every agent (or those named) and room this principal may read (see module doc)."""
    names = readable_agents(store) if agents is None else list(agents)
    views = tuple(agent_view(store, name) for name in names)
    return Overview(views, tuple(room_views(store)), store.doc_count())


def readable_agents(store: Store) -> list[str]:
    """The agents whose memory this principal may read, its own first."""
    names = [a for a in store.agents() if store.gate.allows("read", "file", a)]
    own = store.principal.agent
    if own and store.gate.allows("read", "file", own):
        names = [own, *(a for a in names if a != own)]
    return names


def agent_view(store: Store, name: str) -> AgentView:
    """One agent at a glance; a layer that cannot be read costs its part only."""
    mem = store.agent(name)
    problems: list[str] = []
    now = _guarded(problems, "NOW.md", lambda: mem.now.state() if mem.now.exists() else None)
    tasks = _guarded(problems, "tasks", mem.tasks.list) or []
    live = [t for t in tasks if t.status in OPEN]
    live.sort(key=lambda t: OPEN.index(t.status))  # stable: priority order kept
    counts = {s: sum(t.status == s for t in tasks) for s in OPEN}
    kinds = ("constraint", *RULE_KINDS, "decision")
    rules, by_kind = _guarded(
        problems, "decisions", lambda: mem.decisions.tally(kinds, SHOW_RECORDS)
    ) or ([], {})
    return AgentView(
        name,
        now,
        {s: n for s, n in counts.items() if n},
        tuple(live[:SHOW_TASKS]),
        tuple(rules),
        by_kind,
        _guarded(problems, "sessions", lambda: last_session(mem)),
        _guarded(problems, "index", lambda: agent_health(store, name, compare=False)),
        _guarded(problems, "secrets", lambda: withheld(mem)) or {},
        tuple(problems),
    )


def _guarded(problems: list[str], what: str, read: Callable[[], T]) -> T | None:
    try:
        return read()
    except ScopeDenied:
        return None
    except MemstrataError as exc:  # one unreadable layer: said, the rest still shown
        problems.append(f"{what}: {exc}")
        return None


def last_session(mem: AgentMemory) -> LastSession | None:
    """The latest session told by LOG.md (its goal, outcome and calls, as the context tells
    it), else by its transcript (first prompt, last answer)."""
    found: list[Session] = sessions(recent_entries(mem, RECENT_ENTRIES))
    if found:
        s = found[-1]
        sid = s.key[2:] if s.key.startswith("s:") else None
        told = mem.sessions.transcripts([sid]).get(sid) if sid else None
        title = (told.first_prompt if told else None) or (s.goals[0] if s.goals else "")
        title = title or (s.asked[0] if s.asked else "") or (f"Session {sid[:8]}" if sid else "")
        return LastSession(
            sid,
            s.start,
            s.end,
            one_line(title, 160),
            tuple(s.goals[:3]),
            s.outcome or ((told.last_answer or "") if told else ""),
            s.summary(),
            told.messages if told else 0,
        )
    latest = mem.sessions.latest()
    if latest is None or latest.start is None or latest.end is None:
        return None
    return LastSession(
        latest.id,
        iso(latest.start),
        iso(latest.end),
        latest.first_prompt or f"Session {latest.id[:8]}",
        outcome=latest.last_answer or "",
        calls=f"{latest.tool_calls} tool calls" if latest.tool_calls else "",
        messages=latest.messages,
    )


def withheld(mem: AgentMemory) -> dict[str, int]:
    """Secrets withheld from what agents see, by where they are: NOW.md, CONTEXT.md, the
    identity file and facts (a credential-named fact counts whole)."""
    out: dict[str, int] = {}
    for label, layer in (
        ("NOW.md", mem.now),
        ("CONTEXT.md", mem.context),
        ("AGENT.md", mem.identity),
    ):
        n = len(find_secrets(layer.read()))  # ('' when the file does not exist)
        if n:
            out[label] = n
    facts = sum(1 for f in mem.facts.list() if fact_findings(f.key, f.value))
    if facts:
        out["facts"] = facts
    return out


def room_views(store: Store) -> list[RoomView]:
    """The rooms this principal may read, most recently active first, with their latest
    ledger entries."""
    out = []
    for room in store.ledger.active_rooms(SHOW_ROOMS):
        page = ledger_page(store, room=room, limit=ROOM_ENTRIES)
        out.append(RoomView(room, tuple(r.entry for r in page.rows)))
    return out
